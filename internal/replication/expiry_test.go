package replication_test

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// A replica keeps an expired key until its primary's DEL but answers its
// own clients as if it were gone, as a redis-server 7.0 replica does: an
// Abacus replica and a redis-server replica of the same redis-server
// primary (its active expiry off, so that no DEL comes) answer alike.
func TestReplicaHidesExpiredKeys(t *testing.T) {
	primary := servertest.PrivateRedis(t, "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0")
	pc := servertest.Dial(t, primary.Addr)
	host, port, _ := strings.Cut(primary.Addr, ":")
	rr := servertest.PrivateRedis(t, "--replicaof", host, port)
	rc := servertest.Dial(t, rr.Addr)
	inst := servertest.Start(t)
	ac := inst.Raw(t)
	ac.Do("REPLICAOF", host, port)

	pc.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0")
	pc.Do("SET", "keep", "1")
	pc.Do("HSET", "hkeep", "f", "v")
	pc.Do("SET", "gone", "v", "PX", "300")
	pc.Do("HSET", "hgone", "f", "v", "g", "w")
	pc.Do("PEXPIRE", "hgone", "300")
	pc.Do("RPUSH", "lgone", "a", "b")
	pc.Do("PEXPIRE", "lgone", "300")
	waitSynced(t, pc, rc)
	waitSynced(t, pc, ac)
	time.Sleep(400 * time.Millisecond) // the keys' TTLs pass; nothing on the primary touches them

	reads := [][]string{
		{"GET", "gone"}, {"GET", "keep"}, {"EXISTS", "gone", "keep", "hgone", "lgone"},
		{"TTL", "gone"}, {"PTTL", "hgone"}, {"EXPIRETIME", "lgone"}, {"TYPE", "gone"}, {"TYPE", "hgone"},
		{"STRLEN", "gone"}, {"MGET", "gone", "keep"}, {"HGETALL", "hgone"}, {"HGET", "hgone", "f"},
		{"HLEN", "hgone"}, {"LRANGE", "lgone", "0", "-1"}, {"LLEN", "lgone"}, {"OBJECT", "ENCODING", "gone"},
		{"DBSIZE"}, {"DUMP", "gone"}, {"GETRANGE", "gone", "0", "-1"},
	}
	for _, cmd := range reads {
		want, got := rc.Do(cmd...), ac.Do(cmd...)
		if got != want {
			t.Errorf("%v on the replica: got %q, redis-server's replica %q", cmd, got, want)
		}
	}
	keys := func(c *servertest.Conn) string {
		k := servertest.MustStrings(t, c.Do("KEYS", "*"))
		sort.Strings(k)
		return strings.Join(k, ",")
	}
	if got, want := keys(ac), keys(rc); got != want {
		t.Errorf("KEYS *: got %s, redis-server's replica %s", got, want)
	}
	// The keys are still stored: DBSIZE counts them on both.
	if got := ac.Do("DBSIZE"); got != ":5\r\n" {
		t.Errorf("DBSIZE on the replica = %q: the replica deleted expired keys itself", got)
	}

	// The primary's expiry sends the DELs: both replicas drop the keys.
	pc.Do("DEBUG", "SET-ACTIVE-EXPIRE", "1")
	deadline := time.Now().Add(20 * time.Second)
	for pc.Do("DBSIZE") != ":2\r\n" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	waitSynced(t, pc, rc)
	waitSynced(t, pc, ac)
	if got, want := ac.Do("DBSIZE"), rc.Do("DBSIZE"); got != want || got != ":2\r\n" {
		t.Errorf("DBSIZE after the primary's DELs: %q, redis-server's replica %q", got, want)
	}
}
