package engine

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/num"
)

// SLOWLOG and LATENCY read what execution records, so they live beside it.
func init() {
	admin := FlagAdmin | FlagLoading | FlagStale
	Register(
		&Command{Name: "slowlog", Arity: -2, Group: "server",
			Summary: "A container for slow log commands.", Since: "2.2.12", Complexity: "Depends on subcommand.",
			Subs: map[string]*Command{
				"get": {Arity: -2, Flags: admin, Handler: cmdSlowlogGet,
					Tips:    "request_policy:all_nodes nondeterministic_output",
					Summary: "Returns the slow log's entries.", Since: "2.2.12", Complexity: "O(N) where N is the number of entries returned"},
				"len": {Arity: 2, Flags: admin, Handler: cmdSlowlogLen,
					Tips:    "request_policy:all_nodes response_policy:agg_sum nondeterministic_output",
					Summary: "Returns the number of entries in the slow log.", Since: "2.2.12", Complexity: "O(1)"},
				"reset": {Arity: 2, Flags: admin, Handler: cmdSlowlogReset,
					Tips:    "request_policy:all_nodes response_policy:all_succeeded",
					Summary: "Clears all entries from the slow log.", Since: "2.2.12", Complexity: "O(N) where N is the number of entries in the slowlog"},
				"help": {Arity: 2, Flags: FlagLoading | FlagStale, Handler: cmdSlowlogHelp,
					Summary: "Show helpful text about the different subcommands", Since: "6.2.0", Complexity: "O(1)"},
			}},
		&Command{Name: "latency", Arity: -2, Group: "server",
			Summary: "A container for latency diagnostics commands.", Since: "2.8.13", Complexity: "Depends on subcommand.",
			Subs: map[string]*Command{
				"latest":  latencySub(2, "Returns the latest latency samples for all events.", "O(1)", cmdLatencyLatest),
				"history": latencySub(3, "Returns timestamp-latency samples for an event.", "O(1)", cmdLatencyHistory),
				"reset": {Arity: -2, Flags: admin | FlagNoScript, Handler: cmdLatencyReset,
					Tips:    "request_policy:all_nodes response_policy:all_succeeded",
					Summary: "Resets the latency data for one or more events.", Since: "2.8.13", Complexity: "O(1)"},
				"doctor": latencySub(2, "Returns a human-readable latency analysis report.", "O(1)", cmdLatencyDoctor),
				"graph":  latencySub(3, "Returns a latency graph for an event.", "O(1)", cmdLatencyGraph),
				"help": {Arity: 2, Flags: FlagLoading | FlagStale, Handler: cmdLatencyHelp,
					Summary: "Returns helpful text about the different subcommands.", Since: "2.8.13", Complexity: "O(1)"},
			}},
	)
}

func newRunID() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Redis's slowlog limits on what one entry keeps.
const (
	slowlogMaxArgc = 32
	slowlogMaxArg  = 128
)

type slowEntry struct {
	id     int64
	at     int64 // unix seconds
	usec   int64
	args   []string
	addr   string
	client string
}

// slowlog is a ring of the most recent slow commands, newest first.
type slowlog struct {
	entries []slowEntry
	nextID  int64
}

func (e *Env) slowlogPush(cmd *Command, s *Session, args [][]byte, dur time.Duration) {
	if cmd.Flags&FlagSkipSlowlog != 0 {
		return
	}
	limit := e.Cfg.Int(config.SlowlogLogSlowerThan)
	if limit < 0 || dur.Microseconds() < limit {
		return
	}
	maxLen := int(e.Cfg.Int(config.SlowlogMaxLen))
	ent := slowEntry{id: e.slowlog.nextID, at: time.Now().Unix(), usec: dur.Microseconds(), addr: s.Addr, client: s.Name}
	e.slowlog.nextID++
	n := len(args)
	if n > slowlogMaxArgc {
		n = slowlogMaxArgc
	}
	for i := 0; i < n; i++ {
		if i == slowlogMaxArgc-1 && len(args) > slowlogMaxArgc {
			ent.args = append(ent.args, fmt.Sprintf("... (%d more arguments)", len(args)-slowlogMaxArgc+1))
			break
		}
		a := args[i]
		if len(a) > slowlogMaxArg {
			ent.args = append(ent.args, fmt.Sprintf("%s... (%d more bytes)", a[:slowlogMaxArg], len(a)-slowlogMaxArg))
		} else {
			ent.args = append(ent.args, string(a))
		}
	}
	e.slowlog.entries = append([]slowEntry{ent}, e.slowlog.entries...)
	if len(e.slowlog.entries) > maxLen {
		e.slowlog.entries = e.slowlog.entries[:maxLen]
	}
}

// Cmd returns the table entry args name (resolving subcommands), or nil.
func (e *Env) Cmd(args [][]byte) *Command {
	if len(args) == 0 {
		return nil
	}
	c := Lookup(args[0])
	if c == nil {
		return nil
	}
	if s := c.SubFor(args); s != nil {
		return s
	}
	return c
}

// latencyMonitor keeps, per event, the latest and the maximum latency
// samples above latency-monitor-threshold (LATENCY LATEST/HISTORY).
type latencyMonitor struct {
	events map[string]*latencyEvent
}

type latencySample struct {
	at, ms int64
}

type latencyEvent struct {
	history []latencySample // at most 160, oldest first
	maxMs   int64
}

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
	now := time.Now().Unix()
	if n := len(ev.history); n > 0 && ev.history[n-1].at == now {
		if ms > ev.history[n-1].ms {
			ev.history[n-1].ms = ms
		}
	} else {
		ev.history = append(ev.history, latencySample{at: now, ms: ms})
		if len(ev.history) > 160 {
			ev.history = ev.history[1:]
		}
	}
	if ms > ev.maxMs {
		ev.maxMs = ms
	}
}

func latencySub(arity int, summary, complexity string, h func(*Ctx)) *Command {
	return &Command{Arity: arity, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Handler: h,
		Tips:    "nondeterministic_output request_policy:all_nodes response_policy:special",
		Summary: summary, Since: "2.8.13", Complexity: complexity}
}

func cmdSlowlogGet(c *Ctx) {
	if len(c.Args) > 3 {
		c.Errorf("ERR unknown subcommand or wrong number of arguments for '%.128s'. Try SLOWLOG HELP.", c.Args[1])
		return
	}
	count := int64(10)
	if len(c.Args) == 3 {
		n, ok := num.ParseInt(c.Args[2])
		if !ok || n < -1 {
			c.Error("ERR count should be greater than or equal to -1")
			return
		}
		count = n
	}
	entries := c.Env.slowlog.entries
	if count == -1 || count > int64(len(entries)) {
		count = int64(len(entries))
	}
	c.W.Array(int(count))
	for _, e := range entries[:count] {
		c.W.Array(6)
		c.W.Int(e.id)
		c.W.Int(e.at)
		c.W.Int(e.usec)
		c.W.StringArray(e.args)
		c.W.BulkString(e.addr)
		c.W.BulkString(e.client)
	}
}

func cmdSlowlogLen(c *Ctx) { c.W.Int(int64(len(c.Env.slowlog.entries))) }

func cmdSlowlogReset(c *Ctx) {
	c.Env.slowlog.entries = nil
	c.W.OK()
}

func cmdSlowlogHelp(c *Ctx) {
	c.ReplyHelp("SLOWLOG",
		"GET [<count>]",
		"    Return the <count> newest entries of the slow log (default 10, -1 for all).",
		"    Each entry is: id, unix time, duration in microseconds, arguments,",
		"    client address, client name.",
		"LEN",
		"    Return how many entries the slow log holds.",
		"RESET",
		"    Empty the slow log.",
	)
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

func cmdLatencyDoctor(c *Ctx) {
	m := &c.Env.latency
	var b strings.Builder
	switch {
	case len(m.events) == 0 && c.Env.Cfg.Int(config.LatencyMonitorThreshold) == 0:
		b.WriteString("Latency monitoring is disabled. Enable it with CONFIG SET latency-monitor-threshold <milliseconds>.\n")
	case len(m.events) == 0:
		b.WriteString("No latency spike above latency-monitor-threshold has been observed.\n")
	default:
		b.WriteString("Latency spikes observed, per event:\n\n")
		for i, n := range m.names() {
			ev := m.events[n]
			var sum int64
			for _, s := range ev.history {
				sum += s.ms
			}
			first := ev.history[0].at
			fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, max %dms) since %s.\n",
				i+1, n, len(ev.history), sum/int64(len(ev.history)), ev.maxMs,
				time.Unix(first, 0).UTC().Format(time.RFC3339))
		}
	}
	c.W.Verbatim("txt", b.String())
}

func cmdLatencyGraph(c *Ctx) {
	name := c.Arg(2)
	ev := c.Env.latency.events[name]
	if ev == nil {
		c.Errorf("ERR No samples available for event '%s'", name)
		return
	}
	// A plain chart: one bar per sample, scaled to the largest.
	var b strings.Builder
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", name, maxSample(ev), minSample(ev), ev.maxMs)
	top := maxSample(ev)
	for _, s := range ev.history {
		bar := 1
		if top > 0 {
			bar = int(s.ms * 40 / top)
		}
		fmt.Fprintf(&b, "%s %6d ms %s\n", time.Unix(s.at, 0).UTC().Format("15:04:05"), s.ms, strings.Repeat("#", max(bar, 1)))
	}
	c.W.Verbatim("txt", b.String())
}

func maxSample(ev *latencyEvent) int64 {
	var m int64
	for _, s := range ev.history {
		m = max(m, s.ms)
	}
	return m
}

func minSample(ev *latencyEvent) int64 {
	m := ev.history[0].ms
	for _, s := range ev.history {
		m = min(m, s.ms)
	}
	return m
}

func cmdLatencyHelp(c *Ctx) {
	c.ReplyHelp("LATENCY",
		"DOCTOR",
		"    Return a report on the latency spikes observed.",
		"GRAPH <event>",
		"    Return a text chart of the samples of <event>.",
		"HISTORY <event>",
		"    Return the (unix time, milliseconds) samples of <event>.",
		"LATEST",
		"    Return, per event, the time and latency of its latest sample and its maximum.",
		"RESET [<event> ...]",
		"    Forget the samples of the events (of every event without arguments).",
	)
}
