// Package list holds a Redis list: a sequence of binary-safe strings with
// cheap pushes and pops at both ends.
//
// A small list is one packed node (Redis's "listpack" encoding). When it
// passes the limit set by list-max-listpack-size it becomes a deque of
// such nodes, each bounded by the same limit ("quicklist"), and it turns
// back into one node when it shrinks to a single node of at most half the
// limit. Conversions follow Redis 7.2+ decision by decision, so Packed
// tells the form redis-server 7.2 would report; Encoding reports Redis
// 7.0's one list encoding, "quicklist", as the server does.
//
// Element values handed out by a List (Index, Range, pops, iteration) are
// views of its storage, not copies. The list never writes over bytes it has
// handed out, so a view stays valid and unchanged after any later
// operation; callers must not modify it.
//
// Index rules (negative indexes count from the tail, clamping of ranges)
// are Redis's. Validation that produces Redis errors (LPOS RANK 0, negative
// COUNT) belongs to the command layer.
//
// A List is not safe for concurrent use.
package list

import (
	"bytes"
	"iter"
	"math"
	"slices"
	"unsafe"
)

// List is a Redis list. Create it with New.
type List struct {
	n    int
	fill int
	// lp holds every element while the list is in listpack form.
	lp node
	// ql holds the nodes in quicklist form; nil in listpack form.
	ql *deque[node]
}

// New returns an empty list in listpack form. fill is Redis's
// list-max-listpack-size: a positive value caps entries per node (0 acts as
// 1), a negative value -1..-5 caps node size at 4, 8, 16, 32 or 64 KiB
// (below -5 acts as -5). DefaultFill is Redis's default.
func New(fill int) *List { return &List{fill: fill} }

// Len returns the number of elements.
func (l *List) Len() int { return l.n }

// Encoding is what OBJECT ENCODING says of a list: "quicklist" whatever
// its form, as Redis 7.0, which has no other list encoding.
func (l *List) Encoding() string { return "quicklist" }

// Packed reports whether the list is one packed node: the form Redis 7.2
// reports as "listpack" (otherwise "quicklist").
func (l *List) Packed() bool { return l.ql == nil }

// Clone returns a deep copy with the same node limit (COPY, as Redis's
// quicklistDup keeps the fill): its elements are packed afresh, so its
// nodes may split where the original's did not.
func (l *List) Clone() *List {
	c := New(l.fill)
	for _, e := range l.All() {
		c.PushBack(e)
	}
	return c
}

// CloneValue is Clone for keyspace's Value contract.
func (l *List) CloneValue() any { return l.Clone() }

func (l *List) nodeCount() int {
	if l.ql == nil {
		return 1
	}
	return l.ql.len()
}

// node returns node i; the pointer is valid until nodes are added or
// removed.
func (l *List) node(i int) *node {
	if l.ql == nil {
		return &l.lp
	}
	return l.ql.at(i)
}

// locate returns the node holding element i (0 <= i < n) and its offset
// there, walking from whichever end is closer.
func (l *List) locate(i int) (ni, off int) {
	if l.ql == nil {
		return 0, i
	}
	nodes := l.ql.items()
	if i < l.n/2 {
		for ni := range nodes {
			c := nodes[ni].count()
			if i < c {
				return ni, i
			}
			i -= c
		}
	} else {
		j := l.n - 1 - i // distance from the tail
		for ni := len(nodes) - 1; ni >= 0; ni-- {
			c := nodes[ni].count()
			if j < c {
				return ni, c - 1 - j
			}
			j -= c
		}
	}
	panic("list: element count out of sync with nodes")
}

// index normalizes a possibly negative index; ok is false when it is out of
// range.
func (l *List) index(i int) (int, bool) {
	if i < 0 {
		i += l.n
	}
	return i, i >= 0 && i < l.n
}

// bounds applies LRANGE/LTRIM index rules: negative indexes count from the
// tail, start is clamped to 0 and stop to the last element, and the range is
// empty (ok false) when start > stop or start is past the end.
func (l *List) bounds(start, stop int) (lo, hi int, ok bool) {
	n := l.n
	if start < 0 {
		start += n
	}
	if stop < 0 {
		stop += n
	}
	if start < 0 {
		start = 0
	}
	if start > stop || start >= n {
		return 0, 0, false
	}
	if stop >= n {
		stop = n - 1
	}
	return start, stop, true
}

// growFor converts a listpack to a quicklist if adding vals would pass the
// limit. Like Redis it adds the raw lengths of the new values to the
// listpack's size rather than their encoded sizes.
func (l *List) growFor(vals ...[]byte) {
	if l.ql != nil {
		return
	}
	l.growTo(addLens(vals, l.lp.lpBytes(), l.packedMax()), len(vals))
}

// packedMax is the byte limit growFor tests a listpack against.
func (l *List) packedMax() int {
	if l.fill >= 0 {
		return safetyLimit
	}
	maxBytes, _ := nodeLimit(l.fill)
	return maxBytes
}

// addLens returns lp plus the lengths of vals, summed only until the total
// passes maxBytes: a large push is decided after a few values, not a pass
// over all of them.
func addLens(vals [][]byte, lp, maxBytes int) int {
	for _, v := range vals {
		if lp > maxBytes {
			break
		}
		lp += len(v)
	}
	return lp
}

// growTo converts a listpack to a quicklist if n values, which bring it
// to bytes as addLens counts them, would pass the limit.
func (l *List) growTo(bytes, n int) {
	if exceedsLimit(l.fill, bytes, l.lp.count()+n) {
		l.ql = &deque[node]{}
		if l.lp.count() > 0 {
			l.ql.pushBack(l.lp)
		}
		l.lp = node{}
	}
}

// shrink converts a quicklist back to a listpack once it is a single node
// within half the limit (the hysteresis keeps a list near the limit from
// flipping on every push and pop), and resets an empty list.
func (l *List) shrink() {
	if l.n == 0 {
		l.lp, l.ql = node{}, nil
		return
	}
	if l.ql == nil || l.ql.len() != 1 {
		return
	}
	nd := l.ql.at(0)
	maxBytes, maxCount := nodeLimit(l.fill)
	if nd.lpBytes() > maxBytes/2 || nd.count() > maxCount/2 {
		return
	}
	l.lp, l.ql = *nd, nil
}

// allowInsert reports whether a value of sz bytes may join nd, using
// Redis's estimate of the bytes it adds.
func (l *List) allowInsert(nd *node, sz int) bool {
	return !exceedsLimit(l.fill, nd.lpBytes()+sz+insertOverhead, nd.count()+1)
}

func newNode(v []byte) node {
	var nd node
	nd.pushBack(v)
	return nd
}

// newNodeAfter starts a node next to full, the node v did not fit in.
// Pushes that fill one node usually go on to fill the next, so the new
// node remembers full's size as a hint (see node.applyHint). Waiting until
// the node holds an eighth of it keeps a node that is pushed and popped at
// a boundary cheap.
func newNodeAfter(full *node, v []byte) node {
	nd := newNode(v)
	nd.hintBytes = int32(min(len(full.buf)-full.garbage, math.MaxInt32))
	nd.hintEnts = int32(min(full.count(), math.MaxInt32))
	return nd
}

// PushFront inserts vals at the head one after another, so the last one
// ends up first, as LPUSH does. The bytes are copied.
func (l *List) PushFront(vals ...[]byte) {
	l.growFor(vals...)
	for _, v := range vals {
		if l.ql == nil {
			l.lp.pushFront(v)
			continue
		}
		if l.ql.len() > 0 {
			h := l.ql.at(0)
			if l.allowInsert(h, len(v)) {
				h.pushFront(v)
				continue
			}
			l.ql.pushFront(newNodeAfter(h, v))
			continue
		}
		l.ql.pushFront(newNode(v))
	}
	l.n += len(vals)
}

// PushBack appends vals at the tail in order, as RPUSH does. The bytes are
// copied.
func (l *List) PushBack(vals ...[]byte) {
	l.growFor(vals...)
	if l.ql == nil && len(vals) > 1 {
		l.lp.reserve(vals)
	}
	l.n += len(vals)
	if l.ql == nil {
		for _, v := range vals {
			l.lp.pushBack(v)
		}
		return
	}
	for len(vals) > 0 {
		k := l.ql.len()
		if k == 0 {
			l.ql.pushBack(newNode(vals[0]))
			vals = vals[1:]
			continue
		}
		t := l.ql.at(k - 1)
		// The values that join the tail node, pushed one by one, are
		// appended together: a large RPUSH costs one sizing pass and one
		// copy per node rather than a full push per value.
		if j := t.appendFitting(l.fill, vals); j > 0 {
			vals = vals[j:]
			continue
		}
		l.ql.pushBack(newNodeAfter(t, vals[0]))
		vals = vals[1:]
	}
}

// PopFront removes up to count elements from the head and returns them in
// head-to-tail order. It returns nil if count <= 0 or the list is empty.
func (l *List) PopFront(count int) [][]byte {
	count = min(count, l.n)
	if count <= 0 {
		return nil
	}
	out := make([][]byte, 0, count)
	l.cutFront(count, &out)
	l.shrink()
	return out
}

// PopBack removes up to count elements from the tail and returns them
// tail first, as RPOP with a count replies.
func (l *List) PopBack(count int) [][]byte {
	count = min(count, l.n)
	if count <= 0 {
		return nil
	}
	out := make([][]byte, 0, count)
	l.cutBack(count, &out)
	l.shrink()
	return out
}

// cutFront removes k (<= n) elements from the head, appending them to *out
// if out is not nil.
func (l *List) cutFront(k int, out *[][]byte) {
	for k > 0 {
		nd := l.node(0)
		cnt := nd.count()
		c := min(cnt, k)
		if out != nil {
			for _, e := range nd.ents.items()[:c] {
				*out = append(*out, nd.view(e))
			}
		}
		if l.ql != nil && c == cnt {
			l.ql.removeRange(0, 1)
		} else {
			nd.removeRange(0, c)
		}
		k -= c
		l.n -= c
	}
}

// cutBack removes k (<= n) elements from the tail, appending them to *out
// tail first if out is not nil.
func (l *List) cutBack(k int, out *[][]byte) {
	for k > 0 {
		last := l.nodeCount() - 1
		nd := l.node(last)
		cnt := nd.count()
		c := min(cnt, k)
		if out != nil {
			items := nd.ents.items()
			for i := cnt - 1; i >= cnt-c; i-- {
				*out = append(*out, nd.view(items[i]))
			}
		}
		if l.ql != nil && c == cnt {
			l.ql.removeRange(last, last+1)
		} else {
			nd.removeRange(cnt-c, cnt)
		}
		k -= c
		l.n -= c
	}
}

// Index returns element i; negative i counts from the tail (-1 is the
// last). ok is false when i is out of range.
func (l *List) Index(i int) (v []byte, ok bool) {
	i, ok = l.index(i)
	if !ok {
		return nil, false
	}
	ni, off := l.locate(i)
	return l.node(ni).get(off), true
}

// Set replaces element i (negative counts from the tail) with a copy of v
// and reports whether i was in range. As in Redis, a listpack that v would
// push over the limit becomes a quicklist even if i turns out to be out of
// range.
func (l *List) Set(i int, v []byte) bool {
	if l.n == 0 {
		return false // Redis has no empty lists, so nothing to convert
	}
	l.growFor(v)
	i, ok := l.index(i)
	if !ok {
		return false
	}
	ni, off := l.locate(i)
	l.node(ni).set(off, v)
	l.shrink()
	return true
}

// Range returns elements start..stop inclusive with LRANGE's rules:
// negative indexes count from the tail, out-of-range indexes are clamped,
// and an empty range gives nil.
func (l *List) Range(start, stop int) [][]byte {
	return l.AppendRange(nil, start, stop)
}

// AppendRange appends what Range(start, stop) would return to dst and
// returns the extended slice, so a caller can reuse one buffer.
func (l *List) AppendRange(dst [][]byte, start, stop int) [][]byte {
	dst = slices.Grow(dst, l.RangeLen(start, stop))
	l.EachInRange(start, stop, func(v []byte) { dst = append(dst, v) })
	return dst
}

// RangeLen is len(Range(start, stop)).
func (l *List) RangeLen(start, stop int) int {
	lo, hi, ok := l.bounds(start, stop)
	if !ok {
		return 0
	}
	return hi - lo + 1
}

// EachInRange calls fn with each element of Range(start, stop) in order,
// without making the slice (LRANGE writes them straight into its reply).
// fn must not keep v or change the list.
func (l *List) EachInRange(start, stop int, fn func(v []byte)) {
	lo, hi, ok := l.bounds(start, stop)
	if !ok {
		return
	}
	for i, v := range l.from(lo) {
		fn(v)
		if i == hi {
			break
		}
	}
}

// Insert puts a copy of v just before (or after, if after is true) the
// first element equal to pivot, searching from the head, and reports
// whether pivot was found. As in Redis, a listpack that v would push over
// the limit becomes a quicklist even when pivot is missing.
func (l *List) Insert(pivot, v []byte, after bool) bool {
	if l.n == 0 {
		return false
	}
	l.growFor(v)
	for ni := 0; ni < l.nodeCount(); ni++ {
		nd := l.node(ni)
		for i, e := range nd.ents.items() {
			if !bytes.Equal(nd.view(e), pivot) {
				continue
			}
			pos := i
			if after {
				pos++
			}
			if l.ql == nil {
				nd.insert(pos, v)
			} else {
				l.insertAt(ni, pos, v)
			}
			l.n++
			return true
		}
	}
	return false
}

// insertAt inserts v at offset pos of quicklist node ni, spilling into a
// neighbour, a new node, or a split of the node when it is full, in the
// way Redis's quicklist does.
func (l *List) insertAt(ni, pos int, v []byte) {
	nd := l.ql.at(ni)
	if l.allowInsert(nd, len(v)) {
		nd.insert(pos, v)
		return
	}
	switch {
	case pos == nd.count():
		if ni+1 < l.ql.len() {
			if next := l.ql.at(ni + 1); l.allowInsert(next, len(v)) {
				next.pushFront(v)
				return
			}
		}
		l.ql.insert(ni+1, newNode(v))
	case pos == 0:
		if ni > 0 {
			if prev := l.ql.at(ni - 1); l.allowInsert(prev, len(v)) {
				prev.pushBack(v)
				return
			}
		}
		l.ql.insert(ni, newNode(v))
	default:
		right := nd.split(pos)
		l.ql.insert(ni+1, right)
		// Nodes may have moved: look them up again.
		if left := l.ql.at(ni); l.allowInsert(left, len(v)) {
			left.pushBack(v)
		} else if r := l.ql.at(ni + 1); l.allowInsert(r, len(v)) {
			r.pushFront(v)
		} else {
			l.ql.insert(ni+1, newNode(v))
		}
	}
}

// Remove deletes elements equal to v, as LREM does: the first count from
// the head if count > 0, the last -count from the tail if count < 0, all
// if count == 0. It returns how many it removed.
func (l *List) Remove(count int, v []byte) int {
	limit, fromTail := count, count < 0
	switch {
	case count == 0:
		limit = math.MaxInt
	case fromTail:
		limit = -count
		if limit < 0 { // count was math.MinInt
			limit = math.MaxInt
		}
	}
	removed := 0
	if !fromTail {
		for ni := 0; ni < l.nodeCount() && removed < limit; {
			nd := l.node(ni)
			removed += nd.removeMatches(v, limit-removed, false)
			if l.ql != nil && nd.count() == 0 {
				l.ql.removeRange(ni, ni+1)
			} else {
				ni++
			}
		}
	} else {
		for ni := l.nodeCount() - 1; ni >= 0 && removed < limit; ni-- {
			nd := l.node(ni)
			removed += nd.removeMatches(v, limit-removed, true)
			if l.ql != nil && nd.count() == 0 {
				l.ql.removeRange(ni, ni+1)
			}
		}
	}
	if removed > 0 {
		l.n -= removed
		l.shrink()
	}
	return removed
}

// Trim keeps only elements start..stop inclusive, with LTRIM's rules (the
// same as Range's); an empty range empties the list.
func (l *List) Trim(start, stop int) {
	lo, hi, ok := l.bounds(start, stop)
	if !ok {
		l.n = 0
	} else {
		l.cutBack(l.n-1-hi, nil)
		l.cutFront(lo, nil)
	}
	l.shrink()
}

// Pos returns the indexes (counted from the head) of elements equal to v,
// with LPOS semantics: rank r > 0 skips the first r-1 matches scanning
// from the head, r < 0 skips the first -r-1 matches scanning from the tail
// (and yields indexes in that order); rank 0 is treated as 1 (the command
// layer rejects it). count caps the number of indexes returned, 0 meaning
// all; maxlen caps the number of elements compared, 0 meaning all. LPOS
// without COUNT is Pos with count 1.
func (l *List) Pos(v []byte, rank, count, maxlen int) []int {
	var seq iter.Seq2[int, []byte]
	var skip int
	if rank < 0 {
		seq, skip = l.Backward(), -(rank + 1)
	} else {
		seq, skip = l.All(), max(rank-1, 0)
	}
	var out []int
	scanned := 0
	for i, e := range seq {
		if maxlen > 0 && scanned >= maxlen {
			break
		}
		scanned++
		if !bytes.Equal(e, v) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, i)
		if count > 0 && len(out) >= count {
			break
		}
	}
	return out
}

// All yields (index, element) pairs from head to tail. The list must not
// be modified during the iteration.
func (l *List) All() iter.Seq2[int, []byte] { return l.from(0) }

// Backward yields (index, element) pairs from tail to head. The list must
// not be modified during the iteration.
func (l *List) Backward() iter.Seq2[int, []byte] {
	return func(yield func(int, []byte) bool) {
		if l.n == 0 {
			return
		}
		i := l.n - 1
		for ni := l.nodeCount() - 1; ni >= 0; ni-- {
			nd := l.node(ni)
			items := nd.ents.items()
			for k := len(items) - 1; k >= 0; k-- {
				if !yield(i, nd.view(items[k])) {
					return
				}
				i--
			}
		}
	}
}

// from yields (index, element) pairs from index start to the tail.
func (l *List) from(start int) iter.Seq2[int, []byte] {
	return func(yield func(int, []byte) bool) {
		if start < 0 || start >= l.n {
			return
		}
		ni, off := l.locate(start)
		i := start
		for ; ni < l.nodeCount(); ni++ {
			nd := l.node(ni)
			for _, e := range nd.ents.items()[off:] {
				if !yield(i, nd.view(e)) {
					return
				}
				i++
			}
			off = 0
		}
	}
}

// MemoryUsage estimates the bytes the list occupies on the heap, for
// MEMORY USAGE and INFO. It is O(nodes).
func (l *List) MemoryUsage() int {
	m := int(unsafe.Sizeof(*l)) + l.lp.memory()
	if l.ql != nil {
		m += int(unsafe.Sizeof(*l.ql)) + cap(l.ql.s)*int(unsafe.Sizeof(node{}))
		for i := range l.ql.items() {
			m += l.ql.items()[i].memory()
		}
	}
	return m
}
