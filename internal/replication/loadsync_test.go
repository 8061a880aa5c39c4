package replication_test

import (
	"bufio"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// snapshotOf returns the RDB the server at addr sends a replica that
// asks for a full sync in the $<length> form (no capa eof).
func snapshotOf(t *testing.T, addr string) []byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	c.Write(servertest.Encode("PSYNC", "?", "-1"))
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		line = strings.TrimRight(line, "\r\n")
		if size, ok := strings.CutPrefix(line, "$"); ok {
			n, err := strconv.Atoi(size)
			if err != nil {
				t.Fatalf("snapshot header %q", line)
			}
			b := make([]byte, n)
			if _, err := io.ReadFull(r, b); err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

// trickle writes b in random pieces of at most 1000 bytes, pausing now
// and then, so the replica reads a snapshot over many reads.
func trickle(c net.Conn, b []byte, rnd *rand.Rand) error {
	for i := 0; len(b) > 0; i++ {
		n := min(len(b), 1+rnd.IntN(1000))
		if _, err := c.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
		if i%64 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	return nil
}

// slowPrimary answers a replica's handshake with a full sync whose
// snapshot is first (the header and the first bytes), then, once hold is
// closed, rest; it keeps each connection open afterwards. Each connection
// reports on mid when first is out.
func slowPrimary(t *testing.T, first, rest []byte, hold chan struct{}) (addr string, mid chan struct{}) {
	t.Helper()
	mid = make(chan struct{}, 16)
	addr = fakeServer(t, func(c net.Conn, r *bufio.Reader) {
		rnd := rand.New(rand.NewPCG(3, 4))
		c.Write([]byte("+FULLRESYNC 0123456789012345678901234567890123456789 0\r\n"))
		if trickle(c, first, rnd) != nil {
			return
		}
		mid <- struct{}{}
		<-hold
		if rest == nil || trickle(c, rest, rnd) != nil {
			return // a transfer cut short
		}
		io.Copy(io.Discard, r) // the replica's ACKs
	})
	return addr, mid
}

// A snapshot that arrives in small pieces with pauses, in either form,
// loads the primary's dataset, and the replica serves its old data while
// it is read; one cut short or corrupted leaves the old data in place.
func TestStreamedSnapshotLoad(t *testing.T) {
	src := servertest.Start(t)
	sc := src.Raw(t)
	loadTypes(t, sc)
	for i := range 3000 {
		sc.Do("SET", "key:"+strconv.Itoa(i), strings.Repeat("v", i%50))
	}
	sc.Do("SET", "big", strings.Repeat("0123456789", 60000))
	sc.Do("XADD", "st", "1-1", "f", "v")
	rdbBytes := snapshotOf(t, src.Addr)
	want := dataset(t, sc)
	const mark = "abcdefghijabcdefghijabcdefghijabcdefghij"
	half := len(rdbBytes) / 2
	forms := map[string][2][]byte{
		"length": {[]byte("$" + strconv.Itoa(len(rdbBytes)) + "\r\n" + string(rdbBytes[:half])), rdbBytes[half:]},
		"eof":    {[]byte("$EOF:" + mark + "\r\n" + string(rdbBytes[:half])), []byte(string(rdbBytes[half:]) + mark)},
	}
	for name, parts := range forms {
		t.Run(name, func(t *testing.T) {
			inst := servertest.Start(t)
			ac := inst.Raw(t)
			ac.Do("SET", "old", "kept")
			hold := make(chan struct{})
			addr, mid := slowPrimary(t, parts[0], parts[1], hold)
			host, port, _ := strings.Cut(addr, ":")
			ac.Do("REPLICAOF", host, port)
			<-mid
			if got := ac.Do("GET", "old"); got != "$4\r\nkept\r\n" {
				t.Errorf("old data during the transfer: %q", got)
			}
			if got := field(t, ac, "replication", "master_sync_in_progress"); got != "1" {
				t.Errorf("master_sync_in_progress during the transfer: %q", got)
			}
			close(hold)
			deadline := time.Now().Add(60 * time.Second)
			for field(t, ac, "replication", "master_link_status") != "up" {
				if time.Now().After(deadline) {
					t.Fatalf("no sync:\n%s", inst.Logs.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			if got := dataset(t, ac); got != want {
				t.Fatalf("dataset after a streamed sync differs:\n%.2000s\nwant\n%.2000s", got, want)
			}
		})
	}
	bad := []byte(string(rdbBytes))
	bad[len(bad)*3/4] ^= 0x55
	for name, parts := range map[string][2][]byte{
		"length cut":     {forms["length"][0], nil},
		"eof cut":        {forms["eof"][0], nil},
		"eof no mark":    {[]byte("$EOF:" + mark + "\r\n" + string(rdbBytes)), []byte(strings.Repeat("x", 40))},
		"length corrupt": {[]byte("$" + strconv.Itoa(len(bad)) + "\r\n" + string(bad[:half])), bad[half:]},
		"eof corrupt":    {[]byte("$EOF:" + mark + "\r\n" + string(bad[:half])), []byte(string(bad[half:]) + mark)},
	} {
		t.Run(name, func(t *testing.T) {
			inst := servertest.Start(t)
			ac := inst.Raw(t)
			ac.Do("SET", "old", "kept")
			hold := make(chan struct{})
			close(hold)
			addr, mid := slowPrimary(t, parts[0], parts[1], hold)
			host, port, _ := strings.Cut(addr, ":")
			ac.Do("REPLICAOF", host, port)
			<-mid
			<-mid // it retried
			if got := ac.Do("DBSIZE"); got != ":1\r\n" {
				t.Errorf("DBSIZE after a bad sync: %q", got)
			}
			if got := ac.Do("GET", "old"); got != "$4\r\nkept\r\n" {
				t.Errorf("old data after a bad sync: %q", got)
			}
			if got := field(t, ac, "replication", "master_link_status"); got != "down" {
				t.Errorf("master_link_status %q", got)
			}
			t.Log(lastLine(inst.Logs.String(), "Error condition"))
		})
	}
}

func lastLine(logs, has string) string {
	lines := strings.Split(logs, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], has) {
			return lines[i]
		}
	}
	return ""
}
