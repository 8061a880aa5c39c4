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
)

var started atomic.Bool

// mu guards loads and percent: the loads running, and the percentage in
// force outside them (what the last collection's live heap called for).
var (
	mu      sync.Mutex
	loads   int
	percent = 100
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
	want := percentFor(liveHeap())
	mu.Lock()
	defer mu.Unlock()
	if want != percent && loads == 0 {
		debug.SetGCPercent(want)
	}
	percent = want
}

// percentFor is the GC percentage for live bytes of live heap.
func percentFor(live uint64) int {
	if live >= largeHeap {
		return largePercent
	}
	return 100
}

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
