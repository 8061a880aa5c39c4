package engine

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/hdr"
)

// Two latency records, as in Redis 7.0:
//   - the latency monitor (latency-monitor-threshold): per event
//     ("command", "fast-command"), the worst latency of each second above
//     the threshold, the last 160 such seconds (LATENCY LATEST, HISTORY,
//     GRAPH, DOCTOR, RESET);
//   - latency tracking (latency-tracking): per command, an HDR histogram of
//     every call's duration (INFO latencystats, LATENCY HISTOGRAM), dropped
//     by CONFIG RESETSTAT with the other command statistics.
//
// Redis records a call's duration in whole microseconds (times 1000 into
// the histogram, so nothing shows under 1 µs); Abacus records the
// nanoseconds it measured. The histogram's buckets and percentile rule are
// Redis's (internal/hdr), so the same durations give the same figures.

func init() {
	Register(&Command{Name: "latency", Arity: -2, Group: "server",
		Summary: "A container for latency diagnostics commands.", Since: "2.8.13", Complexity: "Depends on subcommand.",
		Subs: map[string]*Command{
			"latest":  latencySub(2, "Returns the latest latency samples for all events.", "O(1)", cmdLatencyLatest),
			"history": latencySub(3, "Returns timestamp-latency samples for an event.", "O(1)", cmdLatencyHistory),
			"reset": {Arity: -2, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Handler: cmdLatencyReset,
				Tips:    "request_policy:all_nodes response_policy:all_succeeded",
				Summary: "Resets the latency data for one or more events.", Since: "2.8.13", Complexity: "O(1)"},
			"doctor": latencySub(2, "Returns a human-readable latency analysis report.", "O(1)", cmdLatencyDoctor),
			"graph":  latencySub(3, "Returns a latency graph for an event.", "O(1)", cmdLatencyGraph),
			"histogram": {Arity: -2, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Handler: cmdLatencyHistogram,
				Tips:    "nondeterministic_output request_policy:all_nodes response_policy:special",
				Summary: "Return the cumulative distribution of latencies of a subset of commands or all.", Since: "7.0.0",
				Complexity: "O(N) where N is the number of commands with latency information being retrieved."},
			"help": {Arity: 2, Flags: FlagLoading | FlagStale, Handler: cmdLatencyHelp,
				Summary: "Returns helpful text about the different subcommands.", Since: "2.8.13", Complexity: "O(1)"},
		}})
}

func latencySub(arity int, summary, complexity string, h func(*Ctx)) *Command {
	return &Command{Arity: arity, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Handler: h,
		Tips:    "nondeterministic_output request_policy:all_nodes response_policy:special",
		Summary: summary, Since: "2.8.13", Complexity: complexity}
}

// latencyTSLen is Redis's LATENCY_TS_LEN: the seconds an event keeps.
const latencyTSLen = 160

// latencyMonitor keeps, per event, the worst latency of each of the last
// 160 seconds that had one above latency-monitor-threshold, and the worst
// of all time.
type latencyMonitor struct {
	events map[string]*latencyEvent
}

type latencySample struct {
	at, ms int64 // unix seconds, milliseconds
}

type latencyEvent struct {
	history []latencySample // at most latencyTSLen, oldest first
	maxMs   int64
}

// latencySample is Redis's latencyAddSampleIfNeeded: a latency in whole
// milliseconds at or above a non-zero threshold is recorded.
func (e *Env) latencySample(event string, dur time.Duration) {
	th := e.Cfg.Int(config.LatencyMonitorThreshold)
	ms := dur.Milliseconds()
	if th == 0 || ms < th {
		return
	}
	if e.latency.events == nil {
		e.latency.events = map[string]*latencyEvent{}
	}
	ev := e.latency.events[event]
	if ev == nil {
		ev = &latencyEvent{}
		e.latency.events[event] = ev
	}
	ev.maxMs = max(ev.maxMs, ms)
	now := time.Now().Unix()
	if n := len(ev.history); n > 0 && ev.history[n-1].at == now {
		ev.history[n-1].ms = max(ev.history[n-1].ms, ms)
		return
	}
	if len(ev.history) == latencyTSLen {
		copy(ev.history, ev.history[1:])
		ev.history = ev.history[:latencyTSLen-1]
	}
	ev.history = append(ev.history, latencySample{at: now, ms: ms})
}

// trackLatency records a finished call in its command's histogram, with
// latency-tracking on. A call that left its client blocked is recorded
// when it is served (serveWaiter), as Redis does.
func (e *Env) trackLatency(st *CmdStat, dur time.Duration) {
	if !e.Cfg.Bool(config.LatencyTracking) {
		return
	}
	if st.hist == nil {
		st.hist = new(hdr.Histogram)
	}
	st.hist.Record(dur.Nanoseconds())
}

// commandLatencyEvent is the latency monitor's event for a command.
func commandLatencyEvent(cmd *Command) string {
	if cmd.Flags&FlagFast != 0 {
		return "fast-command"
	}
	return "command"
}

// InfoLatencyStats writes INFO latencystats: per command with a histogram,
// the latency-tracking-info-percentiles in microseconds, three decimals.
func InfoLatencyStats(e *Env, b *InfoBuilder) {
	if !e.Cfg.Bool(config.LatencyTracking) {
		return
	}
	var ps []float64
	labels := strings.Fields(e.Cfg.Str(config.LatencyTrackingInfoPercentiles))
	for _, l := range labels {
		p, _ := strconv.ParseFloat(l, 64) // canonical: the config checked it
		ps = append(ps, p)
	}
	var v []byte
	for _, n := range e.trackedCommands() {
		h := e.cmdStats[n].hist
		v = v[:0]
		for i, p := range ps {
			if i > 0 {
				v = append(v, ',')
			}
			v = append(v, 'p')
			v = append(v, labels[i]...)
			v = append(v, '=')
			v = strconv.AppendFloat(v, float64(h.ValueAtPercentile(p))/1000, 'f', 3, 64)
		}
		b.KV("latency_percentiles_usec_"+n, string(v))
	}
}

// trackedCommands are the names of the commands with a histogram, sorted.
func (e *Env) trackedCommands() []string {
	var names []string
	for n, st := range e.cmdStats {
		if st.hist != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// cmdLatencyHistogram is LATENCY HISTOGRAM [command ...]: a map from
// command name to {calls, histogram_usec}, the latter the cumulative
// count at each power-of-two microsecond bucket from 1 µs that grew. A
// container named gives its subcommands too; unknown names and commands
// without calls are skipped.
func cmdLatencyHistogram(c *Ctx) {
	e := c.Env
	var names []string
	if len(c.Args) == 2 {
		names = e.trackedCommands()
	} else {
		for _, a := range c.Args[2:] {
			cmd := lookupFull(a)
			if cmd == nil {
				continue
			}
			if st := e.cmdStats[cmd.Name]; st != nil && st.hist != nil {
				names = append(names, cmd.Name)
			}
			subs := make([]string, 0, len(cmd.Subs))
			for _, sub := range cmd.Subs {
				if st := e.cmdStats[sub.Name]; st != nil && st.hist != nil {
					subs = append(subs, sub.Name)
				}
			}
			sort.Strings(subs)
			names = append(names, subs...)
		}
	}
	c.W.Map(len(names))
	for _, n := range names {
		h := e.cmdStats[n].hist
		c.W.BulkString(n)
		c.W.Map(2)
		c.W.BulkString("calls")
		c.W.Int(h.Count())
		c.W.BulkString("histogram_usec")
		var buckets []int64
		h.LogBuckets(func(hi, cum int64) { buckets = append(buckets, hi/1000, cum) })
		c.W.Map(len(buckets) / 2)
		for _, v := range buckets {
			c.W.Int(v)
		}
	}
}

// lookupFull finds a command by its full name, "config|set" included
// (Redis's lookupCommandBySds).
func lookupFull(name []byte) *Command {
	parent, sub, ok := strings.Cut(string(name), "|")
	c := Lookup([]byte(parent))
	if c == nil || !ok {
		return c
	}
	if strings.Contains(sub, "|") {
		return nil
	}
	return c.Subs[strings.ToLower(sub)]
}

func (m *latencyMonitor) names() []string {
	names := make([]string, 0, len(m.events))
	for n := range m.events {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func cmdLatencyLatest(c *Ctx) {
	m := &c.Env.latency
	names := m.names()
	c.W.Array(len(names))
	for _, n := range names {
		ev := m.events[n]
		last := ev.history[len(ev.history)-1]
		c.W.Array(4)
		c.W.BulkString(n)
		c.W.Int(last.at)
		c.W.Int(last.ms)
		c.W.Int(ev.maxMs)
	}
}

func cmdLatencyHistory(c *Ctx) {
	ev := c.Env.latency.events[c.Arg(2)]
	if ev == nil {
		c.W.Array(0)
		return
	}
	c.W.Array(len(ev.history))
	for _, s := range ev.history {
		c.W.Array(2)
		c.W.Int(s.at)
		c.W.Int(s.ms)
	}
}

func cmdLatencyReset(c *Ctx) {
	m := &c.Env.latency
	if len(c.Args) == 2 {
		n := len(m.events)
		m.events = nil
		c.W.Int(int64(n))
		return
	}
	n := 0
	for _, a := range c.Args[2:] {
		if _, ok := m.events[string(a)]; ok {
			delete(m.events, string(a))
			n++
		}
	}
	c.W.Int(int64(n))
}

// latencyStats is Redis's analyzeLatencyForEvent: over an event's kept
// samples, the average, the mean absolute deviation from it, and the
// seconds since the oldest (at least 1).
func latencyStats(ev *latencyEvent, now int64) (avg, mad, period int64) {
	var sum int64
	oldest := ev.history[0].at
	for _, s := range ev.history {
		sum += s.ms
		oldest = min(oldest, s.at)
	}
	n := int64(len(ev.history))
	avg = sum / n
	period = max(now-oldest, 1)
	sum = 0
	for _, s := range ev.history {
		d := avg - s.ms
		if d < 0 {
			d = -d
		}
		sum += d
	}
	return avg, sum / n, period
}

// cmdLatencyDoctor is Redis's createLatencyReport for the events Abacus
// records (command, fast-command) and the advice they lead to.
func cmdLatencyDoctor(c *Ctx) {
	e := c.Env
	m := &e.latency
	th := e.Cfg.Int(config.LatencyMonitorThreshold)
	var b strings.Builder
	if len(m.events) == 0 && th == 0 {
		b.WriteString("I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n")
		c.W.Verbatim("txt", b.String())
		return
	}
	var slowlogEnabled, slowlogTuning, slowlogInspect, scheduler, largeObjects bool
	advices := 0
	now := time.Now().Unix()
	for i, n := range m.names() {
		ev := m.events[n]
		if i == 0 {
			b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
		}
		avg, mad, period := latencyStats(ev, now)
		fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). Worst all time event %dms.",
			i+1, n, len(ev.history), avg, mad, float64(period)/float64(len(ev.history)), ev.maxMs)
		switch n {
		case "command":
			if sl := e.Cfg.Int(config.SlowlogLogSlowerThan); sl < 0 {
				slowlogEnabled = true
				advices++
			} else if sl/1000 > th {
				slowlogTuning = true
				advices++
			}
			slowlogInspect, largeObjects = true, true
			advices += 2
		case "fast-command":
			scheduler = true
			advices++
		}
		b.WriteByte('\n')
	}
	thp := anonHugePages() > 0
	if thp {
		advices++
	}
	switch {
	case len(m.events) == 0 && advices == 0:
		b.WriteString("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n")
	case len(m.events) > 0 && advices == 0:
		b.WriteString("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n")
	default:
		b.WriteString("\nI have a few advices for you:\n\n")
		if slowlogEnabled {
			fmt.Fprintf(&b, "- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %d'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n", th*1000)
		}
		if slowlogTuning {
			fmt.Fprintf(&b, "- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %d'.\n", th*1000)
		}
		if slowlogInspect {
			b.WriteString("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n")
		}
		if scheduler {
			b.WriteString("- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n" +
				"  1) Lower the system load.\n" +
				"  2) Use a computer / VM just for Redis if you are running other software in the same system.\n" +
				"  3) Check if you have a \"noisy neighbour\" problem.\n" +
				"  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n" +
				"  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n")
		}
		if largeObjects {
			b.WriteString("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n")
		}
		if thp {
			b.WriteString("- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious latency events in different conditions, especially when Redis is persisting on disk. To disable THP support use the command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so that the command will be executed again after a reboot. Note that even if you have already disabled THP, you still need to restart the Redis process to get rid of the huge pages already created.\n")
		}
	}
	c.W.Verbatim("txt", b.String())
}

// anonHugePages is the process's anonymous huge pages in kB, from
// /proc/self/smaps (0 where there is none), as Redis's
// THPGetAnonHugePagesSize.
func anonHugePages() int64 {
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0
	}
	var kb int64
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "AnonHugePages:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				kb += n
			}
		}
	}
	return kb
}

// latencyGraphCols is Redis's LATENCY_GRAPH_COLS.
const latencyGraphCols = 80

// cmdLatencyGraph is Redis's latencyCommandGenSparkeline: a four-row
// filled sparkline of the event's samples, each labelled (vertically)
// with how long ago it was.
func cmdLatencyGraph(c *Ctx) {
	name := c.Arg(2)
	ev := c.Env.latency.events[name]
	if ev == nil {
		c.Errorf("ERR No samples available for event '%s'", name)
		return
	}
	now := time.Now().Unix()
	var lo, hi int64
	seq := make([]sparkSample, len(ev.history))
	for i, s := range ev.history {
		if i == 0 {
			lo, hi = s.ms, s.ms
		}
		lo, hi = min(lo, s.ms), max(hi, s.ms)
		var label string
		switch el := now - s.at; {
		case el < 60:
			label = fmt.Sprintf("%ds", el)
		case el < 3600:
			label = fmt.Sprintf("%dm", el/60)
		case el < 3600*24:
			label = fmt.Sprintf("%dh", el/3600)
		default:
			label = fmt.Sprintf("%dd", el/(3600*24))
		}
		seq[i] = sparkSample{float64(s.ms), label}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", name, hi, lo, ev.maxMs)
	b.WriteString(strings.Repeat("-", latencyGraphCols))
	b.WriteByte('\n')
	sparkline(&b, seq, latencyGraphCols, 4)
	c.W.Verbatim("txt", b.String())
}

type sparkSample struct {
	value float64
	label string
}

// sparkline is Redis's sparklineRender with SPARKLINE_FILL: the samples in
// chunks of cols columns, each rows high, the labels written downwards
// under a blank line.
func sparkline(b *strings.Builder, seq []sparkSample, cols, rows int) {
	lo, hi := seq[0].value, seq[0].value
	for _, s := range seq[1:] {
		// Redis's sparklineSequenceAddSample raises the maximum only
		// when the sample did not lower the minimum.
		if s.value < lo {
			lo = s.value
		} else if s.value > hi {
			hi = s.value
		}
	}
	const charset = "_o#"
	for j := 0; j < len(seq); j += cols {
		if j != 0 {
			b.WriteByte('\n')
		}
		part := seq[j:min(j+cols, len(seq))]
		rel := hi - lo
		if rel == 0 {
			rel = 1
		}
		steps := len(charset) * rows
		line := make([]byte, len(part))
		for row := 0; ; row++ {
			more := false
			for i := range line {
				line[i] = ' '
			}
			for i, s := range part {
				step := int(math.Trunc(float64(int((s.value-lo)*float64(steps))) / rel))
				step = min(max(step, 0), steps-1)
				if row < rows {
					more = true
					ci := step - (rows-row-1)*len(charset)
					if ci >= 0 && ci < len(charset) {
						line[i] = charset[ci]
					} else if ci >= len(charset) {
						line[i] = '|'
					}
					continue
				}
				if row-rows < 1 { // the blank line above the labels
					more = true
					break
				}
				if lc := row - rows - 1; lc < len(s.label) {
					more = true
					line[i] = s.label[lc]
				}
			}
			if !more {
				break
			}
			b.Write(line)
			b.WriteByte('\n')
		}
	}
}

func cmdLatencyHelp(c *Ctx) {
	lines := []string{
		"LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"DOCTOR",
		"    Return a human readable latency analysis report.",
		"GRAPH <event>",
		"    Return an ASCII latency graph for the <event> class.",
		"HISTORY <event>",
		"    Return time-latency samples for the <event> class.",
		"LATEST",
		"    Return the latest latency samples for all events.",
		"RESET [<event> ...]",
		"    Reset latency data of one or more <event> classes.",
		"    (default: reset all data for all event classes)",
		"HISTOGRAM [COMMAND ...]",
		"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
		"    If no commands are specified then all histograms are replied.",
		"HELP",
		"    Prints this help.",
	}
	c.W.Array(len(lines))
	for _, l := range lines {
		c.W.Simple(l)
	}
}
