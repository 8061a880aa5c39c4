package conn

import (
	"runtime"
	"testing"
)

// collectBeforeArgs runs a collection when the arguments' slice headers
// would pass the collector's goal, and none when they fit under it: a
// client's large commands cannot make the server collect more often than
// its allocations would.
func TestCollectBeforeArgs(t *testing.T) {
	var ms runtime.MemStats
	runtime.GC() // the goal is now twice the live heap, at least 4 MB
	runtime.ReadMemStats(&ms)
	before := ms.NumGC
	collectBeforeArgs(16)
	runtime.ReadMemStats(&ms)
	if ms.NumGC != before {
		t.Fatalf("16 arguments ran %d collections", ms.NumGC-before)
	}
	collectBeforeArgs(1 << 40) // 24 TB of headers: past any goal
	runtime.ReadMemStats(&ms)
	if ms.NumGC == before {
		t.Fatal("arguments past the goal ran no collection")
	}
}
