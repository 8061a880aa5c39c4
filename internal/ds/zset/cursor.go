package zset

// A cursor is a position in the B+tree: the path from the root down to a
// leaf and an index in that leaf. The leaves have no sibling links (they
// would be pointers), so moving to the next leaf climbs the path only as
// far as needed and comes down again: O(1) amortized per leaf.
//
// A range query descends once, by its bound, and keeps the cursor: the
// walk that follows starts from it instead of descending again by rank.

// step is one level of a path from the root: a node and a child index.
type step struct {
	n *inner
	i int
}

// maxDepth bounds the height: non-root inner nodes have at least innerMin
// children, so 12 levels would hold more than 2^64 entries.
const maxDepth = 12

// cursor is a leaf, an index in it and the path that leads there. After
// seekCut the index may equal l.n: the position just past the leaf's last
// entry, which is the next leaf's first (or the end of the tree).
type cursor struct {
	path  [maxDepth]step
	depth int
	l     *leaf
	i     int
}

// seekRank returns a cursor at rank, 0 <= rank < t.size.
func (t *tree) seekRank(rank int) (cur cursor) {
	nd := t.root
	for {
		n, ok := nd.(*inner)
		if !ok {
			break
		}
		var i int
		i, rank = n.locate(rank)
		cur.path[cur.depth] = step{n, i}
		cur.depth++
		nd = n.kids[i]
	}
	cur.l, cur.i = nd.(*leaf), rank
	return cur
}

// seekCut returns a cursor at the first entry that is not before the cut
// c, and that entry's rank: the number of entries before c (t.size, with
// the cursor past the last leaf's end, if every entry is before c).
func (t *tree) seekCut(c *cut) (cur cursor, rank int) {
	nd := t.root
	for {
		n, ok := nd.(*inner)
		if !ok {
			break
		}
		// Descend into the last child whose separator is before the cut:
		// everything left of it is before, everything right of it is not.
		lo, hi := 1, n.n
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if c.beforeEntry(n.keys[m]) {
				lo = m + 1
			} else {
				hi = m
			}
		}
		j := lo - 1
		for _, cnt := range n.counts[:j] {
			rank += cnt
		}
		cur.path[cur.depth] = step{n, j}
		cur.depth++
		nd = n.kids[j]
	}
	l := nd.(*leaf)
	lo, hi := 0, l.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.beforeLeaf(l.scores[m], l.ids[m], t.a) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	cur.l, cur.i = l, lo
	return cur, rank + lo
}

// countBefore is the number of entries before the cut c.
func (t *tree) countBefore(c *cut) int {
	switch c.by {
	case cutNone:
		return 0
	case cutAll:
		return t.size
	}
	_, rank := t.seekCut(c)
	return rank
}

// next moves the cursor to the first entry of the following leaf (or the
// last entry of the preceding one, if reverse). There must be one.
func (cur *cursor) next(reverse bool) {
	path := cur.path[:cur.depth]
	d := len(path) - 1
	for ; d >= 0; d-- {
		p := &path[d]
		if reverse && p.i > 0 {
			p.i--
			break
		}
		if !reverse && p.i+1 < p.n.n {
			p.i++
			break
		}
	}
	nd := path[d].n.kids[path[d].i]
	for d++; d < len(path); d++ {
		n := nd.(*inner)
		i := 0
		if reverse {
			i = n.n - 1
		}
		path[d] = step{n, i}
		nd = n.kids[i]
	}
	cur.l = nd.(*leaf)
	cur.i = 0
	if reverse {
		cur.i = cur.l.n - 1
	}
}

// walk calls yield for k entries from the cursor's on, ascending or
// descending, until yield returns false. The cursor must be at an entry
// (i < l.n) and k entries must exist in that direction. The cursor moves.
func (cur *cursor) walk(k int, reverse bool, yield func(id uint32, score float64) bool) {
	if k <= 0 {
		return
	}
	for {
		l, i := cur.l, cur.i
		if reverse {
			for ; i >= 0; i-- {
				if !yield(l.ids[i], l.scores[i]) {
					return
				}
				if k--; k == 0 {
					return
				}
			}
		} else {
			for ; i < l.n; i++ {
				if !yield(l.ids[i], l.scores[i]) {
					return
				}
				if k--; k == 0 {
					return
				}
			}
		}
		cur.next(reverse)
	}
}

// countWithin counts the entries from the cursor's on, ascending or
// descending, that lie on the range's side of the cut stop: before it
// when ascending, not before it when descending. It stops at the first
// entry outside and after max entries; max entries must exist in that
// direction. The cursor moves. Scores are compared in the leaves, so a
// score range never visits the arena.
func (t *tree) countWithin(cur *cursor, reverse bool, stop *cut, max int) int {
	// A range that is open at that end (+inf, -inf, "+", "-") needs no
	// scan.
	if (!reverse && stop.beforeAll()) || (reverse && stop.beforeNone()) {
		return max
	}
	n := 0
	for n < max {
		l, i := cur.l, cur.i
		if reverse {
			for ; i >= 0 && n < max; i-- {
				if stop.beforeLeaf(l.scores[i], l.ids[i], t.a) {
					return n
				}
				n++
			}
		} else {
			for ; i < l.n && n < max; i++ {
				if !stop.beforeLeaf(l.scores[i], l.ids[i], t.a) {
					return n
				}
				n++
			}
		}
		if n < max {
			cur.next(reverse)
		}
	}
	return n
}

// walk calls yield for ranks [lo, hi), ascending or descending, until
// yield returns false. 0 <= lo <= hi <= t.size.
func (t *tree) walk(lo, hi int, reverse bool, yield func(id uint32, score float64) bool) {
	if hi <= lo {
		return
	}
	rank := lo
	if reverse {
		rank = hi - 1
	}
	cur := t.seekRank(rank)
	cur.walk(hi-lo, reverse, yield)
}
