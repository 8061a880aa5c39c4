package zset

import "slices"

// FromDistinct builds a set from entries in any order (a loaded file's),
// reporting ok false when a member repeats. It takes ownership of es,
// which becomes the compact encoding's list when the set is compact, so
// es should be allocated at its length; members may share one block of
// memory then, as the compact form's listpack does in Redis. Scores must
// not be NaN.
//
// Unlike FromEntries it adds no member one by one: a compact set costs
// one sort, and no slice grows.
func FromDistinct(es []Entry, lim Limits) (s *Set, ok bool) {
	maxLen := 0
	for _, e := range es {
		maxLen = max(maxLen, len(e.Member))
	}
	if !lim.fits(len(es), maxLen) {
		s = FromEntries(es, lim)
		return s, s.Len() == len(es)
	}
	if hasRepeats(es) {
		return nil, false
	}
	for _, e := range es {
		checkScore(e.Score)
	}
	slices.SortFunc(es, compare)
	s = &Set{lim: lim}
	s.account(es, 1)
	if s.bytes > compactMaxBytes {
		s.big = newLarge(len(es))
		s.big.build(es)
		return s, true
	}
	s.list = es
	return s, true
}

// hasRepeats reports whether a member appears twice in es: by comparing
// every pair for a few entries, by sorting the members for more.
func hasRepeats(es []Entry) bool {
	if len(es) <= 16 {
		for i := 1; i < len(es); i++ {
			for j := range i {
				if es[i].Member == es[j].Member {
					return true
				}
			}
		}
		return false
	}
	ms := make([]string, len(es))
	for i, e := range es {
		ms[i] = e.Member
	}
	slices.Sort(ms)
	for i := 1; i < len(ms); i++ {
		if ms[i] == ms[i-1] {
			return true
		}
	}
	return false
}
