package zset

import (
	"math/rand/v2"
	"unsafe"
)

func intN(rng *rand.Rand, n int) int {
	if rng == nil {
		return rand.IntN(n)
	}
	return rng.IntN(n)
}

// RandomEntry returns a uniformly chosen entry (ZRANDMEMBER without a
// count). rng may be nil for the global source.
func (s *Set) RandomEntry(rng *rand.Rand) (Entry, bool) {
	n := s.Len()
	if n == 0 {
		return Entry{}, false
	}
	return s.at(intN(rng, n)), true
}

// RandomEntries returns count uniformly chosen entries. With distinct (a
// positive ZRANDMEMBER count) no entry repeats and at most Len entries come
// back: the whole set in order if count >= Len, otherwise a random sample
// in random order. Without distinct (a negative count) entries may repeat
// and exactly count come back. Each pick costs O(log N); rng may be nil
// for the global source.
func (s *Set) RandomEntries(rng *rand.Rand, count int, distinct bool) []Entry {
	n := s.Len()
	if count <= 0 || n == 0 {
		return nil
	}
	if !distinct {
		out := make([]Entry, count)
		for i := range out {
			out[i] = s.at(intN(rng, n))
		}
		return out
	}
	if count >= n {
		return s.entries()
	}
	out := make([]Entry, 0, count)
	if count*3 > n {
		// Dense: the first count steps of a Fisher-Yates shuffle of ranks.
		ranks := make([]int, n)
		for i := range ranks {
			ranks[i] = i
		}
		for i := range count {
			j := i + intN(rng, n-i)
			ranks[i], ranks[j] = ranks[j], ranks[i]
			out = append(out, s.at(ranks[i]))
		}
		return out
	}
	// Sparse: draw ranks, rejecting repeats; fewer than a third of the
	// ranks are taken, so each draw succeeds with probability > 2/3.
	seen := make(map[int]struct{}, count)
	for len(out) < count {
		r := intN(rng, n)
		if _, dup := seen[r]; dup {
			continue
		}
		seen[r] = struct{}{}
		out = append(out, s.at(r))
	}
	return out
}

// Sizes used by MemoryUsage.
const (
	entrySize  = int(unsafe.Sizeof(Entry{}))
	slotSize   = int(unsafe.Sizeof(slot{}))
	leafSize   = int(unsafe.Sizeof(leaf{}))
	innerSize  = int(unsafe.Sizeof(inner{}))
	setSize    = int(unsafe.Sizeof(Set{}))
	largeSize  = int(unsafe.Sizeof(large{}))
	htableSize = int(unsafe.Sizeof(htable{}))
)

// stringAlloc estimates the heap bytes of a string of n bytes, rounded up
// to a size class (strings under 16 bytes share 16-byte blocks, but only
// those of 8 bytes or less can pair up).
func stringAlloc(n int) int {
	switch {
	case n == 0:
		return 0
	case n <= 32:
		return (n + 7) &^ 7
	case n <= 256:
		return (n + 15) &^ 15
	}
	return n + n/8
}

// MemoryUsage estimates the heap bytes the set holds, in O(1).
func (s *Set) MemoryUsage() int {
	m := setSize + s.alloc
	if s.big == nil {
		return m + cap(s.list)*entrySize
	}
	return m + s.big.bytes()
}
