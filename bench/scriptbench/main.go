// Command scriptbench benchmarks Lua scripts on Abacus and redis-server in
// one run: it starts both, loads the scripts with SCRIPT LOAD on each, and
// runs redis-benchmark with EVALSHA against each in turn (A B A B ...),
// printing the median requests per second and the ratio
// Abacus/redis-server.
//
//	go run ./bench/scriptbench                 # both scripts, pipeline 1 and 16
//	go run ./bench/scriptbench -cases incr10 -rounds 5
//
// The scripts: incr10, ten redis.call('INCR') on distinct keys; limiter,
// the sliding-window rate limiter of sliding_window.lua (three limits
// checked, then counted, in one hash per subject, reading TIME). Only
// loopback addresses are used.
package main

import (
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/abacusdb/abacus/bench/harness"
)

//go:embed sliding_window.lua
var slidingWindow string

const incr10 = `for i = 1, 10 do redis.call('INCR', KEYS[i]) end
return 10`

// limits of the limiter case: 100 per second in 100 ms buckets, 1000 per
// minute in 5 s buckets, 10000 per hour in 5 min buckets.
const limits = `[[1000,100,100],[60000,1000,5000],[3600000,10000,300000]]`

type benchCase struct {
	name string
	body string
	args func(sha string) []string
}

var cases = []benchCase{
	{name: "incr10", body: incr10, args: func(sha string) []string {
		a := []string{"EVALSHA", sha, "10"}
		for i := 0; i < 10; i++ {
			a = append(a, fmt.Sprintf("k%d:__rand_int__", i))
		}
		return a
	}},
	{name: "limiter", body: slidingWindow, args: func(sha string) []string {
		return []string{"EVALSHA", sha, "1", "rl:__rand_int__", limits, "1", ""}
	}},
}

func sha(body string) string {
	s := sha1.Sum([]byte(body))
	return hex.EncodeToString(s[:])
}

func main() {
	only := flag.String("cases", "", "comma-separated cases (incr10, limiter); default all")
	pipes := flag.String("pipelines", "1,16", "pipeline depths")
	rounds := flag.Int("rounds", 3, "rounds (A B A B ...)")
	n := flag.Int("n", 200000, "requests per run")
	clients := flag.Int("c", 50, "parallel clients")
	keyspace := flag.Int("r", 10000, "redis-benchmark -r (random key space)")
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	extra := flag.String("abacus-args", "", "extra arguments for abacus, space-separated (e.g. \"--script-transactional yes\")")
	flag.Parse()

	var run []benchCase
	for _, c := range cases {
		if *only == "" || strings.Contains(","+*only+",", ","+c.name+",") {
			run = append(run, c)
		}
	}
	var pipeList []int
	for _, p := range strings.Split(*pipes, ",") {
		v, err := strconv.Atoi(p)
		if err != nil {
			harness.Fatal("bad pipeline %q", p)
		}
		pipeList = append(pipeList, v)
	}

	bin, cleanup := harness.BuildAbacus(*abacusBin)
	defer cleanup()
	servers := harness.StartBoth(bin)
	if *extra != "" {
		servers[0].Stop()
		servers[0] = harness.Start("abacus", bin, strings.Fields(*extra)...)
	}
	defer func() {
		for _, s := range servers {
			s.Stop()
		}
	}()
	for _, s := range servers {
		c := s.Dial()
		for _, bc := range run {
			if got := c.Do("SCRIPT", "LOAD", bc.body); !strings.Contains(got, sha(bc.body)) {
				harness.Fatal("SCRIPT LOAD %s on %s: %q", bc.name, s.Name, got)
			}
		}
		c.Close()
	}

	type key struct {
		c, server string
		pipe      int
	}
	rps := map[key][]float64{}
	cpu := map[key][]float64{}
	for r := 0; r < *rounds; r++ {
		for _, bc := range run {
			for _, p := range pipeList {
				for _, s := range servers {
					before := s.CPUTicks()
					v := s.Bench("", p, *n, *clients, *keyspace, bc.args(sha(bc.body))...)
					after := s.CPUTicks()
					k := key{bc.name, s.Name, p}
					rps[k] = append(rps[k], v)
					cpu[k] = append(cpu[k], float64(after-before)*1e4/float64(*n))
					fmt.Fprintf(os.Stderr, "round %d %-8s P=%-2d %-6s %10.0f req/s\n", r+1, bc.name, p, s.Name, v)
				}
			}
		}
	}

	harness.Header(fmt.Sprintf("EVALSHA, %d clients, %d requests per run, %d rounds (A B A B), medians.", *clients, *n, *rounds))
	fmt.Println("| script | pipeline | abacus req/s | redis req/s | ratio | abacus CPU µs/req | redis CPU µs/req |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, bc := range run {
		for _, p := range pipeList {
			a, b := harness.Median(rps[key{bc.name, "abacus", p}]), harness.Median(rps[key{bc.name, "redis", p}])
			ca, cb := harness.Median(cpu[key{bc.name, "abacus", p}]), harness.Median(cpu[key{bc.name, "redis", p}])
			fmt.Printf("| %s | %d | %.0f | %.0f | %.2fx | %.2f | %.2f |\n", bc.name, p, a, b, a/b, ca, cb)
		}
	}
}
