package replication_test

import (
	"math/rand"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// role is the first element of ROLE: master or slave.
func role(t *testing.T, c *servertest.Conn) string {
	t.Helper()
	return servertest.MustParse(t, c.Do("ROLE")).Items[0].Str
}

func redisPid(t *testing.T, c *servertest.Conn) int {
	t.Helper()
	pid, err := strconv.Atoi(field(t, c, "server", "process_id"))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// failoverScript runs FAILOVER's refusals, a wait that times out, and a
// forced hand-over to a replica that never answers (then aborted) on the
// primary at addr, and returns the replies, which must be redis-server's.
// The replica is a redis-server it stops with SIGSTOP.
func failoverScript(t *testing.T, addr string) []string {
	var out []string
	var rport string
	pc := servertest.Dial(t, addr)
	do := func(args ...string) string {
		r := pc.Do(args...)
		cmd := strings.Join(args, " ")
		if rport != "" {
			// The replica's port differs from run to run.
			cmd = strings.ReplaceAll(cmd, rport, "PORT")
		}
		out = append(out, cmd+" => "+r)
		return r
	}
	for _, cmd := range [][]string{{"FAILOVER"}, {"FAILOVER", "ABORT"}, {"FAILOVER", "TIMEOUT", "0"},
		{"FAILOVER", "TIMEOUT", "-5"}, {"FAILOVER", "TIMEOUT", "x"}, {"FAILOVER", "TO", "127.0.0.1", "x"},
		{"FAILOVER", "bogus"}, {"FAILOVER", "TO", "a"}, {"FAILOVER", "ABORT", "TIMEOUT", "5"},
		{"FAILOVER", "TIMEOUT", "5", "TIMEOUT", "5"}, {"FAILOVER", "FORCE", "FORCE"}, {"FAILOVER", "FORCE"}} {
		do(cmd...)
	}
	host, port, _ := strings.Cut(addr, ":")
	r := servertest.PrivateRedis(t, "--replicaof", host, port)
	rc := servertest.Dial(t, r.Addr)
	rhost, rp, _ := strings.Cut(r.Addr, ":")
	rport = rp
	pc.Do("SET", "before", "1")
	waitSynced(t, pc, rc)
	eventually(t, "replica online", func() bool { return strings.Contains(field(t, pc, "replication", "slave0"), "state=online") })
	do("FAILOVER", "FORCE")
	do("FAILOVER", "TO", rhost, "1")
	do("FAILOVER", "TO", rhost, rport, "FORCE")

	// The replica stops: the offset moves past its last ACK and the wait
	// for it runs into the timeout; writes wait meanwhile, reads do not.
	pid := redisPid(t, rc)
	syscall.Kill(pid, syscall.SIGSTOP)
	defer syscall.Kill(pid, syscall.SIGCONT)
	do("SET", "k", "1")
	do("FAILOVER", "TO", rhost, rport, "TIMEOUT", "1500")
	if got := field(t, pc, "replication", "master_failover_state"); got != "waiting-for-sync" {
		t.Errorf("%s: master_failover_state %q during the wait", addr, got)
	}
	do("FAILOVER")
	do("REPLICAOF", "NO", "ONE")
	// CLIENT UNPAUSE lifts CLIENT PAUSE's pause, not the failover's.
	do("CLIENT", "UNPAUSE")
	writer := servertest.Dial(t, addr)
	writer.Write(servertest.Encode("SET", "paused", "1"))
	do("GET", "k")
	// The SET is held: given time to run, it has not (a lifted pause
	// would have let it).
	time.Sleep(200 * time.Millisecond)
	do("GET", "paused")
	eventually(t, "failover timed out", func() bool {
		return field(t, pc, "replication", "master_failover_state") == "no-failover"
	})
	out = append(out, "paused SET => "+writer.Read())
	do("FAILOVER", "ABORT")

	// FORCE: the hand-over starts at the timeout; the target does not
	// answer, so it stays in progress until aborted.
	do("FAILOVER", "TO", rhost, rport, "TIMEOUT", "100", "FORCE")
	eventually(t, "forced hand-over", func() bool {
		return field(t, pc, "replication", "master_failover_state") == "failover-in-progress"
	})
	out = append(out, "ROLE in progress => "+role(t, pc))
	do("FAILOVER", "ABORT")
	out = append(out, "state after abort => "+field(t, pc, "replication", "master_failover_state"))
	out = append(out, "ROLE after abort => "+role(t, pc))
	do("SET", "after", "1")
	return out
}

// FAILOVER's replies and states on an Abacus primary are redis-server's,
// step by step.
func TestFailoverRefusalsAndTimeouts(t *testing.T) {
	r := servertest.PrivateRedis(t)
	want := failoverScript(t, r.Addr)
	inst := servertest.Start(t, servertest.WithConfig("repl-diskless-sync-delay", "0"))
	got := failoverScript(t, inst.Addr)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("FAILOVER differs\nabacus:\n%s\nredis:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, l := range []string{"FAILOVER to 127.0.0.1:", "aborted: Replica never caught up before timeout",
		"time out exceeded, failing over.", "aborted: Failover manually aborted"} {
		if !strings.Contains(inst.Logs.String(), l) {
			t.Errorf("no log line %q:\n%s", l, inst.Logs.String())
		}
	}
}

// handOver runs FAILOVER TO on the primary pc and waits until the
// replica rc is the primary and pc its replica, in sync.
func handOver(t *testing.T, pc, rc *servertest.Conn, raddr string) {
	t.Helper()
	rhost, rport, _ := strings.Cut(raddr, ":")
	loadTypes(t, pc)
	randomWrites(t, pc, rand.New(rand.NewSource(5)), 200)
	sameData(t, pc, rc)
	eventually(t, "replica online", func() bool { return strings.Contains(field(t, pc, "replication", "slave0"), "state=online") })
	if got := pc.Do("FAILOVER", "TO", rhost, rport); got != "+OK\r\n" {
		t.Fatalf("FAILOVER TO: %q", got)
	}
	eventually(t, "roles swapped", func() bool {
		return role(t, rc) == "master" && role(t, pc) == "slave" &&
			field(t, pc, "replication", "master_failover_state") == "no-failover" &&
			field(t, pc, "replication", "master_link_status") == "up"
	})
	if got := pc.Do("SET", "on-old-primary", "1"); !strings.HasPrefix(got, "-READONLY") {
		t.Errorf("write on the old primary: %q", got)
	}
	rc.Do("SET", "on-new-primary", "1")
	randomWrites(t, rc, rand.New(rand.NewSource(6)), 100)
	sameData(t, rc, pc)
}

// Abacus to Abacus: the old primary hands over and continues as a
// replica of the new one without a full sync.
func TestFailoverAbacusToAbacus(t *testing.T) {
	a := servertest.Start(t, servertest.WithConfig("repl-diskless-sync-delay", "0"))
	b := servertest.Start(t, servertest.WithConfig("repl-diskless-sync-delay", "0"))
	ac, bc := a.Raw(t), b.Raw(t)
	host, port, _ := strings.Cut(a.Addr, ":")
	bc.Do("REPLICAOF", host, port)
	handOver(t, ac, bc, b.Addr)
	for _, l := range []string{"is synced, failing over.", "MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization."} {
		if !strings.Contains(a.Logs.String(), l) {
			t.Errorf("old primary: no %q:\n%s", l, a.Logs.String())
		}
	}
	for _, l := range []string{"Failover request received for replid", "Partial resynchronization request from"} {
		if !strings.Contains(b.Logs.String(), l) {
			t.Errorf("new primary: no %q:\n%s", l, b.Logs.String())
		}
	}
}

// An Abacus primary hands over to a redis-server replica.
func TestFailoverAbacusToRedis(t *testing.T) {
	a := servertest.Start(t, servertest.WithConfig("repl-diskless-sync-delay", "0"))
	host, port, _ := strings.Cut(a.Addr, ":")
	r := servertest.PrivateRedis(t, "--replicaof", host, port)
	ac, rc := a.Raw(t), servertest.Dial(t, r.Addr)
	handOver(t, ac, rc, r.Addr)
	if got := field(t, rc, "stats", "sync_partial_ok"); got != "1" {
		t.Errorf("redis-server's sync_partial_ok = %q after the hand-over", got)
	}
}

// A redis-server primary hands over to an Abacus replica: Abacus takes
// PSYNC ... FAILOVER, promotes itself and continues the history.
func TestRedisFailoverToAbacus(t *testing.T) {
	r := servertest.PrivateRedis(t)
	a := servertest.Start(t, servertest.WithConfig("repl-diskless-sync-delay", "0"))
	rc, ac := servertest.Dial(t, r.Addr), a.Raw(t)
	host, port, _ := strings.Cut(r.Addr, ":")
	ac.Do("REPLICAOF", host, port)
	handOver(t, rc, ac, a.Addr)
	if !strings.Contains(a.Logs.String(), "Failover request received for replid") ||
		!strings.Contains(a.Logs.String(), "Partial resynchronization request from") {
		t.Errorf("Abacus did not take the hand-over with a partial resync:\n%s", a.Logs.String())
	}
}

// FAILOVER without TO picks the first replica caught up; the other
// replica stays with the old primary, now a replica in a chain, and gets
// the new primary's writes through it.
func TestFailoverToAnyReplicaKeepsChain(t *testing.T) {
	cfg := servertest.WithConfig("repl-diskless-sync-delay", "0")
	a, b, c := servertest.Start(t, cfg), servertest.Start(t, cfg), servertest.Start(t, cfg)
	ac, bc, cc := a.Raw(t), b.Raw(t), c.Raw(t)
	host, port, _ := strings.Cut(a.Addr, ":")
	bc.Do("REPLICAOF", host, port)
	cc.Do("REPLICAOF", host, port)
	loadTypes(t, ac)
	sameData(t, ac, bc)
	sameData(t, ac, cc)
	eventually(t, "both replicas online", func() bool {
		return strings.Contains(field(t, ac, "replication", "slave1"), "state=online")
	})
	if got := ac.Do("FAILOVER"); got != "+OK\r\n" {
		t.Fatalf("FAILOVER: %q", got)
	}
	var promoted, other *servertest.Conn
	eventually(t, "a replica promoted", func() bool {
		switch {
		case role(t, bc) == "master":
			promoted, other = bc, cc
		case role(t, cc) == "master":
			promoted, other = cc, bc
		default:
			return false
		}
		return field(t, ac, "replication", "master_failover_state") == "no-failover" &&
			field(t, ac, "replication", "master_link_status") == "up"
	})
	if !strings.Contains(a.Logs.String(), "FAILOVER requested to any replica.") {
		t.Errorf("no log line for FAILOVER to any replica:\n%s", a.Logs.String())
	}
	promoted.Do("SET", "after", "1")
	randomWrites(t, promoted, rand.New(rand.NewSource(8)), 100)
	sameData(t, promoted, ac)
	sameData(t, ac, other)
}
