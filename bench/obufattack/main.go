// Command obufattack measures what clients that ask for large replies and
// never read them cost everyone else: redis-benchmark's GET latency (p50,
// p99, max, pipeline 1) quiet and while eight clients each pipeline
// LRANGE of a 1 MB list (or ZRANGE, HGETALL, SMEMBERS, XRANGE of a value
// as large: -kind) without reading (reconnecting when closed), with
// the server's peak RSS, on Abacus and redis-server in turn (A B A B ...).
//
//	go run ./bench/obufattack                          # limit normal 64mb 16mb 10
//	go run ./bench/obufattack -limit "normal 0 0 0" -servers abacus
//	go run ./bench/obufattack -kind zset -rounds 1     # ZRANGE; also hash, set, stream
//
// Without a limit redis-server would keep every reply (8 GB here): run it
// only with one. Only loopback addresses are used.
package main

import (
	"flag"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

func main() {
	bin := flag.String("bin", "", "abacus binary (default: build ./cmd/abacus)")
	limit := flag.String("limit", "normal 64mb 16mb 10", "client-output-buffer-limit")
	servers := flag.String("servers", "abacus,redis", "which servers")
	rounds := flag.Int("rounds", 3, "rounds per server")
	n := flag.Int("n", 100000, "GET requests per run")
	attackers := flag.Int("attackers", 8, "clients pipelining without reading")
	kind := flag.String("kind", "list", "the value read whole: "+strings.Join(harness.BigKinds, ", ")+" (LRANGE, ZRANGE, HGETALL, SMEMBERS, XRANGE)")
	flag.Parse()

	b, cleanup := harness.BuildAbacus(*bin)
	defer cleanup()
	var list []*harness.Server
	for _, name := range strings.Split(*servers, ",") {
		prog := b
		if name == "redis" {
			prog = "redis-server"
		}
		s := harness.Start(name, prog, "--client-output-buffer-limit", *limit)
		defer s.Stop()
		s.LoadBig(*kind, "big")
		list = append(list, s)
	}
	harness.Header(fmt.Sprintf("GET -P 1 -c 50 -n %d; %d attackers pipelining %s of about 1 MB, unread; client-output-buffer-limit %q; load average %s.",
		*n, *attackers, strings.Join(harness.BigRead(*kind, "big"), " "), *limit, harness.LoadAvg()))
	type row struct{ quiet, attacked [][3]float64 }
	rows := map[string]*row{}
	var peak = map[string]int64{}
	for r := 0; r < *rounds; r++ {
		for _, s := range list {
			rw := rows[s.Name]
			if rw == nil {
				rw = &row{}
				rows[s.Name] = rw
			}
			rw.quiet = append(rw.quiet, figures(s.GetLatency(*n, 50)))
			stopAttack := s.UnreadAttackersWith(*attackers, harness.BigRead(*kind, "big"))
			stop := make(chan struct{}) // ends the RSS sampling
			var maxRSS atomic.Int64
			done := make(chan struct{})
			go func() {
				for {
					select {
					case <-done:
						return
					case <-time.After(20 * time.Millisecond):
						if v := s.RSS(); v > maxRSS.Load() {
							maxRSS.Store(v)
						}
					}
				}
			}()
			time.Sleep(500 * time.Millisecond) // the attack under way
			rw.attacked = append(rw.attacked, figures(s.GetLatency(*n, 50)))
			cycles := stopAttack()
			close(stop)
			close(done)
			peak[s.Name] = max(peak[s.Name], maxRSS.Load())
			time.Sleep(2 * time.Second)
			fmt.Printf("round %d %-7s attack connections %d, peak RSS %d MB, RSS 2 s after %d MB\n", r+1, s.Name, cycles, maxRSS.Load()>>20, s.RSS()>>20)
		}
	}
	fmt.Printf("\n| server | quiet p50 / p99 / max (ms) | attacked p50 / p99 / max (ms) | peak RSS |\n|---|---|---|---|\n")
	for _, s := range list {
		rw := rows[s.Name]
		fmt.Printf("| %s | %s | %s | %d MB |\n", s.Name, med(rw.quiet), med(rw.attacked), peak[s.Name]>>20)
	}
}

// figures are a run's p50, p99 and max.
func figures(l harness.Latency) [3]float64 { return [3]float64{l.P50, l.P99, l.Max} }

// med formats the medians of the runs' p50, p99 and max.
func med(runs [][3]float64) string {
	var v [3][]float64
	for _, r := range runs {
		for i := range r {
			v[i] = append(v[i], r[i])
		}
	}
	return fmt.Sprintf("%.3f / %.3f / %.3f", harness.Median(v[0]), harness.Median(v[1]), harness.Median(v[2]))
}
