// Command evictbench runs Abacus and redis-server side by side under
// maxmemory: the hit ratio of a read-through cache (GET; on a miss, SET
// with a 100-byte value) over keys drawn from a Zipf distribution of
// exponent 0.99 (YCSB's generator), at maxmemory = 10% of the data set,
// for allkeys-lru and allkeys-lfu with maxmemory-samples 5; and the
// throughput and CPU per request of SET at the limit (every SET evicts).
//
//	go run ./bench/evictbench
//	go run ./bench/evictbench -keys 1000000 -requests 3000000
//	go run ./bench/evictbench -churn 5m     # only the churn: RSS against maxmemory over time
//
// Only loopback addresses are used.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

func main() {
	keys := flag.Int("keys", 1000000, "distinct keys (the data set)")
	requests := flag.Int("requests", 3000000, "cache requests per run (the first third warms the cache)")
	batch := flag.Int("batch", 100, "requests in flight (pipelined GETs, then the SETs of the misses)")
	rounds := flag.Int("rounds", 2, "A B rounds of the SET-at-the-limit test")
	bin := flag.String("abacus", "", "abacus binary (built from ./cmd/abacus when empty)")
	cache := flag.Bool("cache", true, "run the cache hit-ratio part (false: only SET at the limit)")
	churnFor := flag.Duration("churn", 0, "run only the churn workload, this long (churn.go)")
	churnMem := flag.Int64("churn-maxmemory", 256<<20, "the churn's maxmemory in bytes")
	churnEvery := flag.Duration("churn-every", 15*time.Second, "how often the churn samples RSS")
	setValue := flag.Int("set-value", 3, "SET at the limit's value size in bytes (redis-benchmark's -d)")
	policies := flag.String("policies", "allkeys-lru,allkeys-lfu", "policies of the cache hit-ratio part")
	setRounds := flag.Bool("set", true, "run the SET-at-the-limit part")
	simRate := flag.Float64("simulate", 0, "instead of servers, simulate allkeys-lfu at this many GETs/s (lfusim.go)")
	simKeys := flag.Int("simulate-held", 967000, "the simulation's capacity in keys (the servers hold ~967,000 of 10M)")
	profile := flag.Bool("profile", false, "after each cache run, print the held keys by rank and OBJECT FREQ (freq.go)")
	flag.Parse()
	if *simRate > 0 {
		simulateLFU(*keys, *requests, *batch, *simKeys, *simRate)
		return
	}
	b, cleanup := harness.BuildAbacus(*bin)
	defer cleanup()
	if *churnFor > 0 {
		churn(b, *churnMem, *churnFor, *churnEvery)
		return
	}

	if *cache {
		cacheHitRatios(b, *keys, *requests, *batch, strings.Split(*policies, ","), *profile)
	}
	if *setRounds {
		setAtLimit(b, *rounds, *setValue)
	}
}

// cacheHitRatios runs the read-through cache under each policy on both
// servers and prints the hit ratios.
func cacheHitRatios(b string, keys, requests, batch int, policies []string, profile bool) {
	// The data set's size as redis-server holds it: a key of ~10 bytes
	// and a 100-byte value take ~180 bytes of used_memory there.
	maxmem := int64(keys) * 180 / 10
	harness.Header(fmt.Sprintf("Zipf 0.99 over %d keys, 100-byte values, maxmemory %d bytes (10%% of the data set), maxmemory-samples 5, %d requests per run (%d in flight), hit ratio of the last two thirds.",
		keys, maxmem, requests, batch))
	z := newZipf(keys, 0.99)
	fmt.Println("| policy | server | hit ratio | keys held | evicted keys | used_memory | RSS | CPU s | wall s |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, policy := range policies {
		for _, name := range []string{"abacus", "redis"} {
			bin := b
			if name == "redis" {
				bin = "redis-server"
			}
			s := harness.Start(name, bin, "--maxmemory", strconv.FormatInt(maxmem, 10),
				"--maxmemory-policy", policy, "--maxmemory-samples", "5")
			cpu0, t0 := s.CPUTicks(), time.Now()
			hit := cacheRun(s, z, requests, batch)
			wall := time.Since(t0).Seconds()
			c := dial(s)
			fmt.Printf("| %s | %s | %.4f | %s | %s | %s | %.1f MB | %.1f | %.0f |\n", policy, name, hit,
				c.dbsize(), c.info("stats", "evicted_keys"), c.info("memory", "used_memory_human"), float64(s.RSS())/(1<<20),
				float64(s.CPUTicks()-cpu0)/100, wall)
			c.c.Close()
			if profile {
				heldProfile(s, keys)
			}
			s.Stop()
		}
	}
}

// setAtLimit runs SETs of new keys against a small maxmemory full of
// keys, each of which evicts, on both servers in turn.
func setAtLimit(b string, rounds, valueSize int) {
	fmt.Println()
	fmt.Printf("SET at the limit (maxmemory 32 MB full, allkeys-lru, %d-byte values, random keys of 10M, 50 clients):\n", valueSize)
	fmt.Println()
	fmt.Println("| pipeline | abacus req/s | redis req/s | ratio | abacus CPU µs/req | redis CPU µs/req |")
	fmt.Println("|---|---|---|---|---|---|")
	servers := harness.StartBoth(b, "--maxmemory", "32mb", "--maxmemory-policy", "allkeys-lru")
	defer harness.StopAll(servers)
	set := []string{"-t", "set", "-d", strconv.Itoa(valueSize)}
	for _, s := range servers {
		s.Bench("set", 16, 1000000, 50, 10000000, set...) // fill to the limit
	}
	for _, pipe := range []int{1, 16} {
		rps := map[string][]float64{}
		cpu := map[string][]float64{}
		n := 200000 * pipe / max(pipe/4, 1)
		for range rounds {
			for _, s := range servers {
				t0 := s.CPUTicks()
				rps[s.Name] = append(rps[s.Name], s.Bench("set", pipe, n, 50, 10000000, set...))
				cpu[s.Name] = append(cpu[s.Name], float64(s.CPUTicks()-t0)*1e4/float64(n))
			}
		}
		a, r := harness.Median(rps["abacus"]), harness.Median(rps["redis"])
		fmt.Printf("| %d | %.0f | %.0f | %.2f | %.1f | %.1f |\n", pipe, a, r, a/r,
			harness.Median(cpu["abacus"]), harness.Median(cpu["redis"]))
	}
	for _, s := range servers {
		c := dial(s)
		fmt.Printf("\n%s: evicted_keys %s, used_memory %s, RSS %.1f MB", s.Name, c.info("stats", "evicted_keys"),
			c.info("memory", "used_memory_human"), float64(s.RSS())/(1<<20))
		c.c.Close()
	}
	fmt.Println()
}

// cacheRun runs the read-through cache and returns the hit ratio of the
// requests after the first third.
func cacheRun(s *harness.Server, z *zipf, requests, batch int) float64 {
	c := dial(s)
	defer c.c.Close()
	for { // a server loading a dump.rdb it found answers LOADING
		c.write(harness.Encode(nil, "PING"))
		if c.line() == "+PONG" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	rnd := rand.New(rand.NewPCG(42, 7))
	val := strings.Repeat("v", 100)
	var hits, counted int
	ids := make([]int, batch)
	var miss []int
	for done := 0; done < requests; done += batch {
		var buf []byte
		for i := range ids {
			ids[i] = z.next(rnd)
			buf = harness.Encode(buf, "GET", "key:"+strconv.Itoa(ids[i]))
		}
		c.write(buf)
		miss = miss[:0]
		for i := range ids {
			if c.readBulkHit() {
				if done >= requests/3 {
					hits++
				}
			} else {
				miss = append(miss, ids[i])
			}
			if done >= requests/3 {
				counted++
			}
		}
		buf = buf[:0]
		for _, id := range miss {
			buf = harness.Encode(buf, "SET", "key:"+strconv.Itoa(id), val)
		}
		c.write(buf)
		for range miss {
			if l := c.line(); l[0] == '-' {
				harness.Fatal("%s: SET: %s", s.Name, l)
			}
		}
	}
	return float64(hits) / float64(counted)
}

type conn struct {
	c net.Conn
	r *bufio.Reader
}

func dial(s *harness.Server) *conn {
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.Port))
	if err != nil {
		harness.Fatal("%v", err)
	}
	return &conn{c, bufio.NewReaderSize(c, 1<<16)}
}

func (c *conn) write(b []byte) {
	if _, err := c.c.Write(b); err != nil {
		harness.Fatal("write: %v", err)
	}
}

func (c *conn) line() string {
	l, err := c.r.ReadString('\n')
	if err != nil {
		harness.Fatal("read: %v", err)
	}
	return strings.TrimRight(l, "\r\n")
}

// readBulkHit reads a bulk reply and reports whether it was not null.
func (c *conn) readBulkHit() bool {
	l := c.line()
	if l[0] != '$' {
		harness.Fatal("GET: %s", l)
	}
	n, _ := strconv.Atoi(l[1:])
	if n < 0 {
		return false
	}
	if _, err := c.r.Discard(n + 2); err != nil {
		harness.Fatal("read: %v", err)
	}
	return true
}

// dbsize returns DBSIZE's reply.
func (c *conn) dbsize() string {
	c.write(harness.Encode(nil, "DBSIZE"))
	return strings.TrimPrefix(c.line(), ":")
}

// info returns one field of an INFO section.
func (c *conn) info(section, field string) string {
	c.write(harness.Encode(nil, "INFO", section))
	l := c.line()
	n, _ := strconv.Atoi(l[1:])
	body := make([]byte, n+2)
	if _, err := io.ReadFull(c.r, body); err != nil {
		harness.Fatal("read: %v", err)
	}
	for _, line := range strings.Split(string(body), "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return "?"
}

// zipf is YCSB's ZipfianGenerator (Gray et al., "Quickly generating
// billion-record synthetic databases"): ranks 0..n-1, rank 0 the most
// frequent, for any exponent theta in (0, 1) (math/rand's Zipf needs
// s > 1).
type zipf struct {
	n                  float64
	theta, alpha, eta  float64
	zetan, halfPowTeta float64
}

func newZipf(n int, theta float64) *zipf {
	zeta := func(n int) float64 {
		s := 0.0
		for i := 1; i <= n; i++ {
			s += 1 / math.Pow(float64(i), theta)
		}
		return s
	}
	z := &zipf{n: float64(n), theta: theta, alpha: 1 / (1 - theta), zetan: zeta(n)}
	z.eta = (1 - math.Pow(2/z.n, 1-theta)) / (1 - zeta(2)/z.zetan)
	z.halfPowTeta = 1 + math.Pow(0.5, theta)
	return z
}

func (z *zipf) next(r *rand.Rand) int {
	u := r.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < z.halfPowTeta {
		return 1
	}
	return int(z.n * math.Pow(z.eta*u-z.eta+1, z.alpha))
}
