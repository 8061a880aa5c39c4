package set

import (
	"slices"
	"unsafe"

	"github.com/RoaringBitmap/roaring/v2"
)

// sampler finds the member of a given rank in a bitmap in O(log chunks).
//
// roaring's Select walks every container, which on a sparse set of millions
// of ids is tens of thousands of steps per SRANDMEMBER or SPOP. The sampler
// keeps the member count of every 16-bit chunk (one roaring container) in a
// Fenwick tree: a rank resolves to its chunk by descending the tree, then to
// a value inside the chunk by bisecting on range cardinalities.
//
// It is built lazily, kept up to date by adds and removes that land in known
// chunks (the SPOP loop case), and dropped when an add opens a new chunk.
type sampler struct {
	chunks []uint64 // u>>16 of every chunk that held members at build time, ascending
	tree   []int    // Fenwick tree over the chunk counts, 1-based
	top    int      // highest power of two <= len(chunks)
}

func newSampler(b *bitmap) *sampler {
	s := &sampler{}
	var counts []int
	for i, bm := range b.bms {
		hi := uint64(b.keys[i])
		for v := bm.NextValue(0); v >= 0; {
			c := uint32(v) >> 16
			lo := uint64(c) << 16
			s.chunks = append(s.chunks, hi<<16|uint64(c))
			counts = append(counts, int(bm.CardinalityInRange(lo, lo+1<<16)))
			if c == 0xffff {
				break
			}
			v = bm.NextValue((c + 1) << 16)
		}
	}
	m := len(counts)
	s.tree = make([]int, m+1)
	for i := 1; i <= m; i++ {
		s.tree[i] += counts[i-1]
		if j := i + i&-i; j <= m {
			s.tree[j] += s.tree[i]
		}
	}
	s.top = 1
	for s.top*2 <= m {
		s.top *= 2
	}
	return s
}

// adjust adds d to the count of chunk c; false if c is not indexed.
func (s *sampler) adjust(c uint64, d int) bool {
	j, ok := slices.BinarySearch(s.chunks, c)
	if !ok {
		return false
	}
	for i := j + 1; i < len(s.tree); i += i & -i {
		s.tree[i] += d
	}
	return true
}

// find returns the chunk holding the member of rank r and r's offset in it.
func (s *sampler) find(r int) (chunk uint64, off int) {
	pos := 0
	for step := s.top; step > 0; step >>= 1 {
		if next := pos + step; next < len(s.tree) && s.tree[next] <= r {
			pos = next
			r -= s.tree[next]
		}
	}
	return s.chunks[pos], r
}

func (s *sampler) memoryUsage() int {
	return int(unsafe.Sizeof(*s)) + cap(s.chunks)*8 + cap(s.tree)*8
}

// selectRank returns the member of rank r (0-based, ascending order).
func (b *bitmap) selectRank(r int) uint64 {
	smp := b.smp.Load()
	if smp == nil {
		// Concurrent readers may each build one; any of them is correct.
		smp = newSampler(b)
		b.smp.Store(smp)
	}
	c, off := smp.find(r)
	hi := uint32(c >> 16)
	i, _ := b.index(hi)
	base := uint32(c&0xffff) << 16
	return uint64(hi)<<32 | uint64(selectInChunk(b.bms[i], base, off))
}

// selectInChunk returns the off-th member of bm within [base, base+65536).
func selectInChunk(bm *roaring.Bitmap, base uint32, off int) uint32 {
	// roaring's iterators seek by walking containers one by one, so stay
	// with NextValue and CardinalityInRange, which binary search.
	if off < 8 {
		v := uint32(bm.NextValue(base))
		for ; off > 0; off-- {
			v = uint32(bm.NextValue(v + 1))
		}
		return v
	}
	// Bisect the chunk. The answer lies in [lo, hi) and skip members of
	// [lo, answer) remain to be passed over. Each probe counts only the
	// lower half of the current window, so a bitmap container's words are
	// popcounted about twice in all rather than once per probe.
	lo, hi, skip := uint64(base), uint64(base)+1<<16, uint64(off)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if c := bm.CardinalityInRange(lo, mid); c > skip {
			hi = mid
		} else {
			skip -= c
			lo = mid
		}
	}
	return uint32(lo)
}

// valuesAtRanks maps ascending ranks (repeats allowed) to members. Few ranks
// are selected one by one; many are found in a single ordered walk.
func (b *bitmap) valuesAtRanks(ranks []int) []uint64 {
	out := make([]uint64, len(ranks))
	if len(ranks) == 0 {
		return out
	}
	if len(ranks)*512 < b.n {
		for i, r := range ranks {
			out[i] = b.selectRank(r)
		}
		return out
	}
	rank, k := 0, 0
	b.each(func(u uint64) bool {
		for k < len(ranks) && ranks[k] == rank {
			out[k] = u
			k++
		}
		rank++
		return k < len(ranks)
	})
	return out
}
