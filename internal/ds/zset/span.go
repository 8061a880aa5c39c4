package zset

// Span is the answer to a range query: the number of entries it holds,
// known before they are walked, and a walk over them. A reply can write
// its length first and then stream the entries, with no slice between the
// set and the connection's buffer.
//
// The zero Span is empty. Like an iterator, a Span must not be used across
// a modification of its set.
type Span struct {
	s       *Set
	n       int // entries in the span
	first   int // ascending rank of the first entry in iteration order
	reverse bool
	seeked  bool   // cur is at the first entry (large encoding only)
	cur     cursor // saves the walk a second descent
}

// Len is the number of entries Walk yields.
func (sp *Span) Len() int { return sp.n }

// Walk calls yield with each entry's member and score, in the span's
// order, until yield returns false. It can be called more than once.
func (sp *Span) Walk(yield func(member string, score float64) bool) {
	if sp.n <= 0 {
		return
	}
	s := sp.s
	if s.big == nil {
		if sp.reverse {
			for i := sp.first; i > sp.first-sp.n; i-- {
				if !yield(s.list[i].Member, s.list[i].Score) {
					return
				}
			}
			return
		}
		for i := sp.first; i < sp.first+sp.n; i++ {
			if !yield(s.list[i].Member, s.list[i].Score) {
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
		return yield(a.member(id), score)
	})
}

// ranks is the span of ascending ranks [lo, hi), walked downwards if
// reverse.
func (s *Set) ranks(lo, hi int, reverse bool) Span {
	if hi <= lo {
		return Span{}
	}
	first := lo
	if reverse {
		first = hi - 1
	}
	return Span{s: s, n: hi - lo, first: first, reverse: reverse}
}

// SpanByRank is the span of inclusive ranks [start, stop], counted from
// the highest score and in descending order if reverse. Ranks out of
// range are clamped; negative ranks are not "from the end".
func (s *Set) SpanByRank(start, stop int, reverse bool) Span {
	lo, hi := s.rankSpan(start, stop, reverse)
	return s.ranks(lo, hi, reverse)
}

// SpanByScore is the span of the entries within r, ascending, or
// descending if reverse, after skipping offset of them and keeping at most
// limit (all if limit < 0). A negative offset selects nothing.
func (s *Set) SpanByScore(r ScoreRange, reverse bool, offset, limit int) Span {
	return s.spanCuts(r.lowCut(), r.highCut(), reverse, offset, limit)
}

// SpanByLex is SpanByScore for a lexicographic range.
func (s *Set) SpanByLex(r LexRange, reverse bool, offset, limit int) Span {
	return s.spanCuts(r.Min.lowCut(), r.Max.highCut(), reverse, offset, limit)
}

// spanCuts finds the span between two cuts. Without a limit it counts the
// range by ranks: a descent for each cut, O(log N) whatever the range's
// size. With one (LIMIT, as in ZRANGEBYSCORE ... LIMIT 0 100) it descends
// once to the end the walk starts from, as Redis's zslNthInRange does,
// and counts the at most limit entries from there by scanning the leaves'
// scores; the walk then continues from the same cursor.
func (s *Set) spanCuts(low, high cut, reverse bool, offset, limit int) Span {
	if s.big == nil || limit < 0 {
		lo, hi := s.span(low, high)
		lo, hi = window(lo, hi, reverse, offset, limit)
		return s.ranks(lo, hi, reverse)
	}
	if offset < 0 || limit == 0 {
		return Span{}
	}
	t := &s.big.t
	sp := Span{s: s, reverse: reverse, seeked: true}
	var avail int // entries from first on, in the walk's direction
	if reverse {
		cur, hi := t.seekCut(&high)
		if offset >= hi {
			return Span{}
		}
		sp.first, avail = hi-1-offset, hi-offset
		if cur.i-1-offset >= 0 {
			cur.i -= 1 + offset
		} else {
			cur = t.seekRank(sp.first)
		}
		sp.cur = cur
		sp.n = t.countWithin(&cur, true, &low, min(limit, avail))
		return sp
	}
	cur, lo := t.seekCut(&low)
	if offset >= t.size-lo {
		return Span{}
	}
	sp.first, avail = lo+offset, t.size-lo-offset
	if cur.i+offset < cur.l.n {
		cur.i += offset
	} else {
		cur = t.seekRank(sp.first)
	}
	sp.cur = cur
	sp.n = t.countWithin(&cur, false, &high, min(limit, avail))
	return sp
}
