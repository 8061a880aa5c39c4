package commands_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// TestPauseKeepsExpiredKeys: while clients are paused a key whose TTL
// passed reads as absent but stays stored (DBSIZE counts it, nothing is
// counted as expired), as redis-server 7.0 keeps its dataset unchanged
// during a pause; after CLIENT UNPAUSE the next read deletes it.
func TestPauseKeepsExpiredKeys(t *testing.T) {
	inst := servertest.Start(t)
	r := servertest.PrivateRedis(t)
	d := servertest.DialDiff(t, inst.Addr, r.Addr)
	expired := func(c *servertest.Conn) string { return statsField(t, c, "expired_keys") }
	// (Under PAUSE ALL this client's own reads would wait for the end.)
	for _, mode := range []string{"WRITE"} {
		d.Do("SET", "k", "v", "PX", "100")
		d.Do("SET", "stay", "v")
		d.Do("CLIENT", "PAUSE", "5000", mode)
		time.Sleep(200 * time.Millisecond)
		d.Do("GET", "k")
		d.Do("EXISTS", "k")
		d.Do("DBSIZE")
		if a, b := expired(d.A), expired(d.R); a != "0" || b != "0" {
			t.Fatalf("%s pause: expired_keys abacus %s, redis %s, want 0", mode, a, b)
		}
		d.Do("CLIENT", "UNPAUSE")
		d.Do("GET", "k")
		d.Do("DBSIZE")
		if a, b := expired(d.A), expired(d.R); a != "1" || b != "1" {
			t.Fatalf("after the %s pause: expired_keys abacus %s, redis %s, want 1", mode, a, b)
		}
		d.Do("FLUSHALL")
		d.Do("CONFIG", "RESETSTAT")
	}
}

// TestPauseHoldsEviction: over maxmemory during a pause, no key is
// evicted (Redis's isSafeToPerformEvictions); the first command after the
// pause evicts.
func TestPauseHoldsEviction(t *testing.T) {
	inst := servertest.Start(t)
	r := servertest.PrivateRedis(t)
	d := servertest.DialDiff(t, inst.Addr, r.Addr)
	evicted := func(c *servertest.Conn) string { return statsField(t, c, "evicted_keys") }
	val := strings.Repeat("x", 1000)
	for i := range 5000 {
		d.A.Write(servertest.Encode("SET", "k"+strconv.Itoa(i), val))
		d.R.Write(servertest.Encode("SET", "k"+strconv.Itoa(i), val))
	}
	for range 5000 {
		d.A.Read()
		d.R.Read()
	}
	d.Do("CLIENT", "PAUSE", "5000", "WRITE")
	d.Do("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
	d.Do("CONFIG", "SET", "maxmemory", "1mb")
	d.Do("GET", "k1")
	d.Do("DBSIZE")
	if a, b := evicted(d.A), evicted(d.R); a != "0" || b != "0" {
		t.Fatalf("during the pause: evicted_keys abacus %s, redis %s, want 0", a, b)
	}
	d.Do("CLIENT", "UNPAUSE")
	d.A.Do("GET", "k1")
	d.R.Do("GET", "k1")
	if a, b := evicted(d.A), evicted(d.R); a == "0" || b == "0" {
		t.Fatalf("after the pause: evicted_keys abacus %s, redis %s, want some", a, b)
	}
}

// statsField is the value of name in c's INFO stats.
func statsField(t *testing.T, c *servertest.Conn, name string) string {
	t.Helper()
	for _, l := range strings.Split(servertest.BulkBody(t, c.Do("INFO", "stats")), "\r\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return v
		}
	}
	t.Fatalf("no %s in INFO stats", name)
	return ""
}
