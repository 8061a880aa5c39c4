package engine

import (
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
)

// Decisions counts what INFO stats reports of Abacus's own commands'
// outcomes: each rate limiter's answers (allowed or denied, per command)
// and the all-or-nothing scripts rolled back. CONFIG RESETSTAT clears
// them. Handlers count under the server lock; the mutex lets INFO read
// them from anywhere.
type Decisions struct {
	mu     sync.Mutex
	limits map[string]*LimitStat
	// ScriptRollbacks counts the scripts whose writes were undone because
	// they failed (docs/design.md, all-or-nothing scripts).
	ScriptRollbacks atomic.Int64
}

// LimitStat is one rate-limiting command's answers.
type LimitStat struct{ Allowed, Denied int64 }

// CountLimit records a rate limiter's answer: cmd denied the request or
// allowed it.
func (d *Decisions) CountLimit(cmd string, denied bool) {
	d.mu.Lock()
	if d.limits == nil {
		d.limits = map[string]*LimitStat{}
	}
	st := d.limits[cmd]
	if st == nil {
		st = &LimitStat{}
		d.limits[cmd] = st
	}
	if denied {
		st.Denied++
	} else {
		st.Allowed++
	}
	d.mu.Unlock()
}

func (d *Decisions) reset() {
	d.mu.Lock()
	d.limits = nil
	d.mu.Unlock()
	d.ScriptRollbacks.Store(0)
}

// InfoDecisions writes the counts as INFO stats lines:
// abacus_script_rollbacks, and abacus_ratelimit_<cmd>:allowed=N,denied=M
// for each limiter that answered since the start (or CONFIG RESETSTAT).
func InfoDecisions(e *Env, b *InfoBuilder) {
	d := &e.Stats.Decisions
	b.Int("abacus_script_rollbacks", d.ScriptRollbacks.Load())
	d.mu.Lock()
	names := make([]string, 0, len(d.limits))
	for n := range d.limits {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		st := d.limits[n]
		b.KV("abacus_ratelimit_"+n, "allowed="+strconv.FormatInt(st.Allowed, 10)+",denied="+strconv.FormatInt(st.Denied, 10))
	}
	d.mu.Unlock()
}
