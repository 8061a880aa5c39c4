package list

import (
	"bytes"
	"math"
)

// ent locates one element inside its node's buffer.
type ent struct{ off, n uint32 }

// node is a run of consecutive list elements: a listpack in Redis terms.
// Element bytes live in buf, in the order they were written, which is not
// list order; ents gives list order. Element memory costs its bytes plus 8,
// and a node holds two pointers however many elements it has.
//
// Bytes written to buf are never overwritten: removing or replacing an
// element only leaves garbage, and compaction copies the live elements to a
// new buffer. That is what lets the list hand out views of its elements
// that stay valid after later mutations.
type node struct {
	buf     []byte
	ents    deque[ent]
	payload int // sum of lpEntrySize over the elements
	garbage int // bytes of buf no element refers to
	// Expected final size of buf and ents, or 0 (see newNodeAfter).
	hintBytes, hintEnts int32
}

// compactMin is the least garbage worth a compaction: below it the copy
// costs more than the memory it returns.
const compactMin = 256

func (nd *node) count() int { return nd.ents.len() }

// lpBytes is the size this node would have as a Redis listpack.
func (nd *node) lpBytes() int { return lpHeaderBytes + nd.payload }

// view returns e's bytes with capacity clipped, so a caller appending to
// the result can never write into the node.
func (nd *node) view(e ent) []byte {
	lo, hi := int(e.off), int(e.off)+int(e.n)
	return nd.buf[lo:hi:hi]
}

func (nd *node) get(i int) []byte { return nd.view(*nd.ents.at(i)) }

// put copies v to the end of buf.
func (nd *node) put(v []byte) ent {
	if len(nd.buf)+len(v) > math.MaxUint32 {
		nd.compact()
		if len(nd.buf)+len(v) > math.MaxUint32 {
			panic("list: element larger than 4 GiB")
		}
	}
	e := ent{off: uint32(len(nd.buf)), n: uint32(len(v))}
	nd.buf = append(nd.buf, v...)
	nd.payload += lpEntrySize(v)
	return e
}

// reserve makes room to append vals in one allocation each for the bytes
// and the entries.
func (nd *node) reserve(vals [][]byte) {
	size := 0
	for _, v := range vals {
		size += len(v)
	}
	if cap(nd.buf)-len(nd.buf) < size {
		nb := make([]byte, len(nd.buf), len(nd.buf)+size)
		copy(nb, nd.buf)
		nd.buf = nb
	}
	nd.ents.reserve(nd.count()+len(vals), false)
}

func (nd *node) pushBack(v []byte) {
	nd.applyHint(len(v), false)
	nd.ents.pushBack(nd.put(v))
}

// appendFitting appends the leading values of vals that the node takes
// when they are pushed one by one (List.allowInsert's rule under fill),
// and returns how many it took.
func (nd *node) appendFitting(fill int, vals [][]byte) int {
	lp, cnt := nd.lpBytes(), nd.count()
	k, payload, size := 0, 0, 0
	// exceedsLimit's test, its limits taken once.
	maxBytes, maxCount := nodeLimit(fill)
	if fill >= 0 {
		maxBytes = safetyLimit
	}
	for _, v := range vals {
		if lp+len(v)+insertOverhead > maxBytes || cnt+1 > maxCount {
			break
		}
		e := lpEntrySize(v)
		lp, payload, size, cnt, k = lp+e, payload+e, size+len(v), cnt+1, k+1
	}
	if k == 0 {
		return 0
	}
	if len(nd.buf)+size > math.MaxUint32 {
		nd.compact()
		if len(nd.buf)+size > math.MaxUint32 {
			panic("list: node larger than 4 GiB")
		}
	}
	if cap(nd.buf)-len(nd.buf) < size {
		nd.applyHint(size, false)
	}
	if cap(nd.buf)-len(nd.buf) < size {
		nb := make([]byte, len(nd.buf), max(len(nd.buf)+size, 2*cap(nd.buf)))
		copy(nb, nd.buf)
		nd.buf = nb
	}
	nd.ents.reserve(cnt, false)
	for _, v := range vals[:k] {
		nd.ents.pushBack(ent{off: uint32(len(nd.buf)), n: uint32(len(v))})
		nd.buf = append(nd.buf, v...)
	}
	nd.payload += payload
	return k
}

func (nd *node) pushFront(v []byte) {
	nd.applyHint(len(v), true)
	nd.ents.pushFront(nd.put(v))
}

// applyHint grows the node to its expected size (see newNodeAfter) once
// adding sz bytes would overflow its buffer and it holds an eighth of
// that size, so that a filling node skips most grow-and-copy steps.
func (nd *node) applyHint(sz int, atFront bool) {
	if nd.hintBytes == 0 || len(nd.buf)+sz <= cap(nd.buf) || 8*len(nd.buf) < int(nd.hintBytes) {
		return
	}
	nb := make([]byte, len(nd.buf), max(int(nd.hintBytes), len(nd.buf)+sz))
	copy(nb, nd.buf)
	nd.buf = nb
	nd.ents.reserve(int(nd.hintEnts), atFront)
	nd.hintBytes, nd.hintEnts = 0, 0
}

func (nd *node) insert(i int, v []byte) { nd.ents.insert(i, nd.put(v)) }

// set replaces element i with v.
func (nd *node) set(i int, v []byte) {
	old := nd.get(i)
	e := nd.put(v)
	nd.payload -= lpEntrySize(old)
	nd.garbage += len(old)
	*nd.ents.at(i) = e
	nd.maybeCompact()
}

// drop accounts for e leaving the node.
func (nd *node) drop(e ent) {
	nd.payload -= lpEntrySize(nd.view(e))
	nd.garbage += int(e.n)
}

// removeRange deletes elements [i, j).
func (nd *node) removeRange(i, j int) {
	for _, e := range nd.ents.items()[i:j] {
		nd.drop(e)
	}
	nd.ents.removeRange(i, j)
	nd.afterRemove()
}

// removeMatches deletes up to limit elements equal to v, the first ones
// from the head, or the last ones if fromTail. It returns how many it
// removed.
func (nd *node) removeMatches(v []byte, limit int, fromTail bool) int {
	items := nd.ents.items()
	lo, hi, found := 0, len(items), 0
	if !fromTail {
		for i, e := range items {
			if bytes.Equal(nd.view(e), v) {
				if found++; found == limit {
					hi = i + 1
					break
				}
			}
		}
	} else {
		for i := len(items) - 1; i >= 0; i-- {
			if bytes.Equal(nd.view(items[i]), v) {
				if found++; found == limit {
					lo = i
					break
				}
			}
		}
	}
	if found == 0 {
		return 0
	}
	// Every match in [lo, hi) goes; keep the rest in order.
	w := lo
	for r := lo; r < hi; r++ {
		e := items[r]
		if bytes.Equal(nd.view(e), v) {
			nd.drop(e)
			continue
		}
		items[w] = e
		w++
	}
	nd.ents.removeRange(w, hi)
	nd.afterRemove()
	return found
}

// split moves elements [i, count) into a new node and returns it.
func (nd *node) split(i int) node {
	var right node
	n := nd.count()
	size := 0
	for _, e := range nd.ents.items()[i:] {
		size += int(e.n)
	}
	right.buf = make([]byte, 0, size)
	for k := i; k < n; k++ {
		right.pushBack(nd.get(k))
	}
	nd.removeRange(i, n)
	return right
}

func (nd *node) afterRemove() {
	if nd.count() == 0 {
		*nd = node{}
		return
	}
	nd.maybeCompact()
}

func (nd *node) maybeCompact() {
	if nd.garbage >= compactMin && nd.garbage > len(nd.buf)/2 {
		nd.compact()
	}
}

// compact copies the live elements into a fresh buffer. The old buffer is
// left untouched for any view still pointing into it.
func (nd *node) compact() {
	nb := make([]byte, 0, len(nd.buf)-nd.garbage)
	items := nd.ents.items()
	for i, e := range items {
		off := len(nb)
		nb = append(nb, nd.view(e)...)
		items[i].off = uint32(off)
	}
	nd.buf, nd.garbage = nb, 0
}

// memory estimates the heap bytes the node owns beyond its own struct.
func (nd *node) memory() int {
	return cap(nd.buf) + cap(nd.ents.s)*entSize
}

const entSize = 8
