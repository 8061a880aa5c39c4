package zset

// MemberRef stands for an entry's member without reading it: in the
// large encoding the members live in the arena, away from the leaves'
// scores, so a scan that filters by score (GEOSEARCH's distance test)
// reads a member only for the entries it keeps.
type MemberRef struct {
	a  *arena
	id uint32
	m  string
}

// Member returns the member. Like the Span it came from, a MemberRef must
// not be used across a modification of its set.
func (r MemberRef) Member() string {
	if r.a == nil {
		return r.m
	}
	return r.a.member(r.id)
}

// WalkScores is Walk handing out each entry's score and a reference to
// its member, in the span's order, until yield returns false.
func (sp *Span) WalkScores(yield func(score float64, m MemberRef) bool) {
	if sp.n <= 0 {
		return
	}
	s := sp.s
	if s.big == nil {
		step, end := 1, sp.first+sp.n
		if sp.reverse {
			step, end = -1, sp.first-sp.n
		}
		for i := sp.first; i != end; i += step {
			if !yield(s.list[i].Score, MemberRef{m: s.list[i].Member}) {
				return
			}
		}
		return
	}
	t := &s.big.t
	cur := sp.cur
	if !sp.seeked {
		cur = t.seekRank(sp.first)
	}
	a := t.a
	cur.walk(sp.n, sp.reverse, func(id uint32, score float64) bool {
		return yield(score, MemberRef{a: a, id: id})
	})
}
