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
package gcgoal

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

const (
	largeHeap    = 64 << 20
	largePercent = 50
)

var started atomic.Bool

// Start follows the live heap from now on (once per process; nothing when
// GOGC is set).
func Start() {
	if _, ok := os.LookupEnv("GOGC"); ok || !started.CompareAndSwap(false, true) {
		return
	}
	arm(100)
}

// sentinel is an object whose finalizer runs after the collection that
// finds it unreachable: one per cycle.
type sentinel struct{ _ [16]byte }

func arm(percent int) {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) { arm(adjust(percent)) })
}

// adjust sets the percentage the live heap calls for and returns it.
func adjust(percent int) int {
	want := percentFor(liveHeap())
	if want != percent {
		debug.SetGCPercent(want)
	}
	return want
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
