package stream

import (
	"runtime"
	"strconv"
	"testing"
)

// TestMemoryPerEntry logs the heap a 1,000,000-entry stream of three
// small fields holds (go test -v -run MemoryPerEntry).
func TestMemoryPerEntry(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	s := New()
	lim := DefaultLimits()
	const n = 1000000
	for i := 1; i <= n; i++ {
		s.Append(ID{uint64(i), 0}, [][]byte{[]byte("f1"), []byte(strconv.Itoa(i)), []byte("f2"), []byte("ok"), []byte("f3"), []byte(strconv.Itoa(i % 97))}, lim)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	t.Logf("%.1f heap bytes per entry, %d nodes, MemoryUsage %.1f per entry", float64(m1.HeapAlloc-m0.HeapAlloc)/n, s.Nodes(), float64(s.MemoryUsage())/n)
	runtime.KeepAlive(s)
}
