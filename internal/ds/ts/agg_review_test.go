package ts

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A reverse aggregation with COUNT equals the forward one reversed and cut
// to COUNT, with and without EMPTY, for every aggregator: the reverse path
// keeps only the last COUNT buckets as it goes.
func TestReverseCountMatchesForward(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for round := 0; round < 400; round++ {
		s := New()
		ts := int64(r.IntN(50))
		for i := 0; i < 1+r.IntN(60); i++ {
			ts += int64(1 + r.IntN(200))
			s.Add(ts, float64(r.IntN(100)), PolicyLast)
		}
		agg := &Aggregation{Type: Agg(r.IntN(int(AggTwa) + 1)), Bucket: int64(1 + r.IntN(40)),
			Align: int64(r.IntN(30)), TS: BucketTS(r.IntN(3)), Empty: r.IntN(3) > 0}
		from, to := int64(r.IntN(100)), ts-int64(r.IntN(100))
		if r.IntN(4) == 0 {
			from, to = math.MinInt64, math.MaxInt64
		}
		all := s.Range(&RangeOpts{From: from, To: to, Count: -1, Agg: agg})
		count := r.IntN(8)
		got := s.Range(&RangeOpts{From: from, To: to, Count: count, Reverse: true, Agg: agg})
		var want []Sample
		for i := len(all) - 1; i >= 0 && len(want) < count; i-- {
			want = append(want, all[i])
		}
		if len(got) != len(want) {
			t.Fatalf("round %d %+v count %d: %d buckets, want %d", round, *agg, count, len(got), len(want))
		}
		sameApprox(t, "reverse count", got, want)
	}
}

// EMPTY over a span of 10^12 buckets answers a reverse query with COUNT
// from the last buckets without walking the span.
func TestReverseEmptyCountLongSpan(t *testing.T) {
	s := New()
	s.Add(0, 1, PolicyBlock)
	s.Add(1_000_000_000_000, 2, PolicyBlock)
	for _, a := range []Agg{AggCount, AggTwa, AggSum} {
		got := s.Range(&RangeOpts{From: 0, To: math.MaxInt64, Count: 3, Reverse: true,
			Agg: &Aggregation{Type: a, Bucket: 1, Empty: true}})
		if len(got) != 3 || got[0].T != 1_000_000_000_000 || got[1].T != 999_999_999_999 || got[2].T != 999_999_999_998 {
			t.Fatalf("%v: %v", a, got)
		}
	}
}

// Empty twa buckets reaching the end of the timestamp range stop there
// instead of wrapping past MaxInt64 (which looped, growing the reply,
// forever).
func TestEmptyBucketsStopAtMaxInt64(t *testing.T) {
	s := New()
	s.Add(0, 1, PolicyBlock)
	s.Add(math.MaxInt64, 2, PolicyBlock)
	d := int64(1) << 62
	for _, rev := range []bool{false, true} {
		got := s.Range(&RangeOpts{From: 0, To: math.MaxInt64 - 1, Count: -1, Reverse: rev,
			Agg: &Aggregation{Type: AggTwa, Bucket: d, Empty: true}})
		if len(got) != 2 {
			t.Fatalf("reverse %v: %v", rev, got)
		}
	}
}
