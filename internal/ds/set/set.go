// Package set is the data structure behind Redis's set type (SADD, SINTER,
// SINTERCARD, SPOP, SSCAN ...). It holds binary-safe members and answers
// questions about them; it knows nothing of commands, RESP or error replies.
//
// A set picks one of four internal encodings (Kind) by its content, with the
// thresholds Redis's config names set (Limits):
//
//	KindIntset    every member an integer (see ParseInt) and at most
//	              set-max-intset-entries of them: a sorted []int64.
//	KindListpack  at most set-max-listpack-entries members, none longer than
//	              set-max-listpack-value bytes: one length-prefixed byte slice.
//	KindHashtable anything else: an open-addressing table over a byte arena.
//	KindBitmap    Abacus's addition: an all-integer set too large for an
//	              intset. Redis would use a hash table; Abacus uses a roaring
//	              bitmap, which holds millions of ids in a few bytes each and
//	              intersects them without hashing. Encoding() still says
//	              "hashtable", as Redis's OBJECT ENCODING would.
//
// Conversions follow Redis 7.2's setTypeAdd: an intset that grows past its
// limit becomes a bitmap (Redis: hashtable); a non-integer member turns an
// intset into a listpack when that fits, otherwise into a hash table; a
// listpack that outgrows its limits and a bitmap that receives a non-integer
// become hash tables. Removing members never converts. Sets built from
// scratch (Intersect, Union, Diff) take the encoding their content calls for.
//
// Concurrency: methods that leave the members unchanged (Contains, Len, All,
// Scan, RandomMember, RandomMembers, RandomDistinct, Clone, MemoryUsage and
// the algebra on their inputs) may run concurrently with each other; Add,
// AddInt, Remove and Pop need exclusive access. The keyspace's lock provides
// both.
package set

import (
	"iter"
	"slices"
	"unsafe"
)

// Kind is a set's internal encoding.
type Kind uint8

const (
	KindIntset Kind = iota
	KindListpack
	KindHashtable
	KindBitmap
)

func (k Kind) String() string {
	switch k {
	case KindIntset:
		return "intset"
	case KindListpack:
		return "listpack"
	case KindHashtable:
		return "hashtable"
	case KindBitmap:
		return "bitmap"
	}
	return "unknown"
}

// Limits are the conversion thresholds, named after Redis's config options.
// They are passed to every operation that may convert, so that CONFIG SET
// applies to existing sets from their next write, as in Redis.
type Limits struct {
	MaxIntsetEntries   int // set-max-intset-entries
	MaxListpackEntries int // set-max-listpack-entries
	MaxListpackValue   int // set-max-listpack-value
}

// DefaultLimits returns Redis's defaults: 512, 128 and 64.
func DefaultLimits() Limits {
	return Limits{MaxIntsetEntries: 512, MaxListpackEntries: 128, MaxListpackValue: 64}
}

// maxIntset is MaxIntsetEntries capped like Redis caps it (1<<30).
func (l Limits) maxIntset() int { return min(l.MaxIntsetEntries, 1<<30) }

// Set is a set of binary-safe members. The zero value is an empty set.
type Set struct {
	kind Kind
	ints []int64  // KindIntset: ascending
	lp   listpack // KindListpack
	ht   *table   // KindHashtable
	bm   *bitmap  // KindBitmap
}

// New returns an empty set.
func New() *Set { return &Set{} }

// Kind returns the internal encoding.
func (s *Set) Kind() Kind { return s.kind }

// Encoding returns the encoding as Redis names it for OBJECT ENCODING:
// "intset", "listpack" or "hashtable" (which KindBitmap also reports).
func (s *Set) Encoding() string {
	if s.kind == KindBitmap {
		return "hashtable"
	}
	return s.kind.String()
}

// Len returns the number of members.
func (s *Set) Len() int {
	switch s.kind {
	case KindListpack:
		return s.lp.n
	case KindHashtable:
		return s.ht.len()
	case KindBitmap:
		return s.bm.n
	}
	return len(s.ints)
}

// Contains reports whether m is a member.
func (s *Set) Contains(m []byte) bool {
	switch s.kind {
	case KindListpack:
		return s.lp.contains(m)
	case KindHashtable:
		return s.ht.contains(m)
	}
	v, ok := ParseInt(m)
	return ok && s.containsInt(v)
}

// containsInt reports whether the integer member v is present, for any kind.
func (s *Set) containsInt(v int64) bool {
	switch s.kind {
	case KindIntset:
		_, ok := slices.BinarySearch(s.ints, v)
		return ok
	case KindBitmap:
		return s.bm.contains(toU(v))
	}
	var buf [maxIntLen]byte
	return s.Contains(appendInt(buf[:0], v))
}

// Add inserts m and reports whether it was not already a member, converting
// the encoding when lim calls for it.
func (s *Set) Add(lim Limits, m []byte) bool {
	switch s.kind {
	case KindIntset, KindBitmap:
		if v, ok := ParseInt(m); ok {
			return s.addInt(lim, v)
		}
		// m is not an integer, so it is not a member yet.
		if s.kind == KindIntset && s.intsetFitsListpack(lim, len(m)) {
			s.intsetToListpack()
			s.lp.push(m)
			return true
		}
		s.toTable(1, len(m))
		s.ht.add(m)
		return true
	case KindListpack:
		if s.lp.contains(m) {
			return false
		}
		if s.lp.n < lim.MaxListpackEntries && len(m) <= lim.MaxListpackValue {
			s.lp.push(m)
			return true
		}
		s.toTable(1, len(m))
		s.ht.add(m)
		return true
	}
	return s.ht.add(m)
}

// AddInt inserts the integer member v (the member whose bytes are v in
// decimal) and reports whether it was not already a member.
func (s *Set) AddInt(lim Limits, v int64) bool {
	if s.kind == KindIntset || s.kind == KindBitmap {
		return s.addInt(lim, v)
	}
	var buf [maxIntLen]byte
	return s.Add(lim, appendInt(buf[:0], v))
}

func (s *Set) addInt(lim Limits, v int64) bool {
	if s.kind == KindBitmap {
		return s.bm.add(toU(v))
	}
	i, found := slices.BinarySearch(s.ints, v)
	if found {
		return false
	}
	s.ints = slices.Insert(s.ints, i, v)
	if len(s.ints) > lim.maxIntset() {
		s.bm = bitmapFromSorted(s.ints)
		s.ints = nil
		s.kind = KindBitmap
	}
	return true
}

// intsetFitsListpack is Redis's test for turning an intset that receives a
// non-integer member of length n into a listpack rather than a hash table.
func (s *Set) intsetFitsListpack(lim Limits, n int) bool {
	longest := 0
	if k := len(s.ints); k > 0 {
		// The longest decimal form belongs to the smallest or the largest.
		longest = max(intLen(s.ints[0]), intLen(s.ints[k-1]))
	}
	return len(s.ints) < lim.MaxListpackEntries && n <= lim.MaxListpackValue &&
		longest <= lim.MaxListpackValue
}

// Remove deletes m and reports whether it was a member. An emptied set
// releases its memory and starts over as an empty intset.
func (s *Set) Remove(m []byte) bool {
	var ok bool
	switch s.kind {
	case KindListpack:
		ok = s.lp.remove(m)
	case KindHashtable:
		ok = s.ht.remove(m)
	default:
		v, isInt := ParseInt(m)
		if !isInt {
			return false
		}
		ok = s.removeInt(v)
	}
	if ok && s.Len() == 0 {
		*s = Set{}
	}
	return ok
}

func (s *Set) removeInt(v int64) bool {
	if s.kind == KindBitmap {
		return s.bm.remove(toU(v))
	}
	i, found := slices.BinarySearch(s.ints, v)
	if found {
		s.ints = slices.Delete(s.ints, i, i+1)
	}
	return found
}

// All iterates over the members: intsets and bitmaps in ascending numeric
// order (as Redis iterates intsets), other encodings in no particular order.
// The yielded slice is only valid until the next step of the iteration and
// must not be modified; copy it to keep it. The set must not be modified
// during the iteration.
func (s *Set) All() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		var buf [maxIntLen]byte
		switch s.kind {
		case KindIntset:
			for _, v := range s.ints {
				if !yield(appendInt(buf[:0], v)) {
					return
				}
			}
		case KindListpack:
			s.lp.each(yield)
		case KindHashtable:
			for i := range s.ht.ents {
				if !yield(s.ht.member(i)) {
					return
				}
			}
		case KindBitmap:
			s.bm.each(func(u uint64) bool { return yield(appendInt(buf[:0], fromU(u))) })
		}
	}
}

// eachParsed is All with every member's integer value alongside, for the
// algebra: int kinds yield their values, other kinds parse their members.
func (s *Set) eachParsed(fn func(m []byte, v int64, isInt bool) bool) {
	var buf [maxIntLen]byte
	switch s.kind {
	case KindIntset:
		for _, v := range s.ints {
			if !fn(appendInt(buf[:0], v), v, true) {
				return
			}
		}
	case KindBitmap:
		s.bm.each(func(u uint64) bool {
			v := fromU(u)
			return fn(appendInt(buf[:0], v), v, true)
		})
	case KindListpack:
		s.lp.each(func(m []byte) bool {
			v, ok := ParseInt(m)
			return fn(m, v, ok)
		})
	case KindHashtable:
		for i := range s.ht.ents {
			m := s.ht.member(i)
			v, ok := ParseInt(m)
			if !fn(m, v, ok) {
				return
			}
		}
	}
}

// containsParsed is Contains for a member whose integer value is known.
func (s *Set) containsParsed(m []byte, v int64, isInt bool) bool {
	switch s.kind {
	case KindIntset:
		if !isInt {
			return false
		}
		_, ok := slices.BinarySearch(s.ints, v)
		return ok
	case KindBitmap:
		return isInt && s.bm.contains(toU(v))
	case KindListpack:
		return s.lp.contains(m)
	}
	return s.ht.contains(m)
}

// Clone returns an independent copy with the same encoding.
func (s *Set) Clone() *Set {
	c := &Set{kind: s.kind}
	switch s.kind {
	case KindIntset:
		c.ints = slices.Clone(s.ints)
	case KindListpack:
		c.lp = listpack{data: slices.Clone(s.lp.data), n: s.lp.n}
	case KindHashtable:
		c.ht = s.ht.clone()
	case KindBitmap:
		c.bm = s.bm.clone()
	}
	return c
}

// CloneValue is Clone for keyspace's Value contract.
func (s *Set) CloneValue() any { return s.Clone() }

// MemoryUsage estimates the bytes the set holds, for MEMORY USAGE and
// used_memory: the Set header plus its encoding's allocations.
func (s *Set) MemoryUsage() int {
	n := int(unsafe.Sizeof(*s))
	switch s.kind {
	case KindIntset:
		n += cap(s.ints) * 8
	case KindListpack:
		n += cap(s.lp.data)
	case KindHashtable:
		n += s.ht.memoryUsage()
	case KindBitmap:
		n += s.bm.memoryUsage()
	}
	return n
}

// intsetToListpack converts an intset to a listpack of its decimal forms.
func (s *Set) intsetToListpack() {
	lp := listpack{data: make([]byte, 0, len(s.ints)*8+16)}
	var buf [maxIntLen]byte
	for _, v := range s.ints {
		lp.push(appendInt(buf[:0], v))
	}
	*s = Set{kind: KindListpack, lp: lp}
}

// toTable converts any encoding to a hash table with room for extra more
// members of about extraLen bytes.
func (s *Set) toTable(extra, extraLen int) {
	if s.kind == KindHashtable {
		return
	}
	n := s.Len()
	avg := 12
	if s.kind == KindListpack && n > 0 {
		avg = len(s.lp.data)/n + 1
	}
	t := newTable(n+extra, avg)
	t.arena = slices.Grow(t.arena, extraLen+extra*hdrLen)
	var buf [maxIntLen]byte
	switch s.kind {
	case KindIntset:
		for _, v := range s.ints {
			m := appendInt(buf[:0], v)
			t.insertNew(m, hashOf(m))
		}
	case KindBitmap:
		s.bm.each(func(u uint64) bool {
			m := appendInt(buf[:0], fromU(u))
			t.insertNew(m, hashOf(m))
			return true
		})
	case KindListpack:
		s.lp.each(func(m []byte) bool {
			t.insertNew(m, hashOf(m))
			return true
		})
	}
	*s = Set{kind: KindHashtable, ht: t}
}

// fromSortedInts builds a fresh all-integer set from ascending distinct
// values, taking ownership of vals.
func fromSortedInts(lim Limits, vals []int64) *Set {
	if len(vals) == 0 {
		return New()
	}
	if len(vals) <= lim.maxIntset() {
		return &Set{kind: KindIntset, ints: slices.Clip(vals)}
	}
	return &Set{kind: KindBitmap, bm: bitmapFromSorted(vals)}
}

// fromBitmap wraps a freshly built bitmap, as an intset if it is small.
func fromBitmap(lim Limits, b *bitmap) *Set {
	if b.n == 0 {
		return New()
	}
	if b.n <= lim.maxIntset() {
		return &Set{kind: KindIntset, ints: b.ints()}
	}
	return &Set{kind: KindBitmap, bm: b}
}

// fromTable wraps a freshly built table holding at least one non-integer
// member whose longest member has maxLen bytes: a listpack if it fits.
func fromTable(lim Limits, t *table, maxLen int) *Set {
	n := t.len()
	if n > lim.MaxListpackEntries || maxLen > lim.MaxListpackValue {
		return &Set{kind: KindHashtable, ht: t}
	}
	lp := listpack{data: make([]byte, 0, t.memberBytes()+n)}
	for i := range t.ents {
		lp.push(t.member(i))
	}
	return &Set{kind: KindListpack, lp: lp}
}

// refit converts a freshly built set to the encoding its content calls for.
func (s *Set) refit(lim Limits) *Set {
	switch s.kind {
	case KindIntset:
		return fromSortedInts(lim, s.ints)
	case KindBitmap:
		return fromBitmap(lim, s.bm)
	}
	var b builder
	s.eachParsed(func(m []byte, v int64, isInt bool) bool {
		b.add(m, v, isInt)
		return true
	})
	return b.finish(lim)
}
