package zset

import (
	"iter"
	"math"
	"slices"
	"sort"
	"strings"
)

// Entry is a member with its score.
type Entry struct {
	Member string
	Score  float64
}

// compare orders entries by score, then by member bytes. -0 and +0 are
// equal scores, as in Redis.
func compare(a, b Entry) int {
	switch {
	case a.Score < b.Score:
		return -1
	case a.Score > b.Score:
		return 1
	}
	return strings.Compare(a.Member, b.Member)
}

func less(a, b Entry) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.Member < b.Member
}

// Encoding is the representation a Set currently uses, named as OBJECT
// ENCODING reports it in Redis. It is a plain string (an alias) so that
// *Set satisfies the command layer's `Encoding() string` interface like the
// hash, list and set packages do, and can sit in a keyspace value as is.
type Encoding = string

const (
	Listpack Encoding = "listpack" // compact: one sorted slice
	Skiplist Encoding = "skiplist" // large: arena, hash index, order-statistic B+tree
)

// Limits are the thresholds of the compact encoding: zset-max-listpack-entries
// and zset-max-listpack-value (bytes of one member).
type Limits struct {
	MaxEntries int
	MaxValue   int
}

// DefaultLimits are Redis's defaults: 128 entries, 64-byte members.
func DefaultLimits() Limits { return Limits{MaxEntries: 128, MaxValue: 64} }

// compactMaxBytes mirrors Redis's listpack safety limit: a compact set never
// holds more than 1 GiB of member bytes, whatever the limits say.
const compactMaxBytes = 1 << 30

func (l Limits) fits(n, maxLen int) bool {
	return n <= l.MaxEntries && maxLen <= l.MaxValue
}

// AddResult tells what Add did.
type AddResult uint8

const (
	Unchanged AddResult = iota // member present with that score already
	Added                      // member was new
	Updated                    // member was present with another score
)

// Set is a sorted set. The zero value is an empty set with zero Limits
// (so it converts to the large encoding on its first insert); use New.
//
// A Set is not safe for concurrent use. Iterators returned by its methods
// must not be used across modifications of the set.
type Set struct {
	lim   Limits
	list  []Entry // compact encoding, sorted; nil when big != nil
	big   *large  // large encoding
	bytes int     // sum of len(member)
	alloc int     // estimated heap bytes of member strings
}

// New returns an empty set in the compact encoding that converts itself
// when an insert passes lim.
func New(lim Limits) *Set { return &Set{lim: lim} }

// NewSized returns an empty set whose encoding is chosen for the expected
// contents, as Redis does when ZADD or a *STORE command creates a key:
// compact if sizeHint entries with members up to maxMemberLen bytes fit lim,
// large otherwise.
func NewSized(lim Limits, sizeHint, maxMemberLen int) *Set {
	s := &Set{lim: lim}
	if !lim.fits(sizeHint, maxMemberLen) {
		s.big = newLarge(sizeHint)
	}
	return s
}

// FromMap builds a set from member->score pairs, choosing the encoding by
// the final size like ZUNIONSTORE does. m is not retained; its key strings
// are. Scores must not be NaN.
func FromMap(m map[string]float64, lim Limits) *Set {
	es := make([]Entry, 0, len(m))
	maxLen := 0
	for k, v := range m {
		checkScore(v)
		es = append(es, Entry{k, v})
		maxLen = max(maxLen, len(k))
	}
	slices.SortFunc(es, compare)
	s := &Set{lim: lim}
	s.account(es, 1)
	if lim.fits(len(es), maxLen) && s.bytes <= compactMaxBytes {
		s.list = es
		return s
	}
	s.big = newLarge(len(es))
	s.big.build(es)
	return s
}

// FromEntries builds a set from entries in any order; when a member
// repeats, its last score wins. The encoding is chosen by the final size.
func FromEntries(es []Entry, lim Limits) *Set {
	if len(es) > lim.MaxEntries {
		m := make(map[string]float64, len(es))
		for _, e := range es {
			m[e.Member] = e.Score
		}
		return FromMap(m, lim)
	}
	s := &Set{lim: lim}
	for _, e := range es {
		s.Add(e.Member, e.Score)
	}
	return s
}

// Clone returns an independent copy with the same encoding and limits.
func (s *Set) Clone() *Set {
	c := *s
	if s.big == nil {
		c.list = slices.Clone(s.list)
		return &c
	}
	es := s.entries()
	c.big = newLarge(len(es))
	c.big.build(es)
	return &c
}

// CloneValue is Clone for keyspace's Value contract.
func (s *Set) CloneValue() any { return s.Clone() }

func checkScore(score float64) {
	if math.IsNaN(score) {
		panic("zset: NaN score")
	}
}

// account adds (sign 1) or removes (sign -1) es's members from the byte
// counters.
func (s *Set) account(es []Entry, sign int) {
	for _, e := range es {
		s.bytes += sign * len(e.Member)
		s.alloc += sign * stringAlloc(len(e.Member))
	}
}

func (s *Set) accountOne(member string, sign int) {
	s.bytes += sign * len(member)
	s.alloc += sign * stringAlloc(len(member))
}

// Len is the number of members.
func (s *Set) Len() int {
	if s.big != nil {
		return s.big.t.size
	}
	return len(s.list)
}

// Encoding reports the current representation.
func (s *Set) Encoding() Encoding {
	if s.big != nil {
		return Skiplist
	}
	return Listpack
}

// Limits returns the thresholds the set converts at.
func (s *Set) Limits() Limits { return s.lim }

// SetLimits changes the thresholds (after CONFIG SET, say). Like Redis, it
// converts nothing by itself: the next insert checks the new limits, and
// Shrink converts back.
func (s *Set) SetLimits(lim Limits) { s.lim = lim }

// Convert forces the given encoding regardless of the limits.
func (s *Set) Convert(enc Encoding) {
	switch {
	case enc == Skiplist && s.big == nil:
		b := newLarge(len(s.list) + 1)
		b.build(s.list)
		s.list, s.big = nil, b
	case enc == Listpack && s.big != nil:
		s.list, s.big = s.entries(), nil
	}
}

// Shrink converts a large set back to the compact encoding if its size and
// longest member fit the limits (Redis does this for *STORE results). It
// reports whether the set is compact afterwards.
func (s *Set) Shrink() bool {
	if s.big == nil {
		return true
	}
	if s.big.t.size > s.lim.MaxEntries || s.bytes > compactMaxBytes {
		return false
	}
	fits := true
	s.big.walk(0, s.big.t.size, false, func(m string, _ float64) bool {
		fits = len(m) <= s.lim.MaxValue
		return fits
	})
	if !fits {
		return false
	}
	s.Convert(Listpack)
	return true
}

// entries returns all entries in order in a new slice.
func (s *Set) entries() []Entry {
	es := make([]Entry, 0, s.Len())
	s.walk(0, s.Len(), false, func(m string, sc float64) bool {
		es = append(es, Entry{m, sc})
		return true
	})
	return es
}

// index is the position of member in the compact list, or -1.
func (s *Set) index(member string) int {
	for i := range s.list {
		if s.list[i].Member == member {
			return i
		}
	}
	return -1
}

// Score returns member's score.
func (s *Set) Score(member string) (float64, bool) {
	if s.big != nil {
		return s.big.score(member)
	}
	if i := s.index(member); i >= 0 {
		return s.list[i].Score, true
	}
	return 0, false
}

// Add sets member's score, inserting the member if needed. The set keeps
// the member string, so it should not share memory with a larger buffer.
// A set in the compact encoding converts when the insert would pass its
// limits. score must not be NaN (the caller rejects NaN first).
func (s *Set) Add(member string, score float64) AddResult {
	checkScore(score)
	if s.big != nil {
		res := s.big.add(member, score)
		if res == Added {
			s.accountOne(member, 1)
		}
		return res
	}
	e := Entry{member, score}
	if i := s.index(member); i >= 0 {
		if s.list[i].Score == score {
			return Unchanged
		}
		e.Member = s.list[i].Member // keep the stored string
		s.list = slices.Delete(s.list, i, i+1)
		j, _ := slices.BinarySearchFunc(s.list, e, compare)
		s.list = slices.Insert(s.list, j, e)
		return Updated
	}
	if len(s.list)+1 > s.lim.MaxEntries || len(member) > s.lim.MaxValue ||
		s.bytes+len(member) > compactMaxBytes {
		s.Convert(Skiplist)
		return s.Add(member, score)
	}
	j, _ := slices.BinarySearchFunc(s.list, e, compare)
	s.list = slices.Insert(s.list, j, e)
	s.accountOne(member, 1)
	return Added
}

// Incr adds delta to member's score (a missing member counts as having no
// score, so it gets delta itself, -0 included) and returns the new score.
// If the result would be NaN (+inf plus -inf) nothing changes and ok is
// false.
func (s *Set) Incr(member string, delta float64) (score float64, res AddResult, ok bool) {
	cur, found := s.Score(member)
	score = delta
	if found {
		score = cur + delta
	}
	if math.IsNaN(score) {
		return cur, Unchanged, false
	}
	return score, s.Add(member, score), true
}

// Delete removes member and reports whether it was present.
func (s *Set) Delete(member string) bool {
	if s.big != nil {
		if !s.big.delete(member) {
			return false
		}
		s.accountOne(member, -1)
		return true
	}
	i := s.index(member)
	if i < 0 {
		return false
	}
	s.accountOne(member, -1)
	s.list = slices.Delete(s.list, i, i+1)
	return true
}

// Rank returns member's 0-based rank, counted from the lowest score, or
// from the highest if reverse.
func (s *Set) Rank(member string, reverse bool) (int, bool) {
	var r int
	var ok bool
	if s.big != nil {
		r, ok = s.big.rank(member)
	} else {
		r = s.index(member)
		ok = r >= 0
	}
	if !ok {
		return 0, false
	}
	if reverse {
		r = s.Len() - 1 - r
	}
	return r, true
}

// CountBefore is the number of entries ordered before (score, member),
// whether or not that pair is in the set. It is the rank a resumable scan
// continues from after returning (score, member).
func (s *Set) CountBefore(score float64, member string) int {
	e := Entry{member, score}
	if s.big != nil {
		return s.big.t.rankOf(e)
	}
	i, _ := slices.BinarySearchFunc(s.list, e, compare)
	return i
}

// ByRank returns the entry at a 0-based rank, counted from the highest
// score if reverse. ok is false when rank is out of range.
func (s *Set) ByRank(rank int, reverse bool) (e Entry, ok bool) {
	n := s.Len()
	if rank < 0 || rank >= n {
		return Entry{}, false
	}
	if reverse {
		rank = n - 1 - rank
	}
	return s.at(rank), true
}

func (s *Set) at(rank int) Entry {
	if s.big != nil {
		return s.big.at(rank)
	}
	return s.list[rank]
}

// walk calls yield for ascending ranks [lo, hi), in descending order if
// reverse, until yield returns false.
func (s *Set) walk(lo, hi int, reverse bool, yield func(string, float64) bool) {
	if s.big != nil {
		s.big.walk(lo, hi, reverse, yield)
		return
	}
	if reverse {
		for i := hi - 1; i >= lo; i-- {
			if !yield(s.list[i].Member, s.list[i].Score) {
				return
			}
		}
		return
	}
	for i := lo; i < hi; i++ {
		if !yield(s.list[i].Member, s.list[i].Score) {
			return
		}
	}
}

// countBefore is the number of entries before the cut c.
func (s *Set) countBefore(c cut) int {
	if s.big != nil {
		return s.big.t.countBefore(&c)
	}
	return sort.Search(len(s.list), func(i int) bool { return !c.beforeEntry(s.list[i]) })
}

// rankSpan turns inclusive ranks [start, stop], counted from the top if
// reverse, into ascending ranks [lo, hi). Out-of-range ranks are clamped;
// negative ranks are not "from the end" (the caller converts those).
func (s *Set) rankSpan(start, stop int, reverse bool) (lo, hi int) {
	n := s.Len()
	start, stop = max(start, 0), min(stop, n-1)
	if start > stop {
		return 0, 0
	}
	if reverse {
		return n - 1 - stop, n - start
	}
	return start, stop + 1
}

// span is the ascending rank interval between two cuts, empty if they
// are crossed.
func (s *Set) span(low, high cut) (lo, hi int) {
	lo = s.countBefore(low)
	return lo, max(s.countBefore(high), lo)
}

func (s *Set) scoreSpan(r ScoreRange) (lo, hi int) { return s.span(r.lowCut(), r.highCut()) }

func (s *Set) lexSpan(r LexRange) (lo, hi int) { return s.span(r.Min.lowCut(), r.Max.highCut()) }

// window narrows ascending ranks [lo, hi) to skip offset entries and keep
// at most limit (all if limit < 0), counted in iteration order. A negative
// offset selects nothing, as in Redis's LIMIT.
func window(lo, hi int, reverse bool, offset, limit int) (int, int) {
	n := hi - lo
	if offset < 0 || offset >= n {
		return lo, lo
	}
	n -= offset
	if limit >= 0 {
		n = min(n, limit)
	}
	if reverse {
		return hi - offset - n, hi - offset
	}
	return lo + offset, lo + offset + n
}

// RangeByRank yields members and scores at inclusive ranks [start, stop],
// counted from the highest score and in descending order if reverse.
func (s *Set) RangeByRank(start, stop int, reverse bool) iter.Seq2[string, float64] {
	return func(yield func(string, float64) bool) {
		sp := s.SpanByRank(start, stop, reverse)
		sp.Walk(yield)
	}
}

// All yields every member and score in ascending order.
func (s *Set) All() iter.Seq2[string, float64] {
	return func(yield func(string, float64) bool) {
		s.walk(0, s.Len(), false, yield)
	}
}

// RangeByScore yields the entries within r, ascending, or descending if
// reverse, after skipping offset of them and stopping after limit (no limit
// if limit < 0). Skipping costs O(log N), not O(offset). SpanByScore
// tells the number of entries before walking them.
func (s *Set) RangeByScore(r ScoreRange, reverse bool, offset, limit int) iter.Seq2[string, float64] {
	return func(yield func(string, float64) bool) {
		sp := s.SpanByScore(r, reverse, offset, limit)
		sp.Walk(yield)
	}
}

// CountByScore is the number of entries within r, in O(log N).
func (s *Set) CountByScore(r ScoreRange) int {
	lo, hi := s.scoreSpan(r)
	return hi - lo
}

// RangeByLex is RangeByScore for a lexicographic range.
func (s *Set) RangeByLex(r LexRange, reverse bool, offset, limit int) iter.Seq2[string, float64] {
	return func(yield func(string, float64) bool) {
		sp := s.SpanByLex(r, reverse, offset, limit)
		sp.Walk(yield)
	}
}

// CountByLex is the number of members within r, in O(log N).
func (s *Set) CountByLex(r LexRange) int {
	lo, hi := s.lexSpan(r)
	return hi - lo
}

// DeleteByRank removes inclusive ranks [start, stop] (ascending, clamped)
// and returns how many it removed.
func (s *Set) DeleteByRank(start, stop int) int {
	return s.removeSpan(s.rankSpan(start, stop, false))
}

// DeleteByScore removes the entries within r and returns how many.
func (s *Set) DeleteByScore(r ScoreRange) int {
	return s.removeSpan(s.scoreSpan(r))
}

// DeleteByLex removes the members within r and returns how many.
func (s *Set) DeleteByLex(r LexRange) int {
	return s.removeSpan(s.lexSpan(r))
}

// removeSpan removes ascending ranks [lo, hi).
func (s *Set) removeSpan(lo, hi int) int {
	if lo >= hi {
		return 0
	}
	b := s.big
	if b == nil {
		s.account(s.list[lo:hi], -1)
		s.list = slices.Delete(s.list, lo, hi)
		return hi - lo
	}
	if lo == 0 && hi == b.t.size {
		s.bytes, s.alloc = 0, 0
	}
	b.removeSpan(lo, hi, func(m string) { s.accountOne(m, -1) })
	return hi - lo
}

// PopMin removes and returns up to count entries with the lowest scores,
// lowest first.
func (s *Set) PopMin(count int) []Entry {
	return s.pop(count, false)
}

// PopMax removes and returns up to count entries with the highest scores,
// highest first.
func (s *Set) PopMax(count int) []Entry {
	return s.pop(count, true)
}

func (s *Set) pop(count int, highest bool) []Entry {
	n := min(count, s.Len())
	if n <= 0 {
		return nil
	}
	lo, hi := 0, n
	if highest {
		lo, hi = s.Len()-n, s.Len()
	}
	out := make([]Entry, 0, n)
	s.walk(lo, hi, highest, func(m string, sc float64) bool {
		out = append(out, Entry{m, sc})
		return true
	})
	s.removeSpan(lo, hi)
	return out
}
