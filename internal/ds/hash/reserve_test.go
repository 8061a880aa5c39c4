package hash

import (
	"fmt"
	"testing"
)

func pairsOf(n int) [][]byte {
	var p [][]byte
	for i := 0; i < n; i++ {
		p = append(p, []byte(fmt.Sprintf("field:%d", i)), []byte(fmt.Sprintf("value:%d", i*7)))
	}
	return p
}

// A multi-field insert sized by ReservePairs allocates its block once and
// leaves it exactly full.
func TestReservePairsOneAllocation(t *testing.T) {
	lim := DefaultLimits()
	for _, n := range []int{2, 5, 100, 128} {
		pairs := pairsOf(n)
		var h Hash
		allocs := testing.AllocsPerRun(20, func() {
			h = Hash{}
			h.ReservePairs(pairs, lim)
			for i := 0; i < len(pairs); i += 2 {
				h.Set(0, pairs[i], pairs[i+1], lim)
			}
		})
		if allocs != 1 {
			t.Errorf("%d fields: %v allocations, want 1", n, allocs)
		}
		if b := h.block(); len(b) != cap(b) {
			t.Errorf("%d fields: block len %d cap %d", n, len(b), cap(b))
		}
		checkInvariants(t, &h)
		if h.Len(0) != n || h.Encoding() != EncListpack {
			t.Errorf("%d fields: len %d encoding %s", n, h.Len(0), h.Encoding())
		}
	}
}

// Reserving on a block that has fields, or in the ex form, is exact too;
// pairs that cannot stay small reserve nothing.
func TestReservePairsExistingAndLimits(t *testing.T) {
	lim := DefaultLimits()
	var h Hash
	h.Set(0, []byte("a"), []byte("1"), lim)
	h.SetWithExpiry(0, []byte("b"), []byte("2"), 1000, lim)
	pairs := pairsOf(50)
	h.ReservePairs(pairs, lim)
	before := cap(h.block())
	for i := 0; i < len(pairs); i += 2 {
		h.Set(0, pairs[i], pairs[i+1], lim)
	}
	if b := h.block(); cap(b) != before || len(b) != cap(b) {
		t.Errorf("ex block: cap %d after reserve, len %d cap %d after inserts", before, len(b), cap(b))
	}
	checkInvariants(t, &h)

	var g Hash
	g.ReservePairs(pairsOf(200), lim) // over 128 entries: the hash converts
	g.ReservePairs([][]byte{[]byte("f"), make([]byte, 65), []byte("g"), []byte("v")}, lim)
	if g.block() != nil {
		t.Errorf("reserved %d bytes for pairs that cannot stay small", cap(g.block()))
	}
}

// Growth is geometric past 256 bytes: building a 100-field block one field
// at a time moves it a bounded number of times.
func TestBlockGrowthGeometric(t *testing.T) {
	lim := DefaultLimits()
	pairs := pairsOf(100)
	var h Hash
	moves, last := 0, (*byte)(nil)
	for i := 0; i < len(pairs); i += 2 {
		h.Set(0, pairs[i], pairs[i+1], lim)
		if p := &h.block()[0]; p != last {
			moves, last = moves+1, p
		}
	}
	// Exact growth moved it once per size class, over 30 times.
	if moves > 24 {
		t.Errorf("the block moved %d times in 100 single-field inserts", moves)
	}
	if b := h.block(); cap(b) > len(b)+len(b)/4+64 {
		t.Errorf("block of %d bytes has capacity %d", len(b), cap(b))
	}
	t.Logf("%d moves", moves)
}
