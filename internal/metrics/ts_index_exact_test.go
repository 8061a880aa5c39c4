package metrics_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/metrics"
	"github.com/abacusdb/abacus/internal/servertest"
)

// exact fails the test unless every label index of inst holds exactly the
// series its databases hold, with their labels.
func exact(t *testing.T, inst *servertest.Instance, after string) {
	t.Helper()
	inst.Srv.Lock()
	err := metrics.CheckTSIndex(inst.Srv.Env)
	inst.Srv.Unlock()
	if err != nil {
		t.Fatalf("after %s: %v", after, err)
	}
}

// do runs a command and fails the test on an error reply.
func do(t *testing.T, c *servertest.Conn, args ...string) string {
	t.Helper()
	r := c.Do(args...)
	if strings.HasPrefix(r, "-") {
		t.Fatalf("%v: %q", args, r)
	}
	return r
}

// The label index is exact after every path that makes, changes or
// removes a series: no query needs to check it against the keyspace, and a
// match set cached at one generation is right while it holds.
func TestTSIndexExact(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(1_700_000_000_000),
		servertest.WithConfig("dir", t.TempDir(), "enable-debug-command", "yes"))
	c := inst.Raw(t)
	step := func(args ...string) {
		t.Helper()
		do(t, c, args...)
		exact(t, inst, strings.Join(args, " "))
	}
	series := func(db string) {
		t.Helper()
		step("SELECT", db)
		for _, k := range []string{"a", "b", "c", "d"} {
			step("TS.CREATE", k, "LABELS", "l", "v", "k", k)
		}
		step("SELECT", "0")
	}
	series("0")
	series("1")
	step("TS.QUERYINDEX", "l=v")
	step("TS.ALTER", "a", "LABELS", "l", "w")
	step("TS.ALTER", "a", "RETENTION", "10")
	step("TS.ADD", "e", "1", "1", "LABELS", "l", "v")
	step("DEL", "b")
	step("UNLINK", "c")
	step("RENAME", "a", "a2")
	step("RENAME", "a2", "d") // over another series
	step("COPY", "d", "d2")
	step("COPY", "e", "d", "REPLACE")
	step("MOVE", "d2", "2")
	step("SET", "e", "x") // a series replaced by a string
	step("DEL", "e")
	step("TS.CREATE", "e", "LABELS", "l", "v")
	step("RENAME", "e", "str")
	step("SET", "str", "y")

	// DUMP and RESTORE, REPLACE over a series with other labels.
	step("TS.CREATE", "r", "LABELS", "l", "dump")
	dump := servertest.BulkBody(t, do(t, c, "DUMP", "r"))
	step("TS.CREATE", "r2", "LABELS", "l", "other")
	step("RESTORE", "r2", "0", dump, "REPLACE")
	step("DEL", "r")
	step("RESTORE", "r", "0", dump)

	// SWAPDB both ways, and with an empty database.
	step("SWAPDB", "0", "1")
	step("SWAPDB", "1", "5")
	step("SWAPDB", "5", "0")
	step("FLUSHDB")
	series("0")

	// Expiry, lazy (a read) and by the active cycle.
	step("PEXPIRE", "a", "100")
	step("PEXPIRE", "b", "100")
	inst.Clock.Advance(200 * time.Millisecond)
	exact(t, inst, "the TTL passed (a and b still stored)")
	step("TS.QUERYINDEX", "l=v")
	step("PERSIST", "c")
	step("SELECT", "6")
	step("TS.CREATE", "x", "LABELS", "l", "v")
	if r := do(t, c, "PEXPIRE", "x", "100"); r != ":1\r\n" {
		t.Fatalf("PEXPIRE x: %q", r)
	}
	inst.Clock.Advance(200 * time.Millisecond)
	for deadline := time.Now().Add(30 * time.Second); strings.Contains(c.Do("INFO", "keyspace"), "db6:"); {
		// INFO reads no key: the active cycle reclaims x.
		if time.Now().After(deadline) {
			t.Fatalf("the active expire cycle did not reclaim x: %q", c.Do("INFO", "keyspace"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	exact(t, inst, "active expiry")
	step("SELECT", "0")

	// A script that rolls back: label changes, deletes, a flush and a
	// SWAPDB are all taken back.
	for _, body := range []string{
		"redis.call('TS.ALTER', 'c', 'LABELS', 'l', 'x')\nredis.call('DEL', 'd')\nredis.call('TS.CREATE', 'new', 'LABELS', 'l', 'v')",
		"redis.call('FLUSHDB')\nredis.call('TS.CREATE', 'new', 'LABELS', 'l', 'v')",
		"redis.call('RENAME', 'c', 'c3')\nredis.call('SWAPDB', 0, 1)\nredis.call('DEL', 'a')\nredis.call('SWAPDB', 0, 1)\nredis.call('TS.ALTER', 'c3', 'LABELS', 'q', 'r')",
		"redis.call('FLUSHALL')\nredis.call('TS.CREATE', 'c', 'LABELS', 'z', 'z')",
	} {
		script := "#!lua flags=transactional\n" + body + "\nreturn redis.call('TS.ADD', 'missing', 1, 1, 'ON_DUPLICATE', 'bad')\n"
		if r := c.Do("EVAL", script, "0"); r[0] != '-' {
			t.Fatalf("script did not fail: %q", r)
		}
		exact(t, inst, "a rolled-back script: "+body)
	}
	// The same, committed.
	step("EVAL", "redis.call('TS.ALTER', 'c', 'LABELS', 'l', 'x')\nredis.call('DEL', 'd')\nredis.call('SWAPDB', 0, 1)\nreturn 1", "0")
	step("SWAPDB", "0", "1")
	step("MULTI")
	do(t, c, "TS.ALTER", "c", "LABELS", "l", "y")
	do(t, c, "FLUSHDB")
	do(t, c, "TS.CREATE", "m", "LABELS", "l", "v")
	step("EXEC")

	// Loading: DEBUG RELOAD (RDB) and the AOF.
	series("3")
	step("DEBUG", "RELOAD")
	step("CONFIG", "SET", "appendonly", "yes")
	step("TS.CREATE", "after-aof", "LABELS", "l", "v")
	loadAOF(t, c)
	exact(t, inst, "DEBUG LOADAOF")
	if r := c.Do("TS.QUERYINDEX", "l=v"); !strings.Contains(r, "after-aof") {
		t.Fatalf("TS.QUERYINDEX after DEBUG LOADAOF: %q", r)
	}
	step("CONFIG", "SET", "appendonly", "no")

	// Eviction: every key goes under a tiny maxmemory.
	step("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
	do(t, c, "CONFIG", "SET", "maxmemory", "1")
	c.Do("SET", "x", "y") // evicts, then may be refused
	do(t, c, "CONFIG", "SET", "maxmemory", "0")
	exact(t, inst, "eviction")
	step("FLUSHALL")
}

// loadAOF runs DEBUG LOADAOF once the AOF that turning appendonly on
// starts has its manifest.
func loadAOF(t *testing.T, c *servertest.Conn) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := c.Do("DEBUG", "LOADAOF")
		if r == "+OK\r\n" {
			return
		}
		if !strings.Contains(r, "no append only file") || time.Now().After(deadline) {
			t.Fatalf("DEBUG LOADAOF: %q", r)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A replica's index after a full sync holds the primary's series, not the
// ones it had; MIGRATE takes a series out of one index into another.
func TestTSIndexExactReplicationMigrate(t *testing.T) {
	primary := servertest.Start(t, servertest.WithConfig("repl-diskless-sync-delay", "0"))
	replica := servertest.Start(t)
	pc, rc := primary.Raw(t), replica.Raw(t)
	do(t, pc, "TS.CREATE", "p1", "LABELS", "l", "v")
	do(t, pc, "TS.CREATE", "p2", "LABELS", "l", "w")
	do(t, rc, "TS.CREATE", "mine", "LABELS", "l", "v")
	do(t, rc, "TS.QUERYINDEX", "l=v") // the replica's index exists before the sync
	host, port, _ := net.SplitHostPort(primary.Addr)
	do(t, rc, "REPLICAOF", host, port)
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(rc.Do("INFO", "replication"), "master_link_status:up") ||
		strings.Contains(rc.Do("INFO", "replication"), "master_sync_in_progress:1") ||
		rc.Do("EXISTS", "p1") != ":1\r\n" {
		if time.Now().After(deadline) {
			t.Fatal("replica did not sync")
		}
		time.Sleep(20 * time.Millisecond)
	}
	exact(t, replica, "a full sync")
	if r := rc.Do("TS.QUERYINDEX", "l=v"); r != "*1\r\n$2\r\np1\r\n" {
		t.Fatalf("replica's TS.QUERYINDEX l=v: %q", r)
	}
	do(t, rc, "REPLICAOF", "NO", "ONE")

	thost, tport, _ := net.SplitHostPort(replica.Addr)
	do(t, pc, "MIGRATE", thost, tport, "p2", "0", "5000", "REPLACE")
	exact(t, primary, "MIGRATE (source)")
	exact(t, replica, "MIGRATE (target)")
	if r := rc.Do("TS.QUERYINDEX", "l=w"); r != "*1\r\n$2\r\np2\r\n" {
		t.Fatalf("target's TS.QUERYINDEX l=w: %q", r)
	}
	if r := pc.Do("TS.QUERYINDEX", "l=w"); r != "*0\r\n" {
		t.Fatalf("source's TS.QUERYINDEX l=w: %q", r)
	}
}
