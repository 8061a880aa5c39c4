package gcgoal

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{{0, 100}, {largeHeap - 1, 100}, {largeHeap, largePercent}, {8 << 30, largePercent}} {
		if got := percentFor(c.live); got != c.want {
			t.Errorf("percentFor(%d) = %d, want %d", c.live, got, c.want)
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
