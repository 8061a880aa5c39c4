// Command hostile measures, in one run, what clients that misbehave cost
// the others: redis-benchmark GET at pipeline 1 (p50, p99, max) quiet,
// while one client trickles an RPUSH of 1,000,000 arguments, and while
// eight clients pipeline LRANGE of a 1 MB list without reading
// (reconnecting when closed), with the server CPU time of the trickle
// and the peak RSS under the unread replies; for Abacus and redis-server
// in turn (A B A B ...), both under the same client-output-buffer-limit,
// and optionally an older Abacus build in the same rounds.
//
//	go run ./bench/hostile
//	go run ./bench/hostile -before /tmp/abacus-old -rounds 3
//
// Only loopback addresses are used.
package main

import (
	"flag"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

// result is one server's figures in one round.
type result struct {
	quiet, trickled, unread harness.Latency
	trickleCPU              float64 // seconds
	peakRSS                 int64
}

func main() {
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	before := flag.String("before", "", "an older abacus binary to run alongside")
	limit := flag.String("limit", "normal 64mb 16mb 10", "client-output-buffer-limit of every server")
	rounds := flag.Int("rounds", 2, "rounds (A B A B ...)")
	n := flag.Int("n", 20000, "GET requests per redis-benchmark run")
	unreadN := flag.Int("unread-n", 5000, "GET requests of the run under the unread replies (a server that stalls for seconds per attacker's read makes a long run last minutes)")
	unreadLimit := flag.Duration("unread-limit", time.Minute, "longest GET run under the unread replies: one that does not end in time counts this as its p50, p99 and max")
	clients := flag.Int("c", 50, "redis-benchmark clients")
	nargs := flag.Int("args", 1000000, "arguments of the trickled RPUSH")
	over := flag.Duration("over", 20*time.Second, "how long the trickle takes")
	attackers := flag.Int("attackers", 8, "clients pipelining LRANGE without reading")
	flag.Parse()

	bin, cleanup := harness.BuildAbacus(*abacusBin)
	defer cleanup()
	var servers []*harness.Server
	add := func(name, prog string) {
		s := harness.Start(name, prog, "--client-output-buffer-limit", *limit)
		s.LoadBigList("big")
		servers = append(servers, s)
	}
	add("abacus", bin)
	if *before != "" {
		add("before", *before)
	}
	add("redis", "redis-server")
	defer harness.StopAll(servers)
	cmd := harness.RPush("trickle", *nargs)
	harness.Header(fmt.Sprintf("GET -P 1 -c %d -n %d (%d under the unread replies); RPUSH of %d arguments (%d bytes) trickled over %v; %d clients pipelining LRANGE of 1 MB unread; client-output-buffer-limit %q; load average %s.",
		*clients, *n, *unreadN, *nargs, len(cmd), *over, *attackers, *limit, harness.LoadAvg()))
	res := map[string][]result{}
	for r := 0; r < *rounds; r++ {
		for _, s := range servers {
			var x result
			x.quiet = s.GetLatency(*n, *clients)

			// The trickle: the worst of the GET runs made while it lasts.
			done := make(chan struct{})
			cpu0 := s.CPUTicks()
			go s.Trickle(cmd, *over, done)
			for going := true; going; {
				l := s.GetLatency(*n, *clients)
				x.trickled.P50, x.trickled.P99, x.trickled.Max = max(x.trickled.P50, l.P50), max(x.trickled.P99, l.P99), max(x.trickled.Max, l.Max)
				select {
				case <-done:
					going = false
				default:
				}
			}
			x.trickleCPU = float64(s.CPUTicks()-cpu0) / 100
			c := s.Dial()
			c.Send("DEL", "trickle")
			c.Close()

			// The unread replies.
			stopAttack := s.UnreadAttackers(*attackers, "big")
			stop := make(chan struct{}) // ends the RSS sampling
			var peak atomic.Int64
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				for {
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
						peak.Store(max(peak.Load(), s.RSS()))
					}
				}
			}()
			time.Sleep(500 * time.Millisecond) // the attack under way
			var finished bool
			x.unread, finished = s.GetLatencyWithin(*unreadN, *clients, *unreadLimit)
			if !finished {
				fmt.Printf("round %d %-7s: the GET run under the unread replies did not end in %v\n", r+1, s.Name, *unreadLimit)
			}
			cycles := stopAttack()
			close(stop)
			<-sampled
			x.peakRSS = peak.Load()
			time.Sleep(2 * time.Second) // closed clients' memory released
			fmt.Printf("round %d %-7s quiet %s | trickle %s, %.2f s CPU | unread %s, %d connections, peak RSS %d MB, %d MB 2 s after\n",
				r+1, s.Name, fig(x.quiet), fig(x.trickled), x.trickleCPU, fig(x.unread), cycles, x.peakRSS>>20, s.RSS()>>20)
			res[s.Name] = append(res[s.Name], x)
		}
	}
	fmt.Printf("\nMedians of %d rounds (ms; the trickle's figures are the worst of the GET runs it lasted):\n\n", *rounds)
	fmt.Println("| server | quiet p50 / p99 / max | trickle p50 / p99 / max | unread p50 / p99 / max | p50 ratio trickle, unread | trickle CPU s | unread peak RSS |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, s := range servers {
		rs := res[s.Name]
		med := func(f func(result) float64) float64 {
			var v []float64
			for _, x := range rs {
				v = append(v, f(x))
			}
			return harness.Median(v)
		}
		q := harness.Latency{P50: med(func(x result) float64 { return x.quiet.P50 }), P99: med(func(x result) float64 { return x.quiet.P99 }), Max: med(func(x result) float64 { return x.quiet.Max })}
		t := harness.Latency{P50: med(func(x result) float64 { return x.trickled.P50 }), P99: med(func(x result) float64 { return x.trickled.P99 }), Max: med(func(x result) float64 { return x.trickled.Max })}
		u := harness.Latency{P50: med(func(x result) float64 { return x.unread.P50 }), P99: med(func(x result) float64 { return x.unread.P99 }), Max: med(func(x result) float64 { return x.unread.Max })}
		fmt.Printf("| %s | %s | %s | %s | %.1fx, %.1fx | %.2f | %d MB |\n", s.Name, fig(q), fig(t), fig(u), t.P50/q.P50, u.P50/q.P50,
			med(func(x result) float64 { return x.trickleCPU }), int64(med(func(x result) float64 { return float64(x.peakRSS) }))>>20)
	}
}

func fig(l harness.Latency) string {
	return strings.TrimSpace(fmt.Sprintf("%.3f / %.3f / %.3f", l.P50, l.P99, l.Max))
}
