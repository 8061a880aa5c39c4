package command

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/abacusdb/abacus/internal/config"
)

// Server commands: TIME, LASTSAVE, SHUTDOWN, SLOWLOG, LATENCY. (INFO is
// in info.go, MEMORY in memory.go, DEBUG in debug.go, CONFIG in config.go.)

func init() {
	admin := FlagAdmin | FlagLoading | FlagStale
	Register(
		&Command{Name: "time", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, Group: "server",
			Tips:    "nondeterministic_output",
			Summary: "Returns the server time.", Since: "2.6.0", Complexity: "O(1)", Handler: cmdTime},
		&Command{Name: "shutdown", Arity: -1, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale | FlagNoMulti | FlagAllowBusy, Group: "server",
			Summary: "Synchronously saves the database(s) to disk and shuts down the Redis server.", Since: "1.0.0",
			Complexity: "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)",
			Handler:    cmdShutdown},
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

func latencySub(arity int, summary, complexity string, h func(*Ctx)) *Command {
	return &Command{Arity: arity, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Handler: h,
		Tips:    "nondeterministic_output request_policy:all_nodes response_policy:special",
		Summary: summary, Since: "2.8.13", Complexity: complexity}
}

func cmdTime(c *Ctx) {
	us := c.Env.Clock.NowUs()
	c.W.Array(2)
	c.W.BulkString(strconv.FormatInt(us/1e6, 10))
	c.W.BulkString(strconv.FormatInt(us%1e6, 10))
}

func cmdShutdown(c *Ctx) {
	var save, nosave, now, force, abort bool
	for i := 1; i < len(c.Args); i++ {
		switch {
		case c.ArgIs(i, "nosave"):
			nosave = true
		case c.ArgIs(i, "save"):
			save = true
		case c.ArgIs(i, "now"):
			now = true
		case c.ArgIs(i, "force"):
			force = true
		case c.ArgIs(i, "abort"):
			abort = true
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	if (abort && (save || nosave || now || force)) || (save && nosave) {
		c.Error(ErrSyntax)
		return
	}
	if abort {
		// A shutdown never waits here (there are no replicas to wait
		// for), so there is never one to abort.
		c.Error("ERR No shutdown in progress.")
		return
	}
	if c.Env.Host == nil {
		c.Error("ERR Errors trying to SHUTDOWN. Check logs.")
		return
	}
	if err := c.Env.Host.Shutdown(save, nosave, now, force); err != nil {
		c.Error("ERR " + err.Error())
		return
	}
	// As in Redis, the client gets no reply: the server goes away.
	c.S.CloseAfterReply = true
}

func cmdSlowlogGet(c *Ctx) {
	if len(c.Args) > 3 {
		c.Errorf("ERR unknown subcommand or wrong number of arguments for '%.128s'. Try SLOWLOG HELP.", c.Args[1])
		return
	}
	count := int64(10)
	if len(c.Args) == 3 {
		n, ok := parseInt(c.Args[2])
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
	writeHelp(c, "SLOWLOG",
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
	writeHelp(c, "LATENCY",
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
