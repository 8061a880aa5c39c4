package replication_test

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// min-replicas-to-write: writes are refused with Redis's text while too
// few replicas ACK, reads are not; a replica's ACKs let writes through.
func TestMinReplicasToWrite(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("min-replicas-to-write", "1", "repl-diskless-sync-delay", "0"))
	r := servertest.PrivateRedis(t, "--min-replicas-to-write", "1")
	ac, rc := inst.Raw(t), servertest.Dial(t, r.Addr)
	for _, cmd := range [][]string{{"SET", "k", "v"}, {"GET", "k"}, {"MULTI"}, {"INCR", "n"}, {"EXEC"}, {"PING"}} {
		if got, want := ac.Do(cmd...), rc.Do(cmd...); got != want {
			t.Errorf("%v: got %q, redis-server %q", cmd, got, want)
		}
	}
	if got := field(t, ac, "replication", "min_slaves_good_slaves"); got != "0" {
		t.Errorf("min_slaves_good_slaves = %q", got)
	}
	host, port, _ := strings.Cut(inst.Addr, ":")
	b := servertest.Start(t)
	b.Raw(t).Do("REPLICAOF", host, port)
	eventually(t, "a good replica", func() bool { return ac.Do("SET", "k", "v") == "+OK\r\n" })
}

// replica-serve-stale-data no: while the link is down the replica
// answers MASTERDOWN to what may not see stale data, as redis-server.
func TestServeStaleDataNo(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("replica-serve-stale-data", "no"))
	r := servertest.PrivateRedis(t, "--replica-serve-stale-data", "no")
	ac, rc := inst.Raw(t), servertest.Dial(t, r.Addr)
	// A port nobody listens on: the link stays down.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	_, dead, _ := strings.Cut(l.Addr().String(), ":")
	l.Close()
	ac.Do("REPLICAOF", "127.0.0.1", dead)
	rc.Do("REPLICAOF", "127.0.0.1", dead)
	for _, cmd := range [][]string{{"GET", "k"}, {"SET", "k", "v"}, {"PING"}, {"DBSIZE"}, {"CONFIG", "GET", "port"}, {"ROLE"}, {"MULTI"}, {"GET", "k"}, {"EXEC"}} {
		got, want := ac.Do(cmd...), rc.Do(cmd...)
		if cmd[0] == "ROLE" || cmd[0] == "CONFIG" {
			if strings.HasPrefix(got, "-") != strings.HasPrefix(want, "-") {
				t.Errorf("%v: got %q, redis-server %q", cmd, got, want)
			}
			continue
		}
		if got != want {
			t.Errorf("%v: got %q, redis-server %q", cmd, got, want)
		}
	}
	// A transaction queued while the server was a primary: EXEC is
	// refused when the link is down by then, for any queued command that
	// may not see stale data (EXECABORT with MASTERDOWN).
	ac2, rc2 := inst.Raw(t), servertest.Dial(t, r.Addr)
	for _, queued := range [][]string{{"GET", "k"}, {"PING"}, {"INFO", "server"}} {
		ac.Do("REPLICAOF", "NO", "ONE")
		rc.Do("REPLICAOF", "NO", "ONE")
		for _, cmd := range [][]string{{"MULTI"}, queued} {
			if got, want := ac.Do(cmd...), rc.Do(cmd...); got != want {
				t.Errorf("%v: got %q, redis-server %q", cmd, got, want)
			}
		}
		ac2.Do("REPLICAOF", "127.0.0.1", dead)
		rc2.Do("REPLICAOF", "127.0.0.1", dead)
		got, want := ac.Do("EXEC"), rc.Do("EXEC")
		if strings.HasPrefix(want, "-") || strings.HasPrefix(got, "-") {
			if got != want {
				t.Errorf("EXEC of %v: got %q, redis-server %q", queued, got, want)
			}
		} else if !strings.HasPrefix(got, "*1\r\n") {
			t.Errorf("EXEC of %v: got %q, redis-server %q", queued, got, want)
		}
	}
}

// CLIENT LIST shows a replica's link to its primary (flag M) and CLIENT
// KILL TYPE master closes it; the link comes back with a partial resync.
func TestClientKillTypeMaster(t *testing.T) {
	r := servertest.PrivateRedis(t, "--repl-diskless-sync-delay", "0")
	rc := servertest.Dial(t, r.Addr)
	rc.Do("SET", "a", "1")
	host, port, _ := strings.Cut(r.Addr, ":")
	inst := servertest.Start(t)
	ac := inst.Raw(t)
	ac.Do("REPLICAOF", host, port)
	waitSynced(t, rc, ac)
	if list := servertest.BulkBody(t, ac.Do("CLIENT", "LIST", "TYPE", "master")); !strings.Contains(list, "flags=M") {
		t.Fatalf("CLIENT LIST TYPE master: %q", list)
	}
	if got := ac.Do("CLIENT", "KILL", "TYPE", "master"); got != ":1\r\n" {
		t.Fatalf("CLIENT KILL TYPE master: %q", got)
	}
	rc.Do("SET", "b", "2")
	waitSynced(t, rc, ac)
	if got := ac.Do("GET", "b"); got != "$1\r\n2\r\n" {
		t.Fatalf("after the link came back: %q", got)
	}
	if !strings.Contains(inst.Logs.String(), "Master accepted a Partial Resynchronization") {
		t.Errorf("no partial resync after CLIENT KILL TYPE master:\n%s", inst.Logs.String())
	}
}

// replica-announce-ip/port are what the primary lists for the replica.
func TestReplicaAnnounce(t *testing.T) {
	p := servertest.Start(t, servertest.WithConfig("repl-diskless-sync-delay", "0"))
	pc := p.Raw(t)
	host, port, _ := strings.Cut(p.Addr, ":")
	rep := servertest.Start(t, servertest.WithConfig("replica-announce-ip", "127.0.0.5", "replica-announce-port", "12345", "replica-priority", "7"))
	rc := rep.Raw(t)
	rc.Do("REPLICAOF", host, port)
	eventually(t, "the replica listed", func() bool {
		return strings.HasPrefix(field(t, pc, "replication", "slave0"), "ip=127.0.0.5,port=12345,state=online")
	})
	if got := field(t, rc, "replication", "slave_priority"); got != "7" {
		t.Errorf("slave_priority = %q", got)
	}
}

// A replica that stops ACKing is dropped after repl-timeout; a primary
// left without replicas frees its backlog after repl-backlog-ttl.
func TestReplTimeoutAndBacklogTTL(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("repl-timeout", "1", "repl-backlog-ttl", "1", "repl-diskless-sync-delay", "0"))
	pc := inst.Raw(t)
	pc.Do("SET", "k", "v")
	conn, err := net.Dial("tcp", inst.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write(servertest.Encode("PSYNC", "?", "-1"))
	br := bufio.NewReader(conn)
	if line, _ := br.ReadString('\n'); !strings.HasPrefix(line, "+FULLRESYNC") {
		t.Fatalf("PSYNC: %q", line)
	}
	eventually(t, "the silent replica dropped", func() bool {
		return strings.Contains(inst.Logs.String(), "Disconnecting timedout replica (streaming sync)")
	})
	eventually(t, "the backlog freed", func() bool {
		return field(t, pc, "replication", "repl_backlog_active") == "0"
	})
}

// A primary that refuses the replica's masterauth: the replica logs
// Redis's line for it (what Redis's own tests wait for) and keeps trying.
func TestMasterAuthRefusedLogged(t *testing.T) {
	r := servertest.PrivateRedis(t, "--requirepass", "right")
	inst := servertest.Start(t, servertest.WithConfig("masterauth", "wrong"))
	host, port, _ := strings.Cut(r.Addr, ":")
	inst.Raw(t).Do("REPLICAOF", host, port)
	want := "Unable to AUTH to MASTER: -WRONGPASS invalid username-password pair or user is disabled."
	eventually(t, "the refusal logged", func() bool { return strings.Contains(inst.Logs.String(), want) })
	if got := field(t, inst.Raw(t), "replication", "master_link_status"); got != "down" {
		t.Errorf("master_link_status %q", got)
	}
}
