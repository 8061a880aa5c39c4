package zset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

var (
	inf    = math.Inf(1)
	negInf = math.Inf(-1)
)

// both runs f on a set in each encoding, built from es.
func both(t *testing.T, es []Entry, f func(t *testing.T, s *Set)) {
	t.Helper()
	for _, enc := range []Encoding{Listpack, Skiplist} {
		t.Run(enc, func(t *testing.T) {
			s := New(DefaultLimits())
			for _, e := range es {
				s.Add(e.Member, e.Score)
			}
			s.Convert(enc)
			if s.Encoding() != enc {
				t.Fatalf("Convert(%v) left %v", enc, s.Encoding())
			}
			f(t, s)
			checkInvariants(t, s, nil)
		})
	}
}

func members(es []Entry) string {
	var b []string
	for _, e := range es {
		b = append(b, e.Member)
	}
	return strings.Join(b, " ")
}

func seqMembers(seq func(func(string, float64) bool)) string {
	return members(collect(seq))
}

// sample: equal scores ordered by member, infinities, -0 and 0.
var sample = []Entry{
	{"c", 1}, {"a", 1}, {"b", 1},
	{"neg", -5}, {"ninf", negInf}, {"pinf", inf},
	{"zero", 0}, {"z2", 2}, {"z3", 3},
}

// sorted order of sample: ninf neg zero a b c z2 z3 pinf

func TestAddResults(t *testing.T) {
	both(t, nil, func(t *testing.T, s *Set) {
		steps := []struct {
			member string
			score  float64
			want   AddResult
		}{
			{"a", 1, Added},
			{"a", 1, Unchanged},
			{"a", 2, Updated},
			{"b", 2, Added},
			{"a", inf, Updated},
			{"a", inf, Unchanged},
			{"z", 0, Added},
			{"z", math.Copysign(0, -1), Unchanged}, // -0 == 0
			{"", 5, Added},                         // empty member is a member
		}
		for _, st := range steps {
			if got := s.Add(st.member, st.score); got != st.want {
				t.Errorf("Add(%q, %v) = %v, want %v", st.member, st.score, got, st.want)
			}
		}
		if got := seqMembers(s.All()); got != "z b  a" {
			t.Errorf("order = %q", got)
		}
		if sc, _ := s.Score("z"); math.Signbit(sc) {
			t.Errorf("unchanged update replaced 0 with -0")
		}
	})
}

func TestScoreDeleteRank(t *testing.T) {
	both(t, sample, func(t *testing.T, s *Set) {
		if s.Len() != 9 {
			t.Fatalf("Len = %d", s.Len())
		}
		for i, m := range strings.Fields("ninf neg zero a b c z2 z3 pinf") {
			if r, ok := s.Rank(m, false); !ok || r != i {
				t.Errorf("Rank(%q) = %d %v, want %d", m, r, ok, i)
			}
			if r, ok := s.Rank(m, true); !ok || r != 8-i {
				t.Errorf("Rank(%q, rev) = %d %v, want %d", m, r, ok, 8-i)
			}
			if e, ok := s.ByRank(i, false); !ok || e.Member != m {
				t.Errorf("ByRank(%d) = %v %v, want %q", i, e, ok, m)
			}
			if e, ok := s.ByRank(8-i, true); !ok || e.Member != m {
				t.Errorf("ByRank(%d, rev) = %v %v, want %q", 8-i, e, ok, m)
			}
		}
		for _, r := range []int{-1, 9, 100} {
			if e, ok := s.ByRank(r, false); ok {
				t.Errorf("ByRank(%d) = %v, want none", r, e)
			}
		}
		if sc, ok := s.Score("pinf"); !ok || sc != inf {
			t.Errorf("Score(pinf) = %v %v", sc, ok)
		}
		if _, ok := s.Score("missing"); ok {
			t.Errorf("Score(missing) found")
		}
		if _, ok := s.Rank("missing", false); ok {
			t.Errorf("Rank(missing) found")
		}
		if s.Delete("missing") {
			t.Errorf("Delete(missing) = true")
		}
		if !s.Delete("b") || s.Delete("b") {
			t.Errorf("Delete(b) twice")
		}
		if r, _ := s.Rank("c", false); r != 4 {
			t.Errorf("Rank(c) after delete = %d", r)
		}
		if got := s.CountBefore(1, "b"); got != 4 {
			t.Errorf("CountBefore(1, b) = %d, want 4", got)
		}
		if got := s.CountBefore(inf, "zzz"); got != 8 {
			t.Errorf("CountBefore(inf, zzz) = %d, want 8", got)
		}
	})
}

func TestRangeByRank(t *testing.T) {
	cases := []struct {
		start, stop int
		reverse     bool
		want        string
	}{
		{0, -1, false, ""}, // negative stop is not "from the end" here
		{0, 100, false, "ninf neg zero a b c z2 z3 pinf"},
		{0, 100, true, "pinf z3 z2 c b a zero neg ninf"},
		{-5, 1, false, "ninf neg"},
		{3, 5, false, "a b c"},
		{3, 5, true, "c b a"},
		{8, 8, false, "pinf"},
		{9, 20, false, ""},
		{5, 3, false, ""},
	}
	both(t, sample, func(t *testing.T, s *Set) {
		for _, c := range cases {
			if got := seqMembers(s.RangeByRank(c.start, c.stop, c.reverse)); got != c.want {
				t.Errorf("RangeByRank(%d, %d, %v) = %q, want %q", c.start, c.stop, c.reverse, got, c.want)
			}
		}
	})
}

func TestRangeByScore(t *testing.T) {
	cases := []struct {
		r             ScoreRange
		reverse       bool
		offset, limit int
		want          string
	}{
		{ScoreRange{Min: negInf, Max: inf}, false, 0, -1, "ninf neg zero a b c z2 z3 pinf"},
		{ScoreRange{Min: negInf, Max: inf, MinExclusive: true, MaxExclusive: true}, false, 0, -1, "neg zero a b c z2 z3"},
		{ScoreRange{Min: 1, Max: 1}, false, 0, -1, "a b c"},
		{ScoreRange{Min: 1, Max: 1}, true, 0, -1, "c b a"},
		{ScoreRange{Min: 1, Max: 1, MinExclusive: true}, false, 0, -1, ""},
		{ScoreRange{Min: 1, Max: 1, MaxExclusive: true}, false, 0, -1, ""},
		{ScoreRange{Min: 0, Max: 2, MinExclusive: true}, false, 0, -1, "a b c z2"},
		{ScoreRange{Min: 0, Max: 2, MaxExclusive: true}, false, 0, -1, "zero a b c"},
		{ScoreRange{Min: math.Copysign(0, -1), Max: 0}, false, 0, -1, "zero"},
		{ScoreRange{Min: 3, Max: 1}, false, 0, -1, ""},
		{ScoreRange{Min: 100, Max: 200}, false, 0, -1, ""},
		{ScoreRange{Min: inf, Max: inf}, false, 0, -1, "pinf"},
		{ScoreRange{Min: negInf, Max: negInf}, true, 0, -1, "ninf"},
		// LIMIT offset count, counted in iteration order.
		{ScoreRange{Min: negInf, Max: inf}, false, 2, 3, "zero a b"},
		{ScoreRange{Min: negInf, Max: inf}, true, 2, 3, "z2 c b"},
		{ScoreRange{Min: negInf, Max: inf}, false, 7, 10, "z3 pinf"},
		{ScoreRange{Min: negInf, Max: inf}, false, 9, 1, ""},
		{ScoreRange{Min: negInf, Max: inf}, false, 2, 0, ""},
		{ScoreRange{Min: negInf, Max: inf}, false, -1, 5, ""},
		{ScoreRange{Min: 1, Max: 3}, true, 1, -1, "z2 c b a"},
	}
	both(t, sample, func(t *testing.T, s *Set) {
		for _, c := range cases {
			if got := seqMembers(s.RangeByScore(c.r, c.reverse, c.offset, c.limit)); got != c.want {
				t.Errorf("RangeByScore(%+v, %v, %d, %d) = %q, want %q", c.r, c.reverse, c.offset, c.limit, got, c.want)
			}
			if c.offset == 0 && c.limit < 0 {
				if got, want := s.CountByScore(c.r), len(strings.Fields(c.want)); got != want {
					t.Errorf("CountByScore(%+v) = %d, want %d", c.r, got, want)
				}
			}
		}
	})
}

func TestScoreRangeContains(t *testing.T) {
	r := ScoreRange{Min: 1, Max: 2, MinExclusive: true}
	for x, want := range map[float64]bool{1: false, 1.5: true, 2: true, 2.5: false, inf: false} {
		if got := r.Contains(x); got != want {
			t.Errorf("(1,2].Contains(%v) = %v", x, got)
		}
	}
}

func TestParseLexBound(t *testing.T) {
	cases := []struct {
		in   string
		want LexBound
		ok   bool
	}{
		{"-", LexBound{Kind: LexNegInf}, true},
		{"+", LexBound{Kind: LexPosInf}, true},
		{"[a", LexBound{Kind: LexInclusive, Value: "a"}, true},
		{"(a", LexBound{Kind: LexExclusive, Value: "a"}, true},
		{"[", LexBound{Kind: LexInclusive}, true},
		{"(", LexBound{Kind: LexExclusive}, true},
		{"[-", LexBound{Kind: LexInclusive, Value: "-"}, true},
		{"", LexBound{}, false},
		{"a", LexBound{}, false},
		{"+a", LexBound{}, false},
		{"--", LexBound{}, false},
	}
	for _, c := range cases {
		got, ok := ParseLexBound(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("ParseLexBound(%q) = %+v %v, want %+v %v", c.in, got, ok, c.want, c.ok)
		}
		if ok && got.String() != c.in {
			t.Errorf("%+v.String() = %q, want %q", got, got.String(), c.in)
		}
	}
}

func TestLexRangeContains(t *testing.T) {
	cases := []struct {
		min, max, m string
		want        bool
	}{
		{"-", "+", "", true}, {"+", "-", "a", false}, {"[a", "[b", "a", true}, {"(a", "[b", "a", false},
		{"[a", "(b", "b", false}, {"[a", "[b", "b", true}, {"[a", "[b", "ab", true}, {"-", "(a", "", true},
	}
	for _, c := range cases {
		if got := lex(t, c.min, c.max).Contains(c.m); got != c.want {
			t.Errorf("%s %s Contains(%q) = %v", c.min, c.max, c.m, got)
		}
	}
}

func lex(t *testing.T, min, max string) LexRange {
	t.Helper()
	a, ok1 := ParseLexBound(min)
	b, ok2 := ParseLexBound(max)
	if !ok1 || !ok2 {
		t.Fatalf("bad bounds %q %q", min, max)
	}
	return LexRange{a, b}
}

func TestRangeByLex(t *testing.T) {
	var es []Entry
	for _, m := range strings.Fields("a aa ab b ba c d e") {
		es = append(es, Entry{m, 0})
	}
	es = append(es, Entry{"", 0})
	cases := []struct {
		min, max      string
		reverse       bool
		offset, limit int
		want          string
	}{
		{"-", "+", false, 0, -1, " a aa ab b ba c d e"},
		{"-", "+", true, 0, -1, "e d c ba b ab aa a "},
		{"+", "-", false, 0, -1, ""},
		{"-", "-", false, 0, -1, ""},
		{"+", "+", false, 0, -1, ""},
		{"[a", "[b", false, 0, -1, "a aa ab b"},
		{"(a", "(b", false, 0, -1, "aa ab"},
		{"[a", "(a", false, 0, -1, ""},
		{"[a", "[a", false, 0, -1, "a"},
		{"(a", "[a", false, 0, -1, ""},
		{"[", "[a", false, 0, -1, " a"},
		{"(", "[a", false, 0, -1, "a"},
		{"[b", "[a", false, 0, -1, ""},
		{"[az", "[bz", false, 0, -1, "b ba"},
		{"-", "[c", true, 1, 3, "ba b ab"},
		{"[b", "+", false, 2, 10, "c d e"},
		{"-", "+", false, 20, 1, ""},
	}
	both(t, es, func(t *testing.T, s *Set) {
		for _, c := range cases {
			r := lex(t, c.min, c.max)
			if got := seqMembers(s.RangeByLex(r, c.reverse, c.offset, c.limit)); got != c.want {
				t.Errorf("RangeByLex(%s %s, %v, %d, %d) = %q, want %q", c.min, c.max, c.reverse, c.offset, c.limit, got, c.want)
			}
			if c.offset == 0 && c.limit < 0 && !c.reverse {
				want := len(strings.Split(c.want, " "))
				if c.want == "" {
					want = 0
				}
				if got := s.CountByLex(r); got != want {
					t.Errorf("CountByLex(%s %s) = %d, want %d", c.min, c.max, got, want)
				}
			}
		}
		if got := s.DeleteByLex(lex(t, "(a", "[b")); got != 3 {
			t.Errorf("DeleteByLex((a [b) = %d, want 3", got)
		}
		if got := seqMembers(s.All()); got != " a ba c d e" {
			t.Errorf("after DeleteByLex: %q", got)
		}
	})
}

func TestDeleteRanges(t *testing.T) {
	cases := []struct {
		name string
		del  func(*Set) int
		n    int
		want string
	}{
		{"rank middle", func(s *Set) int { return s.DeleteByRank(2, 4) }, 3, "ninf neg c z2 z3 pinf"},
		{"rank clamped", func(s *Set) int { return s.DeleteByRank(-3, 1) }, 2, "zero a b c z2 z3 pinf"},
		{"rank past end", func(s *Set) int { return s.DeleteByRank(9, 12) }, 0, "ninf neg zero a b c z2 z3 pinf"},
		{"rank empty", func(s *Set) int { return s.DeleteByRank(4, 3) }, 0, "ninf neg zero a b c z2 z3 pinf"},
		{"rank all", func(s *Set) int { return s.DeleteByRank(0, 100) }, 9, ""},
		{"score", func(s *Set) int { return s.DeleteByScore(ScoreRange{Min: 0, Max: 2, MinExclusive: true}) }, 4, "ninf neg zero z3 pinf"},
		{"score infinities", func(s *Set) int {
			return s.DeleteByScore(ScoreRange{Min: negInf, Max: inf, MinExclusive: true, MaxExclusive: true})
		}, 7, "ninf pinf"},
		{"score empty", func(s *Set) int { return s.DeleteByScore(ScoreRange{Min: 1.5, Max: 1.7}) }, 0, "ninf neg zero a b c z2 z3 pinf"},
		{"score all", func(s *Set) int { return s.DeleteByScore(ScoreRange{Min: negInf, Max: inf}) }, 9, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			both(t, sample, func(t *testing.T, s *Set) {
				if got := c.del(s); got != c.n {
					t.Errorf("removed %d, want %d", got, c.n)
				}
				if got := seqMembers(s.All()); got != c.want {
					t.Errorf("left %q, want %q", got, c.want)
				}
				// The set stays usable after any deletion.
				s.Add("again", 1)
				if r, ok := s.Rank("again", false); !ok || s.Len() != len(strings.Fields(c.want))+1 {
					t.Errorf("re-add: rank %d %v, len %d", r, ok, s.Len())
				}
			})
		})
	}
}

func TestPop(t *testing.T) {
	both(t, sample, func(t *testing.T, s *Set) {
		if got := s.PopMin(0); got != nil {
			t.Errorf("PopMin(0) = %v", got)
		}
		if got := s.PopMin(-1); got != nil {
			t.Errorf("PopMin(-1) = %v", got)
		}
		if got := members(s.PopMin(2)); got != "ninf neg" {
			t.Errorf("PopMin(2) = %q", got)
		}
		if got := members(s.PopMax(2)); got != "pinf z3" {
			t.Errorf("PopMax(2) = %q", got)
		}
		if got := members(s.PopMax(100)); got != "z2 c b a zero" {
			t.Errorf("PopMax(100) = %q", got)
		}
		if s.Len() != 0 || s.PopMin(1) != nil {
			t.Errorf("set not empty after popping all")
		}
	})
}

func TestIncr(t *testing.T) {
	both(t, nil, func(t *testing.T, s *Set) {
		if sc, res, ok := s.Incr("a", 2.5); !ok || sc != 2.5 || res != Added {
			t.Errorf("Incr new = %v %v %v", sc, res, ok)
		}
		if sc, res, ok := s.Incr("a", -1); !ok || sc != 1.5 || res != Updated {
			t.Errorf("Incr existing = %v %v %v", sc, res, ok)
		}
		if sc, res, ok := s.Incr("a", 0); !ok || sc != 1.5 || res != Unchanged {
			t.Errorf("Incr 0 = %v %v %v", sc, res, ok)
		}
		if sc, _, _ := s.Incr("nz", math.Copysign(0, -1)); !math.Signbit(sc) {
			t.Errorf("Incr of a new member by -0 gave %v, want -0", sc)
		}
		s.Add("i", inf)
		if _, _, ok := s.Incr("i", negInf); ok {
			t.Errorf("inf + -inf accepted")
		}
		if sc, _ := s.Score("i"); sc != inf {
			t.Errorf("failed Incr changed the score to %v", sc)
		}
	})
}

func TestNaNPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("Add with NaN did not panic")
		}
	}()
	New(DefaultLimits()).Add("a", math.NaN())
}

func TestIteratorsStopEarly(t *testing.T) {
	var es []Entry
	for i := range 500 {
		es = append(es, Entry{fmt.Sprintf("m%03d", i), float64(i)})
	}
	both(t, es, func(t *testing.T, s *Set) {
		for _, rev := range []bool{false, true} {
			n := 0
			for range s.RangeByScore(ScoreRange{Min: negInf, Max: inf}, rev, 0, -1) {
				if n++; n == 70 {
					break
				}
			}
			if n != 70 {
				t.Errorf("iteration did not stop: %d", n)
			}
		}
	})
}

func TestRandomEntries(t *testing.T) {
	var es []Entry
	for i := range 300 {
		es = append(es, Entry{fmt.Sprintf("m%03d", i), float64(i % 7)})
	}
	both(t, es, func(t *testing.T, s *Set) {
		rng := rand.New(rand.NewPCG(1, 2))
		for _, c := range []struct {
			count    int
			distinct bool
			want     int
		}{
			{0, true, 0}, {-3, false, 0}, {5, true, 5}, {150, true, 150}, {299, true, 299},
			{300, true, 300}, {1000, true, 300}, {1000, false, 1000},
		} {
			got := s.RandomEntries(rng, c.count, c.distinct)
			if len(got) != c.want {
				t.Errorf("RandomEntries(%d, %v): %d entries, want %d", c.count, c.distinct, len(got), c.want)
			}
			seen := map[string]bool{}
			for _, e := range got {
				if sc, ok := s.Score(e.Member); !ok || sc != e.Score {
					t.Fatalf("bad entry %v", e)
				}
				if c.distinct && seen[e.Member] {
					t.Fatalf("repeat %q", e.Member)
				}
				seen[e.Member] = true
			}
		}
		// Uniformity, roughly: every member shows up in 30000 draws
		// (expected 100 each).
		hits := map[string]int{}
		for range 30000 {
			e, _ := s.RandomEntry(rng)
			hits[e.Member]++
		}
		for _, e := range es {
			if h := hits[e.Member]; h < 50 || h > 170 {
				t.Errorf("%q drawn %d times of 30000", e.Member, h)
			}
		}
		if got := s.RandomEntries(nil, 3, true); len(got) != 3 {
			t.Errorf("nil rng: %v", got)
		}
	})
	if _, ok := New(DefaultLimits()).RandomEntry(nil); ok {
		t.Errorf("RandomEntry on empty set")
	}
}

func TestEncodingThresholds(t *testing.T) {
	lim := Limits{MaxEntries: 4, MaxValue: 8}
	t.Run("entries", func(t *testing.T) {
		s := New(lim)
		for i := range 4 {
			s.Add(fmt.Sprint(i), float64(i))
		}
		if s.Encoding() != Listpack {
			t.Fatalf("4 entries: %v", s.Encoding())
		}
		s.Add("0", 10) // update: no conversion
		if s.Encoding() != Listpack {
			t.Fatalf("update converted")
		}
		s.Add("4", 4)
		if s.Encoding() != Skiplist {
			t.Fatalf("5 entries: %v", s.Encoding())
		}
		// Deleting does not convert back (as in Redis); Shrink does.
		s.Delete("4")
		if s.Encoding() != Skiplist {
			t.Fatalf("delete converted back")
		}
		if !s.Shrink() || s.Encoding() != Listpack {
			t.Fatalf("Shrink with 4 entries: %v", s.Encoding())
		}
		checkInvariants(t, s, []Entry{{"1", 1}, {"2", 2}, {"3", 3}, {"0", 10}})
	})
	t.Run("value", func(t *testing.T) {
		s := New(lim)
		s.Add("12345678", 1)
		if s.Encoding() != Listpack {
			t.Fatalf("8-byte member: %v", s.Encoding())
		}
		s.Add("123456789", 2)
		if s.Encoding() != Skiplist {
			t.Fatalf("9-byte member: %v", s.Encoding())
		}
		if s.Shrink() {
			t.Fatalf("Shrink with a 9-byte member succeeded")
		}
		s.Delete("123456789")
		if !s.Shrink() {
			t.Fatalf("Shrink failed")
		}
	})
	t.Run("zero entries means always large", func(t *testing.T) {
		s := New(Limits{MaxEntries: 0, MaxValue: 64})
		s.Add("a", 1)
		if s.Encoding() != Skiplist {
			t.Fatalf("got %v", s.Encoding())
		}
	})
	t.Run("SetLimits applies at the next insert", func(t *testing.T) {
		s := New(DefaultLimits())
		for i := range 10 {
			s.Add(fmt.Sprint(i), 0)
		}
		s.SetLimits(Limits{MaxEntries: 5, MaxValue: 64})
		if s.Encoding() != Listpack || s.Limits().MaxEntries != 5 {
			t.Fatalf("SetLimits converted eagerly")
		}
		s.Add("x", 0)
		if s.Encoding() != Skiplist {
			t.Fatalf("insert after SetLimits: %v", s.Encoding())
		}
	})
	t.Run("NewSized", func(t *testing.T) {
		for _, c := range []struct {
			size, maxLen int
			want         Encoding
		}{{4, 8, Listpack}, {5, 1, Skiplist}, {1, 9, Skiplist}, {0, 0, Listpack}} {
			if got := NewSized(lim, c.size, c.maxLen).Encoding(); got != c.want {
				t.Errorf("NewSized(%d, %d) = %v, want %v", c.size, c.maxLen, got, c.want)
			}
		}
		s := NewSized(lim, 100, 0)
		s.Add("a", 1)
		checkInvariants(t, s, []Entry{{"a", 1}})
	})
	t.Run("FromMap and FromEntries pick by final size", func(t *testing.T) {
		m := map[string]float64{"a": 3, "b": 1, "c": 2}
		s := FromMap(m, lim)
		if s.Encoding() != Listpack {
			t.Fatalf("FromMap small: %v", s.Encoding())
		}
		checkInvariants(t, s, []Entry{{"b", 1}, {"c", 2}, {"a", 3}})
		m = map[string]float64{}
		for i := range 10 {
			m[fmt.Sprint(i)] = float64(-i)
		}
		s = FromMap(m, lim)
		if s.Encoding() != Skiplist || s.Len() != 10 {
			t.Fatalf("FromMap large: %v %d", s.Encoding(), s.Len())
		}
		checkInvariants(t, s, nil)
		// Ten entries, but only three distinct members: compact.
		var es []Entry
		for i := range 10 {
			es = append(es, Entry{fmt.Sprint(i % 3), float64(i)})
		}
		s = FromEntries(es, lim)
		if s.Encoding() != Listpack {
			t.Fatalf("FromEntries with duplicates: %v", s.Encoding())
		}
		checkInvariants(t, s, []Entry{{"1", 7}, {"2", 8}, {"0", 9}})
		s = FromEntries([]Entry{{"0123456789", 1}}, lim)
		if s.Encoding() != Skiplist {
			t.Fatalf("FromEntries long member: %v", s.Encoding())
		}
	})
}

func TestMemoryUsage(t *testing.T) {
	s := New(DefaultLimits())
	prev := s.MemoryUsage()
	for i := range 1000 {
		s.Add(fmt.Sprintf("member:%d", i), float64(i))
		if i == 127 || i == 128 || i == 999 {
			mu := s.MemoryUsage()
			if mu <= prev {
				t.Errorf("MemoryUsage did not grow at %d: %d -> %d", i, prev, mu)
			}
			prev = mu
		}
	}
	if per := s.MemoryUsage() / s.Len(); per < 50 || per > 200 {
		t.Errorf("MemoryUsage = %d bytes per member", per)
	}
	s.DeleteByRank(0, 999)
	if s.MemoryUsage() > 4096 {
		t.Errorf("MemoryUsage of an emptied set = %d", s.MemoryUsage())
	}
}

func TestEncodingString(t *testing.T) {
	if Listpack != "listpack" || Skiplist != "skiplist" {
		t.Errorf("names: %v %v", Listpack, Skiplist)
	}
}

// TestCompactAfterMassDeletion checks that a large set drained by single
// deletes or by ranges gives its arena and index back.
func TestCompactAfterMassDeletion(t *testing.T) {
	for _, byRange := range []bool{false, true} {
		s := New(DefaultLimits())
		for i := range 20000 {
			s.Add(fmt.Sprintf("m%05d", i), float64(i%100))
		}
		full := s.MemoryUsage()
		var want []Entry
		if byRange {
			s.DeleteByScore(ScoreRange{Min: 10, Max: 100})
		} else {
			for i := range 20000 {
				if i%100 >= 10 {
					s.Delete(fmt.Sprintf("m%05d", i))
				}
			}
		}
		for e := range 10 {
			for i := range 200 {
				want = append(want, Entry{fmt.Sprintf("m%05d", i*100+e), float64(e)})
			}
		}
		checkInvariants(t, s, want)
		if top := s.big.a.top; top > 8000 {
			t.Errorf("byRange=%v: arena keeps %d ids for %d members", byRange, top, s.Len())
		}
		if mu := s.MemoryUsage(); mu > full/3 {
			t.Errorf("byRange=%v: MemoryUsage %d after deleting 90%%, was %d", byRange, mu, full)
		}
	}
}
