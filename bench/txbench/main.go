// Command txbench benchmarks transactions on Abacus and redis-server side by
// side: clients each send MULTI, 10 × INCR on random keys, EXEC, with
// several transactions pipelined per write, against each server in turn
// (A B A B ...), and it prints the median transactions per second, the
// server CPU time per transaction and both as ratios to redis-server.
// -before adds an older Abacus binary to the same rounds.
// redis-benchmark cannot send MULTI blocks, hence this generator
// (harness.TxLoad).
//
//	go run ./bench/txbench
//	go run ./bench/txbench -pipelines 1,16 -rounds 5 -c 50
//
// Only loopback addresses are used.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/abacusdb/abacus/bench/harness"
)

func main() {
	pipes := flag.String("pipelines", "1,16", "transactions per write")
	rounds := flag.Int("rounds", 5, "rounds (A B A B ...)")
	n := flag.Int("n", 100000, "transactions per run")
	clients := flag.Int("c", 50, "parallel clients")
	incrs := flag.Int("incrs", 10, "INCRs per transaction")
	keyspace := flag.Int("r", 100000, "random key space")
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	before := flag.String("before", "", "an older abacus binary to run alongside (\"before\")")
	flag.Parse()

	pipeList := harness.Pipelines(*pipes)
	bin, cleanup := harness.BuildAbacus(*abacusBin)
	defer cleanup()
	servers := []*harness.Server{harness.Start("abacus", bin), harness.Start("redis", "redis-server")}
	if *before != "" {
		servers = append(servers, harness.Start("before", *before))
	}
	defer harness.StopAll(servers)

	type key struct {
		server string
		pipe   int
	}
	tps := map[key][]float64{}
	cpu := map[key][]float64{}
	load0 := loadAvg()
	for r := 0; r < *rounds; r++ {
		for _, p := range pipeList {
			// Each round starts with a different server.
			for i := range servers {
				s := servers[(i+r)%len(servers)]
				before := s.CPUTicks()
				v := s.TxLoad(*n, *clients, p, *incrs, *keyspace)
				after := s.CPUTicks()
				k := key{s.Name, p}
				tps[k] = append(tps[k], v)
				cpu[k] = append(cpu[k], float64(after-before)*1e4/float64(*n))
				fmt.Fprintf(os.Stderr, "round %d P=%-2d %-6s %10.0f tx/s\n", r+1, p, s.Name, v)
			}
		}
	}

	harness.Header(fmt.Sprintf("MULTI + %d INCR + EXEC; %d clients, %d transactions per run, %d rounds (servers in rotating order), medians; load average %s at the start, %s at the end.",
		*incrs, *clients, *n, *rounds, load0, loadAvg()))
	fmt.Println("| transactions per write | server | tx/s | vs redis | CPU µs/tx | CPU vs redis |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, p := range pipeList {
		rt, rc := harness.Median(tps[key{"redis", p}]), harness.Median(cpu[key{"redis", p}])
		for _, s := range servers {
			a, c := harness.Median(tps[key{s.Name, p}]), harness.Median(cpu[key{s.Name, p}])
			fmt.Printf("| %d | %s | %.0f | %.2fx | %.2f | %.2fx |\n", p, s.Name, a, a/rt, c, c/rc)
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
