package zset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

type propConfig struct {
	name       string
	lim        Limits
	pool       int  // distinct members in play
	target     int  // inserts are favoured while the set is smaller
	ops        int  // operations per seed
	sameScore  bool // all scores 0, so lex ranges are meaningful
	convert    bool // randomly force conversions and Shrink
	checkEvery int
	phases     bool // grow, churn, then drain
}

// poolMember makes varied members: the empty string, prefixes of one
// another, lengths from 0 to ~70 bytes (around the 64-byte threshold).
func poolMember(i int) string {
	switch i % 11 {
	case 0:
		return strings.Repeat("a", i%9) // "", "a", "aa", ...: prefixes
	case 1:
		return "long-" + strings.Repeat("x", 55+i%15) + strconv.Itoa(i)
	}
	return "m" + strconv.FormatInt(int64(i)*7919%100003, 36)
}

func randScore(r *rand.Rand) float64 {
	switch r.IntN(12) {
	case 0:
		return math.Inf(1)
	case 1:
		return math.Inf(-1)
	case 2:
		return math.Copysign(0, -1)
	case 3, 4, 5, 6, 7:
		return float64(r.IntN(21) - 10)
	}
	return math.Round(r.NormFloat64()*1000) / 8
}

func randScoreRange(r *rand.Rand) ScoreRange {
	sr := ScoreRange{Min: randScore(r), Max: randScore(r), MinExclusive: r.IntN(2) == 0, MaxExclusive: r.IntN(2) == 0}
	if r.IntN(4) != 0 && sr.Min > sr.Max {
		sr.Min, sr.Max = sr.Max, sr.Min
	}
	return sr
}

func randLexBound(r *rand.Rand, pool int) LexBound {
	switch r.IntN(8) {
	case 0:
		return LexBound{Kind: LexNegInf}
	case 1:
		return LexBound{Kind: LexPosInf}
	}
	v := poolMember(r.IntN(pool))
	if r.IntN(3) == 0 {
		v += "\x00"
	}
	return LexBound{Kind: LexKind(r.IntN(2)), Value: v}
}

func randLexRange(r *rand.Rand, pool int) LexRange {
	lr := LexRange{Min: randLexBound(r, pool), Max: randLexBound(r, pool)}
	if r.IntN(4) != 0 && lr.Min.Kind <= LexExclusive && lr.Max.Kind <= LexExclusive && lr.Min.Value > lr.Max.Value {
		lr.Min.Value, lr.Max.Value = lr.Max.Value, lr.Min.Value
	}
	return lr
}

func randRank(r *rand.Rand, n int) int {
	switch r.IntN(6) {
	case 0:
		return -1 - r.IntN(3)
	case 1:
		return n + r.IntN(3)
	}
	return r.IntN(n + 1)
}

func runProperty(t *testing.T, cfg propConfig, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	s := New(cfg.lim)
	m := &model{}
	score := func() float64 {
		if cfg.sameScore {
			return 0
		}
		return randScore(r)
	}
	fail := func(op int, format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d op %d (len %d, %v): %s", seed, op, len(m.es), s.Encoding(), fmt.Sprintf(format, args...))
	}
	maxLen, maxInners, encChanges := 0, 0, 0
	prevEnc := s.Encoding()
	defer func() {
		t.Logf("seed %d: max len %d, max inner nodes %d, encoding changes %d", seed, maxLen, maxInners, encChanges)
	}()
	for op := 0; op < cfg.ops; op++ {
		maxLen = max(maxLen, len(m.es))
		if s.big != nil {
			maxInners = max(maxInners, s.big.t.ninners)
		}
		if s.Encoding() != prevEnc {
			encChanges++
			prevEnc = s.Encoding()
		}
		member := poolMember(r.IntN(cfg.pool))
		k := r.IntN(100)
		draining := cfg.phases && op*3/cfg.ops == 2
		switch {
		case draining && k < 40:
			// Grow, churn, then drain, so trees gain and lose levels.
			k = 30 // delete
		case !draining && len(m.es) < cfg.target && r.IntN(2) == 0:
			k = 0 // add
		}
		switch {
		case k < 25: // Add
			sc := score()
			if got, want := s.Add(member, sc), m.add(member, sc); got != want {
				fail(op, "Add(%q, %v) = %v, want %v", member, sc, got, want)
			}
		case k < 35: // Delete
			if got, want := s.Delete(member), m.del(member); got != want {
				fail(op, "Delete(%q) = %v, want %v", member, got, want)
			}
		case k < 38: // Incr
			d := score()
			cur, found := m.score(member)
			want := d
			if found {
				want = cur + d
			}
			got, res, ok := s.Incr(member, d)
			if math.IsNaN(want) {
				if ok {
					fail(op, "Incr(%q, %v) ok on NaN", member, d)
				}
				break
			}
			if wantRes := m.add(member, want); !ok || res != wantRes || math.Float64bits(got) != math.Float64bits(want) {
				fail(op, "Incr(%q, %v) = %v %v %v, want %v %v", member, d, got, res, ok, want, wantRes)
			}
		case k < 42: // Score
			got, ok := s.Score(member)
			want, wok := m.score(member)
			if ok != wok || math.Float64bits(got) != math.Float64bits(want) {
				fail(op, "Score(%q) = %v %v, want %v %v", member, got, ok, want, wok)
			}
		case k < 47: // Rank, ByRank, CountBefore
			rev := r.IntN(2) == 0
			got, ok := s.Rank(member, rev)
			want, wok := m.rank(member, rev)
			if ok != wok || got != want {
				fail(op, "Rank(%q, %v) = %d %v, want %d %v", member, rev, got, ok, want, wok)
			}
			rank := randRank(r, len(m.es))
			e, ok := s.ByRank(rank, rev)
			we := m.byRank(rank, rank, rev)
			if ok != (len(we) == 1) || (ok && !sameEntries([]Entry{e}, we)) {
				fail(op, "ByRank(%d, %v) = %v %v, want %v", rank, rev, e, ok, we)
			}
			sc := score()
			wantBefore := 0
			for _, x := range m.es {
				if less(x, Entry{member, sc}) {
					wantBefore++
				}
			}
			if got := s.CountBefore(sc, member); got != wantBefore {
				fail(op, "CountBefore(%v, %q) = %d, want %d", sc, member, got, wantBefore)
			}
		case k < 53: // RangeByRank
			start, stop, rev := randRank(r, len(m.es)), randRank(r, len(m.es)), r.IntN(2) == 0
			got, want := collect(s.RangeByRank(start, stop, rev)), m.byRank(start, stop, rev)
			if !sameEntries(got, want) {
				fail(op, "RangeByRank(%d, %d, %v) = %s, want %s", start, stop, rev, fmtEntries(got), fmtEntries(want))
			}
			if err := spanError(s.SpanByRank(start, stop, rev), want); err != nil {
				fail(op, "SpanByRank(%d, %d, %v): %v", start, stop, rev, err)
			}
		case k < 62: // RangeByScore, CountByScore
			sr, rev := randScoreRange(r), r.IntN(2) == 0
			offset, limit := randWindow(r, len(m.es))
			got, want := collect(s.RangeByScore(sr, rev, offset, limit)), m.byScore(sr, rev, offset, limit)
			if !sameEntries(got, want) {
				fail(op, "RangeByScore(%+v, %v, %d, %d) = %s, want %s", sr, rev, offset, limit, fmtEntries(got), fmtEntries(want))
			}
			if err := spanError(s.SpanByScore(sr, rev, offset, limit), want); err != nil {
				fail(op, "SpanByScore(%+v, %v, %d, %d): %v", sr, rev, offset, limit, err)
			}
			if got, want := s.CountByScore(sr), len(m.byScore(sr, false, 0, -1)); got != want {
				fail(op, "CountByScore(%+v) = %d, want %d", sr, got, want)
			}
		case k < 68: // RangeByLex, CountByLex
			if !cfg.sameScore {
				break
			}
			lr, rev := randLexRange(r, cfg.pool), r.IntN(2) == 0
			offset, limit := randWindow(r, len(m.es))
			got, want := collect(s.RangeByLex(lr, rev, offset, limit)), m.byLex(lr, rev, offset, limit)
			if !sameEntries(got, want) {
				fail(op, "RangeByLex(%v %v, %v, %d, %d) = %s, want %s", lr.Min, lr.Max, rev, offset, limit, fmtEntries(got), fmtEntries(want))
			}
			if err := spanError(s.SpanByLex(lr, rev, offset, limit), want); err != nil {
				fail(op, "SpanByLex(%v %v, %v, %d, %d): %v", lr.Min, lr.Max, rev, offset, limit, err)
			}
			if got, want := s.CountByLex(lr), len(m.byLex(lr, false, 0, -1)); got != want {
				fail(op, "CountByLex(%v %v) = %d, want %d", lr.Min, lr.Max, got, want)
			}
		case k < 72: // range deletions, rarer in big sets so that they grow
			if r.IntN(max(1, len(m.es)/100)) != 0 {
				break
			}
			switch r.IntN(3) {
			case 0:
				start := randRank(r, len(m.es))
				stop := start + r.IntN(80) - 5
				want := m.deleteIf(func(i int, _ Entry) bool { return i >= start && i <= stop })
				if got := s.DeleteByRank(start, stop); got != want {
					fail(op, "DeleteByRank(%d, %d) = %d, want %d", start, stop, got, want)
				}
			case 1:
				sr := randScoreRange(r)
				if !cfg.sameScore && r.IntN(3) != 0 {
					// Narrow ranges mostly; wide ones would empty the set.
					sr.Max = sr.Min + float64(r.IntN(3))
				}
				want := m.deleteIf(func(_ int, e Entry) bool { return inScore(sr, e.Score) })
				if got := s.DeleteByScore(sr); got != want {
					fail(op, "DeleteByScore(%+v) = %d, want %d", sr, got, want)
				}
			case 2:
				if !cfg.sameScore {
					break
				}
				lr := randLexRange(r, cfg.pool)
				if r.IntN(3) != 0 && lr.Min.Kind <= LexExclusive {
					lr.Max = LexBound{Kind: LexExclusive, Value: lr.Min.Value + "\x30"}
				}
				want := m.deleteIf(func(_ int, e Entry) bool { return inLex(lr, e.Member) })
				if got := s.DeleteByLex(lr); got != want {
					fail(op, "DeleteByLex(%v %v) = %d, want %d", lr.Min, lr.Max, got, want)
				}
			}
		case k < 76: // PopMin, PopMax
			count := r.IntN(6) - 1
			highest := r.IntN(2) == 0
			want := limitOffset(m.byRank(0, count-1, highest), 0, -1)
			var got []Entry
			if highest {
				got = s.PopMax(count)
			} else {
				got = s.PopMin(count)
			}
			if !sameEntries(got, want) {
				fail(op, "Pop(%d, highest=%v) = %s, want %s", count, highest, fmtEntries(got), fmtEntries(want))
			}
			for _, e := range want {
				m.del(e.Member)
			}
		case k < 79: // RandomEntries
			count := r.IntN(min(len(m.es), 60)+3) - 1
			if r.IntN(10) == 0 {
				count = len(m.es) - 2 + r.IntN(4)
			}
			distinct := r.IntN(2) == 0
			got := s.RandomEntries(r, count, distinct)
			wantLen := max(count, 0)
			if distinct {
				wantLen = min(wantLen, len(m.es))
			}
			if len(m.es) == 0 {
				wantLen = 0
			}
			if len(got) != wantLen {
				fail(op, "RandomEntries(%d, %v) returned %d entries, want %d", count, distinct, len(got), wantLen)
			}
			scores := make(map[string]float64, len(m.es))
			for _, e := range m.es {
				scores[e.Member] = e.Score
			}
			seen := map[string]bool{}
			for _, e := range got {
				if sc, ok := scores[e.Member]; !ok || sc != e.Score {
					fail(op, "RandomEntries returned %v, not in the set", e)
				}
				if distinct && seen[e.Member] {
					fail(op, "RandomEntries(distinct) repeated %q", e.Member)
				}
				seen[e.Member] = true
			}
			if e, ok := s.RandomEntry(r); ok != (len(m.es) > 0) || (ok && m.find(e.Member) < 0) {
				fail(op, "RandomEntry = %v %v", e, ok)
			}
		case k < 81: // conversions
			if !cfg.convert {
				break
			}
			switch r.IntN(3) {
			case 0:
				s.Convert(Skiplist)
			case 1:
				s.Convert(Listpack)
			case 2:
				fits := s.Encoding() == Listpack || len(m.es) <= cfg.lim.MaxEntries
				for _, e := range m.es {
					if s.Encoding() == Listpack {
						break
					}
					fits = fits && len(e.Member) <= cfg.lim.MaxValue
				}
				if got := s.Shrink(); got != fits || (s.Encoding() == Listpack) != fits {
					fail(op, "Shrink() = %v (%v), want %v", got, s.Encoding(), fits)
				}
			}
		case k < 82: // Clone
			c := s.Clone()
			if err := invariantError(c, m.es); err != nil {
				fail(op, "clone: %v", err)
			}
			if c.Encoding() != s.Encoding() {
				fail(op, "clone encoding %v, want %v", c.Encoding(), s.Encoding())
			}
			c.Add("clone-only", 1)
			if _, ok := s.Score("clone-only"); ok {
				fail(op, "clone shares storage")
			}
		default: // encoding rule: compact iff it never passed the limits
			if !cfg.convert && s.Encoding() == Listpack && len(m.es) > cfg.lim.MaxEntries {
				fail(op, "compact set of %d entries exceeds limits %+v", len(m.es), cfg.lim)
			}
		}
		if (op+1)%cfg.checkEvery == 0 || op == cfg.ops-1 {
			if err := invariantError(s, m.es); err != nil {
				fail(op, "%v", err)
			}
			if all := collect(s.All()); !sameEntries(all, m.es) {
				fail(op, "All() differs")
			}
		}
	}
}

func TestProperty(t *testing.T) {
	configs := []propConfig{
		{name: "default-limits", lim: DefaultLimits(), pool: 500, target: 300, ops: 6000, checkEvery: 50},
		{name: "always-large", lim: Limits{}, pool: 600, target: 400, ops: 6000, checkEvery: 50},
		{name: "always-compact", lim: Limits{MaxEntries: 1 << 30, MaxValue: 1 << 30}, pool: 400, target: 250, ops: 5000, checkEvery: 50},
		{name: "tiny-limits-converting", lim: Limits{MaxEntries: 8, MaxValue: 6}, pool: 30, target: 12, ops: 6000, checkEvery: 1, convert: true},
		{name: "converting", lim: DefaultLimits(), pool: 250, target: 140, ops: 6000, checkEvery: 25, convert: true},
		{name: "lex", lim: DefaultLimits(), pool: 600, target: 400, ops: 6000, checkEvery: 50, sameScore: true},
		{name: "lex-converting", lim: Limits{MaxEntries: 16, MaxValue: 64}, pool: 60, target: 20, ops: 6000, checkEvery: 10, sameScore: true, convert: true},
		{name: "deep-tree", lim: DefaultLimits(), pool: 12000, target: 8000, ops: 40000, checkEvery: 2000, phases: true},
		{name: "deep-tree-lex", lim: DefaultLimits(), pool: 12000, target: 8000, ops: 30000, checkEvery: 2000, phases: true, sameScore: true},
	}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			seeds := []uint64{1, 2, 3}
			if testing.Short() || cfg.pool > 1000 {
				seeds = seeds[:1]
			}
			for _, seed := range seeds {
				runProperty(t, cfg, seed)
			}
		})
	}
}

// TestTreeGrowAndDrain drives the B+tree through three levels and back,
// in orders that stress each split and merge path: ascending, descending
// and random inserts; deletes from the front, the back, the middle, at
// random, and by wide ranges.
func TestTreeGrowAndDrain(t *testing.T) {
	const n = 20000
	orders := map[string]func(r *rand.Rand) []int{
		"ascending": func(*rand.Rand) []int {
			p := make([]int, n)
			for i := range p {
				p[i] = i
			}
			return p
		},
		"descending": func(*rand.Rand) []int {
			p := make([]int, n)
			for i := range p {
				p[i] = n - 1 - i
			}
			return p
		},
		"random": func(r *rand.Rand) []int { return r.Perm(n) },
	}
	drains := []string{"front", "back", "middle", "random", "ranges", "ranges-from-end"}
	for oname, order := range orders {
		for _, drain := range drains {
			t.Run(oname+"/"+drain, func(t *testing.T) {
				r := rand.New(rand.NewPCG(7, uint64(len(drain))))
				s := New(DefaultLimits())
				for _, i := range order(r) {
					s.Add(fmt.Sprintf("k%06d", i), float64(i/3))
				}
				if s.Encoding() != Skiplist || s.big.t.ninners < 2 {
					t.Fatalf("expected a multi-level tree, got %v with %d inner nodes", s.Encoding(), s.big.t.ninners)
				}
				checkInvariants(t, s, nil)
				want := collect(s.All())
				steps := 0
				for s.Len() > 0 {
					var lo, cnt int
					switch drain {
					case "front":
						lo, cnt = 0, 1
					case "back":
						lo, cnt = s.Len()-1, 1
					case "middle":
						lo, cnt = s.Len()/2, 1
					case "random":
						lo, cnt = r.IntN(s.Len()), 1
					case "ranges":
						lo = r.IntN(s.Len())
						cnt = min(1+r.IntN(700), s.Len()-lo)
					case "ranges-from-end":
						cnt = min(1+r.IntN(300), s.Len())
						lo = s.Len() - cnt
					}
					if cnt == 1 && steps%2 == 0 {
						if !s.Delete(want[lo].Member) {
							t.Fatalf("Delete(%q) = false", want[lo].Member)
						}
					} else if got := s.DeleteByRank(lo, lo+cnt-1); got != cnt {
						t.Fatalf("DeleteByRank(%d, %d) = %d", lo, lo+cnt-1, got)
					}
					want = slices.Delete(want, lo, lo+cnt)
					steps++
					if steps%499 == 0 || s.Len() < 64 {
						checkInvariants(t, s, want)
					}
				}
				checkInvariants(t, s, want)
				if s.big.t.nleaves != 1 || s.big.t.ninners != 0 {
					t.Fatalf("empty tree keeps %d leaves, %d inner nodes", s.big.t.nleaves, s.big.t.ninners)
				}
			})
		}
	}
}
