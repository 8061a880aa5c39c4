package commands_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// maxmemory against redis-server 7.0: the same workload with the same
// policy on both, each server's limit set a few MB above its own used
// memory (their sizes differ); the replies of noeviction match, and the
// keys each evicts obey the policy.

const evictValue = 1000

// evictRoom is the room above the used memory the eviction tests give the
// servers. An in-process Abacus measures the whole test process's heap,
// and a collection that runs long on a loaded machine counts what was
// allocated meanwhile as live: a few MB of room left that noise above
// the limit with no key left to evict.
const evictRoom = 12 << 20

// memServers starts an Abacus instance and a private redis-server, both
// with policy, and returns raw connections to both and their addresses.
func memServers(t *testing.T, policy string) (conns map[string]*servertest.Conn, abacus, redis string) {
	t.Helper()
	inst := servertest.Start(t, servertest.WithConfig("maxmemory-policy", policy))
	r := servertest.PrivateRedis(t, "--maxmemory-policy", policy)
	a := inst.Raw(t)
	t.Cleanup(func() {
		// The runtime's memory limit is the process's: put it back for
		// the tests that follow in this process.
		a.Do("CONFIG", "SET", "maxmemory", "0")
		a.Do("PING")
	})
	return map[string]*servertest.Conn{"abacus": a, "redis": servertest.Dial(t, r.Addr)}, inst.Addr, r.Addr
}

// limitAbove sets maxmemory to the server's used memory plus extra bytes.
func limitAbove(t *testing.T, c *servertest.Conn, extra int64) {
	t.Helper()
	c.Do("MEMORY", "PURGE") // Abacus: collect, so used_memory is measured
	used := memInfoInt(t, c, "memory", "used_memory")
	if r := c.Do("CONFIG", "SET", "maxmemory", strconv.FormatInt(used+extra, 10)); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET maxmemory: %q", r)
	}
}

func memInfoInt(t *testing.T, c *servertest.Conn, section, field string) int64 {
	t.Helper()
	body := servertest.BulkBody(t, c.Do("INFO", section))
	for _, line := range strings.Split(body, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %q", field, line)
			}
			return n
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return 0
}

// pipeline sends cmds in batches and returns the replies.
func pipeline(t *testing.T, c *servertest.Conn, cmds [][]string) []string {
	t.Helper()
	var out []string
	for len(cmds) > 0 {
		n := min(len(cmds), 200)
		c.Write(servertest.Cat(cmds[:n]...))
		for range n {
			out = append(out, c.Read())
		}
		cmds = cmds[n:]
	}
	return out
}

// fill SETs keys prefix:0 to prefix:n-1 (with EX ttl(i) unless ttl is
// nil), 200 a round trip, and returns the replies that were not OK by
// index. The commands are made batch by batch: the in-process server
// shares the test's heap, and a test holding megabytes of commands would
// count in its used memory.
func fill(t *testing.T, c *servertest.Conn, prefix string, n int, ttl func(i int) int) (failed map[int]string) {
	t.Helper()
	val := strings.Repeat("v", evictValue)
	failed = map[int]string{}
	for i := 0; i < n; {
		k := min(n-i, 200)
		var b []byte
		for j := i; j < i+k; j++ {
			cmd := []string{"SET", fmt.Sprintf("%s:%d", prefix, j), val}
			if ttl != nil {
				cmd = append(cmd, "EX", strconv.Itoa(ttl(j)))
			}
			b = append(b, servertest.Encode(cmd...)...)
		}
		c.Write(b)
		for j := i; j < i+k; j++ {
			if r := c.Read(); r != "+OK\r\n" {
				failed[j] = r
			}
		}
		i += k
	}
	return failed
}

func existing(t *testing.T, c *servertest.Conn, prefix string, n int) []bool {
	t.Helper()
	cmds := make([][]string, n)
	for i := range cmds {
		cmds[i] = []string{"EXISTS", fmt.Sprintf("%s:%d", prefix, i)}
	}
	out := make([]bool, n)
	for i, r := range pipeline(t, c, cmds) {
		out[i] = r == ":1\r\n"
	}
	return out
}

func count(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

const oomText = "OOM command not allowed when used memory > 'maxmemory'."

func TestEvictNoevictionDiff(t *testing.T) {
	conns, aAddr, rAddr := memServers(t, "noeviction")
	for name, c := range conns {
		limitAbove(t, c, 2<<20)
		// Well under the limit: every write succeeds.
		if f := fill(t, c, "a", 500, nil); len(f) > 0 {
			t.Fatalf("%s: SETs under the limit failed: %v", name, f)
		}
		// Far over it: writes are refused.
		f := fill(t, c, "b", 8000, nil)
		for i := 7900; i < 8000; i++ {
			if f[i] != "-"+oomText+"\r\n" {
				t.Fatalf("%s: SET %d over the limit: %q", name, i, f[i])
			}
		}
	}
	// Reads and deletes work; writes that need memory are refused, in
	// scripts as Redis 7 judges them, and in transactions. (A limit of one
	// byte keeps both over it whatever the in-process server's heap,
	// shared with the test, does meanwhile.)
	d := servertest.DialDiff(t, aAddr, rAddr)
	d.Do("CONFIG", "SET", "maxmemory", "1")
	d.Lines(`
GET a:1
EXISTS a:2
INCR counter
LPUSH l x
HSET h f v
SETEX a:3 100 v
MULTI
SET x y
EXEC
MULTI
GET a:1
EXEC
MULTI
DISCARD
EXPIRE a:4 100
DEL a:5
`)
	for _, script := range []string{
		"return redis.call('set','x','1')",
		"return redis.call('get','a:1')",
		"#!lua\nreturn 1",
		"#!lua flags=no-writes\nreturn redis.call('get','a:1')",
		"#!lua flags=allow-oom\nreturn redis.call('set','y','1')",
		"redis.call('del','nokey'); return redis.call('set','z','1')",
		"redis.call('incr','x'); return redis.call('set','x','1')",
	} {
		d.Do("EVAL", script, "0")
	}
	for name, c := range conns {
		if n := memInfoInt(t, c, "stats", "evicted_keys"); n != 0 {
			t.Fatalf("%s: noeviction evicted %d keys", name, n)
		}
		if n := memInfoInt(t, c, "stats", "current_eviction_exceeded_time"); n < 0 {
			t.Fatalf("%s: current_eviction_exceeded_time %d", name, n)
		}
	}
}

// TestEvictVolatileDiff: the volatile policies never evict a key without
// a TTL; volatile-ttl evicts the keys whose TTL ends first.
func TestEvictVolatileDiff(t *testing.T) {
	for _, policy := range []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"} {
		t.Run(policy, func(t *testing.T) {
			conns, _, _ := memServers(t, policy)
			for name, c := range conns {
				limitAbove(t, c, evictRoom)
				fill(t, c, "p", 300, nil)
				const n = 20000
				// TTLs grow with the index: volatile-ttl must evict from
				// the low end.
				if f := fill(t, c, "v", n, func(i int) int { return 100000 + i }); len(f) > 0 {
					t.Fatalf("%s: SETs failed: %v", name, f)
				}
				// Lift the limit before reading what is left: the in-process
				// server's used memory includes the test's own heap, and an
				// eviction during the EXISTS scan below would remove keys
				// behind the scan's position and look like an inversion.
				c.Do("CONFIG", "SET", "maxmemory", "0")
				if p := count(existing(t, c, "p", 300)); p != 300 {
					t.Fatalf("%s: %d of 300 keys without a TTL left", name, p)
				}
				v := existing(t, c, "v", n)
				left := count(v)
				if evicted := memInfoInt(t, c, "stats", "evicted_keys"); evicted == 0 || left == n {
					t.Fatalf("%s: nothing evicted (%d keys left)", name, left)
				}
				if policy != "volatile-ttl" {
					continue
				}
				// The evicted keys are the lowest TTLs: exactly for Abacus
				// (its expiry heap knows the next), mostly for Redis
				// (it samples maxmemory-samples keys).
				inversions := 0
				for i := range n - 1 {
					if v[i] && !v[i+1] {
						inversions++
					}
				}
				if name == "abacus" && inversions > 0 || inversions > n/4 {
					t.Fatalf("%s: %d kept keys followed by an evicted one (%d of %d left)", name, inversions, left, n)
				}
				firstKept := 0
				for firstKept < n && !v[firstKept] {
					firstKept++
				}
				if name == "abacus" && firstKept != n-left {
					t.Fatalf("abacus: the kept keys are not the highest TTLs")
				}
			}
		})
	}
}

// TestEvictAllkeysDiff: every allkeys policy keeps the server under its
// limit; under LFU a key read 1,000 times survives keys read once, and
// under LRU a key read after each batch survives.
func TestEvictAllkeysDiff(t *testing.T) {
	for _, policy := range []string{"allkeys-lru", "allkeys-lfu", "allkeys-random"} {
		t.Run(policy, func(t *testing.T) {
			conns, _, _ := memServers(t, policy)
			for name, c := range conns {
				c.Do("SET", "hot", "v")
				reads := make([][]string, 1000)
				for i := range reads {
					reads[i] = []string{"GET", "hot"}
				}
				pipeline(t, c, reads)
				limitAbove(t, c, evictRoom)
				const n = 30000
				for i := 0; i < n; i += 500 {
					if f := fill(t, c, fmt.Sprintf("c%d", i), 500, nil); len(f) > 0 {
						t.Fatalf("%s: SETs failed: %v", name, f)
					}
					if policy == "allkeys-lru" {
						c.Do("GET", "hot")
					}
				}
				left := 0
				for i := 0; i < n; i += 500 {
					left += count(existing(t, c, fmt.Sprintf("c%d", i), 500))
				}
				if evicted := memInfoInt(t, c, "stats", "evicted_keys"); evicted == 0 || left == n {
					t.Fatalf("%s: nothing evicted", name)
				}
				if used, limit := memInfoInt(t, c, "memory", "used_memory"), memInfoInt(t, c, "memory", "maxmemory"); used > limit+limit/10 {
					t.Fatalf("%s: used_memory %d over maxmemory %d", name, used, limit)
				}
				// The LRU clock counts seconds (Redis's resolution): within
				// the test's second LRU is a random choice.
				lruBlind := policy == "allkeys-lru"
				if policy != "allkeys-random" && !lruBlind && c.Do("EXISTS", "hot") != ":1\r\n" {
					t.Fatalf("%s: %s evicted the hot key (%d of %d others left)", name, policy, left, n)
				}
			}
		})
	}
}
