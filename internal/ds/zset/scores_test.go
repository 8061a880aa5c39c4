package zset

import (
	"strconv"
	"testing"
)

// WalkScores yields what Walk yields, in both encodings and directions.
func TestWalkScoresMatchesWalk(t *testing.T) {
	for _, n := range []int{0, 5, 100, 5000} {
		s := New(DefaultLimits())
		for i := 0; i < n; i++ {
			s.Add("m"+strconv.Itoa(i), float64(i%37))
		}
		for _, reverse := range []bool{false, true} {
			for _, limit := range []int{-1, 3} {
				sp := s.SpanByScore(ScoreRange{Min: 5, Max: 30, MaxExclusive: true}, reverse, 1, limit)
				var want, got []Entry
				sp.Walk(func(m string, sc float64) bool {
					want = append(want, Entry{m, sc})
					return true
				})
				sp.WalkScores(func(sc float64, m MemberRef) bool {
					got = append(got, Entry{m.Member(), sc})
					return true
				})
				if len(got) != len(want) {
					t.Fatalf("n=%d reverse=%v limit=%d: %d entries, want %d", n, reverse, limit, len(got), len(want))
				}
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("n=%d reverse=%v limit=%d: entry %d = %v, want %v", n, reverse, limit, i, got[i], want[i])
					}
				}
			}
		}
	}
}
