package zset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
)

// randWindow draws a LIMIT offset and count for a range of at most n
// entries: none, small ones around zero, ones that reach past the
// range's end or across leaves, and extreme ones.
func randWindow(r *rand.Rand, n int) (offset, limit int) {
	switch r.IntN(8) {
	case 0, 1, 2:
		return 0, -1
	case 3, 4, 5:
		return r.IntN(10) - 1, r.IntN(12) - 1
	case 6:
		return r.IntN(n + 3), r.IntN(n/2 + 3)
	}
	extremes := [][2]int{{0, math.MaxInt}, {math.MaxInt, 1}, {n / 3, math.MaxInt}, {1, -5}, {math.MaxInt, math.MaxInt}, {0, 0}}
	e := extremes[r.IntN(len(extremes))]
	return e[0], e[1]
}

// spanError checks a Span against the entries it should hold: its length,
// its walk (twice, since a walk must not use up the span), and a walk
// stopped early.
func spanError(sp Span, want []Entry) error {
	if sp.Len() != len(want) {
		return fmt.Errorf("Len() = %d, want %d (%s)", sp.Len(), len(want), fmtEntries(want))
	}
	for pass := 0; pass < 2; pass++ {
		if got := collect(sp.Walk); !sameEntries(got, want) {
			return fmt.Errorf("walk %d = %s, want %s", pass+1, fmtEntries(got), fmtEntries(want))
		}
	}
	stop := len(want) / 2
	var got []Entry
	sp.Walk(func(m string, sc float64) bool {
		got = append(got, Entry{m, sc})
		return len(got) <= stop
	})
	if len(want) > 0 && !sameEntries(got, want[:stop+1]) {
		return fmt.Errorf("walk stopped after %d = %s", stop+1, fmtEntries(got))
	}
	return nil
}

func TestSpanZero(t *testing.T) {
	var sp Span
	if err := spanError(sp, nil); err != nil {
		t.Fatal(err)
	}
}

// TestSpanLeafBoundaries ranges over a multi-level tree with distinct
// integer scores, starting at every rank (so also at every leaf's first
// and last entry, where the descent ends past a leaf's end), in both
// directions and with offsets and limits that cross leaves.
func TestSpanLeafBoundaries(t *testing.T) {
	const n = 9000
	r := rand.New(rand.NewPCG(11, 12))
	s := New(DefaultLimits())
	all := make([]Entry, n)
	for i, k := range r.Perm(n) {
		s.Add(fmt.Sprintf("k%05d", k), float64(k))
		all[k] = Entry{fmt.Sprintf("k%05d", k), float64(k)}
		if i%1000 == 0 && i > 0 {
			s.Delete(all[k].Member) // some churn: uneven leaves
			s.Add(all[k].Member, all[k].Score)
		}
	}
	if s.big == nil || s.big.t.ninners < 2 {
		t.Fatal("expected a multi-level tree")
	}
	// want is the window of all[lo:hi+1], walked downwards if rev.
	want := func(lo, hi int, rev bool, offset, limit int) []Entry {
		n := hi + 1 - lo
		if offset >= n {
			return nil
		}
		k := n - offset
		if limit >= 0 {
			k = min(k, limit)
		}
		out := make([]Entry, k)
		for i := range out {
			if rev {
				out[i] = all[hi-offset-i]
			} else {
				out[i] = all[lo+offset+i]
			}
		}
		return out
	}
	for k := 0; k < n; k++ {
		for _, width := range []int{0, 1, 50, n} {
			hi := min(k+width, n-1)
			sr := ScoreRange{Min: float64(k), Max: float64(hi)}
			if width == n {
				sr.Max = math.Inf(1)
			}
			for _, rev := range []bool{false, true} {
				for _, w := range [][2]int{{0, 1}, {0, 100}, {1, 100}, {130, 3}} {
					sp := s.SpanByScore(sr, rev, w[0], w[1])
					if err := spanError(sp, want(k, hi, rev, w[0], w[1])); err != nil {
						t.Fatalf("SpanByScore(%+v, %v, %d, %d): %v", sr, rev, w[0], w[1], err)
					}
				}
			}
		}
	}
}

// TestSpanLexTies: equal scores across many leaves, so that every cut
// compares members from the arena.
func TestSpanLexTies(t *testing.T) {
	const n = 3000
	s := New(DefaultLimits())
	m := &model{}
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range r.Perm(n) {
		mem := fmt.Sprintf("%04d", k)
		s.Add(mem, 0)
		m.add(mem, 0)
	}
	for i := 0; i < 3000; i++ {
		lr := randLexRange(r, n)
		if r.IntN(2) == 0 {
			lr.Min = LexBound{Kind: LexKind(r.IntN(2)), Value: fmt.Sprintf("%04d", r.IntN(n))}
			lr.Max = LexBound{Kind: LexKind(r.IntN(2)), Value: fmt.Sprintf("%04d", r.IntN(n))}
		}
		rev := r.IntN(2) == 0
		offset, limit := randWindow(r, n)
		sp := s.SpanByLex(lr, rev, offset, limit)
		if err := spanError(sp, m.byLex(lr, rev, offset, limit)); err != nil {
			t.Fatalf("SpanByLex(%v %v, %v, %d, %d): %v", lr.Min, lr.Max, rev, offset, limit, err)
		}
	}
}

// benchSetAscending is the zset of the types benchmark (bench/sidebyside
// -suite types): 1,000,000 members m:%012d scored 0..999,999, inserted in
// ascending order, so ranks and arena ids follow each other.
var benchSetAscending = sync.OnceValue(func() *Set {
	s := New(DefaultLimits())
	for i := range benchN {
		s.Add(fmt.Sprintf("m:%012d", i), float64(i))
	}
	return s
})

// BenchmarkSpanByScore100of1M is ZRANGEBYSCORE min max LIMIT 0 100 on a
// million members, streamed, with max +inf (the types benchmark's row) or
// min+1000. SpanByScore descends once and counts the window in the
// leaves; "two-descents" finds both ends of the range by rank first (what
// every range did before Span), then descends a third time by rank to
// walk. Toward +inf the second descent follows the same rightmost path
// every time, which stays in cache; a bounded max costs a cold one.
func BenchmarkSpanByScore100of1M(b *testing.B) {
	s := benchSetAscending()
	walk := func(b *testing.B, width float64, span func(sr ScoreRange) Span) {
		r := rand.New(rand.NewPCG(6, 6))
		n := 0
		b.ReportAllocs()
		var ru0, ru1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
		b.ResetTimer()
		for range b.N {
			lo := float64(r.IntN(benchN - 1000))
			sp := span(ScoreRange{Min: lo, Max: lo + width})
			sp.Walk(func(m string, _ float64) bool { n += len(m) & 1; return true })
		}
		b.StopTimer()
		// Wall time on a shared machine stretches; CPU time less so.
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		cpu := ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		if n != 0 {
			b.Fatalf("odd member lengths")
		}
	}
	for _, width := range []float64{inf, 1000} {
		name := "to-inf"
		if width != inf {
			name = "bounded"
		}
		b.Run(name+"/one-descent", func(b *testing.B) {
			walk(b, width, func(sr ScoreRange) Span { return s.SpanByScore(sr, false, 0, 100) })
		})
		b.Run(name+"/two-descents", func(b *testing.B) {
			walk(b, width, func(sr ScoreRange) Span {
				lo, hi := s.scoreSpan(sr)
				lo, hi = window(lo, hi, false, 0, 100)
				return s.ranks(lo, hi, false)
			})
		})
	}
}
