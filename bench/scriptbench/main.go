// Command scriptbench benchmarks Lua scripts on Abacus and redis-server in
// one run: it starts both, loads the scripts with SCRIPT LOAD on each, and
// runs redis-benchmark with EVALSHA against each in turn (A B A B ...),
// printing the median requests per second, the server's CPU time per
// request (from /proc/PID/stat) and both as ratios to redis-server.
// -transactional adds an Abacus with script-transactional yes, -before an
// older Abacus binary (and its transactional twin), all in the same
// rounds.
//
//	go run ./bench/scriptbench                 # both scripts, pipeline 1 and 16
//	go run ./bench/scriptbench -cases incr10 -rounds 5
//	go run ./bench/scriptbench -transactional -before /tmp/abacus-old
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
	"os/exec"
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

// variant is one server of the run: a binary and its extra arguments.
type variant struct {
	name, bin string
	args      []string
}

func main() {
	only := flag.String("cases", "", "comma-separated cases (incr10, limiter); default all")
	pipes := flag.String("pipelines", "1,16", "pipeline depths")
	rounds := flag.Int("rounds", 3, "rounds (A B A B ...)")
	n := flag.Int("n", 200000, "requests per run")
	clients := flag.Int("c", 50, "parallel clients")
	keyspace := flag.Int("r", 10000, "redis-benchmark -r (random key space)")
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	extra := flag.String("abacus-args", "", "extra arguments for every abacus, space-separated (e.g. \"--script-transactional yes\")")
	transactional := flag.Bool("transactional", false, "also run abacus with --script-transactional yes (abacus-tx)")
	before := flag.String("before", "", "an older abacus binary to run alongside (before, and before-tx with -transactional)")
	flag.Parse()

	var run []benchCase
	for _, c := range cases {
		if *only == "" || strings.Contains(","+*only+",", ","+c.name+",") {
			run = append(run, c)
		}
	}
	pipeList := harness.Pipelines(*pipes)

	bin, cleanup := harness.BuildAbacus(*abacusBin)
	defer cleanup()
	base := strings.Fields(*extra)
	txArgs := append(append([]string(nil), base...), "--script-transactional", "yes")
	variants := []variant{{"abacus", bin, base}}
	if *transactional {
		variants = append(variants, variant{"abacus-tx", bin, txArgs})
	}
	if *before != "" {
		variants = append(variants, variant{"before", *before, base})
		if *transactional {
			variants = append(variants, variant{"before-tx", *before, txArgs})
		}
	}
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		harness.Fatal("redis-benchmark not found (apt-get install redis-tools)")
	}
	servers := []*harness.Server{harness.Start("redis", "redis-server")}
	for _, v := range variants {
		servers = append(servers, harness.Start(v.name, v.bin, v.args...))
	}
	defer harness.StopAll(servers)
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
	load0 := loadAvg()
	for r := 0; r < *rounds; r++ {
		for _, bc := range run {
			for _, p := range pipeList {
				// Each round starts with a different server, so that no
				// server always follows the same one.
				for i := range servers {
					s := servers[(i+r)%len(servers)]
					before := s.CPUTicks()
					v := s.Bench("", p, *n, *clients, *keyspace, bc.args(sha(bc.body))...)
					after := s.CPUTicks()
					k := key{bc.name, s.Name, p}
					rps[k] = append(rps[k], v)
					cpu[k] = append(cpu[k], float64(after-before)*1e4/float64(*n))
					fmt.Fprintf(os.Stderr, "round %d %-8s P=%-2d %-9s %10.0f req/s %7.2f CPU µs/req\n", r+1, bc.name, p, s.Name, v, cpu[k][len(cpu[k])-1])
				}
			}
		}
	}

	harness.Header(fmt.Sprintf("EVALSHA, %d clients, %d requests per run, %d rounds (servers in rotating order), medians; load average %s at the start, %s at the end.",
		*clients, *n, *rounds, load0, loadAvg()))
	fmt.Println("| script | pipeline | server | req/s | vs redis | CPU µs/req | CPU vs redis |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, bc := range run {
		for _, p := range pipeList {
			rr, rc := harness.Median(rps[key{bc.name, "redis", p}]), harness.Median(cpu[key{bc.name, "redis", p}])
			for _, s := range servers {
				a, c := harness.Median(rps[key{bc.name, s.Name, p}]), harness.Median(cpu[key{bc.name, s.Name, p}])
				fmt.Printf("| %s | %d | %s | %.0f | %.2fx | %.2f | %.2fx |\n", bc.name, p, s.Name, a, a/rr, c, c/rc)
			}
		}
	}
}

// loadAvg is the 1-minute load average.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
