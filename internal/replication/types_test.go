package replication_test

import (
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// What a redis-server 7.0 replica of an Abacus primary gets for the types
// Redis 7.0 cannot hold (docs/design.md, "Replication"): no time series
// (skipped in the snapshot; their commands fail on the replica without
// breaking the link), and hashes with field TTLs as plain hashes, whose
// fields go there when the primary expires them (its HDEL).
func TestRedisReplicaOfAbacusTypes(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("repl-diskless-sync-delay", "0"))
	pc := inst.Raw(t)
	pc.Do("TS.CREATE", "temp")
	pc.Do("TS.ADD", "temp", "1000", "21.5")
	pc.Do("HSET", "h", "a", "1", "b", "2", "c", "3")
	pc.Do("HPEXPIRE", "h", "600000", "FIELDS", "1", "a")
	pc.Do("SET", "plain", "x")
	_, port, _ := strings.Cut(inst.Addr, ":")
	r := servertest.PrivateRedis(t, "--replicaof", "127.0.0.1", port)
	rc := servertest.Dial(t, r.Addr)
	waitSynced(t, pc, rc)
	if got := rc.Do("EXISTS", "temp"); got != ":0\r\n" {
		t.Errorf("the time series reached the redis-server replica: %q", got)
	}
	if got := servertest.MustStrings(t, rc.Do("HGETALL", "h")); len(got) != 6 {
		t.Errorf("hash with field TTLs on the redis-server replica: %q", got)
	}

	// The stream: time-series commands and field TTLs fail there, the
	// link stays up, the rest applies.
	pc.Do("TS.ADD", "temp", "2000", "22")
	pc.Do("HPEXPIRE", "h", "50", "FIELDS", "1", "b")
	pc.Do("SET", "after", "1")
	waitSynced(t, pc, rc)
	if got := rc.Do("GET", "after"); got != "$1\r\n1\r\n" {
		t.Fatalf("stream after the unknown commands: %q", got)
	}
	// Field b expires on the primary, which propagates HDEL h b as it
	// reclaims it (Redis 7.4 does): the redis-server replica, which knew
	// no TTL for it, drops it then.
	deadline := time.Now().Add(20 * time.Second)
	for pc.Do("HEXISTS", "h", "b") != ":0\r\n" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	waitSynced(t, pc, rc)
	if got := servertest.MustStrings(t, rc.Do("HKEYS", "h")); strings.Join(got, ",") != "a,c" && strings.Join(got, ",") != "c,a" {
		t.Errorf("fields on the redis-server replica after b expired: %q", got)
	}
	// The last fields expire: the HDELs take the hash away there too.
	pc.Do("HPEXPIRE", "h", "1", "FIELDS", "2", "a", "c")
	for pc.Do("EXISTS", "h") != ":0\r\n" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	waitSynced(t, pc, rc)
	if got := rc.Do("EXISTS", "h"); got != ":0\r\n" {
		t.Errorf("the emptied hash is still on the redis-server replica: %q", got)
	}
	if got := field(t, rc, "replication", "master_link_status"); got != "up" {
		t.Errorf("link status %q", got)
	}
}
