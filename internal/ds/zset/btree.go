package zset

// Node capacities, chosen to fill Go size classes. A leaf is a count plus
// leafCap (score, id) pairs of 12 bytes: 8 + 127*12 = 1532 bytes in the
// 1536-byte class. It holds no pointers, so the garbage collector neither
// scans it nor prefixes it with an 8-byte type header (which objects with
// pointers over 512 bytes get, and which would push a 1536-byte leaf into
// the 1792-byte class). Inner nodes are few (one per ~60 leaves): 63
// children make 3032 bytes + header in the 3072-byte class.
const (
	leafCap  = 127
	leafMin  = leafCap / 2
	innerCap = 63
	innerMin = innerCap / 2
)

// node is a *leaf or an *inner.
type node interface {
	// entries is the number of entries in the subtree. O(innerCap) for an
	// inner node; used only on splits and merges.
	entries() int
}

// leaf holds up to leafCap entries in order, as parallel arrays of scores
// and arena ids. Scores sit in the leaf so that most comparisons never
// leave it; members are fetched from the arena only to break score ties.
// There are no sibling links (they would be pointers): ranges walk with a
// path stack instead.
type leaf struct {
	n      int
	scores [leafCap]float64
	ids    [leafCap]uint32
}

// inner holds up to innerCap children.
//
// Invariant, for 1 <= j < n: every entry under kids[j-1] < keys[j] <= every
// entry under kids[j]. keys[0] is unused and kept zero. Keys are copies
// (score and member string), not arena ids, because an id may be reused
// after its member is deleted while a separator may legitimately stay
// stale: a stale separator still bounds correctly, which is all routing
// needs.
//
// counts[j] is the number of entries under kids[j]; prefix sums give ranks.
type inner struct {
	n      int
	counts [innerCap]int
	keys   [innerCap]Entry
	kids   [innerCap]node
}

func (l *leaf) entries() int { return l.n }

func (n *inner) entries() int {
	s := 0
	for _, c := range n.counts[:n.n] {
		s += c
	}
	return s
}

// tree is an order-statistic B+tree of distinct entries ordered by
// (score, member), whose members live in an arena.
type tree struct {
	a       *arena
	root    node
	size    int
	nleaves int // for memory estimates
	ninners int
}

func (t *tree) reset() {
	*t = tree{a: t.a, root: &leaf{}, nleaves: 1}
}

// key returns entry i of leaf l.
func (t *tree) key(l *leaf, i int) Entry {
	return Entry{t.a.member(l.ids[i]), l.scores[i]}
}

// lowerBound is the index of the first entry in l that is not less than e.
func (t *tree) lowerBound(l *leaf, e Entry) int {
	lo, hi := 0, l.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		s := l.scores[m]
		if s < e.Score || (s == e.Score && t.a.member(l.ids[m]) < e.Member) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// route is the child of n whose range holds e: the last j >= 1 with
// keys[j] <= e, or 0. Routing on <= (not <) matters: a stale separator may
// equal an entry being inserted again, which must then go right of it.
func (n *inner) route(e Entry) int {
	lo, hi := 1, n.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if less(e, n.keys[m]) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo - 1
}

// locate maps a rank within n to a child index and the rank inside it.
func (n *inner) locate(rank int) (int, int) {
	last := n.n - 1
	for i := 0; i < last; i++ {
		if rank < n.counts[i] {
			return i, rank
		}
		rank -= n.counts[i]
	}
	return last, rank
}

// rankOf is the number of entries less than e.
func (t *tree) rankOf(e Entry) int {
	rank := 0
	nd := t.root
	for {
		switch n := nd.(type) {
		case *inner:
			j := n.route(e)
			for _, c := range n.counts[:j] {
				rank += c
			}
			nd = n.kids[j]
		case *leaf:
			return rank + t.lowerBound(n, e)
		}
	}
}

// at returns the leaf and index holding the entry of the given rank,
// 0 <= rank < t.size.
func (t *tree) at(rank int) (*leaf, int) {
	nd := t.root
	for {
		switch n := nd.(type) {
		case *inner:
			var i int
			i, rank = n.locate(rank)
			nd = n.kids[i]
		case *leaf:
			return n, rank
		}
	}
}

// insert adds e, stored at arena id; e must not be in the tree.
func (t *tree) insert(e Entry, id uint32) {
	right, sep := t.insertInto(t.root, e, id, true, true)
	t.size++
	if right == nil {
		return
	}
	rc := right.entries()
	r := &inner{n: 2}
	r.kids[0], r.kids[1] = t.root, right
	r.counts[0], r.counts[1] = t.size-rc, rc
	r.keys[1] = sep
	t.root = r
	t.ninners++
}

// insertInto inserts e under nd. If nd had to split, it returns the new
// right sibling and the separator that goes before it. first and last tell
// whether nd is on the tree's left or right edge.
func (t *tree) insertInto(nd node, e Entry, id uint32, first, last bool) (node, Entry) {
	switch n := nd.(type) {
	case *leaf:
		return t.leafInsert(n, e, id, first, last)
	case *inner:
		i := n.route(e)
		right, sep := t.insertInto(n.kids[i], e, id, first && i == 0, last && i == n.n-1)
		n.counts[i]++
		if right == nil {
			return nil, Entry{}
		}
		rc := right.entries()
		n.counts[i] -= rc
		return t.innerInsert(n, i+1, right, sep, rc)
	}
	panic("zset: unknown node type")
}

func (l *leaf) insertAt(i int, score float64, id uint32) {
	copy(l.scores[i+1:l.n+1], l.scores[i:l.n])
	copy(l.ids[i+1:l.n+1], l.ids[i:l.n])
	l.scores[i], l.ids[i] = score, id
	l.n++
}

// move copies k entries from src[from:] to dst[to:].
func move(dst *leaf, to int, src *leaf, from, k int) {
	copy(dst.scores[to:to+k], src.scores[from:from+k])
	copy(dst.ids[to:to+k], src.ids[from:from+k])
}

// clearTail zeroes the unused slots from i up to n, so that a dump of a
// leaf shows only live entries (the leaf holds no pointers there, so this
// is tidiness, not memory safety).
func (l *leaf) clearTail(i, n int) {
	clear(l.scores[i:n])
	clear(l.ids[i:n])
}

// leafInsert inserts into leaf n; first and last tell whether n is the
// first or last leaf of the tree.
func (t *tree) leafInsert(n *leaf, e Entry, id uint32, first, last bool) (node, Entry) {
	i := t.lowerBound(n, e)
	if n.n < leafCap {
		n.insertAt(i, e.Score, id)
		return nil, Entry{}
	}
	r := &leaf{}
	t.nleaves++
	switch {
	case i == n.n && last:
		// Appending after the largest entry (rising timestamps, counters):
		// keep the left leaf full instead of leaving two half-empty ones.
		r.insertAt(0, e.Score, id)
	case i == 0 && first:
		// Prepending before the smallest entry: the mirror case.
		move(r, 0, n, 0, n.n)
		r.n = n.n
		n.clearTail(0, n.n)
		n.n = 0
		n.insertAt(0, e.Score, id)
	default:
		mid := leafCap / 2
		moved := n.n - mid
		move(r, 0, n, mid, moved)
		n.clearTail(mid, n.n)
		r.n, n.n = moved, mid
		if i <= mid {
			n.insertAt(i, e.Score, id)
		} else {
			r.insertAt(i-mid, e.Score, id)
		}
	}
	return r, t.key(r, 0)
}

func (n *inner) insertAt(i int, kid node, sep Entry, count int) {
	copy(n.kids[i+1:n.n+1], n.kids[i:n.n])
	copy(n.keys[i+1:n.n+1], n.keys[i:n.n])
	copy(n.counts[i+1:n.n+1], n.counts[i:n.n])
	n.kids[i], n.keys[i], n.counts[i] = kid, sep, count
	n.n++
}

// innerInsert puts kid at position i of n (i >= 1), splitting n if full.
func (t *tree) innerInsert(n *inner, i int, kid node, sep Entry, count int) (node, Entry) {
	if n.n < innerCap {
		n.insertAt(i, kid, sep, count)
		return nil, Entry{}
	}
	r := &inner{}
	t.ninners++
	mid := innerCap / 2
	r.n = n.n - mid
	copy(r.kids[:r.n], n.kids[mid:n.n])
	copy(r.keys[:r.n], n.keys[mid:n.n])
	copy(r.counts[:r.n], n.counts[mid:n.n])
	up := r.keys[0]
	r.keys[0] = Entry{}
	clear(n.kids[mid:n.n])
	clear(n.keys[mid:n.n])
	clear(n.counts[mid:n.n])
	n.n = mid
	if i <= mid {
		n.insertAt(i, kid, sep, count)
	} else {
		r.insertAt(i-mid, kid, sep, count)
	}
	return r, up
}

// build replaces the tree's contents with es, sorted and distinct, whose
// arena ids are firstID, firstID+1, ... Leaves and inner nodes are filled
// evenly, as full as possible.
func (t *tree) build(es []Entry, firstID uint32) {
	t.reset()
	if len(es) == 0 {
		return
	}
	t.size = len(es)
	nl := (len(es) + leafCap - 1) / leafCap
	level := make([]node, nl)
	firsts := make([]Entry, nl) // smallest entry under each node of level
	for i := range nl {
		lo, hi := i*len(es)/nl, (i+1)*len(es)/nl
		l := &leaf{n: hi - lo}
		for k := lo; k < hi; k++ {
			l.scores[k-lo], l.ids[k-lo] = es[k].Score, firstID+uint32(k)
		}
		level[i], firsts[i] = l, es[lo]
	}
	t.nleaves = nl
	for len(level) > 1 {
		ni := (len(level) + innerCap - 1) / innerCap
		up := make([]node, ni)
		upFirsts := make([]Entry, ni)
		for i := range ni {
			lo, hi := i*len(level)/ni, (i+1)*len(level)/ni
			n := &inner{n: hi - lo}
			for k := lo; k < hi; k++ {
				n.kids[k-lo] = level[k]
				n.counts[k-lo] = level[k].entries()
				if k > lo {
					n.keys[k-lo] = firsts[k]
				}
			}
			up[i], upFirsts[i] = n, firsts[lo]
		}
		t.ninners += ni
		level, firsts = up, upFirsts
	}
	t.root = level[0]
}

// deleteRange removes k entries starting at rank. rank+k <= t.size. The
// arena slots of the removed entries are the caller's to free.
func (t *tree) deleteRange(rank, k int) {
	if rank == 0 && k == t.size {
		t.reset()
		return
	}
	for k > 0 {
		d := t.deleteRun(t.root, rank, k)
		k -= d
		t.size -= d
		// Collapse a root left with a single child.
		for {
			r, ok := t.root.(*inner)
			if !ok || r.n != 1 {
				break
			}
			t.root = r.kids[0]
			t.ninners--
		}
	}
}

// deleteRun removes up to k entries starting at rank under nd, all from
// one leaf, and returns how many it removed. Each call costs one descent,
// so deleting M entries costs O((M/leafCap + 1) log N + M).
func (t *tree) deleteRun(nd node, rank, k int) int {
	switch n := nd.(type) {
	case *leaf:
		d := min(k, n.n-rank)
		move(n, rank, n, rank+d, n.n-rank-d)
		n.clearTail(n.n-d, n.n)
		n.n -= d
		return d
	case *inner:
		i, r := n.locate(rank)
		d := t.deleteRun(n.kids[i], r, k)
		n.counts[i] -= d
		t.fixChild(n, i)
		return d
	}
	panic("zset: unknown node type")
}

// removeKid drops child i of n.
func (n *inner) removeKid(i int) {
	copy(n.kids[i:], n.kids[i+1:n.n])
	copy(n.keys[i:], n.keys[i+1:n.n])
	copy(n.counts[i:], n.counts[i+1:n.n])
	n.n--
	n.kids[n.n], n.keys[n.n], n.counts[n.n] = nil, Entry{}, 0
	n.keys[0] = Entry{}
}

// fixChild restores child i of p after deletions below it: an empty child
// is dropped; an underfull one is merged with a sibling or takes entries
// from it.
func (t *tree) fixChild(p *inner, i int) {
	switch c := p.kids[i].(type) {
	case *leaf:
		if c.n == 0 {
			t.nleaves--
			p.removeKid(i)
			return
		}
		if c.n >= leafMin || p.n < 2 {
			return
		}
		j := max(i-1, 0)
		a, b := p.kids[j].(*leaf), p.kids[j+1].(*leaf)
		if a.n+b.n <= leafCap {
			move(a, a.n, b, 0, b.n)
			a.n += b.n
			t.nleaves--
			p.counts[j] += p.counts[j+1]
			p.removeKid(j + 1)
			return
		}
		balanceLeaves(a, b)
		p.counts[j], p.counts[j+1] = a.n, b.n
		p.keys[j+1] = t.key(b, 0)
	case *inner:
		if c.n == 0 {
			p.removeKid(i)
			t.ninners--
			return
		}
		if c.n >= innerMin || p.n < 2 {
			return
		}
		j := max(i-1, 0)
		a, b := p.kids[j].(*inner), p.kids[j+1].(*inner)
		if a.n+b.n <= innerCap {
			mergeInner(a, b, p.keys[j+1])
			t.ninners--
			p.counts[j] += p.counts[j+1]
			p.removeKid(j + 1)
			return
		}
		p.keys[j+1] = balanceInner(a, b, p.keys[j+1])
		p.counts[j], p.counts[j+1] = a.entries(), b.entries()
	}
}

// balanceLeaves evens out two adjacent leaves.
func balanceLeaves(a, b *leaf) {
	target := (a.n + b.n) / 2
	if a.n > target {
		m := a.n - target
		move(b, m, b, 0, b.n)
		move(b, 0, a, target, m)
		a.clearTail(target, a.n)
		a.n, b.n = target, b.n+m
		return
	}
	m := target - a.n
	move(a, a.n, b, 0, m)
	move(b, 0, b, m, b.n-m)
	b.clearTail(b.n-m, b.n)
	a.n, b.n = target, b.n-m
}

// mergeInner appends b's children to a; sep is the parent's separator
// between them and becomes the separator before b's first child.
func mergeInner(a, b *inner, sep Entry) {
	copy(a.kids[a.n:], b.kids[:b.n])
	copy(a.counts[a.n:], b.counts[:b.n])
	copy(a.keys[a.n:], b.keys[:b.n])
	a.keys[a.n] = sep
	a.n += b.n
}

// balanceInner evens out two adjacent inner nodes by rotating children
// through the parent's separator sep, and returns the new separator.
func balanceInner(a, b *inner, sep Entry) Entry {
	target := (a.n + b.n) / 2
	if a.n > target {
		m := a.n - target
		copy(b.kids[m:b.n+m], b.kids[:b.n])
		copy(b.keys[m:b.n+m], b.keys[:b.n])
		copy(b.counts[m:b.n+m], b.counts[:b.n])
		copy(b.kids[:m], a.kids[target:a.n])
		copy(b.keys[:m], a.keys[target:a.n])
		copy(b.counts[:m], a.counts[target:a.n])
		b.keys[m] = sep
		sep = b.keys[0]
		b.keys[0] = Entry{}
		clear(a.kids[target:a.n])
		clear(a.keys[target:a.n])
		clear(a.counts[target:a.n])
		a.n, b.n = target, b.n+m
		return sep
	}
	m := target - a.n
	copy(a.kids[a.n:target], b.kids[:m])
	copy(a.keys[a.n:target], b.keys[:m])
	copy(a.counts[a.n:target], b.counts[:m])
	a.keys[a.n] = sep
	sep = b.keys[m]
	copy(b.kids[:], b.kids[m:b.n])
	copy(b.keys[:], b.keys[m:b.n])
	copy(b.counts[:], b.counts[m:b.n])
	clear(b.kids[b.n-m : b.n])
	clear(b.keys[b.n-m : b.n])
	clear(b.counts[b.n-m : b.n])
	b.keys[0] = Entry{}
	a.n, b.n = target, b.n-m
	return sep
}
