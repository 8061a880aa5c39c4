package zset

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// model is the naive reference: a sorted slice, every operation by brute
// force.
type model struct {
	es []Entry
}

func (m *model) find(member string) int {
	for i, e := range m.es {
		if e.Member == member {
			return i
		}
	}
	return -1
}

func (m *model) add(member string, score float64) AddResult {
	res := Added
	if i := m.find(member); i >= 0 {
		if m.es[i].Score == score {
			return Unchanged
		}
		m.es = slices.Delete(m.es, i, i+1)
		res = Updated
	}
	e := Entry{member, score}
	i, _ := slices.BinarySearchFunc(m.es, e, compare)
	m.es = slices.Insert(m.es, i, e)
	return res
}

func (m *model) del(member string) bool {
	i := m.find(member)
	if i < 0 {
		return false
	}
	m.es = slices.Delete(m.es, i, i+1)
	return true
}

func (m *model) score(member string) (float64, bool) {
	if i := m.find(member); i >= 0 {
		return m.es[i].Score, true
	}
	return 0, false
}

func (m *model) rank(member string, reverse bool) (int, bool) {
	i := m.find(member)
	if i < 0 {
		return 0, false
	}
	if reverse {
		i = len(m.es) - 1 - i
	}
	return i, true
}

// ordered yields the entries in iteration order.
func (m *model) ordered(reverse bool) func(func(int, Entry) bool) {
	return func(yield func(int, Entry) bool) {
		for i := range m.es {
			j := i
			if reverse {
				j = len(m.es) - 1 - i
			}
			if !yield(i, m.es[j]) {
				return
			}
		}
	}
}

func (m *model) byRank(start, stop int, reverse bool) []Entry {
	var out []Entry
	for i, e := range m.ordered(reverse) {
		if i >= start && i <= stop {
			out = append(out, e)
		}
	}
	return out
}

func inScore(r ScoreRange, x float64) bool {
	okMin := x > r.Min || (!r.MinExclusive && x == r.Min)
	okMax := x < r.Max || (!r.MaxExclusive && x == r.Max)
	return okMin && okMax
}

func inLex(r LexRange, m string) bool {
	var okMin, okMax bool
	switch r.Min.Kind {
	case LexNegInf:
		okMin = true
	case LexPosInf:
		okMin = false
	case LexInclusive:
		okMin = m >= r.Min.Value
	case LexExclusive:
		okMin = m > r.Min.Value
	}
	switch r.Max.Kind {
	case LexNegInf:
		okMax = false
	case LexPosInf:
		okMax = true
	case LexInclusive:
		okMax = m <= r.Max.Value
	case LexExclusive:
		okMax = m < r.Max.Value
	}
	return okMin && okMax
}

func limitOffset(es []Entry, offset, limit int) []Entry {
	if offset < 0 || offset >= len(es) {
		return nil
	}
	es = es[offset:]
	if limit >= 0 && limit < len(es) {
		es = es[:limit]
	}
	return es
}

func (m *model) byScore(r ScoreRange, reverse bool, offset, limit int) []Entry {
	var out []Entry
	for _, e := range m.ordered(reverse) {
		if inScore(r, e.Score) {
			out = append(out, e)
		}
	}
	return limitOffset(out, offset, limit)
}

func (m *model) byLex(r LexRange, reverse bool, offset, limit int) []Entry {
	var out []Entry
	for _, e := range m.ordered(reverse) {
		if inLex(r, e.Member) {
			out = append(out, e)
		}
	}
	return limitOffset(out, offset, limit)
}

// deleteIf removes the entries matching keep==false and returns how many.
func (m *model) deleteIf(drop func(i int, e Entry) bool) int {
	var kept []Entry
	for i, e := range m.es {
		if !drop(i, e) {
			kept = append(kept, e)
		}
	}
	n := len(m.es) - len(kept)
	m.es = kept
	return n
}

func collect(seq func(func(string, float64) bool)) []Entry {
	var out []Entry
	for m, sc := range seq {
		out = append(out, Entry{m, sc})
	}
	return out
}

// sameEntries compares entries exactly, score bits included (so -0 is not
// +0).
func sameEntries(a, b []Entry) bool {
	return slices.EqualFunc(a, b, func(x, y Entry) bool {
		return x.Member == y.Member && math.Float64bits(x.Score) == math.Float64bits(y.Score)
	})
}

func fmtEntries(es []Entry) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, e := range es {
		if i > 0 {
			b.WriteByte(' ')
		}
		if i == 20 {
			fmt.Fprintf(&b, "... (%d)", len(es))
			break
		}
		fmt.Fprintf(&b, "%q:%v", e.Member, e.Score)
	}
	b.WriteByte(']')
	return b.String()
}

// checkInvariants verifies the set's internal structure against itself and
// against want (nil to skip the comparison).
func checkInvariants(t testing.TB, s *Set, want []Entry) {
	t.Helper()
	if err := invariantError(s, want); err != nil {
		t.Fatal(err)
	}
}

func invariantError(s *Set, want []Entry) error {
	var got []Entry
	if s.big == nil {
		got = s.list
		if len(s.list) > 0 && s.list == nil {
			return fmt.Errorf("nil list")
		}
	} else {
		var err error
		got, err = checkTree(&s.big.t)
		if err != nil {
			return err
		}
		if err := checkLargeStore(s.big, got); err != nil {
			return err
		}
	}
	for i := 1; i < len(got); i++ {
		if !less(got[i-1], got[i]) {
			return fmt.Errorf("entries out of order at %d: %v, %v", i, got[i-1], got[i])
		}
	}
	if s.Len() != len(got) {
		return fmt.Errorf("Len() = %d, have %d entries", s.Len(), len(got))
	}
	bytes, alloc := 0, 0
	for _, e := range got {
		bytes += len(e.Member)
		alloc += stringAlloc(len(e.Member))
	}
	if bytes != s.bytes || alloc != s.alloc {
		return fmt.Errorf("bytes/alloc = %d/%d, want %d/%d", s.bytes, s.alloc, bytes, alloc)
	}
	if want != nil && !sameEntries(got, want) {
		return fmt.Errorf("contents differ:\n got  %s\n want %s", fmtEntries(got), fmtEntries(want))
	}
	return nil
}

// checkTree verifies the B+tree and returns its entries in order.
func checkTree(t *tree) ([]Entry, error) {
	var leaves []*leaf
	ninners := 0
	leafDepth := -1
	var visit func(nd node, depth int, isRoot bool) ([]Entry, error)
	visit = func(nd node, depth int, isRoot bool) ([]Entry, error) {
		switch n := nd.(type) {
		case *leaf:
			if leafDepth < 0 {
				leafDepth = depth
			} else if leafDepth != depth {
				return nil, fmt.Errorf("leaves at depths %d and %d", leafDepth, depth)
			}
			if n.n == 0 && !isRoot {
				return nil, fmt.Errorf("empty non-root leaf")
			}
			for i := n.n; i < leafCap; i++ {
				if n.scores[i] != 0 || n.ids[i] != 0 {
					return nil, fmt.Errorf("leaf slot %d beyond n=%d not cleared", i, n.n)
				}
			}
			leaves = append(leaves, n)
			es := make([]Entry, n.n)
			for i := range es {
				if n.ids[i] >= t.a.top {
					return nil, fmt.Errorf("leaf id %d beyond arena top %d", n.ids[i], t.a.top)
				}
				sl := t.a.at(n.ids[i])
				if math.Float64bits(sl.score) != math.Float64bits(n.scores[i]) {
					return nil, fmt.Errorf("leaf score %v, arena slot %d has %v", n.scores[i], n.ids[i], sl.score)
				}
				es[i] = t.key(n, i)
			}
			return es, nil
		case *inner:
			ninners++
			if n.n < 1 || (isRoot && n.n < 2) {
				return nil, fmt.Errorf("inner node with %d children (root %v)", n.n, isRoot)
			}
			if n.keys[0] != (Entry{}) {
				return nil, fmt.Errorf("inner keys[0] not cleared")
			}
			for i := n.n; i < innerCap; i++ {
				if n.kids[i] != nil || n.keys[i] != (Entry{}) || n.counts[i] != 0 {
					return nil, fmt.Errorf("inner slot %d beyond n=%d not cleared", i, n.n)
				}
			}
			var all []Entry
			for j := 0; j < n.n; j++ {
				es, err := visit(n.kids[j], depth+1, false)
				if err != nil {
					return nil, err
				}
				if len(es) != n.counts[j] {
					return nil, fmt.Errorf("counts[%d] = %d, subtree has %d", j, n.counts[j], len(es))
				}
				if j > 0 {
					if len(all) > 0 && !less(all[len(all)-1], n.keys[j]) {
						return nil, fmt.Errorf("separator %v not above left entry %v", n.keys[j], all[len(all)-1])
					}
					if less(es[0], n.keys[j]) {
						return nil, fmt.Errorf("separator %v above right entry %v", n.keys[j], es[0])
					}
				}
				all = append(all, es...)
			}
			return all, nil
		}
		return nil, fmt.Errorf("unknown node %T", nd)
	}
	es, err := visit(t.root, 0, true)
	if err != nil {
		return nil, err
	}
	if len(es) != t.size {
		return nil, fmt.Errorf("size = %d, tree holds %d", t.size, len(es))
	}
	if len(leaves) != t.nleaves || ninners != t.ninners {
		return nil, fmt.Errorf("nleaves/ninners = %d/%d, counted %d/%d", t.nleaves, t.ninners, len(leaves), ninners)
	}
	return es, nil
}

// checkLargeStore verifies the arena and the hash index against the
// tree's entries.
func checkLargeStore(b *large, es []Entry) error {
	a, x := &b.a, &b.idx
	if b.t.a != a {
		return fmt.Errorf("tree does not use the set's arena")
	}
	// Free list: every id not in the tree, each once, with empty slots.
	free := map[uint32]bool{}
	for f := a.free; f != 0; {
		id := f - 1
		if free[id] || id >= a.top {
			return fmt.Errorf("free list broken at id %d", id)
		}
		free[id] = true
		sl := a.at(id)
		if sl.member != "" {
			return fmt.Errorf("free slot %d keeps member %q", id, sl.member)
		}
		f = uint32(math.Float64bits(sl.score))
	}
	if len(free)+len(es) != int(a.top) {
		return fmt.Errorf("arena: %d free + %d live != top %d", len(free), len(es), a.top)
	}
	// Index: one entry per member, in the table its hash selects.
	for _, e := range es {
		id, ok := x.find(hash32(e.Member), e.Member, a)
		if !ok || free[id] || a.member(id) != e.Member {
			return fmt.Errorf("index lookup of %q = %d %v", e.Member, id, ok)
		}
	}
	if len(x.dir) != 1<<x.depth {
		return fmt.Errorf("directory of %d entries at depth %d", len(x.dir), x.depth)
	}
	tables := map[*htable]bool{}
	used, slots := 0, 0
	for i := 0; i < len(x.dir); {
		tb := x.dir[i]
		if tables[tb] {
			return fmt.Errorf("table at directory %d appears in two runs", i)
		}
		tables[tb] = true
		run := 1 << (x.depth - tb.depth)
		if i%run != 0 {
			return fmt.Errorf("table run at %d not aligned to %d", i, run)
		}
		for k := i; k < i+run; k++ {
			if x.dir[k] != tb {
				return fmt.Errorf("directory %d: run of %d broken", i, run)
			}
		}
		n := 0
		mask := uint32(len(tb.slots) - 1)
		for pos, sl := range tb.slots {
			if sl == 0 {
				continue
			}
			n++
			h, id := uint32(sl>>32), uint32(sl)-1
			if free[id] || id >= a.top || hash32(a.member(id)) != h {
				return fmt.Errorf("stale index slot for id %d", id)
			}
			if x.table(h) != tb {
				return fmt.Errorf("id %d in the wrong table", id)
			}
			// Linear probing: no empty slot between home and pos.
			for p := h & mask; p != uint32(pos); p = (p + 1) & mask {
				if tb.slots[p] == 0 {
					return fmt.Errorf("hole in the probe run of id %d", id)
				}
			}
		}
		if n != tb.used {
			return fmt.Errorf("table used = %d, holds %d", tb.used, n)
		}
		used += n
		slots += len(tb.slots)
		i += run
	}
	if used != len(es) || slots != x.slots || len(tables) != x.n {
		return fmt.Errorf("index holds %d of %d; slots %d (counted %d); tables %d (counted %d)", used, len(es), x.slots, slots, x.n, len(tables))
	}
	return nil
}
