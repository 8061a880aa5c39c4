package zset

import (
	"slices"
	"strconv"
	"testing"
)

func TestFromDistinct(t *testing.T) {
	lim := DefaultLimits()
	for _, n := range []int{1, 8, 16, 17, 128, 129, 1000} {
		es := make([]Entry, n)
		for i := range es {
			es[i] = Entry{"m" + strconv.Itoa(i*7%n), float64(i % 5)}
		}
		want := FromEntries(slices.Clone(es), lim)
		got, ok := FromDistinct(slices.Clone(es), lim)
		if !ok {
			t.Fatalf("n=%d: distinct members reported as repeated", n)
		}
		if got.Encoding() != want.Encoding() || !slices.Equal(got.entries(), want.entries()) {
			t.Fatalf("n=%d: %s %v, want %s %v", n, got.Encoding(), got.entries(), want.Encoding(), want.entries())
		}
		if n > 1 {
			es[n-1].Member = es[0].Member
			if _, ok := FromDistinct(es, lim); ok {
				t.Fatalf("n=%d: a repeated member was not reported", n)
			}
		}
	}
}
