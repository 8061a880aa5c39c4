package gcgoal

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestPercentFor(t *testing.T) {
	for _, c := range []struct {
		live    uint64
		growing bool
		want    int
	}{
		{0, false, 100}, {largeHeap - 1, false, 100}, {largeHeap, false, largePercent}, {8 << 30, false, largePercent},
		{largeHeap, true, 100}, {8 << 30, true, 100},
	} {
		if got := percentFor(c.live, c.growing); got != c.want {
			t.Errorf("percentFor(%d, %v) = %d, want %d", c.live, c.growing, got, c.want)
		}
	}
}

func TestGrowing(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		prev, now heapSample
		want      bool
	}{
		{heapSample{100 * mb, 1000 * mb}, heapSample{190 * mb, 1100 * mb}, true},  // 90% of 100 MB kept
		{heapSample{100 * mb, 1000 * mb}, heapSample{175 * mb, 1100 * mb}, true},  // 75%: the bound
		{heapSample{100 * mb, 1000 * mb}, heapSample{170 * mb, 1100 * mb}, false}, // 70%
		{heapSample{100 * mb, 1000 * mb}, heapSample{100 * mb, 1100 * mb}, false}, // churn at a steady size
		{heapSample{100 * mb, 1000 * mb}, heapSample{90 * mb, 1100 * mb}, false},  // shrinking
		{heapSample{100 * mb, 1000 * mb}, heapSample{100 * mb, 1000 * mb}, false}, // nothing allocated
		{heapSample{}, heapSample{50 * mb, 60 * mb}, true},                        // the first collection of a load
	} {
		if got := growing(c.prev, c.now); got != c.want {
			t.Errorf("growing(%+v, %+v) = %v, want %v", c.prev, c.now, got, c.want)
		}
	}
}

// Overlapping loads hold loadPercent until the last ends; then the
// percentage in force before comes back.
func TestLoading(t *testing.T) {
	t.Setenv("GOGC", "") // restored after the test
	os.Unsetenv("GOGC")
	before := debug.SetGCPercent(77)
	defer debug.SetGCPercent(before)
	a := Loading()
	b := Loading()
	if got := debug.SetGCPercent(loadPercent); got != loadPercent {
		t.Fatalf("during a load: %d, want %d", got, loadPercent)
	}
	a()
	a() // once only
	if got := debug.SetGCPercent(loadPercent); got != loadPercent {
		t.Fatalf("during the second load: %d, want %d", got, loadPercent)
	}
	b()
	if got := debug.SetGCPercent(77); got != 77 {
		t.Fatalf("after the loads: %d, want 77", got)
	}
}
