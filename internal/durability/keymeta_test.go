package durability_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// TestRDBKeyMetaDiff: the LRU idle time and the LFU counter survive a
// snapshot, from Abacus to redis-server, from redis-server to Abacus and
// through DEBUG RELOAD, as in Redis 7.0 where the file carries IDLE under
// the LRU policies and FREQ under the LFU ones, and a loaded key takes the
// one its policy uses. RESTORE's IDLETIME and FREQ set the same metadata
// on both servers; lfu-decay-time 0 keeps the counters still.
func TestRDBKeyMetaDiff(t *testing.T) {
	dirA := t.TempDir()
	inst := servertest.Start(t, servertest.WithConfig("dir", dirA, "enable-debug-command", "yes"))
	r := servertest.PrivateRedis(t, "--enable-debug-command", "yes")
	a, rc := servertest.Dial(t, inst.Addr), servertest.Dial(t, r.Addr)
	both := func(args ...string) {
		t.Helper()
		for _, c := range []*servertest.Conn{a, rc} {
			if rep := c.Do(args...); strings.HasPrefix(rep, "-") {
				t.Fatalf("%v: %q", args, rep)
			}
		}
	}
	intReply := func(c *servertest.Conn, args ...string) int {
		t.Helper()
		rep := c.Do(args...)
		n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(rep, ":")))
		if err != nil {
			t.Fatalf("%v: %q", args, rep)
		}
		return n
	}
	copyFile := func(from, to string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rc.Do("SET", "tmp", "value")
	payload := servertest.BulkBody(t, rc.Do("DUMP", "tmp"))

	for _, policy := range []string{"allkeys-lfu", "volatile-lfu", "allkeys-lru", "volatile-lru", "noeviction"} {
		lfu := strings.HasSuffix(policy, "lfu")
		both("FLUSHALL")
		both("CONFIG", "SET", "maxmemory-policy", policy, "lfu-decay-time", "0")
		if lfu {
			both("RESTORE", "k", "0", payload, "FREQ", "100")
		} else {
			both("RESTORE", "k", "0", payload, "IDLETIME", "5000")
		}
		// What each server holds for k after a load: the counter, or the
		// idle time (5000 s under an LRU policy, which the file carries;
		// about 0 under the others, whose files carry none).
		check := func(step string, c *servertest.Conn) {
			t.Helper()
			if lfu {
				if f := intReply(c, "OBJECT", "FREQ", "k"); f != 100 {
					t.Errorf("%s %s: OBJECT FREQ %d, want 100", policy, step, f)
				}
				return
			}
			idle := intReply(c, "OBJECT", "IDLETIME", "k")
			lo, hi := 5000, 5030
			if policy == "noeviction" {
				lo, hi = 0, 30
			}
			if idle < lo || idle > hi {
				t.Errorf("%s %s: OBJECT IDLETIME %d, want %d to %d", policy, step, idle, lo, hi)
			}
		}
		for _, c := range []*servertest.Conn{a, rc} {
			if rep := c.Do("SAVE"); rep != "+OK\r\n" {
				t.Fatalf("SAVE: %q", rep)
			}
		}
		abacusFile, redisFile := filepath.Join(dirA, "dump.rdb"), filepath.Join(r.Dir(), "dump.rdb")
		aBytes, _ := os.ReadFile(abacusFile)
		rBytes, _ := os.ReadFile(redisFile)
		// The key's record, from the opcode before it to its name: the
		// same bytes in both files.
		rec := func(b []byte) string {
			i := strings.Index(string(b), "\x01k")
			if i < 0 {
				return ""
			}
			j := strings.LastIndexAny(string(b[:i]), "\xf8\xf9\xfb")
			return string(b[j:i])
		}
		if ra, rr := rec(aBytes), rec(rBytes); ra != rr && !(policy != "noeviction" && !lfu) {
			t.Errorf("%s: the key's metadata in the files: abacus %q, redis %q", policy, ra, rr)
		}
		// Each loads the other's file.
		copyFile(abacusFile, filepath.Join(dirA, "abacus.rdb"))
		copyFile(redisFile, abacusFile)
		copyFile(filepath.Join(dirA, "abacus.rdb"), redisFile)
		both("DEBUG", "RELOAD", "NOSAVE")
		check("abacus's file in redis-server", rc)
		check("redis-server's file in abacus", a)
		// And Abacus's own save and load.
		if rep := a.Do("DEBUG", "RELOAD"); rep != "+OK\r\n" {
			t.Fatalf("DEBUG RELOAD: %q", rep)
		}
		check("DEBUG RELOAD", a)
	}

	// A file without FREQ loaded under an LFU policy: new objects' counter.
	both("FLUSHALL")
	both("CONFIG", "SET", "maxmemory-policy", "noeviction")
	both("SET", "k2", "v")
	both("SAVE")
	both("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
	both("DEBUG", "RELOAD", "NOSAVE")
	for name, c := range map[string]*servertest.Conn{"abacus": a, "redis": rc} {
		if f := intReply(c, "OBJECT", "FREQ", "k2"); f != 5 {
			t.Errorf("%s: OBJECT FREQ of a key loaded without FREQ %d, want 5", name, f)
		}
	}
}
