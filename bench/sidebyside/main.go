// Command sidebyside benchmarks Abacus and redis-server in one run: it starts
// both, runs redis-benchmark against each in turn (A B A B ...) for several
// rounds, and prints the median requests per second, the ratio
// Abacus/redis-server, and the server CPU time per request.
//
//	go run ./bench/sidebyside                      # SET GET INCR MSET, RSS of 1M SETs
//	go run ./bench/sidebyside -suite types         # ZADD ZINCRBY ZRANGEBYSCORE ZRANK HSET HINCRBY SADD LPUSH LRANGE_100
//	go run ./bench/sidebyside -suite tx            # MULTI, 10 INCR, EXEC (transactions/s; bench/txbench has more options)
//	go run ./bench/sidebyside -cases set,get -rounds 5
//	go run ./bench/sidebyside -before /tmp/abacus-old  # also an older build, in the same rounds
//
// Only loopback addresses are used.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/abacusdb/abacus/bench/harness"
)

// benchCase is one row: a redis-benchmark built-in test or a command line.
type benchCase struct {
	name    string
	test    string   // redis-benchmark -t name, when args is empty
	args    []string // a command with __rand_int__ placeholders
	prepare func(*harness.Server)
	// load, when set, replaces redis-benchmark: it runs n requests from
	// clients connections, pipe at a time, and returns requests/s.
	load func(s *harness.Server, pipe, n, clients, keyspace int) float64
}

var suites = map[string][]benchCase{
	"strings": {
		{name: "SET", test: "set"},
		{name: "GET", test: "get"},
		{name: "INCR", test: "incr"},
		{name: "MSET", test: "mset"},
	},
	"types": {
		{name: "ZADD", args: []string{"ZADD", "bench:z", "__rand_int__", "m:__rand_int__"}},
		{name: "ZINCRBY", args: []string{"ZINCRBY", "bench:z", "1", "m:__rand_int__"}},
		{name: "ZRANGEBYSCORE 100 of 1M", args: []string{"ZRANGEBYSCORE", "bench:big", "__rand_int__", "+inf", "LIMIT", "0", "100"}, prepare: loadBigZset},
		{name: "ZRANK of 1M", args: []string{"ZRANK", "bench:big", "m:__rand_int__"}, prepare: loadBigZset},
		{name: "HSET", args: []string{"HSET", "bench:h:__rand_int__", "f", "v"}},
		{name: "HINCRBY", args: []string{"HINCRBY", "bench:counts", "slot:__rand_int__", "1"}},
		{name: "SADD", test: "sadd"},
		{name: "LPUSH", test: "lpush"},
		// redis-benchmark's own lrange_100 test first times an LPUSH fill of
		// n elements (its first CSV line), which would also count in the CPU
		// column; here the list is filled once and only LRANGE is timed.
		{name: "LRANGE_100", args: []string{"LRANGE", "bench:list", "0", "99"}, prepare: loadList},
	},
	// Transactions per second; redis-benchmark cannot send MULTI blocks.
	"tx": {
		{name: "MULTI+10xINCR+EXEC (tx/s)", load: func(s *harness.Server, pipe, n, clients, keyspace int) float64 {
			return s.TxLoad(n, clients, pipe, 10, keyspace) // n transactions
		}},
	},
}

const bigZset = 1000000

// loadBigZset fills bench:big with 1,000,000 members scored i, once. The
// members are m:%012d because that is how redis-benchmark spells
// __rand_int__ (m:000000012345): with any other spelling ZRANK would time
// misses (nil replies) instead of ranks.
func loadBigZset(s *harness.Server) {
	c := s.Dial()
	defer c.Close()
	if c.Do("ZCARD", "bench:big") == ":"+strconv.Itoa(bigZset) {
		return
	}
	args := []string{"ZADD", "bench:big"}
	for i := 0; i < bigZset; i++ {
		args = append(args, strconv.Itoa(i), fmt.Sprintf("m:%012d", i))
		if len(args) >= 2+2*500 {
			c.Send(args...)
			args = args[:2]
		}
	}
	if len(args) > 2 {
		c.Send(args...)
	}
}

const listLen = 1000

// loadList fills bench:list with 1,000 three-byte elements (the size
// redis-benchmark's LPUSH uses), once.
func loadList(s *harness.Server) {
	c := s.Dial()
	defer c.Close()
	if c.Do("LLEN", "bench:list") == ":"+strconv.Itoa(listLen) {
		return
	}
	c.Do("DEL", "bench:list")
	for i := 0; i < listLen; i++ {
		c.Send("RPUSH", "bench:list", "xxx")
	}
}

func main() {
	suite := flag.String("suite", "strings", "strings, types or tx")
	only := flag.String("cases", "", "comma-separated case names to run (default: the whole suite)")
	pipes := flag.String("pipelines", "1,16", "pipeline depths")
	rounds := flag.Int("rounds", 3, "rounds (A B A B ...)")
	n := flag.Int("n", 200000, "requests per run")
	clients := flag.Int("c", 50, "parallel clients")
	keyspace := flag.Int("r", 100000, "redis-benchmark -r (random key space)")
	rss := flag.Bool("rss", true, "strings suite: measure RSS after 1,000,000 SETs")
	rssKeys := flag.Int("rss-keys", 1000000, "keys for the RSS measurement")
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	before := flag.String("before", "", "an older abacus binary to run alongside (A B C A B C ...)")
	flag.Parse()

	cases := suites[*suite]
	if cases == nil {
		harness.Fatal("unknown suite %q", *suite)
	}
	if *only != "" {
		var keep []benchCase
		for _, c := range cases {
			for _, w := range strings.Split(*only, ",") {
				if strings.EqualFold(strings.Fields(c.name)[0], w) || strings.EqualFold(c.name, w) {
					keep = append(keep, c)
				}
			}
		}
		cases = keep
	}
	pipeList := harness.Pipelines(*pipes)

	bin, cleanup := harness.BuildAbacus(*abacusBin)
	defer cleanup()
	servers := harness.StartBoth(bin)
	if *before != "" {
		servers = append(servers, harness.Start("before", *before))
	}
	defer harness.StopAll(servers)

	type key struct {
		c, server string
		pipe      int
	}
	rps := map[key][]float64{}
	cpu := map[key][]float64{}
	for r := 0; r < *rounds; r++ {
		for _, bc := range cases {
			for _, p := range pipeList {
				for _, s := range servers {
					if bc.prepare != nil {
						bc.prepare(s)
					}
					before := s.CPUTicks()
					var v float64
					if bc.load != nil {
						v = bc.load(s, p, *n, *clients, *keyspace)
					} else {
						v = s.Bench(bc.test, p, *n, *clients, *keyspace, bc.args...)
					}
					after := s.CPUTicks()
					k := key{bc.name, s.Name, p}
					rps[k] = append(rps[k], v)
					// CPU time is in clock ticks of 10 ms.
					cpu[k] = append(cpu[k], float64(after-before)*1e4/float64(*n))
					fmt.Fprintf(os.Stderr, "round %d %-24s P=%-2d %-6s %10.0f req/s\n", r+1, bc.name, p, s.Name, v)
				}
			}
		}
	}

	harness.Header(fmt.Sprintf("%d clients, %d requests per run, %d rounds (A B A B), medians.", *clients, *n, *rounds))
	if *before == "" {
		fmt.Println("| command | pipeline | abacus req/s | redis req/s | ratio | abacus CPU µs/req | redis CPU µs/req |")
		fmt.Println("|---|---|---|---|---|---|---|")
	} else {
		fmt.Println("| command | pipeline | abacus req/s | before req/s | redis req/s | ratio | before ratio | abacus/before | abacus CPU µs/req | before CPU µs/req | redis CPU µs/req |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	}
	for _, bc := range cases {
		for _, p := range pipeList {
			a, b := harness.Median(rps[key{bc.name, "abacus", p}]), harness.Median(rps[key{bc.name, "redis", p}])
			ca, cb := harness.Median(cpu[key{bc.name, "abacus", p}]), harness.Median(cpu[key{bc.name, "redis", p}])
			if *before == "" {
				fmt.Printf("| %s | %d | %.0f | %.0f | %.2fx | %.2f | %.2f |\n", bc.name, p, a, b, a/b, ca, cb)
				continue
			}
			o, co := harness.Median(rps[key{bc.name, "before", p}]), harness.Median(cpu[key{bc.name, "before", p}])
			fmt.Printf("| %s | %d | %.0f | %.0f | %.0f | %.2fx | %.2fx | %+.1f%% | %.2f | %.2f | %.2f |\n",
				bc.name, p, a, o, b, a/b, o/b, (a/o-1)*100, ca, co, cb)
		}
	}
	if *rss && *suite == "strings" {
		fmt.Printf("\nRSS after %d x SET key:N <16-byte value>:\n\n", *rssKeys)
		fmt.Println("| server | RSS MiB | bytes/key |")
		fmt.Println("|---|---|---|")
		for _, s := range servers {
			c := s.Dial()
			c.Do("FLUSHALL")
			base := s.RSS()
			for i := 0; i < *rssKeys; i++ {
				c.Send("SET", "key:"+strconv.Itoa(i), "vvvvvvvvvvvvvvvv")
			}
			c.Close()
			v := s.RSS()
			fmt.Printf("| %s | %.1f | %.0f |\n", s.Name, float64(v)/(1<<20), float64(v-base)/float64(*rssKeys))
		}
	}
}
