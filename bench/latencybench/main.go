// Command latencybench measures what latency tracking costs: Abacus and
// redis-server, each with latency-tracking yes and no, run the same
// redis-benchmark load in turn (A B A B ...) for several rounds; it
// prints the median requests per second and the median server CPU time
// per request for each, and the extra CPU per request tracking costs.
//
//	go run ./bench/latencybench
//	go run ./bench/latencybench -tests get,set -n 400000 -rounds 5
//
// Only loopback addresses are used.
package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/abacusdb/abacus/bench/harness"
)

func main() {
	tests := flag.String("tests", "get,set", "redis-benchmark tests")
	pipes := flag.String("pipelines", "1,16", "pipeline depths")
	n := flag.Int("n", 300000, "requests per run")
	clients := flag.Int("clients", 50, "connections")
	rounds := flag.Int("rounds", 3, "A B rounds")
	bin := flag.String("abacus", "", "abacus binary (built from ./cmd/abacus when empty)")
	flag.Parse()
	b, cleanup := harness.BuildAbacus(*bin)
	defer cleanup()

	type variant struct {
		name, bin, tracking string
	}
	variants := []variant{
		{"abacus", b, "yes"}, {"abacus", b, "no"},
		{"redis", "redis-server", "yes"}, {"redis", "redis-server", "no"},
	}
	servers := make([]*harness.Server, len(variants))
	for i, v := range variants {
		servers[i] = harness.Start(v.name, v.bin, "--latency-tracking", v.tracking)
	}
	defer harness.StopAll(servers)

	harness.Header(fmt.Sprintf("redis-benchmark, %d clients, %d requests per run, %d rounds (medians); load average %s.",
		*clients, *n, *rounds, harness.LoadAvg()))
	fmt.Println("| test | pipeline | server | latency-tracking | requests/s | CPU µs/request | tracking's cost µs/request |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, t := range strings.Split(*tests, ",") {
		for _, p := range harness.Pipelines(*pipes) {
			rps := make([][]float64, len(servers))
			cpu := make([][]float64, len(servers))
			for range *rounds {
				for i, s := range servers {
					c0 := s.CPUTicks()
					rps[i] = append(rps[i], s.Bench(t, p, *n, *clients, 100000))
					cpu[i] = append(cpu[i], float64(s.CPUTicks()-c0)*1e4/float64(*n))
				}
			}
			for i, v := range variants {
				cost := ""
				if v.tracking == "yes" {
					cost = fmt.Sprintf("%+.3f", harness.Median(cpu[i])-harness.Median(cpu[i+1]))
				}
				fmt.Printf("| %s | %d | %s | %s | %.0f | %.3f | %s |\n", strings.ToUpper(t), p, v.name, v.tracking,
					harness.Median(rps[i]), harness.Median(cpu[i]), cost)
			}
		}
	}
}
