package replication_test

import (
	"bufio"
	"net"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// fakePrimary answers a replica's handshake and then sends payload as its
// full sync, once per connection; each connection is reported on conns.
func fakePrimary(t *testing.T, payload string) (addr string, conns chan struct{}) {
	t.Helper()
	conns = make(chan struct{}, 16)
	addr = fakeServer(t, func(c net.Conn, _ *bufio.Reader) {
		c.Write([]byte("+FULLRESYNC 0123456789012345678901234567890123456789 0\r\n" + payload))
		select {
		case conns <- struct{}{}:
		default:
		}
	})
	return addr, conns
}

// fakeServer answers +OK to a replica's handshake and calls sync at its
// PSYNC or SYNC, then closes the connection.
func fakeServer(t *testing.T, sync func(c net.Conn, r *bufio.Reader)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					v, err := servertest.ReadValue(r)
					if err != nil {
						return
					}
					switch strings.ToUpper(v.Items[0].Str) {
					case "PSYNC", "SYNC":
						sync(c, r)
						return
					default:
						c.Write([]byte("+OK\r\n"))
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// A primary that sends a corrupt or truncated snapshot: the replica logs
// why, keeps serving its old data (nothing half-loaded) and tries again.
func TestBadSnapshotKeepsOldData(t *testing.T) {
	for name, payload := range map[string]string{
		"corrupt":    "$30\r\nREDIS0010" + strings.Repeat("\xfe", 21),
		"truncated":  "$1000\r\nREDIS0010\xfa\x09redis-ver\x067.0.15",
		"not a bulk": "hello\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			inst := servertest.Start(t)
			ac := inst.Raw(t)
			ac.Do("SET", "old", "kept")
			addr, conns := fakePrimary(t, payload)
			host, port, _ := strings.Cut(addr, ":")
			ac.Do("REPLICAOF", host, port)
			<-conns
			<-conns // it retried
			if got := ac.Do("GET", "old"); got != "$4\r\nkept\r\n" {
				t.Errorf("old data after a bad sync: %q", got)
			}
			if got := ac.Do("DBSIZE"); got != ":1\r\n" {
				t.Errorf("DBSIZE after a bad sync: %q", got)
			}
			if !strings.Contains(inst.Logs.String(), "Error condition on socket for SYNC") {
				t.Errorf("no log line for the bad sync:\n%s", inst.Logs.String())
			}
			if got := field(t, ac, "replication", "master_link_status"); got != "down" {
				t.Errorf("master_link_status %q", got)
			}
		})
	}
}

// A replica that sends garbage on its link is dropped; the primary serves
// on and a real replica still syncs.
func TestReplicaSendsGarbage(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("repl-diskless-sync-delay", "0"))
	pc := inst.Raw(t)
	pc.Do("SET", "k", "v")
	c, err := net.Dial("tcp", inst.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(servertest.Encode("PSYNC", "?", "-1"))
	r := bufio.NewReader(c)
	if line, _ := r.ReadString('\n'); !strings.HasPrefix(line, "+FULLRESYNC") {
		t.Fatalf("PSYNC: %q", line)
	}
	c.Write([]byte("*1\r\n$-5\r\n\x00\x01garbage\r\n*9999999999\r\n"))
	pc.Do("SET", "k2", "v2")
	if got := pc.Do("GET", "k2"); got != "$2\r\nv2\r\n" {
		t.Fatalf("primary after a replica's garbage: %q", got)
	}
	host, port, _ := strings.Cut(inst.Addr, ":")
	b := servertest.Start(t)
	bc := b.Raw(t)
	bc.Do("REPLICAOF", host, port)
	waitSynced(t, pc, bc)
	if got := bc.Do("GET", "k2"); got != "$2\r\nv2\r\n" {
		t.Fatalf("replica: %q", got)
	}
}
