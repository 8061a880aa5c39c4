package stream

// Cursor is where a forward read stopped: just after the entry After, at
// byte Off of a node. A later read from an id above After starts there
// instead of walking the node from its first entry, which is what a
// consumer group reading new entries one at a time would do every time.
//
// A node's bytes before an offset never change once written (entries
// are appended; a deletion only sets a flag), so the cursor stays right
// for as long as its node exists: the node is recognised by its master
// id and its generation, a count no other node of the stream shares.
type Cursor struct {
	After  ID
	master ID
	gen    uint32
	off    int32
}

// Cursor is the position after the current entry of a forward iterator
// that has one; call it before the stream changes (the cursor itself
// outlives changes).
func (it *Iter) Cursor() Cursor {
	n := &it.s.nodes[it.curNode]
	return Cursor{After: it.ID, master: n.master, gen: n.gen, off: int32(it.curEnd)}
}

// RangeFrom is Range forward from start, starting at cur when cur is
// still valid and start is above cur.After.
func (s *Stream) RangeFrom(start, end ID, cur Cursor) *Iter {
	it := &Iter{s: s, start: start, end: end}
	s.InitRangeFrom(it, start, end, cur)
	return it
}

// InitRangeFrom is RangeFrom into it, which keeps its buffers (an
// iterator reused, or one on the caller's stack).
func (s *Stream) InitRangeFrom(it *Iter, start, end ID, cur Cursor) {
	*it = Iter{s: s, start: start, end: end, master: it.master[:0], fv: it.fv[:0], scratch: it.scratch[:0], offs: it.offs[:0]}
	if cur.gen == 0 || !cur.After.Less(start) || end.Less(start) {
		return
	}
	i := s.nodeFor(start)
	if i < 0 {
		return
	}
	n := &s.nodes[i]
	if n.master != cur.master || n.gen != cur.gen || int(cur.off) > len(n.buf) || cur.off < n.hdr {
		return
	}
	it.begun = true
	it.enterNode(i)
	it.off = int(cur.off)
}
