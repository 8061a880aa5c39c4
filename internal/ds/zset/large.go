package zset

// large is the large encoding: members in an arena, found by the hash
// index, ordered by the B+tree. See the package comment for the reasoning.
type large struct {
	a   arena
	idx index
	t   tree
}

func newLarge(sizeHint int) *large {
	b := &large{}
	b.reset(sizeHint)
	return b
}

func (b *large) reset(sizeHint int) {
	b.a = arena{hint: max(sizeHint, 0)}
	b.idx.init(sizeHint)
	b.t.a = &b.a
	b.t.reset()
}

// build replaces the contents with es, sorted and distinct.
func (b *large) build(es []Entry) {
	b.reset(len(es))
	for _, e := range es {
		b.idx.insert(hash32(e.Member), b.a.alloc(e.Member, e.Score))
	}
	b.t.build(es, 0)
}

func (b *large) find(member string) (*slot, uint32, bool) {
	id, ok := b.idx.find(hash32(member), member, &b.a)
	if !ok {
		return nil, 0, false
	}
	return b.a.at(id), id, true
}

func (b *large) score(member string) (float64, bool) {
	s, _, ok := b.find(member)
	if !ok {
		return 0, false
	}
	return s.score, true
}

func (b *large) add(member string, score float64) AddResult {
	h := hash32(member)
	if id, ok := b.idx.find(h, member, &b.a); ok {
		s := b.a.at(id)
		if s.score == score {
			return Unchanged
		}
		// Keep the stored member string: the caller's copy can be dropped.
		b.t.deleteRange(b.t.rankOf(Entry{s.member, s.score}), 1)
		s.score = score
		b.t.insert(Entry{s.member, score}, id)
		return Updated
	}
	id := b.a.alloc(member, score)
	b.idx.insert(h, id)
	b.t.insert(Entry{member, score}, id)
	return Added
}

func (b *large) delete(member string) bool {
	h := hash32(member)
	id, ok := b.idx.find(h, member, &b.a)
	if !ok {
		return false
	}
	s := b.a.at(id)
	b.t.deleteRange(b.t.rankOf(Entry{s.member, s.score}), 1)
	b.idx.remove(h, id)
	b.a.release(id)
	b.maybeCompact()
	return true
}

// compactMinIDs is the arena size below which compaction is not worth it.
const compactMinIDs = 4096

// maybeCompact rebuilds the arena, index and tree once three quarters of
// the arena's ids are free: neither the arena nor the index shrinks by
// itself, and a set drained from a million members to a thousand should
// not keep a million members' worth of memory. The rebuild is O(live
// members) and happens only after three times as many deletions, so it is
// O(1) amortized; its worst single pause is proportional to the set's
// size at that moment.
func (b *large) maybeCompact() {
	if b.a.top < compactMinIDs || b.t.size*4 > int(b.a.top) {
		return
	}
	es := make([]Entry, 0, b.t.size)
	b.walk(0, b.t.size, false, func(m string, sc float64) bool {
		es = append(es, Entry{m, sc})
		return true
	})
	b.build(es)
}

func (b *large) rank(member string) (int, bool) {
	s, _, ok := b.find(member)
	if !ok {
		return 0, false
	}
	return b.t.rankOf(Entry{s.member, s.score}), true
}

func (b *large) at(rank int) Entry {
	l, i := b.t.at(rank)
	return b.t.key(l, i)
}

func (b *large) walk(lo, hi int, reverse bool, yield func(string, float64) bool) {
	b.t.walk(lo, hi, reverse, func(id uint32, score float64) bool {
		return yield(b.a.member(id), score)
	})
}

// removeSpan removes ascending ranks [lo, hi), calling gone with each
// removed member.
func (b *large) removeSpan(lo, hi int, gone func(member string)) {
	if lo == 0 && hi == b.t.size {
		b.reset(0)
		return
	}
	b.t.walk(lo, hi, false, func(id uint32, _ float64) bool {
		m := b.a.member(id)
		gone(m)
		b.idx.remove(hash32(m), id)
		b.a.release(id)
		return true
	})
	b.t.deleteRange(lo, hi-lo)
	b.maybeCompact()
}

// bytes estimates the heap held, member strings excluded.
func (b *large) bytes() int {
	x := &b.idx
	return largeSize + b.a.bytes() + x.slots*8 + len(x.dir)*8 + x.n*htableSize +
		b.t.nleaves*leafSize + b.t.ninners*innerSize
}
