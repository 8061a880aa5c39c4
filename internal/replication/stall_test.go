package replication_test

import (
	"strings"
	"syscall"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// The primary stops sending (a redis-server stopped with SIGSTOP: its
// socket stays open, new connections are accepted by the kernel and
// never answered). The replica notices after repl-timeout, says so in
// its log, keeps trying with backoff, serves its old data meanwhile (or
// MASTERDOWN with replica-serve-stale-data no), and continues partially
// once the primary runs again.
func TestReplicaDetectsStalledPrimary(t *testing.T) {
	r := servertest.PrivateRedis(t, "--repl-ping-replica-period", "1")
	rc := servertest.Dial(t, r.Addr)
	rc.Do("SET", "old", "kept")
	inst := servertest.Start(t, servertest.WithConfig("repl-timeout", "3"))
	ac := inst.Raw(t)
	host, port, _ := strings.Cut(r.Addr, ":")
	ac.Do("REPLICAOF", host, port)
	waitSynced(t, rc, ac)

	pid := redisPid(t, rc)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	}()
	eventually(t, "the stalled link noticed", func() bool {
		return strings.Contains(inst.Logs.String(), "MASTER timeout: no data nor PING received...")
	})
	if got := field(t, ac, "replication", "master_link_status"); got != "down" {
		t.Errorf("master_link_status %q after the timeout", got)
	}
	if got := ac.Do("GET", "old"); got != "$4\r\nkept\r\n" {
		t.Errorf("old data while the link is down: %q", got)
	}
	ac.Do("CONFIG", "SET", "replica-serve-stale-data", "no")
	if got := ac.Do("GET", "old"); got != "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n" {
		t.Errorf("GET with replica-serve-stale-data no: %q", got)
	}
	ac.Do("CONFIG", "SET", "replica-serve-stale-data", "yes")
	// New attempts hang in the handshake too: each times out, and the
	// waits between them grow.
	eventually(t, "two more attempts timed out", func() bool {
		return strings.Count(inst.Logs.String(), "Timeout connecting to the MASTER...") >= 2
	})
	logs := inst.Logs.String()
	for _, l := range []string{"in 1s (attempt 1)", "in 2s (attempt 2)", "in 4s (attempt 3)"} {
		if !strings.Contains(logs, l) {
			t.Errorf("no backoff step %q:\n%s", l, logs)
		}
	}

	syscall.Kill(pid, syscall.SIGCONT)
	stopped = false
	rc.Do("SET", "new", "1")
	waitSynced(t, rc, ac)
	if got := ac.Do("GET", "new"); got != "$1\r\n1\r\n" {
		t.Errorf("write after the primary resumed: %q", got)
	}
	if !strings.Contains(inst.Logs.String(), "Master accepted a Partial Resynchronization") {
		t.Errorf("no partial resync after the stall:\n%s", inst.Logs.String())
	}
}
