package zset

import "math"

// ScoreRange selects entries by score, like the min and max arguments of
// ZRANGEBYSCORE: Min and Max are each inclusive unless marked exclusive.
// Infinities are allowed. A range with Min > Max, or Min == Max with either
// end exclusive, is empty.
type ScoreRange struct {
	Min, Max                   float64
	MinExclusive, MaxExclusive bool
}

// lowCut and highCut delimit the range: it holds the entries before
// highCut and not before lowCut.
func (r ScoreRange) lowCut() cut  { return cut{by: cutScore, score: r.Min, incl: r.MinExclusive} }
func (r ScoreRange) highCut() cut { return cut{by: cutScore, score: r.Max, incl: !r.MaxExclusive} }

// Contains reports whether score lies within the range.
func (r ScoreRange) Contains(score float64) bool {
	e := Entry{Score: score}
	lo, hi := r.lowCut(), r.highCut()
	return !lo.beforeEntry(e) && hi.beforeEntry(e)
}

// LexKind is the kind of a LexBound.
type LexKind uint8

const (
	LexInclusive LexKind = iota // "[value": the value itself is in range
	LexExclusive                // "(value": the value itself is out of range
	LexNegInf                   // "-": below every member
	LexPosInf                   // "+": above every member
)

// LexBound is one end of a lexicographic range (ZRANGEBYLEX and friends).
// Members compare as raw bytes. The zero value is an inclusive bound at "".
type LexBound struct {
	Kind  LexKind
	Value string // unused for LexNegInf and LexPosInf
}

// LexRange selects members between Min and Max. As in Redis, lexicographic
// ranges are meaningful only when all members share one score; otherwise
// the result is well-defined (no panic) but unspecified.
type LexRange struct {
	Min, Max LexBound
}

// ParseLexBound parses Redis's bound syntax: "-", "+", "[value" or
// "(value". It reports false for anything else; the caller owns the error
// message.
func ParseLexBound(s string) (LexBound, bool) {
	switch {
	case s == "-":
		return LexBound{Kind: LexNegInf}, true
	case s == "+":
		return LexBound{Kind: LexPosInf}, true
	case len(s) > 0 && s[0] == '[':
		return LexBound{Kind: LexInclusive, Value: s[1:]}, true
	case len(s) > 0 && s[0] == '(':
		return LexBound{Kind: LexExclusive, Value: s[1:]}, true
	}
	return LexBound{}, false
}

// String formats b in the syntax ParseLexBound accepts.
func (b LexBound) String() string {
	switch b.Kind {
	case LexNegInf:
		return "-"
	case LexPosInf:
		return "+"
	case LexExclusive:
		return "(" + b.Value
	}
	return "[" + b.Value
}

// lowCut is the cut at b taken as a lower bound: members before it are
// out of range.
func (b LexBound) lowCut() cut {
	switch b.Kind {
	case LexNegInf:
		return cut{by: cutNone}
	case LexPosInf:
		return cut{by: cutAll}
	}
	return cut{by: cutMember, member: b.Value, incl: b.Kind == LexExclusive}
}

// highCut is the cut at b taken as an upper bound: members before it are
// in range (as far as this end is concerned).
func (b LexBound) highCut() cut {
	switch b.Kind {
	case LexNegInf:
		return cut{by: cutNone}
	case LexPosInf:
		return cut{by: cutAll}
	}
	return cut{by: cutMember, member: b.Value, incl: b.Kind == LexInclusive}
}

// Contains reports whether member lies within the range.
func (r LexRange) Contains(member string) bool {
	e := Entry{Member: member}
	lo, hi := r.Min.lowCut(), r.Max.highCut()
	return !lo.beforeEntry(e) && hi.beforeEntry(e)
}

// cutBy says what a cut compares.
type cutBy uint8

const (
	cutNone   cutBy = iota // nothing is before the cut
	cutAll                 // everything is before the cut
	cutScore               // entries scoring below score (or equal, if incl)
	cutMember              // members below member (or equal, if incl)
)

// cut is a boundary in a set's order: a prefix of the entries is "before"
// it. Range queries find their two cuts by binary search and then work on
// ranks, so counts, offsets and deletions never walk entries one by one.
// A member cut is a true prefix only when all scores are equal, which is
// what lexicographic commands assume.
type cut struct {
	by     cutBy
	incl   bool
	score  float64
	member string
}

func (c *cut) beforeEntry(e Entry) bool {
	switch c.by {
	case cutScore:
		return e.Score < c.score || (c.incl && e.Score == c.score)
	case cutMember:
		return e.Member < c.member || (c.incl && e.Member == c.member)
	}
	return c.by == cutAll
}

// beforeAll reports whether every possible entry is before the cut.
func (c *cut) beforeAll() bool {
	return c.by == cutAll || (c.by == cutScore && c.incl && c.score == math.Inf(1))
}

// beforeNone reports whether no possible entry is before the cut.
func (c *cut) beforeNone() bool {
	return c.by == cutNone || (c.by == cutScore && !c.incl && c.score == math.Inf(-1))
}

// beforeLeaf is beforeEntry for a leaf's entry, fetching the member from
// the arena only when the cut needs it.
func (c *cut) beforeLeaf(score float64, id uint32, a *arena) bool {
	switch c.by {
	case cutScore:
		return score < c.score || (c.incl && score == c.score)
	case cutMember:
		m := a.member(id)
		return m < c.member || (c.incl && m == c.member)
	}
	return c.by == cutAll
}
