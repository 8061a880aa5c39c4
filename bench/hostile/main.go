// Command hostile measures, in one run, what clients that misbehave cost
// the others: redis-benchmark GET at pipeline 1 (p50, p99, max) while one
// client trickles an RPUSH of 1,000,000 arguments, and while eight
// clients pipeline LRANGE of a 1 MB list without reading (reconnecting
// when closed), against the quiet figures measured before and after the
// two attacks; with the server CPU time of the trickle and the peak RSS
// under the unread replies; for Abacus and redis-server (and optionally
// an older Abacus build) under the same client-output-buffer-limit.
//
// The method is the same for every server. Each window (quiet before,
// trickle, unread, quiet after) lasts -over and repeats the GET run until
// it ends; its figures are the worst of its runs, so an attack window and
// a quiet one are the same kind of sample. The quiet denominator of a
// round's ratios is the mean of its quiet windows before and after the
// attacks. The servers' order rotates each round, and before every
// window the program waits until the machine's cores and every server
// are idle (bounded by -settle-max) and prints the wait, so what one
// window left behind (a server freeing its closed clients' buffers, the
// kernel closing their sockets) falls in no other window.
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
	quietBefore, quietAfter, trickled, unread harness.Latency
	trickleCPU                                float64 // seconds
	peakRSS                                   int64
}

// quiet is the denominator of the round's ratios: the mean of the quiet
// windows before and after the attacks.
func (x result) quiet() harness.Latency {
	a, b := x.quietBefore, x.quietAfter
	return harness.Latency{P50: (a.P50 + b.P50) / 2, P99: (a.P99 + b.P99) / 2, Max: (a.Max + b.Max) / 2}
}

// worst keeps, figure by figure, the larger of w and l.
func worst(w, l harness.Latency) harness.Latency {
	return harness.Latency{P50: max(w.P50, l.P50), P99: max(w.P99, l.P99), Max: max(w.Max, l.Max)}
}

func main() {
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	before := flag.String("before", "", "an older abacus binary to run alongside")
	limit := flag.String("limit", "normal 64mb 16mb 10", "client-output-buffer-limit of every server")
	rounds := flag.Int("rounds", 2, "rounds (the servers' order rotates each round)")
	n := flag.Int("n", 20000, "GET requests per redis-benchmark run")
	unreadLimit := flag.Duration("unread-limit", time.Minute, "longest GET run under the unread replies: one that does not end in time counts this as its p50, p99 and max")
	clients := flag.Int("c", 50, "redis-benchmark clients")
	nargs := flag.Int("args", 1000000, "arguments of the trickled RPUSH")
	over := flag.Duration("over", 20*time.Second, "how long the trickle takes, and every other window")
	attackers := flag.Int("attackers", 8, "clients pipelining LRANGE without reading")
	idleMachine := flag.Float64("idle-machine", 0.25, "idle before a window: the cores' busy fraction below this over 500 ms")
	idleServer := flag.Float64("idle-server", 0.05, "idle before a window: each server's CPU below this fraction of one core over 500 ms")
	settleMax := flag.Duration("settle-max", 15*time.Second, "longest wait for idle before a window")
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
	harness.Header(fmt.Sprintf("GET -P 1 -c %d -n %d, repeated over windows of %v; RPUSH of %d arguments (%d bytes) trickled over %v; %d clients pipelining LRANGE of 1 MB unread; client-output-buffer-limit %q; load average %s.",
		*clients, *n, *over, *nargs, len(cmd), *over, *attackers, *limit, harness.LoadAvg()))

	settle := func(r int, name, window string) {
		waited, idle := harness.WaitIdle(servers, *idleMachine, *idleServer, 500*time.Millisecond, *settleMax)
		state := "idle"
		if !idle {
			state = "NOT idle"
		}
		fmt.Printf("round %d %-7s %-12s waited %4.1f s, %s, load %s\n", r+1, name, window, waited.Seconds(), state, harness.LoadAvg())
	}
	// window repeats the GET run until d has passed (at least once) or
	// done is closed, and returns the worst of its runs.
	window := func(s *harness.Server, d time.Duration, done chan struct{}) harness.Latency {
		var w harness.Latency
		end := time.Now().Add(d)
		for {
			w = worst(w, s.GetLatency(*n, *clients))
			select {
			case <-done:
				return w
			default:
			}
			if done == nil && time.Now().After(end) {
				return w
			}
		}
	}

	res := map[string][]result{}
	for r := 0; r < *rounds; r++ {
		for i := range servers {
			s := servers[(r+i)%len(servers)]
			var x result
			settle(r, s.Name, "quiet before")
			x.quietBefore = window(s, *over, nil)

			// The trickle.
			settle(r, s.Name, "trickle")
			done := make(chan struct{})
			cpu0 := s.CPUTicks()
			go s.Trickle(cmd, *over, done)
			x.trickled = window(s, 0, done)
			x.trickleCPU = float64(s.CPUTicks()-cpu0) / 100
			c := s.Dial()
			c.Send("DEL", "trickle")
			c.Close()

			// The unread replies.
			settle(r, s.Name, "unread")
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
			for end := time.Now().Add(*over); ; {
				l, finished := s.GetLatencyWithin(*n, *clients, *unreadLimit)
				x.unread = worst(x.unread, l)
				if !finished {
					fmt.Printf("round %d %-7s: a GET run under the unread replies did not end in %v\n", r+1, s.Name, *unreadLimit)
					break
				}
				if time.Now().After(end) {
					break
				}
			}
			cycles := stopAttack()
			close(stop)
			<-sampled
			x.peakRSS = peak.Load()
			time.Sleep(2 * time.Second) // closed clients' memory released
			rssAfter := s.RSS()

			settle(r, s.Name, "quiet after")
			x.quietAfter = window(s, *over, nil)
			q := x.quiet()
			fmt.Printf("round %d %-7s quiet before %s, after %s | trickle %s, %.2f s CPU | unread %s, %d connections, peak RSS %d MB, %d MB 2 s after | p99 ratio trickle %.2fx, unread %.2fx; max ratio %.2fx, %.2fx\n",
				r+1, s.Name, fig(x.quietBefore), fig(x.quietAfter), fig(x.trickled), x.trickleCPU, fig(x.unread), cycles, x.peakRSS>>20, rssAfter>>20,
				x.trickled.P99/q.P99, x.unread.P99/q.P99, x.trickled.Max/q.Max, x.unread.Max/q.Max)
			res[s.Name] = append(res[s.Name], x)
		}
	}

	fmt.Printf("\nRatios per round, attacked / quiet (the mean of the quiet windows before and after), p50 / p99 / max:\n\n")
	fmt.Println("| server | round | quiet before | quiet after | trickle ratio | unread ratio |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, s := range servers {
		for r, x := range res[s.Name] {
			fmt.Printf("| %s | %d | %s | %s | %s | %s |\n", s.Name, r+1, fig(x.quietBefore), fig(x.quietAfter), ratio(x.trickled, x.quiet()), ratio(x.unread, x.quiet()))
		}
	}
	fmt.Printf("\nMedians of %d rounds (ms; each window's figures are the worst of its GET runs; ratios are the medians of the rounds' ratios):\n\n", *rounds)
	fmt.Println("| server | quiet before | quiet after | trickle | unread | trickle ratio p50 / p99 / max | unread ratio p50 / p99 / max | trickle CPU s | unread peak RSS |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, s := range servers {
		rs := res[s.Name]
		med := func(f func(result) float64) float64 {
			var v []float64
			for _, x := range rs {
				v = append(v, f(x))
			}
			return harness.Median(v)
		}
		lat := func(f func(result) harness.Latency) harness.Latency {
			return harness.Latency{P50: med(func(x result) float64 { return f(x).P50 }), P99: med(func(x result) float64 { return f(x).P99 }), Max: med(func(x result) float64 { return f(x).Max })}
		}
		rat := func(f func(result) harness.Latency) string {
			return fmt.Sprintf("%.2fx / %.2fx / %.2fx", med(func(x result) float64 { return f(x).P50 / x.quiet().P50 }),
				med(func(x result) float64 { return f(x).P99 / x.quiet().P99 }), med(func(x result) float64 { return f(x).Max / x.quiet().Max }))
		}
		trickled := func(x result) harness.Latency { return x.trickled }
		unread := func(x result) harness.Latency { return x.unread }
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %.2f | %d MB |\n", s.Name,
			fig(lat(func(x result) harness.Latency { return x.quietBefore })), fig(lat(func(x result) harness.Latency { return x.quietAfter })),
			fig(lat(trickled)), fig(lat(unread)), rat(trickled), rat(unread),
			med(func(x result) float64 { return x.trickleCPU }), int64(med(func(x result) float64 { return float64(x.peakRSS) }))>>20)
	}
}

func fig(l harness.Latency) string {
	return strings.TrimSpace(fmt.Sprintf("%.3f / %.3f / %.3f", l.P50, l.P99, l.Max))
}

func ratio(l, q harness.Latency) string {
	return fmt.Sprintf("%.2fx / %.2fx / %.2fx", l.P50/q.P50, l.P99/q.P99, l.Max/q.Max)
}
