package commands_test

import (
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/servertest"
)

// ownsAll is the ClusterView of a node owning every slot.
type ownsAll struct{}

func (ownsAll) Route(int) engine.SlotRoute { return engine.SlotRoute{Served: true, Self: true} }
func (ownsAll) OK() bool                   { return true }

// TestMigrateToRedisCluster moves keys of one slot from an Abacus node in
// cluster mode to a redis-server 7.0.15 node in cluster mode, as redis-cli
// --cluster reshard does (KEYS form, AUTH2, COPY, REPLACE), and checks
// that keys a redis-server cannot load (a time series, a hash with field
// TTLs) fail alone, stay here, and are named in the error.
func TestMigrateToRedisCluster(t *testing.T) {
	r := servertest.PrivateRedis(t, "--cluster-enabled", "yes")
	rc := servertest.Dial(t, r.Addr)
	servertest.ExpectReply(t, rc.Do("CLUSTER", "ADDSLOTSRANGE", "0", "16383"), "+OK\r\n")
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(rc.Do("CLUSTER", "INFO"), "cluster_state:ok"); {
		if time.Now().After(deadline) {
			t.Fatal("redis-server cluster node did not reach state ok")
		}
		time.Sleep(50 * time.Millisecond)
	}
	servertest.ExpectReply(t, rc.Do("ACL", "SETUSER", "mover", "on", ">secret", "~*", "+@all"), "+OK\r\n")

	inst := servertest.Start(t)
	inst.Srv.Lock()
	inst.Srv.Env.SetCluster(ownsAll{})
	inst.Srv.Unlock()
	a := inst.Raw(t)
	host, port := hostPort(t, r.Addr)
	for _, cmd := range [][]string{
		{"SET", "{t}s", "v"},
		{"RPUSH", "{t}l", "x", "y"},
		{"PEXPIRE", "{t}l", "500000"},
		{"ZADD", "{t}z", "1", "m"},
		{"TS.CREATE", "{t}ts"},
		{"HSET", "{t}h", "f", "v", "g", "w"},
		{"HEXPIRE", "{t}h", "1000", "FIELDS", "1", "f"},
		{"SET", "{t}c", "copied"},
	} {
		if got := a.Do(cmd...); strings.HasPrefix(got, "-") {
			t.Fatalf("%v: %q", cmd, got)
		}
	}
	// The slot's keys as GETKEYSINSLOT would list them.
	got := a.Do("MIGRATE", host, port, "", "0", "5000", "AUTH2", "mover", "secret",
		"KEYS", "{t}s", "{t}ts", "{t}l", "{t}h", "{t}z", "{t}missing")
	want := "-ERR Target instance replied with error: "
	if !strings.HasPrefix(got, want) || !strings.Contains(got, "key '{t}ts' is a time series") {
		t.Fatalf("MIGRATE: got %q, want %q... naming {t}ts", got, want)
	}
	for key, here := range map[string]bool{"{t}s": false, "{t}l": false, "{t}z": false, "{t}ts": true, "{t}h": true} {
		if n := a.Do("EXISTS", key); (n == ":1\r\n") != here {
			t.Errorf("after MIGRATE, EXISTS %s here = %q", key, n)
		}
		if n := rc.Do("EXISTS", key); (n == ":1\r\n") == here {
			t.Errorf("after MIGRATE, EXISTS %s on redis-server = %q", key, n)
		}
	}
	// A cluster node restores with RESTORE-ASKING.
	if stats := rc.Do("INFO", "commandstats"); !strings.Contains(stats, "cmdstat_restore-asking:calls=5,") {
		t.Errorf("the target did not get RESTORE-ASKING for each key: %s", stats)
	}
	servertest.ExpectReply(t, rc.Do("LRANGE", "{t}l", "0", "-1"), "*2\r\n$1\r\nx\r\n$1\r\ny\r\n")
	if ttl := rc.Do("PTTL", "{t}l"); ttl == ":-1\r\n" || ttl == ":-2\r\n" {
		t.Errorf("TTL lost: %q", ttl)
	}
	// The hash alone: its error names it.
	got = a.Do("MIGRATE", host, port, "{t}h", "0", "5000", "AUTH2", "mover", "secret")
	if !strings.Contains(got, "key '{t}h' is a hash with field TTLs") {
		t.Errorf("MIGRATE of a hash with field TTLs: %q", got)
	}
	// COPY keeps the key here; REPLACE overwrites there.
	servertest.ExpectReply(t, a.Do("MIGRATE", host, port, "{t}c", "0", "5000", "AUTH2", "mover", "secret", "COPY"), "+OK\r\n")
	servertest.ExpectReply(t, a.Do("SET", "{t}c", "second"), "+OK\r\n")
	got = a.Do("MIGRATE", host, port, "{t}c", "0", "5000", "AUTH2", "mover", "secret", "COPY")
	if !strings.HasPrefix(got, "-ERR Target instance replied with error: BUSYKEY") {
		t.Errorf("MIGRATE COPY onto an existing key: %q", got)
	}
	servertest.ExpectReply(t, a.Do("MIGRATE", host, port, "{t}c", "0", "5000", "AUTH2", "mover", "secret", "COPY", "REPLACE"), "+OK\r\n")
	servertest.ExpectReply(t, rc.Do("GET", "{t}c"), "$6\r\nsecond\r\n")
	servertest.ExpectReply(t, a.Do("GET", "{t}c"), "$6\r\nsecond\r\n")
	// A wrong password fails every key, and none is deleted.
	got = a.Do("MIGRATE", host, port, "{t}c", "0", "5000", "AUTH2", "mover", "wrong")
	if !strings.HasPrefix(got, "-ERR Target instance replied with error: WRONGPASS") {
		t.Errorf("MIGRATE with a wrong password: %q", got)
	}
	servertest.ExpectReply(t, a.Do("EXISTS", "{t}c"), ":1\r\n")
}
