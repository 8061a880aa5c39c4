package engine

import (
	"slices"

	"github.com/abacusdb/abacus/internal/glob"
)

// PUBLISH finds the patterns that may match a channel by their literal
// prefixes (the part before the first special character, which every
// channel a pattern matches starts with): with many patterns it looks up
// the channel's prefixes of each length some literal prefix has in a map
// from literal prefix to patterns, instead of testing every pattern's
// prefix, so that 1,000 patterns cost a few map lookups per PUBLISH
// rather than 1,000 comparisons. Only the candidates are glob-matched.

// patIndexMin is the number of patterns from which the index is built;
// below it a comparison per pattern costs less than the lookups.
const patIndexMin = 16

// patIndex maps the literal prefixes to the patterns' positions in
// notifyPats.pats; lens are the prefixes' distinct lengths, ascending.
type patIndex struct {
	byLit map[string][]int32
	lens  []int
}

// build indexes np's patterns, or clears the index when they are few.
func (x *patIndex) build(lits []string) {
	x.byLit, x.lens = nil, x.lens[:0]
	if len(lits) < patIndexMin {
		return
	}
	x.byLit = make(map[string][]int32, len(lits))
	for i, l := range lits {
		if _, ok := x.byLit[l]; !ok {
			x.lens = append(x.lens, len(l))
		}
		x.byLit[l] = append(x.byLit[l], int32(i))
	}
	slices.Sort(x.lens)
	x.lens = slices.Compact(x.lens)
}

// matching calls fn with each of np's patterns that matches channel, in
// a fixed order for a generation of the patterns. The channel may be a
// command's argument: nothing here keeps it or makes a string of it.
func matching[T string | []byte](np *notifyPats, channel T, fn func(pat string)) {
	if np.idx.byLit == nil {
		for i, pat := range np.pats {
			if lit := np.lits[i]; len(channel) >= len(lit) && string(channel[:len(lit)]) == lit && glob.Match(pat, channel, false) {
				fn(pat)
			}
		}
		return
	}
	for _, n := range np.idx.lens {
		if n > len(channel) {
			break
		}
		for _, i := range np.idx.byLit[string(channel[:n])] {
			if pat := np.pats[i]; glob.Match(pat, channel, false) {
				fn(pat)
			}
		}
	}
}
