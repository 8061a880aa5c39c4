// Command ratelimitbench measures Abacus's rate-limit commands against the
// equivalent Lua scripts on redis-server, side by side in one run: it
// starts both servers, loads the scripts on redis-server, and runs
// redis-benchmark against each in turn (A B A B ...), printing medians,
// the ratio Abacus/redis-server and the CPU each server spent per request.
//
//	go run ./bench/ratelimitbench                      # both cases, pipeline 1 and 16
//	go run ./bench/ratelimitbench -cases sliding -rounds 5
//
// The cases: throttle, CL.THROTTLE (burst 1000, 600 per minute: with
// redis-benchmark's 10,000 keys each limiter sees about its rate, stays
// allowed and keeps its key) against gcra.lua; throttle-churn, burst 100 at
// 1000 per second, where each limiter's key expires between two of its
// requests and is made again; sliding, RATELIMIT.SLIDING with three limits (100 per second
// in 100 ms sub-buckets, 1000 per minute in 5 s, 10000 per hour in 5 min)
// against sliding.lua. Both scripts read TIME, as the commands read the
// server clock. With -lua-on-abacus the scripts also run on Abacus, for
// reference. Only loopback addresses are used.
package main

import (
	"crypto/sha1"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/abacusdb/abacus/bench/harness"
	"github.com/abacusdb/abacus/recipes"
)

// The scripts are the recipes package's fallbacks, so that the benchmark
// times the same Lua the recipes run on redis-server.
var slidingLua, gcraLua = recipes.FallbackScripts()

type benchCase struct {
	name   string
	script string
	native []string // the command on Abacus
	lua    func(sha string) []string
}

var slidingLimits = []string{"1", "100", "0.1", "60", "1000", "5", "3600", "10000", "300"}

var cases = []benchCase{
	{name: "throttle", script: gcraLua,
		native: []string{"CL.THROTTLE", "rl:__rand_int__", "1000", "600", "60"},
		lua: func(sha string) []string {
			return []string{"EVALSHA", sha, "1", "rl:__rand_int__", "1000", "600", "60", "1", ""}
		}},
	{name: "throttle-churn", script: gcraLua,
		native: []string{"CL.THROTTLE", "rc:__rand_int__", "100", "1000", "1"},
		lua: func(sha string) []string {
			return []string{"EVALSHA", sha, "1", "rc:__rand_int__", "100", "1000", "1", "1", ""}
		}},
	{name: "sliding", script: slidingLua,
		native: append([]string{"RATELIMIT.SLIDING", "1", "sw:__rand_int__", "LIMITS", "3"}, slidingLimits...),
		lua: func(sha string) []string {
			return append([]string{"EVALSHA", sha, "1", "sw:__rand_int__", "1", ""}, slidingLimits...)
		}},
}

func sha(body string) string {
	s := sha1.Sum([]byte(body))
	return hex.EncodeToString(s[:])
}

func main() {
	only := flag.String("cases", "", "comma-separated cases (throttle, throttle-churn, sliding); default all")
	pipes := flag.String("pipelines", "1,16", "pipeline depths")
	rounds := flag.Int("rounds", 3, "rounds (A B A B ...)")
	n := flag.Int("n", 200000, "requests per run")
	clients := flag.Int("c", 50, "parallel clients")
	keyspace := flag.Int("r", 10000, "redis-benchmark -r (random key space)")
	luaOnAbacus := flag.Bool("lua-on-abacus", false, "also run the scripts on Abacus")
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
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
	servers := harness.StartBoth(bin)
	defer harness.StopAll(servers)
	for _, s := range servers {
		c := s.Dial()
		for _, bc := range run {
			if got := c.Do("SCRIPT", "LOAD", bc.script); !strings.Contains(got, sha(bc.script)) {
				harness.Fatal("SCRIPT LOAD %s on %s: %q", bc.name, s.Name, got)
			}
		}
		c.Close()
	}
	// The native commands must answer on Abacus before they are measured.
	for _, bc := range run {
		c := servers[0].Dial()
		args := append([]string(nil), bc.native...)
		for i, a := range args {
			args[i] = strings.ReplaceAll(a, "__rand_int__", "check")
		}
		if got := c.Do(args...); !strings.HasPrefix(got, "*") {
			harness.Fatal("%s on abacus: %q", bc.name, got)
		}
		c.Close()
	}

	type key struct {
		c, what string
		pipe    int
	}
	rps := map[key][]float64{}
	cpu := map[key][]float64{}
	measure := func(r int, bc benchCase, p int, s *harness.Server, what string, args []string) {
		before := s.CPUTicks()
		v := s.Bench("", p, *n, *clients, *keyspace, args...)
		after := s.CPUTicks()
		k := key{bc.name, what, p}
		rps[k] = append(rps[k], v)
		cpu[k] = append(cpu[k], float64(after-before)*1e4/float64(*n))
		fmt.Fprintf(os.Stderr, "round %d %-8s P=%-2d %-12s %10.0f req/s\n", r+1, bc.name, p, what, v)
	}
	for r := 0; r < *rounds; r++ {
		for _, bc := range run {
			for _, p := range pipeList {
				measure(r, bc, p, servers[0], "abacus", bc.native)
				measure(r, bc, p, servers[1], "redis-lua", bc.lua(sha(bc.script)))
				if *luaOnAbacus {
					measure(r, bc, p, servers[0], "abacus-lua", bc.lua(sha(bc.script)))
				}
			}
		}
	}

	harness.Header(fmt.Sprintf("Native command on Abacus against the Lua script (EVALSHA) on redis-server, %d clients, %d requests per run, %d rounds (A B A B), medians.", *clients, *n, *rounds))
	fmt.Print("| case | pipeline | abacus req/s | redis Lua req/s | ratio | abacus CPU µs/req | redis CPU µs/req |")
	if *luaOnAbacus {
		fmt.Print(" Lua on abacus req/s |")
	}
	fmt.Println()
	fmt.Print("|---|---|---|---|---|---|---|")
	if *luaOnAbacus {
		fmt.Print("---|")
	}
	fmt.Println()
	for _, bc := range run {
		for _, p := range pipeList {
			a, b := harness.Median(rps[key{bc.name, "abacus", p}]), harness.Median(rps[key{bc.name, "redis-lua", p}])
			ca, cb := harness.Median(cpu[key{bc.name, "abacus", p}]), harness.Median(cpu[key{bc.name, "redis-lua", p}])
			fmt.Printf("| %s | %d | %.0f | %.0f | %.2fx | %.2f | %.2f |", bc.name, p, a, b, a/b, ca, cb)
			if *luaOnAbacus {
				fmt.Printf(" %.0f |", harness.Median(rps[key{bc.name, "abacus-lua", p}]))
			}
			fmt.Println()
		}
	}
}
