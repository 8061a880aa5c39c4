// Command trickle measures what one client sending a huge command slowly
// costs everybody else: while it trickles an RPUSH of 1,000,000 small
// arguments, redis-benchmark runs GET at pipeline 1, and the latency the
// other clients see (p50, p99, max) is printed beside the quiet figures,
// for Abacus and redis-server in turn (A B A B ...), with the server CPU
// time the attack window cost.
//
//	go run ./bench/trickle                       # 1,000,000 arguments over 40 s
//	go run ./bench/trickle -args 300000 -over 20s -rounds 1
//	go run ./bench/trickle -parse 1kb,1mb,100mb -rounds 3   # parse CPU per MB by command size
//
// Only loopback addresses are used.
package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

func main() {
	nargs := flag.Int("args", 1000000, "arguments of the trickled RPUSH")
	over := flag.Duration("over", 40*time.Second, "how long the trickle takes")
	rounds := flag.Int("rounds", 1, "rounds (A B A B ...)")
	n := flag.Int("n", 200000, "GET requests per redis-benchmark run")
	clients := flag.Int("c", 50, "redis-benchmark clients")
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	parse := flag.String("parse", "", "command sizes (\"1kb,1mb,100mb\"): measure the parse cost per MB instead (parse.go)")
	total := flag.Int("total", 128, "-parse: MB sent per run")
	before := flag.String("before", "", "-parse: an older abacus binary to run alongside")
	flag.Parse()

	bin, cleanup := harness.BuildAbacus(*abacusBin)
	defer cleanup()
	servers := harness.StartBoth(bin)
	if *before != "" {
		servers = append(servers, harness.Start("before", *before))
	}
	defer harness.StopAll(servers)
	if *parse != "" {
		parseBench(servers, parseSizes(*parse), *total<<20, *rounds)
		return
	}
	cmd := harness.RPush("trickle", *nargs)
	fmt.Printf("RPUSH of %d arguments (%d bytes) trickled over %v; redis-benchmark GET -P 1 -c %d -n %d\n\n",
		*nargs, len(cmd), *over, *clients, *n)
	fmt.Printf("%-7s %5s  %-26s  %-26s  %s\n", "server", "round", "quiet p50/p99/max ms", "attacked p50/p99/max ms", "server CPU s of the trickle alone")
	for r := 0; r < *rounds; r++ {
		for _, s := range servers {
			// The trickle alone: what parsing it costs the server.
			cpu0 := s.CPUTicks()
			done := make(chan struct{})
			go s.Trickle(cmd, *over, done)
			<-done
			cpu := float64(s.CPUTicks()-cpu0) / 100
			del(s)

			quiet := s.GetLatency(*n, *clients)
			// The GET runs repeat while the trickle goes on; the worst
			// figures are reported, as the attack's cost is in the tail.
			done = make(chan struct{})
			go s.Trickle(cmd, *over, done)
			var hit harness.Latency
			for attacked := true; attacked; {
				l := s.GetLatency(*n, *clients)
				hit.P50, hit.P99, hit.Max = max(hit.P50, l.P50), max(hit.P99, l.P99), max(hit.Max, l.Max)
				select {
				case <-done:
					attacked = false
				default:
				}
			}
			fmt.Printf("%-7s %5d  %8.3f %8.3f %8.3f  %8.3f %8.3f %8.3f  %8.2f\n", s.Name, r+1,
				quiet.P50, quiet.P99, quiet.Max, hit.P50, hit.P99, hit.Max, cpu)
			del(s)
		}
	}
}

// del empties the trickled list for the next run.
func del(s *harness.Server) {
	c := s.Dial()
	c.Send("DEL", "trickle")
	c.Close()
}
