package set

import (
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/RoaringBitmap/roaring/v2"
)

// bitmap is Abacus's encoding for large all-integer sets: a compressed
// roaring bitmap over the 64-bit value space.
//
// Members are mapped to uint64 with toU, which flips the sign bit so that
// unsigned order equals int64 order. The top 32 bits select a 32-bit roaring
// bitmap (in practice ids share one or two), the low 32 bits are stored in
// it. This is the same two-level layout as roaring64, written out here so
// that the count is kept in O(1) and random selection can use an index of
// its own (sampler) instead of roaring's Select, which walks every
// container.
type bitmap struct {
	keys []uint32
	bms  []*roaring.Bitmap
	n    int
	// smp is built on the first random access and nil when stale. Random
	// reads may run concurrently under a shared lock, so it is published
	// atomically; writers, which hold the lock exclusively, update it in
	// place.
	smp atomic.Pointer[sampler]
}

func toU(v int64) uint64   { return uint64(v) ^ 1<<63 }
func fromU(u uint64) int64 { return int64(u ^ 1<<63) }

func (b *bitmap) index(hi uint32) (int, bool) {
	if len(b.keys) == 1 { // the common case: all ids share the top half
		if b.keys[0] == hi {
			return 0, true
		}
		if b.keys[0] > hi {
			return 0, false
		}
		return 1, false
	}
	return slices.BinarySearch(b.keys, hi)
}

func (b *bitmap) contains(u uint64) bool {
	i, ok := b.index(uint32(u >> 32))
	return ok && b.bms[i].Contains(uint32(u))
}

func (b *bitmap) add(u uint64) bool {
	hi := uint32(u >> 32)
	i, ok := b.index(hi)
	if !ok {
		b.keys = slices.Insert(b.keys, i, hi)
		b.bms = slices.Insert(b.bms, i, roaring.New())
	}
	if !b.bms[i].CheckedAdd(uint32(u)) {
		return false
	}
	b.n++
	if p := b.smp.Load(); p != nil && !p.adjust(u>>16, 1) {
		b.smp.Store(nil) // a new 16-bit chunk: rebuild on next use
	}
	return true
}

func (b *bitmap) remove(u uint64) bool {
	i, ok := b.index(uint32(u >> 32))
	if !ok || !b.bms[i].CheckedRemove(uint32(u)) {
		return false
	}
	b.n--
	if b.bms[i].IsEmpty() {
		b.keys = slices.Delete(b.keys, i, i+1)
		b.bms = slices.Delete(b.bms, i, i+1)
	}
	if p := b.smp.Load(); p != nil {
		// The chunk was counted when the sampler was built, or the add
		// that created it dropped the sampler, so it is always found.
		p.adjust(u>>16, -1)
	}
	return true
}

// each calls fn for every member in ascending order until fn returns false.
func (b *bitmap) each(fn func(u uint64) bool) bool {
	var buf [256]uint64
	for i, bm := range b.bms {
		it := bm.ManyIterator()
		hs := uint64(b.keys[i]) << 32
		for {
			k := it.NextMany64(hs, buf[:])
			if k == 0 {
				break
			}
			for _, u := range buf[:k] {
				if !fn(u) {
					return false
				}
			}
		}
	}
	return true
}

// eachFrom is each restricted to members >= start.
func (b *bitmap) eachFrom(start uint64, fn func(u uint64) bool) bool {
	hi := uint32(start >> 32)
	i, ok := b.index(hi)
	if ok {
		// roaring's iterators seek by walking every container before
		// start; NextValue binary searches. A scan visits few members per
		// call, so a search per member is cheap enough.
		bm := b.bms[i]
		hs := uint64(hi) << 32
		for v := bm.NextValue(uint32(start)); v >= 0; v = bm.NextValue(uint32(v) + 1) {
			if !fn(hs | uint64(v)) {
				return false
			}
			if v == 1<<32-1 {
				break
			}
		}
		i++
	}
	var buf [256]uint64
	for ; i < len(b.bms); i++ {
		it := b.bms[i].ManyIterator()
		hs := uint64(b.keys[i]) << 32
		for {
			k := it.NextMany64(hs, buf[:])
			if k == 0 {
				break
			}
			for _, u := range buf[:k] {
				if !fn(u) {
					return false
				}
			}
		}
	}
	return true
}

// bitmapFromSorted builds a bitmap from ascending distinct int64 values.
func bitmapFromSorted(vals []int64) *bitmap {
	b := &bitmap{n: len(vals)}
	lows := make([]uint32, 0, min(len(vals), 1<<16))
	for i := 0; i < len(vals); {
		hi := uint32(toU(vals[i]) >> 32)
		lows = lows[:0]
		for ; i < len(vals); i++ {
			u := toU(vals[i])
			if uint32(u>>32) != hi {
				break
			}
			lows = append(lows, uint32(u))
		}
		bm := roaring.New()
		bm.AddMany(lows)
		b.keys = append(b.keys, hi)
		b.bms = append(b.bms, bm)
	}
	return b
}

// ints returns the members in ascending order.
func (b *bitmap) ints() []int64 {
	out := make([]int64, 0, b.n)
	b.each(func(u uint64) bool {
		out = append(out, fromU(u))
		return true
	})
	return out
}

func (b *bitmap) clone() *bitmap {
	c := &bitmap{keys: slices.Clone(b.keys), bms: make([]*roaring.Bitmap, len(b.bms)), n: b.n}
	for i, bm := range b.bms {
		c.bms[i] = bm.Clone()
	}
	return c
}

// andBitmaps returns a ∩ b.
func andBitmaps(a, b *bitmap) *bitmap {
	r := &bitmap{}
	for i, j := 0, 0; i < len(a.keys) && j < len(b.keys); {
		switch {
		case a.keys[i] < b.keys[j]:
			i++
		case a.keys[i] > b.keys[j]:
			j++
		default:
			bm := roaring.And(a.bms[i], b.bms[j])
			if !bm.IsEmpty() {
				r.keys = append(r.keys, a.keys[i])
				r.bms = append(r.bms, bm)
				r.n += int(bm.GetCardinality())
			}
			i++
			j++
		}
	}
	return r
}

// andCard returns |a ∩ b| without building it.
func andCard(a, b *bitmap) int {
	n := 0
	for i, j := 0, 0; i < len(a.keys) && j < len(b.keys); {
		switch {
		case a.keys[i] < b.keys[j]:
			i++
		case a.keys[i] > b.keys[j]:
			j++
		default:
			n += int(a.bms[i].AndCardinality(b.bms[j]))
			i++
			j++
		}
	}
	return n
}

// orWith adds every member of o to b.
func (b *bitmap) orWith(o *bitmap) {
	b.smp.Store(nil)
	for j, hi := range o.keys {
		i, ok := b.index(hi)
		if ok {
			b.n -= int(b.bms[i].GetCardinality())
			b.bms[i].Or(o.bms[j])
		} else {
			b.keys = slices.Insert(b.keys, i, hi)
			b.bms = slices.Insert(b.bms, i, o.bms[j].Clone())
		}
		b.n += int(b.bms[i].GetCardinality())
	}
}

// andNotWith removes every member of o from b.
func (b *bitmap) andNotWith(o *bitmap) {
	b.smp.Store(nil)
	for j, hi := range o.keys {
		i, ok := b.index(hi)
		if !ok {
			continue
		}
		b.n -= int(b.bms[i].GetCardinality())
		b.bms[i].AndNot(o.bms[j])
		if b.bms[i].IsEmpty() {
			b.keys = slices.Delete(b.keys, i, i+1)
			b.bms = slices.Delete(b.bms, i, i+1)
		} else {
			b.n += int(b.bms[i].GetCardinality())
		}
	}
}

// Roaring's GetSizeInBytes counts container payloads only. Per container
// Go also holds the key, the interface value and the copy-on-write flag in
// three growing slices, and the container struct itself (about 56 bytes in
// all); array containers grown by appends carry about 30% spare capacity.
// Calibrated against runtime.ReadMemStats (see TestMemoryUsageMatchesHeap).
const (
	containerOverhead = 56
	arraySlackPercent = 130
)

func (b *bitmap) memoryUsage() int {
	n := int(unsafe.Sizeof(*b)) + cap(b.keys)*4 + cap(b.bms)*8
	for _, bm := range b.bms {
		st := bm.Stats()
		n += 64 + int(st.Containers)*containerOverhead + int(st.ArrayContainerBytes)*arraySlackPercent/100 +
			int(st.BitmapContainerBytes) + int(st.RunContainerBytes)
	}
	if p := b.smp.Load(); p != nil {
		n += p.memoryUsage()
	}
	return n
}
