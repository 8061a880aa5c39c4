// Command loopwaits reads a runtime trace's parsed dump and reports how
// long the event loop's goroutine waited for a processor: every gap from
// Runnable to Running, with what made it runnable (a yield, a
// preemption, a wake-up).
//
//	go tool trace -d=parsed trace.out > dump.txt
//	go run ./bench/loopwaits dump.txt
//
// The loop's goroutine is the one with the most events whose stack holds
// conn.(*eventLoop).run. TestSaveTrace (internal/durability) writes such a
// trace of a save under GET load with ABACUS_TRACE_OUT.
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var transition = regexp.MustCompile(`^M=-?\d+ P=-?\d+ G=-?\d+ StateTransition Time=(\d+) GoID=(\d+) (\w+)->(\w+) Reason="([^"]*)"`)

type event struct {
	t        int64
	g        int64
	from, to string
	reason   string
	stack    []string // function names, innermost first
}

type wait struct {
	ms     float64
	at     float64 // ms since the trace's first event
	reason string
	from   string
	frame  string
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: loopwaits dump.txt (from go tool trace -d=parsed)")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	var events []event
	var first int64 = -1
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur *event
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "M=") {
			cur = nil
			if first < 0 {
				if i := strings.Index(line, "Time="); i >= 0 {
					first, _ = strconv.ParseInt(strings.Fields(line[i+5:])[0], 10, 64)
				}
			}
			m := transition.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			t, _ := strconv.ParseInt(m[1], 10, 64)
			g, _ := strconv.ParseInt(m[2], 10, 64)
			events = append(events, event{t: t, g: g, from: m[3], to: m[4], reason: m[5]})
			cur = &events[len(events)-1]
			continue
		}
		if cur != nil && strings.HasPrefix(line, "\t") && strings.Contains(line, " @ ") {
			cur.stack = append(cur.stack, strings.TrimSpace(strings.SplitN(line, " @ ", 2)[0]))
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	counts := map[int64]int{}
	for _, e := range events {
		for _, fn := range e.stack {
			if strings.HasSuffix(fn, "eventLoop).run") {
				counts[e.g]++
				break
			}
		}
	}
	loop, best := int64(-1), 0
	for g, n := range counts {
		if n > best {
			loop, best = g, n
		}
	}
	if loop < 0 {
		fmt.Fprintln(os.Stderr, "no goroutine runs conn.(*eventLoop).run")
		os.Exit(1)
	}
	byState := map[string]float64{}
	var waits []wait
	var last *event
	var since *event
	for i := range events {
		e := &events[i]
		if e.g != loop {
			continue
		}
		if last != nil {
			byState[last.to] += float64(e.t-last.t) / 1e6
		}
		last = e
		switch {
		case e.to == "Runnable":
			since = e
		case e.from == "Runnable" && e.to == "Running" && since != nil:
			w := wait{ms: float64(e.t-since.t) / 1e6, at: float64(since.t-first) / 1e6, reason: since.reason, from: since.from}
			for _, fn := range since.stack {
				if !strings.HasPrefix(fn, "runtime.") {
					w.frame = fn
					break
				}
			}
			waits = append(waits, w)
			since = nil
		}
	}
	fmt.Printf("loop goroutine %d, trace %.0f ms\n", loop, float64(events[len(events)-1].t-first)/1e6)
	states := make([]string, 0, len(byState))
	for s := range byState {
		states = append(states, s)
	}
	sort.Strings(states)
	for _, s := range states {
		fmt.Printf("  %-9s %8.1f ms\n", s, byState[s])
	}
	total := 0.0
	for _, w := range waits {
		total += w.ms
	}
	fmt.Printf("waits for a processor: %d, %.1f ms in all\n", len(waits), total)
	for _, thr := range []float64{0.5, 1, 2, 5} {
		n := 0
		for _, w := range waits {
			if w.ms > thr {
				n++
			}
		}
		fmt.Printf("  over %.1f ms: %d\n", thr, n)
	}
	sort.Slice(waits, func(i, j int) bool { return waits[i].ms > waits[j].ms })
	for _, w := range waits[:min(10, len(waits))] {
		fmt.Printf("  %.2f ms at +%.0f ms, %s->Runnable %q in %s\n", w.ms, w.at, w.from, w.reason, w.frame)
	}
}
