package ts

import (
	"math"
	"math/rand"
	"testing"
)

// rangeBoth answers o with and without the chunk summaries.
func rangeBoth(s *Series, o RangeOpts) (fast, walk []Sample) {
	a, b := o, o
	fast = s.Range(&a)
	walkOnly = true
	defer func() { walkOnly = false }()
	walk = s.Range(&b)
	return fast, walk
}

func sameBits(a, b []Sample) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].T != b[i].T || math.Float64bits(a[i].V) != math.Float64bits(b[i].V) {
			return false
		}
	}
	return true
}

func sameSummary(a, b summary) bool {
	bits := math.Float64bits
	return bits(a.sum) == bits(b.sum) && bits(a.abs) == bits(b.abs) && bits(a.min) == bits(b.min) &&
		bits(a.max) == bits(b.max) && a.inexact == b.inexact && a.nan == b.nan
}

// randomValue draws from integers (small, and near 2^53 where sums stop
// being exact), fractions, and the values that compare oddly.
func randomValue(rng *rand.Rand, odd bool) float64 {
	switch r := rng.Intn(20); {
	case r < 10:
		return float64(rng.Intn(5))
	case r < 12:
		return float64(-rng.Intn(1000))
	case r < 14:
		return float64(maxExact/4 - int64(rng.Intn(3)))
	case r < 16:
		return rng.NormFloat64() * 1e3
	case r < 17:
		return 0.1
	}
	if !odd {
		return 1
	}
	return []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1)}[rng.Intn(4)]
}

// randomQuery is a range over (about) [lo, hi] aggregated by any
// aggregator, with buckets from one millisecond to past the whole range.
func randomQuery(rng *rand.Rand, lo, hi int64) RangeOpts {
	from := lo - 10 + rng.Int63n(hi-lo+20)
	to := from + rng.Int63n(hi-from+20)
	if rng.Intn(8) == 0 {
		from, to = math.MinInt64, math.MaxInt64
	}
	span := max(hi-lo, 1)
	d := []int64{1, 1 + rng.Int63n(50), 1 + rng.Int63n(span), span + rng.Int63n(span), math.MaxInt64 / 2}[rng.Intn(5)]
	ag := &Aggregation{Type: Agg(rng.Intn(len(aggNames))), Bucket: d, Align: []int64{0, from, rng.Int63n(1000)}[rng.Intn(3)],
		TS: BucketTS(rng.Intn(3)), Empty: rng.Intn(4) == 0}
	if d > span || ag.Align == math.MinInt64 {
		ag.Empty = false
	}
	if ag.Align == math.MinInt64 {
		ag.Align = 0
	}
	o := RangeOpts{From: from, To: to, Count: -1, Agg: ag, Reverse: rng.Intn(4) == 0}
	if rng.Intn(5) == 0 {
		o.Count = 1 + rng.Intn(5)
	}
	if rng.Intn(10) == 0 {
		o.Extra = &Sample{hi + 1 + rng.Int63n(5), randomValue(rng, true)}
	}
	return o
}

// Aggregations that take whole chunks from their summaries answer bit
// for bit what walking the samples answers, on series written every way
// a series changes: appends, duplicates under each policy, inserts before
// the latest, deletes, retention, and a reload from chunk data.
func TestSummariesMatchWalk(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	policies := []Policy{PolicySum, PolicyLast, PolicyFirst, PolicyMin, PolicyMax}
	for trial := 0; trial < 60; trial++ {
		s := New()
		s.Uncompressed = trial%5 == 0
		s.ChunkSize = 48 + 8*rng.Intn(40)
		if trial%3 == 0 {
			s.Retention = 500 + rng.Int63n(5000)
		}
		odd := trial%4 == 0
		ints := trial%2 == 1 // integers only: sums over many chunks are exact
		value := func() float64 {
			if ints {
				return float64(rng.Intn(4))
			}
			return randomValue(rng, odd)
		}
		var tm int64
		for step := 0; step < 3000; step++ {
			switch r := rng.Intn(100); {
			case r < 70:
				tm += rng.Int63n(4)
				s.Add(tm, value(), policies[rng.Intn(len(policies))])
			case r < 90:
				s.Add(tm-rng.Int63n(tm+1), value(), policies[rng.Intn(len(policies))])
			case r < 93:
				from := tm - rng.Int63n(tm+1)
				s.DeleteRange(from, from+rng.Int63n(30))
			default:
				o := randomQuery(rng, 0, tm)
				if f, w := rangeBoth(s, o); !sameBits(f, w) {
					t.Fatalf("trial %d step %d: %+v %+v:\nsummaries %v\nwalk      %v", trial, step, o, *o.Agg, f, w)
				}
			}
		}
		c := copyByChunkData(t, s)
		c.Retention = s.Retention
		for i, ch := range s.chunks {
			if !sameSummary(ch.sm, c.chunks[i].sm) {
				t.Fatalf("trial %d: chunk %d's summary after reload: %+v, was %+v", trial, i, c.chunks[i].sm, ch.sm)
			}
		}
		cl := s.Clone()
		for i := 0; i < 200; i++ {
			o := randomQuery(rng, 0, tm)
			for _, x := range []*Series{s, c, cl} {
				if f, w := rangeBoth(x, o); !sameBits(f, w) {
					t.Fatalf("trial %d after reload/clone: %+v %+v:\nsummaries %v\nwalk      %v", trial, o, *o.Agg, f, w)
				}
			}
		}
	}
}

// A series that only ever held integers answers a count or sum over a
// long range from its chunks' prefixes: the edges decoded, not the middle.
func TestSummariesSkipTheMiddle(t *testing.T) {
	s := New()
	s.ChunkSize = 128
	for tm := int64(0); tm < 100_000; tm++ {
		s.Add(tm*7, float64(tm%3), PolicySum)
	}
	o := RangeOpts{From: 1000, To: 600_000, Count: -1, Agg: &Aggregation{Type: AggSum, Bucket: 600_000, Align: 1000}}
	f, w := rangeBoth(s, o)
	if !sameBits(f, w) {
		t.Fatalf("summaries %v, walk %v", f, w)
	}
	decoded := 0
	walkOnly = false
	s.scanRuns(&o, func(int64) int64 { return math.MaxInt64 }, func(int64, float64) bool { decoded++; return true },
		func(i, j int, start int64) (bool, bool) { return true, true })
	if per := s.Len() / s.Chunks(); decoded > 2*per {
		t.Fatalf("decoded %d samples, chunks hold %d each", decoded, per)
	}
}
