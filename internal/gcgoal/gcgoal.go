// Package gcgoal keeps the garbage collector's headroom in proportion for
// a server whose heap is mostly long-lived data.
//
// Go's default (GOGC=100) lets the heap grow to twice the live data before
// it collects, and RSS follows the peak. Redis frees each value when it is
// overwritten or popped, so under churn its RSS stays near its data. With
// 210-240 MiB live after 8M requests of redis-benchmark's mixed soak,
// Abacus's RSS was 359 MiB at GOGC=100 and 312-335 MiB at 50
// (redis-server's 317), at the same CPU per request: the collections a
// smaller headroom adds are cheap next to the requests that make the
// garbage.
//
// So above largeHeap of live data the percentage is lowered to
// largePercent; small heaps keep 100, where a smaller goal would collect
// often for nothing (the goal has a 4 MiB floor scaled by the percentage).
// A GOGC set in the environment is left alone. The live heap is read after
// each collection by a finalizer that re-arms itself.
//
// The lower percentage is for churn: it bounds the garbage that waits for
// the next cycle. A heap growing by kept data (clients SETting millions of
// new keys) has little garbage to bound, and at 50% each cycle marks the
// whole keyspace again after it grew by only half: a load to L bytes marks
// about 3L in all, where 100% marks 2L. So when what was allocated since
// the previous collection is mostly still live (at most growingGarbage of
// it became garbage), the percentage is 100 until a collection finds
// churn again. Loading 5M keys (key:N value:N, four pipelined clients)
// ran 5 collections past 20 MiB instead of 7, with the same RSS after the
// load; the mixed soak's RSS did not move (docs/benchmarks.md).
//
// A bulk load (a replica loading its primary's snapshot) keeps nearly
// everything it allocates, so the collections it triggers mark the
// growing data over and over for little garbage: at 50%, a load of 1M
// keys marked several times its final heap. While a load runs (Loading)
// the percentage is loadPercent; memory grows by the load's little
// garbage, and a memory limit (maxmemory, GOMEMLIMIT) still makes the
// collector run when it is reached.
package gcgoal

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

const (
	largeHeap    = 64 << 20
	largePercent = 50
	loadPercent  = 400
	// growingGarbage is the share of the bytes allocated between two
	// collections, at most, that may have become garbage for the heap to
	// count as growing by kept data.
	growingGarbage = 0.25
)

var started atomic.Bool

// mu guards loads and percent: the loads running, and the percentage in
// force outside them (what the last collection's live heap called for);
// and last, the heap as the previous adjust read it.
var (
	mu      sync.Mutex
	loads   int
	percent = 100
	last    heapSample
)

// Start follows the live heap from now on (once per process; nothing when
// GOGC is set).
func Start() {
	if _, ok := os.LookupEnv("GOGC"); ok || !started.CompareAndSwap(false, true) {
		return
	}
	arm()
}

// Loading raises the percentage to loadPercent until the returned
// function is called (once), unless GOGC is set. Loads may overlap: the
// percentage comes back when the last ends.
func Loading() (done func()) {
	if _, ok := os.LookupEnv("GOGC"); ok {
		return func() {}
	}
	mu.Lock()
	if loads == 0 {
		percent = debug.SetGCPercent(loadPercent)
	}
	loads++
	mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			if loads--; loads == 0 {
				debug.SetGCPercent(percent)
			}
			mu.Unlock()
		})
	}
}

// sentinel is an object whose finalizer runs after the collection that
// finds it unreachable: one per cycle.
type sentinel struct{ _ [16]byte }

func arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		adjust()
		arm()
	})
}

// adjust sets the percentage the live heap calls for, or, during a load,
// keeps it for the load's end.
func adjust() {
	now := readHeap()
	mu.Lock()
	defer mu.Unlock()
	want := percentFor(now.live, growing(last, now))
	last = now
	if want != percent && loads == 0 {
		debug.SetGCPercent(want)
	}
	percent = want
}

// percentFor is the GC percentage for live bytes of live heap, growing
// when the heap grows by kept data.
func percentFor(live uint64, growing bool) int {
	if live >= largeHeap && !growing {
		return largePercent
	}
	return 100
}

// heapSample is the live heap after the last collection and the bytes
// allocated since the process started.
type heapSample struct{ live, allocs uint64 }

// growing reports whether, from prev to now, the live heap grew by at
// least 1-growingGarbage of what was allocated in between. The allocations
// since the collection that now.live comes from count as garbage (the
// finalizer reads them a little after it), which errs towards churn.
func growing(prev, now heapSample) bool {
	if now.allocs <= prev.allocs || now.live <= prev.live {
		return false
	}
	return float64(now.live-prev.live) >= (1-growingGarbage)*float64(now.allocs-prev.allocs)
}

func readHeap() heapSample {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	var h heapSample
	if s[0].Value.Kind() == metrics.KindUint64 {
		h.live = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		h.allocs = s[1].Value.Uint64()
	}
	return h
}
