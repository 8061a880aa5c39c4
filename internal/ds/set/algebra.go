package set

import (
	"cmp"
	"slices"
	"sort"
)

// The multi-set operations. Missing keys are passed as nil and behave as
// empty sets. Results are fresh sets whose encoding follows their content.
//
// Two strategies, as in Redis but with an integer fast path Redis lacks:
//   - All inputs integer-encoded (intset or bitmap): no hashing and no
//     formatting. Bitmaps combine container by container with roaring's
//     And/AndCardinality/Or/AndNot; intsets merge as sorted arrays, probing
//     bitmaps directly.
//   - Otherwise: inputs sorted by size, the smallest iterated and every
//     member probed in the others, which is Redis's algorithm.

// Intersect returns the members present in every set.
func Intersect(lim Limits, sets ...*Set) *Set {
	ordered, ok := bySize(sets)
	if !ok {
		return New()
	}
	if allKind(ordered, KindBitmap) {
		r := andBitmaps(ordered[0].bm, ordered[1%len(ordered)].bm)
		for _, o := range ordered[min(2, len(ordered)):] {
			if r.n == 0 {
				break
			}
			r = andBitmaps(r, o.bm)
		}
		return fromBitmap(lim, r)
	}
	if allInt(ordered) {
		var vals []int64
		intersectInts(ordered, 0, func(v int64) { vals = append(vals, v) })
		return fromSortedInts(lim, vals)
	}
	var b builder
	probe := ordered[1:]
	ordered[0].eachParsed(func(m []byte, v int64, isInt bool) bool {
		for _, o := range probe {
			if !o.containsParsed(m, v, isInt) {
				return true
			}
		}
		b.add(m, v, isInt)
		return true
	})
	return b.finish(lim)
}

// IntersectCard returns the size of the intersection of sets, stopping as
// soon as it reaches limit when limit > 0 (SINTERCARD's LIMIT).
func IntersectCard(limit int, sets ...*Set) int {
	ordered, ok := bySize(sets)
	if !ok {
		return 0
	}
	clamp := func(n int) int {
		if limit > 0 && n > limit {
			return limit
		}
		return n
	}
	if len(ordered) == 1 {
		return clamp(ordered[0].Len())
	}
	if allKind(ordered, KindBitmap) {
		// Build all but the largest, then count against it without
		// materialising the last intersection.
		last := len(ordered) - 1
		r := ordered[0].bm
		for _, o := range ordered[1:last] {
			if r.n == 0 {
				return 0
			}
			r = andBitmaps(r, o.bm)
		}
		return clamp(andCard(r, ordered[last].bm))
	}
	n := 0
	if allInt(ordered) {
		intersectInts(ordered, limit, func(int64) { n++ })
		return n
	}
	probe := ordered[1:]
	ordered[0].eachParsed(func(m []byte, v int64, isInt bool) bool {
		for _, o := range probe {
			if !o.containsParsed(m, v, isInt) {
				return true
			}
		}
		n++
		return limit <= 0 || n < limit
	})
	return n
}

// Union returns the members present in at least one set.
func Union(lim Limits, sets ...*Set) *Set {
	var in []*Set
	for _, s := range sets {
		if s != nil && s.Len() > 0 {
			in = append(in, s)
		}
	}
	if len(in) == 0 {
		return New()
	}
	slices.SortFunc(in, func(a, b *Set) int { return cmp.Compare(b.Len(), a.Len()) })
	if allInt(in) {
		if i := slices.IndexFunc(in, func(s *Set) bool { return s.kind == KindBitmap }); i >= 0 {
			// Start from a copy of the largest bitmap and fold in the rest.
			r := in[i].bm.clone()
			for j, o := range in {
				if j == i {
					continue
				}
				if o.kind == KindBitmap {
					r.orWith(o.bm)
					continue
				}
				for _, v := range o.ints {
					r.add(toU(v))
				}
			}
			return fromBitmap(lim, r)
		}
		var vals []int64
		for _, o := range in {
			vals = append(vals, o.ints...)
		}
		slices.Sort(vals)
		return fromSortedInts(lim, slices.Compact(vals))
	}
	var b builder
	// Non-integer encodings first: if any member is not an integer the
	// builder learns it before collecting millions of integers.
	slices.SortStableFunc(in, func(a, b *Set) int {
		return cmp.Compare(btoi(a.isIntKind()), btoi(b.isIntKind()))
	})
	for _, o := range in {
		o.eachParsed(func(m []byte, v int64, isInt bool) bool {
			b.add(m, v, isInt)
			return true
		})
	}
	return b.finish(lim)
}

// Diff returns the members of sets[0] present in none of the others.
func Diff(lim Limits, sets ...*Set) *Set {
	if len(sets) == 0 || sets[0] == nil || sets[0].Len() == 0 {
		return New()
	}
	first := sets[0]
	var others []*Set
	for _, s := range sets[1:] {
		if s == first {
			return New()
		}
		if s != nil && s.Len() > 0 {
			others = append(others, s)
		}
	}
	if allInt(others) && first.isIntKind() {
		if first.kind == KindBitmap {
			r := first.bm.clone()
			for _, o := range others {
				if o.kind == KindBitmap {
					r.andNotWith(o.bm)
					continue
				}
				for _, v := range o.ints {
					r.remove(toU(v))
				}
			}
			return fromBitmap(lim, r)
		}
		var vals []int64
		probes := make([]intProbe, len(others))
		for i, o := range others {
			probes[i] = intProbe{ints: o.ints, bm: o.bm}
		}
	next:
		for _, v := range first.ints {
			for i := range probes {
				if probes[i].has(v) {
					continue next
				}
			}
			vals = append(vals, v)
		}
		return fromSortedInts(lim, vals)
	}
	// Redis's choice between probing every member of the first set in
	// the others (work ~ |first|*len(others), halved because probing
	// usually stops early) and copying the first set and removing the
	// others' members (work ~ the sum of all sizes).
	one := first.Len() * len(others) / 2
	two := first.Len()
	for _, o := range others {
		two += o.Len()
	}
	if one <= two {
		// Larger sets first: a member is likelier to be found early.
		slices.SortFunc(others, func(a, b *Set) int { return cmp.Compare(b.Len(), a.Len()) })
		var b builder
		first.eachParsed(func(m []byte, v int64, isInt bool) bool {
			for _, o := range others {
				if o.containsParsed(m, v, isInt) {
					return true
				}
			}
			b.add(m, v, isInt)
			return true
		})
		return b.finish(lim)
	}
	r := first.Clone()
	for _, o := range others {
		o.eachParsed(func(m []byte, v int64, isInt bool) bool {
			if isInt && r.isIntKind() {
				r.removeInt(v)
			} else {
				r.removeBytes(m)
			}
			return r.Len() > 0
		})
		if r.Len() == 0 {
			return New()
		}
	}
	return r.refit(lim)
}

// removeBytes is Remove without resetting an emptied set.
func (s *Set) removeBytes(m []byte) {
	switch s.kind {
	case KindListpack:
		s.lp.remove(m)
	case KindHashtable:
		s.ht.remove(m)
	default:
		if v, ok := ParseInt(m); ok {
			s.removeInt(v)
		}
	}
}

func (s *Set) isIntKind() bool { return s.kind == KindIntset || s.kind == KindBitmap }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// bySize returns the sets ascending by size; ok is false if there are none
// or one is empty, in which case any intersection is empty.
func bySize(sets []*Set) ([]*Set, bool) {
	if len(sets) == 0 {
		return nil, false
	}
	for _, s := range sets {
		if s == nil || s.Len() == 0 {
			return nil, false
		}
	}
	ordered := slices.Clone(sets)
	slices.SortFunc(ordered, func(a, b *Set) int { return cmp.Compare(a.Len(), b.Len()) })
	return ordered, true
}

func allKind(sets []*Set, k Kind) bool {
	for _, s := range sets {
		if s.kind != k {
			return false
		}
	}
	return true
}

func allInt(sets []*Set) bool {
	for _, s := range sets {
		if !s.isIntKind() {
			return false
		}
	}
	return true
}

// intersectInts walks the smallest integer set (sets[0]) in ascending order
// and emits the values present in all the others, stopping after limit
// values when limit > 0.
func intersectInts(sets []*Set, limit int, emit func(int64)) {
	probes := make([]intProbe, len(sets)-1)
	for i, o := range sets[1:] {
		probes[i] = intProbe{ints: o.ints, bm: o.bm}
	}
	n := 0
	visit := func(v int64) bool {
		for i := range probes {
			if !probes[i].has(v) {
				return true
			}
		}
		emit(v)
		n++
		return limit <= 0 || n < limit
	}
	if sets[0].kind == KindBitmap {
		sets[0].bm.each(func(u uint64) bool { return visit(fromU(u)) })
		return
	}
	for _, v := range sets[0].ints {
		if !visit(v) {
			return
		}
	}
}

// intProbe answers membership for ascending queries: a bitmap directly, a
// sorted array by galloping forward from the previous answer, so a merge of
// a small array against a large one costs O(small * log(large/small)).
type intProbe struct {
	ints []int64
	pos  int
	bm   *bitmap
}

func (p *intProbe) has(v int64) bool {
	if p.bm != nil {
		return p.bm.contains(toU(v))
	}
	a := p.ints
	lo := p.pos
	if lo >= len(a) {
		return false
	}
	if a[lo] < v {
		// Gallop to bracket v in (lo, hi], then binary search.
		step := 1
		hi := lo + step
		for hi < len(a) && a[hi] < v {
			lo = hi
			step *= 2
			hi = lo + step
		}
		hi = min(hi, len(a)-1)
		lo += sort.Search(hi-lo+1, func(i int) bool { return a[lo+i] >= v })
	}
	p.pos = lo
	return lo < len(a) && a[lo] == v
}

// builder collects the members of a fresh set: as integers while every
// member is one, in a hash table from the first member that is not.
type builder struct {
	ints   []int64
	t      *table
	maxLen int
}

func (b *builder) add(m []byte, v int64, isInt bool) {
	if b.t == nil {
		if isInt {
			b.ints = append(b.ints, v)
			return
		}
		b.t = newTable(len(b.ints)+1, 12)
		var buf [maxIntLen]byte
		for _, iv := range b.ints {
			b.t.add(appendInt(buf[:0], iv))
			b.maxLen = max(b.maxLen, intLen(iv))
		}
		b.ints = nil
	}
	b.t.add(m)
	b.maxLen = max(b.maxLen, len(m))
}

func (b *builder) finish(lim Limits) *Set {
	if b.t == nil {
		slices.Sort(b.ints)
		return fromSortedInts(lim, slices.Compact(b.ints))
	}
	return fromTable(lim, b.t, b.maxLen)
}
