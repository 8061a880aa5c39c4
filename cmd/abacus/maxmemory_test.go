package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// RSS under maxmemory: a fill to 3x the limit, and a churn of SETs and
// DELs of random sizes, keep the process's RSS within 1.15x maxmemory
// (asserted with a margin for the binary's own pages and the scavenger's
// lag: rssSlack).

const (
	rssMaxmemory = 256 << 20
	rssSlack     = 16 << 20
)

var rssPolicies = []string{"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random",
	"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"}

// writeLoad sends SETs (with a TTL for the volatile policies, so that
// they have keys to evict) of sizes from 100 B to 16 KB until bytes were
// sent, deleting a key for every delEvery SETs when delEvery > 0, and
// returns the highest RSS seen.
func writeLoad(t *testing.T, c *servertest.Conn, addr string, ttl bool, bytes int64, delEvery int, seed uint64) (peak int64, ooms int) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(seed, 1))
	buf := []byte(strings.Repeat("x", 16<<10))
	var sent int64
	for batch := 0; sent < bytes; batch++ {
		var b []byte
		n := 0
		for range 50 {
			size := 100 + rnd.IntN(16<<10-100)
			key := "k:" + strconv.Itoa(rnd.IntN(1<<20))
			cmd := []string{"SET", key, string(buf[:size])}
			if ttl {
				cmd = append(cmd, "EX", strconv.Itoa(1000+rnd.IntN(100000)))
			}
			b = append(b, servertest.Encode(cmd...)...)
			n++
			sent += int64(size)
			if delEvery > 0 && rnd.IntN(delEvery) == 0 {
				b = append(b, servertest.Encode("DEL", "k:"+strconv.Itoa(rnd.IntN(1<<20)))...)
				n++
			}
		}
		c.Write(b)
		for range n {
			if r := c.Read(); strings.HasPrefix(r, "-OOM") {
				ooms++
			} else if r[0] == '-' {
				t.Fatalf("reply %q", r)
			}
		}
		if batch%20 == 0 {
			peak = max(peak, serverRSS(t, addr))
		}
	}
	return max(peak, serverRSS(t, addr)), ooms
}

func TestMaxmemoryFillRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 768 MB per policy")
	}
	for _, policy := range rssPolicies {
		t.Run(policy, func(t *testing.T) {
			p := start(t, "--maxmemory", strconv.Itoa(rssMaxmemory), "--maxmemory-policy", policy, "--save", "")
			c := servertest.Dial(t, p.addr)
			peak, ooms := writeLoad(t, c, p.addr, strings.HasPrefix(policy, "volatile"), 3*rssMaxmemory, 0, 1)
			evicted := infoField(t, c, "stats", "evicted_keys")
			t.Logf("%s: peak RSS %.1f MB (%.2fx maxmemory), %s keys evicted, %d OOM replies",
				policy, float64(peak)/(1<<20), float64(peak)/rssMaxmemory, evicted, ooms)
			if peak > rssMaxmemory*115/100+rssSlack {
				t.Errorf("%s: peak RSS %d over 1.15x maxmemory %d", policy, peak, rssMaxmemory)
			}
			if policy == "noeviction" && ooms == 0 || policy != "noeviction" && (ooms != 0 || evicted == "0") {
				t.Errorf("%s: %d OOM replies, %s evicted", policy, ooms, evicted)
			}
		})
	}
}

// TestMaxmemoryChurnRSS runs SETs and DELs of random sizes at the limit
// for ABACUS_CHURN_SECONDS (default 20; the bound is 300).
func TestMaxmemoryChurnRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	secs := 20
	if v, err := strconv.Atoi(os.Getenv("ABACUS_CHURN_SECONDS")); err == nil {
		secs = v
	}
	p := start(t, "--maxmemory", strconv.Itoa(rssMaxmemory), "--maxmemory-policy", "allkeys-lru", "--save", "")
	c := servertest.Dial(t, p.addr)
	var peak int64
	end := time.Now().Add(time.Duration(secs) * time.Second)
	for seed := uint64(1); time.Now().Before(end); seed++ {
		pk, ooms := writeLoad(t, c, p.addr, false, 64<<20, 2, seed)
		if ooms != 0 {
			t.Fatalf("%d OOM replies under allkeys-lru", ooms)
		}
		peak = max(peak, pk)
	}
	t.Logf("churn %d s: peak RSS %.1f MB (%.2fx maxmemory)", secs, float64(peak)/(1<<20), float64(peak)/rssMaxmemory)
	if peak > rssMaxmemory*115/100+rssSlack {
		t.Errorf("peak RSS %d over 1.15x maxmemory %d", peak, rssMaxmemory)
	}
}

func infoField(t *testing.T, c *servertest.Conn, section, field string) string {
	t.Helper()
	for _, line := range strings.Split(c.Do("INFO", section), "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	t.Fatalf("no %s in INFO %s", field, section)
	return fmt.Sprint()
}
