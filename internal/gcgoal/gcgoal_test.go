package gcgoal

import "testing"

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
