package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

// pair is a primary and its replicas (started empty, attached on demand).
type pair struct {
	name     string
	primary  *harness.Server
	ppid     int
	replicas []*harness.Server
	rpids    []int
	attached int
	dirs     []string
}

func startPair(name, bin string, replicas int) *pair {
	p := &pair{name: name}
	dir := func() string {
		d, err := os.MkdirTemp("", "replbench-")
		if err != nil {
			harness.Fatal("%v", err)
		}
		p.dirs = append(p.dirs, d)
		return d
	}
	p.primary = harness.Start(name, bin, "--dir", dir(), "--repl-diskless-sync-delay", "0", "--enable-debug-command", "yes")
	p.ppid = pidOf(p.primary)
	for i := 0; i < replicas; i++ {
		r := harness.Start(name+"-replica", bin, "--dir", dir(), "--enable-debug-command", "yes")
		p.replicas = append(p.replicas, r)
		p.rpids = append(p.rpids, pidOf(r))
	}
	return p
}

func (p *pair) stop() {
	for _, r := range p.replicas {
		r.Stop()
	}
	p.primary.Stop()
	for _, d := range p.dirs {
		os.RemoveAll(d)
	}
}

// attach makes the next replica follow the primary and waits for its link.
func (p *pair) attach() {
	c := p.replicas[p.attached].Dial()
	defer c.Close()
	c.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(p.primary.Port))
	linkUp(c, p.name)
	p.attached++
}

// linkUp polls the replica's INFO every 10 ms until its full sync is
// over: master_link_status:up and master_sync_in_progress:0.
func linkUp(c *harness.Conn, name string) {
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		inf := c.Do("INFO", "replication")
		if field(inf, "master_link_status") == "up" && field(inf, "master_sync_in_progress") == "0" {
			return
		}
		if time.Since(start) > 10*time.Minute {
			harness.Fatal("%s: the replica's full sync did not finish", name)
		}
	}
}

// caughtUp waits until every attached replica has processed the
// primary's whole stream; it returns "" or what is missing.
func (p *pair) caughtUp() string {
	pc := p.primary.Dial()
	defer pc.Close()
	for i := 0; i < p.attached; i++ {
		rc := p.replicas[i].Dial()
		for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
			po := fieldInt(pc.Do("INFO", "replication"), "master_repl_offset")
			ro := fieldInt(rc.Do("INFO", "replication"), "slave_repl_offset")
			if ro >= po {
				break
			}
			if time.Since(start) > time.Minute {
				rc.Close()
				return fmt.Sprintf("replica %d at %d of %d", i, ro, po)
			}
		}
		rc.Close()
	}
	return ""
}

// converged is caughtUp, then DEBUG DIGEST of each replica against the
// primary's (not inside a measurement: a digest walks every key).
func (p *pair) converged() string {
	if m := p.caughtUp(); m != "" {
		return m
	}
	pc := p.primary.Dial()
	defer pc.Close()
	pd := pc.Do("DEBUG", "DIGEST")
	for i := 0; i < p.attached; i++ {
		rc := p.replicas[i].Dial()
		same := pd == rc.Do("DEBUG", "DIGEST")
		rc.Close()
		if !same {
			return fmt.Sprintf("replica %d DIGEST differs", i)
		}
	}
	return "ok"
}

func (p *pair) replicaTicks() int64 {
	var t int64
	for i := 0; i < p.attached; i++ {
		t += cpuTicks(p.rpids[i])
	}
	return t
}

// throughputRows runs SET through redis-benchmark at each pipeline depth
// with 0, 1 and up to maxReplicas replicas attached, the two servers in
// turn for rounds rounds; between 1 replica and more it runs the lag rows.
func throughputRows(abacus string, pipes []int, maxReplicas, rounds, n int, lag func([]*pair), table bool) {
	pairs := []*pair{startPair("abacus", abacus, maxReplicas), startPair("redis", "redis-server", maxReplicas)}
	defer func() {
		for _, p := range pairs {
			p.stop()
		}
	}()
	type key struct {
		server         string
		replicas, pipe int
	}
	rps, cpu, rcpu := map[key][]float64{}, map[key][]float64{}, map[key][]float64{}
	checks := map[int][]string{}
	for k := 0; k <= maxReplicas; k++ {
		if k > 0 {
			for _, p := range pairs {
				p.attach()
			}
		}
		for r := 0; r < rounds; r++ {
			for _, pipe := range pipes {
				for _, p := range pairs {
					c0, rc0 := cpuTicks(p.ppid), p.replicaTicks()
					v := p.primary.Bench("set", pipe, n, 50, 100000)
					kk := key{p.name, k, pipe}
					rps[kk] = append(rps[kk], v)
					cpu[kk] = append(cpu[kk], float64(cpuTicks(p.ppid)-c0)*1e4/float64(n))
					// The replicas may still be applying: give them the
					// stream's end before reading their CPU.
					if k > 0 {
						p.caughtUp()
					}
					rcpu[kk] = append(rcpu[kk], float64(p.replicaTicks()-rc0)*1e4/float64(n))
					fmt.Fprintf(os.Stderr, "replicas %d P%d %s: %.0f req/s, CPU µs/req %.2f + %.2f\n", k, pipe, p.name, v, cpu[kk][len(cpu[kk])-1], rcpu[kk][len(rcpu[kk])-1])
				}
			}
		}
		for _, p := range pairs {
			checks[k] = append(checks[k], p.name+" "+p.converged())
		}
		if k == 1 && lag != nil {
			lag(pairs)
		}
	}
	if !table {
		return
	}
	fmt.Printf("\n#### SET (redis-benchmark -t set -c 50 -n %d -r 100000) with replicas attached (%d rounds, A B A B, medians)\n\n", n, rounds)
	fmt.Println("| replicas | pipeline | abacus req/s | redis req/s | ratio | abacus primary CPU µs/req | redis primary CPU µs/req | abacus replicas' CPU µs/req | redis replicas' CPU µs/req |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for k := 0; k <= maxReplicas; k++ {
		for _, pipe := range pipes {
			a, b := harness.Median(rps[key{"abacus", k, pipe}]), harness.Median(rps[key{"redis", k, pipe}])
			fmt.Printf("| %d | %d | %.0f | %.0f | %.2fx | %.2f | %.2f | %.2f | %.2f |\n", k, pipe, a, b, a/b,
				harness.Median(cpu[key{"abacus", k, pipe}]), harness.Median(cpu[key{"redis", k, pipe}]),
				harness.Median(rcpu[key{"abacus", k, pipe}]), harness.Median(rcpu[key{"redis", k, pipe}]))
		}
	}
	fmt.Println("\nRounds (k req/s):")
	for k := 0; k <= maxReplicas; k++ {
		for _, pipe := range pipes {
			var parts []string
			for _, s := range []string{"abacus", "redis"} {
				var v []string
				for _, x := range rps[key{s, k, pipe}] {
					v = append(v, fmt.Sprintf("%.0f", x/1000))
				}
				parts = append(parts, s+" "+strings.Join(v, " "))
			}
			fmt.Printf("%d replicas P%d: %s\n", k, pipe, strings.Join(parts, "; "))
		}
	}
	for k := 1; k <= maxReplicas; k++ {
		fmt.Printf("replicas converged after the %d-replica rows (offset, DEBUG DIGEST): %s\n", k, strings.Join(checks[k], "; "))
	}
}

// pacedWriter SETs keys picked by key (32-byte values) at rate commands/s
// over conns connections, each sending what is due every millisecond as
// one pipeline, until stop; it returns how many it sent.
func pacedWriter(s *harness.Server, rate, conns int, key func(*rand.Rand) string, stop *atomic.Bool) int64 {
	var total atomic.Int64
	var wg sync.WaitGroup
	for c := 0; c < conns; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			conn := s.Dial()
			defer conn.Close()
			rnd := rand.New(rand.NewPCG(uint64(c), 11))
			val := strings.Repeat("v", 32)
			per := float64(rate) / float64(conns)
			start := time.Now()
			sent := 0
			for !stop.Load() {
				due := int(per*time.Since(start).Seconds()) - sent
				if due <= 0 {
					time.Sleep(200 * time.Microsecond)
					continue
				}
				due = min(due, 999)
				for i := 0; i < due; i++ {
					conn.Send("SET", key(rnd), val)
				}
				conn.Flush()
				sent += due
			}
			total.Add(int64(sent))
		}(c)
	}
	wg.Wait()
	return total.Load()
}

type lagResult struct {
	rate, streamBps                  float64 // commands/s, stream bytes/s
	medB, p99B, maxB                 float64
	medQ, maxQ                       float64 // the replica's omem on the primary
	samples, negative                int
	primaryUsPerReq, replicaUsPerReq float64
}

// lagRun writes at rate for dur on p's primary with its first replica
// attached and samples, every every, the primary's master_repl_offset
// and the replica's slave_repl_offset (both INFOs sent at once).
func lagRun(p *pair, rate int, dur, every time.Duration) lagResult {
	pc, rc := p.primary.Dial(), p.replicas[0].Dial()
	defer pc.Close()
	defer rc.Close()
	var stop atomic.Bool
	var sent int64
	done := make(chan struct{})
	c0, rc0 := cpuTicks(p.ppid), cpuTicks(p.rpids[0])
	anyKey := func(r *rand.Rand) string { return "key:" + strconv.Itoa(r.IntN(1_000_000)) }
	go func() { sent = pacedWriter(p.primary, rate, 4, anyKey, &stop); close(done) }()
	var lags, queued []float64
	var res lagResult
	start := time.Now()
	warm := time.Second
	var off0, off1 int64
	var t0, t1 time.Time
	for next := start; time.Since(start) < warm+dur; {
		next = next.Add(every)
		time.Sleep(time.Until(next))
		var ro int64
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); ro = fieldInt(rc.Do("INFO", "replication"), "slave_repl_offset") }()
		po := fieldInt(pc.Do("INFO", "replication"), "master_repl_offset")
		wg.Wait()
		if time.Since(start) < warm {
			continue
		}
		om := 0.0
		for _, f := range strings.Fields(pc.Do("CLIENT", "LIST", "TYPE", "replica")) {
			if v, ok := strings.CutPrefix(f, "omem="); ok {
				om, _ = strconv.ParseFloat(v, 64)
			}
		}
		queued = append(queued, om)
		if off0 == 0 {
			off0, t0 = po, time.Now()
		}
		off1, t1 = po, time.Now()
		d := po - ro
		if d < 0 {
			res.negative++
			d = 0
		}
		lags = append(lags, float64(d))
	}
	stop.Store(true)
	<-done
	elapsed := time.Since(start).Seconds()
	sort.Float64s(lags)
	res.samples = len(lags)
	res.rate = float64(sent) / elapsed
	res.streamBps = float64(off1-off0) / t1.Sub(t0).Seconds()
	res.medB = harness.Median(lags)
	res.p99B = lags[len(lags)*99/100]
	res.maxB = lags[len(lags)-1]
	sort.Float64s(queued)
	res.medQ, res.maxQ = harness.Median(queued), queued[len(queued)-1]
	p.caughtUp()
	res.primaryUsPerReq = float64(cpuTicks(p.ppid)-c0) * 1e4 / float64(sent)
	res.replicaUsPerReq = float64(cpuTicks(p.rpids[0])-rc0) * 1e4 / float64(sent)
	return res
}

func lagRows(pairs []*pair, rate int, dur, every time.Duration, rounds int) {
	res := map[string][]lagResult{}
	for r := 0; r < rounds; r++ {
		for _, p := range pairs {
			l := lagRun(p, rate, dur, every)
			fmt.Fprintf(os.Stderr, "lag %s: %.0f ops/s, median %.0f B, p99 %.0f, max %.0f\n", p.name, l.rate, l.medB, l.p99B, l.maxB)
			res[p.name] = append(res[p.name], l)
		}
	}
	fmt.Printf("\n#### Replication lag at %d SET/s (4 paced connections, 32-byte values), one replica, %d rounds of %s, a sample every %s (A B A B, medians of the rounds)\n\n", rate, rounds, dur, every)
	fmt.Println("| server | SET/s achieved | stream MB/s | median lag B | p99 lag B | max lag B | median ms | p99 ms | max ms | replica's omem median / max B | primary CPU µs/SET | replica CPU µs/SET | samples (negative) |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, p := range pairs {
		rs := res[p.name]
		g := func(f func(lagResult) float64) float64 { return med(rs, f) }
		bpms := g(func(l lagResult) float64 { return l.streamBps }) / 1000
		neg, n := 0, 0
		for _, l := range rs {
			neg += l.negative
			n += l.samples
		}
		fmt.Printf("| %s | %.0f | %.2f | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f | %.0f / %.0f | %.2f | %.2f | %d (%d) |\n", p.name,
			g(func(l lagResult) float64 { return l.rate }), bpms/1000,
			g(func(l lagResult) float64 { return l.medB }), g(func(l lagResult) float64 { return l.p99B }), g(func(l lagResult) float64 { return l.maxB }),
			g(func(l lagResult) float64 { return l.medB })/bpms, g(func(l lagResult) float64 { return l.p99B })/bpms, g(func(l lagResult) float64 { return l.maxB })/bpms,
			g(func(l lagResult) float64 { return l.medQ }), g(func(l lagResult) float64 { return l.maxQ }),
			g(func(l lagResult) float64 { return l.primaryUsPerReq }), g(func(l lagResult) float64 { return l.replicaUsPerReq }), n, neg)
	}
	var checks []string
	for _, p := range pairs {
		checks = append(checks, p.name+" "+p.converged())
	}
	fmt.Printf("\nreplicas converged after the lag rows (offset, DEBUG DIGEST): %s\n", strings.Join(checks, "; "))
	fmt.Println("ms: lag in bytes over the stream's bytes per ms in that run. Negative samples (the replica's INFO answered after more of the stream arrived) count as 0.")
}
