package engine

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Holding the server for a collector that fell behind. The runtime's
// memory limit (syncMemLimit) is soft: when the collector runs nearly back
// to back at the limit, the runtime caps its CPU share and stops charging
// allocating goroutines with mark work, and a cycle slowed down by a
// loaded machine lets the heap run past the limit; what is allocated
// during the mark counts as live until the next cycle ends. Under a churn
// of 8 KB values at maxmemory 256 MB that was 20-25 MB over the limit for
// a few seconds (RSS 1.19-1.22x maxmemory where it otherwise stays at
// 1.12-1.15x), and the inflated live-heap reading made eviction drop 20 MB
// of keys too many. So before a command runs under maxmemory, at most
// every holdEvery, the engine reads the memory the runtime has in use
// (what it holds from the system less the free pages it keeps: RSS grows
// only when that grows); past the limit by more than holdSlack it stops
// taking commands (it holds the server lock) until that is back under or
// two cycles have ended, for at most holdMax: with nothing allocating,
// the next cycle marks only the live data and frees the rest, which the
// next commands reuse.

const (
	holdEvery = 2 * time.Millisecond
	holdMax   = 200 * time.Millisecond
	// holdBackoff is the pause after a wait that did not bring the
	// memory back under: the excess is then for eviction to remove.
	holdBackoff = time.Second
)

// holdSlack is how far past the runtime's memory limit the process may go
// before the server waits for the collector.
func holdSlack(maxmem int64) int64 { return maxmem/256 + 1<<20 }

// holdState is memState's part for holdForCollector.
type holdState struct {
	checkedAt time.Duration // monotonic time of the last reading
	samples   []metrics.Sample
	// excess is how far the runtime's memory in use was past the limit
	// plus holdSlack at the last reading (0 when under): eviction keeps
	// the data that much under maxmemory, so that a heap fragmented by
	// values of many sizes costs keys rather than RSS.
	excess int64
	holds  int64         // how many times the server waited
	held   time.Duration // for how long in all (tests, debugging)
}

// inUse is the memory the Go runtime holds from the system and uses:
// neither returned nor free pages.
func (h *holdState) inUse() int64 {
	if h.samples == nil {
		h.samples = []metrics.Sample{{Name: "/memory/classes/total:bytes"},
			{Name: "/memory/classes/heap/released:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
	}
	metrics.Read(h.samples)
	var v [3]int64
	for i, s := range h.samples {
		if s.Value.Kind() != metrics.KindUint64 {
			return 0
		}
		v[i] = int64(s.Value.Uint64())
	}
	return v[0] - v[1] - v[2]
}

// holdForCollector waits, holding the server, while the runtime uses more
// than its memory limit plus holdSlack (see above). It applies only
// to a limit the engine set for maxmem (not GOMEMLIMIT's).
func (e *Env) holdForCollector(maxmem int64) {
	h := &e.mem.hold
	now := time.Since(monoBase)
	if now-h.checkedAt < holdEvery {
		return
	}
	if tunedFor.Load() != maxmem {
		h.excess = 0
		return
	}
	h.checkedAt = now
	h.excess = 0
	limit := debug.SetMemoryLimit(-1)
	if limit != rssBoundLimit(maxmem) {
		// No limit, or one raised above the RSS bound for the
		// collector's room (tunedLimit's small maxmemory, where the
		// runtime's fixed costs put the bound out of reach): holding
		// the server would cost throughput and bound nothing.
		return
	}
	bound := limit + holdSlack(maxmem)
	used := h.inUse()
	if used <= bound {
		return
	}
	h.excess = min(used-bound, maxmem/8)
	c0 := gcStat.cycles.Load()
	under := false
	for time.Since(monoBase)-now < holdMax && gcStat.cycles.Load() < c0+2 {
		time.Sleep(time.Millisecond)
		if under = h.inUse() <= bound; under {
			break
		}
	}
	if !under {
		under = h.inUse() <= bound
	}
	h.holds++
	h.checkedAt = time.Since(monoBase)
	h.held += h.checkedAt - now
	e.Log.Debug("maxmemory: waited for the collector", "ms", (h.checkedAt - now).Milliseconds(),
		"in_use", h.inUse(), "limit", limit, "under", under)
	if !under {
		// Still over with two cycles done: the memory is in use (live
		// data, clients' buffers, spans fragmented by values of many
		// sizes), not the collector's lag, and waiting does not help;
		// eviction's lower target does, or nothing (noeviction).
		h.checkedAt += holdBackoff
	}
}
