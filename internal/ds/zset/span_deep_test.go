package zset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// Spans over trees of three and four levels (root, inner nodes, leaves),
// against a sorted slice: the cursor's move to the next leaf climbs more
// than one level there, which sets of a few thousand entries (a root and
// leaves) never make it do. Scores come in long runs of equal values, so
// that runs cross leaf and inner-node boundaries and exclusive bounds on
// those scores must skip whole leaves.

func treeDepth(s *Set) int {
	if s.big == nil {
		return 0
	}
	d := 1
	for nd := s.big.t.root; ; d++ {
		n, ok := nd.(*inner)
		if !ok {
			return d
		}
		nd = n.kids[0]
	}
}

// refSpan is the span computed from the sorted entries.
func refSpan(es []Entry, in func(Entry) bool, reverse bool, offset, limit int) []Entry {
	var sel []Entry
	for _, e := range es {
		if in(e) {
			sel = append(sel, e)
		}
	}
	if reverse {
		for i, j := 0, len(sel)-1; i < j; i, j = i+1, j-1 {
			sel[i], sel[j] = sel[j], sel[i]
		}
	}
	if offset < 0 || offset >= len(sel) {
		return nil
	}
	sel = sel[offset:]
	if limit >= 0 && limit < len(sel) {
		sel = sel[:limit]
	}
	return sel
}

func spanEntries(sp Span) []Entry {
	var out []Entry
	sp.Walk(func(m string, sc float64) bool {
		out = append(out, Entry{Member: m, Score: sc})
		return true
	})
	return out
}

func sameSpanEntries(a, b []Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Member != b[i].Member || a[i].Score != b[i].Score && !(math.IsNaN(a[i].Score) && math.IsNaN(b[i].Score)) {
			return false
		}
	}
	return true
}

func TestSpanDeepTrees(t *testing.T) {
	for _, tc := range []struct {
		n, run, depth int
		shuffled      bool
	}{
		{20000, 300, 3, true}, // inserted one by one: half-full leaves
		{60000, 1000, 3, false},
		{400000, 5000, 4, true},
	} {
		t.Run(fmt.Sprintf("n%d", tc.n), func(t *testing.T) {
			if tc.depth > 3 && (testing.Short() || deepRace) {
				t.Skip("four levels take minutes under -race or -short")
			}
			r := rand.New(rand.NewPCG(uint64(tc.n), 9))
			es := make([]Entry, tc.n)
			for i := range es {
				es[i] = Entry{Member: fmt.Sprintf("m%07d", i), Score: float64(i/tc.run - 10)}
			}
			es[0].Score, es[1].Score = math.Inf(-1), math.Inf(-1)
			es[tc.n-1].Score = math.Inf(1)
			var s *Set
			if tc.shuffled {
				s = New(DefaultLimits())
				for _, i := range r.Perm(tc.n) {
					s.Add(es[i].Member, es[i].Score)
				}
			} else {
				s = FromEntries(append([]Entry(nil), es...), DefaultLimits())
			}
			sort.Slice(es, func(i, j int) bool { return less(es[i], es[j]) })
			if d := treeDepth(s); d < tc.depth {
				t.Fatalf("tree of depth %d, want >= %d", d, tc.depth)
			}
			runs := tc.n / tc.run
			score := func() (float64, bool) {
				switch r.IntN(10) {
				case 0:
					return math.Inf(-1), r.IntN(2) == 0
				case 1:
					return math.Inf(1), r.IntN(2) == 0
				case 2:
					return float64(r.IntN(runs+4)-12) + 0.5, false
				}
				return float64(r.IntN(runs+4) - 12), r.IntN(2) == 0
			}
			lexb := func() LexBound {
				switch r.IntN(8) {
				case 0:
					return LexBound{Kind: LexNegInf}
				case 1:
					return LexBound{Kind: LexPosInf}
				}
				k := LexInclusive
				if r.IntN(2) == 0 {
					k = LexExclusive
				}
				return LexBound{Kind: k, Value: fmt.Sprintf("m%07d", r.IntN(tc.n+5))}
			}
			for i := 0; i < max(200, 30_000_000/tc.n); i++ {
				reverse := r.IntN(2) == 0
				var offset int
				switch r.IntN(5) {
				case 0:
					offset = r.IntN(tc.n + 10)
				case 1:
					offset = r.IntN(3 * tc.run)
				case 2:
					offset = -1
				default:
					offset = r.IntN(200)
				}
				limit := []int{-1, 0, 1, 127, 128, r.IntN(2 * tc.run), math.MaxInt}[r.IntN(7)]
				var sp Span
				var want []Entry
				var what string
				if r.IntN(3) == 0 {
					lr := LexRange{Min: lexb(), Max: lexb()}
					// One score only makes a lex order: use the entries
					// of a single run, members being in order within it.
					sp = s.SpanByLex(lr, reverse, offset, limit)
					want = refSpan(es, func(e Entry) bool { return lr.Contains(e.Member) }, reverse, offset, limit)
					what = fmt.Sprintf("lex %s %s", lr.Min, lr.Max)
				} else {
					var sr ScoreRange
					sr.Min, sr.MinExclusive = score()
					sr.Max, sr.MaxExclusive = score()
					sp = s.SpanByScore(sr, reverse, offset, limit)
					want = refSpan(es, func(e Entry) bool { return sr.Contains(e.Score) }, reverse, offset, limit)
					what = fmt.Sprintf("score %+v", sr)
				}
				got := spanEntries(sp)
				if sp.Len() != len(got) || !sameSpanEntries(got, want) {
					t.Fatalf("%d: %s reverse %v offset %d limit %d: Len %d, %d walked, want %d (first got %v want %v)",
						i, what, reverse, offset, limit, sp.Len(), len(got), len(want), head(got), head(want))
				}
				// A second walk yields the same, and stopping early stops.
				if again := spanEntries(sp); !sameSpanEntries(again, got) {
					t.Fatalf("%d: second walk differs", i)
				}
				k := 0
				sp.Walk(func(string, float64) bool { k++; return k < 3 })
				if k != min(3, len(got)) {
					t.Fatalf("%d: early stop after %d", i, k)
				}
			}
			// Rank spans across the whole tree.
			for i := 0; i < 300; i++ {
				start, stop := r.IntN(tc.n+20)-10, r.IntN(tc.n+20)-10
				reverse := r.IntN(2) == 0
				got := spanEntries(s.SpanByRank(start, stop, reverse))
				lo, hi := max(start, 0), min(stop, tc.n-1)
				var want []Entry
				for j := lo; j <= hi; j++ {
					if reverse {
						want = append(want, es[tc.n-1-j])
					} else {
						want = append(want, es[j])
					}
				}
				if !sameSpanEntries(got, want) {
					t.Fatalf("rank %d %d rev %v: %d entries, want %d", start, stop, reverse, len(got), len(want))
				}
			}
		})
	}
}

func head(es []Entry) []Entry { return es[:min(len(es), 3)] }
