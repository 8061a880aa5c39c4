package command

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/num"
)

var parseInt = num.ParseInt

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
	if s := c.subFor(args); s != nil {
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
