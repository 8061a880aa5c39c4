package ts

import (
	"math"
	"math/rand/v2"
	"testing"
)

// naiveAgg aggregates one bucket's samples directly from their definitions.
func naiveAgg(a Agg, in []Sample, start, end int64, prev, next *Sample) float64 {
	n := float64(len(in))
	if len(in) == 0 {
		switch a {
		case AggSum, AggCount:
			return 0
		case AggTwa:
			if prev != nil && next != nil {
				line := func(t int64) float64 {
					return prev.V + (next.V-prev.V)*float64(t-prev.T)/float64(next.T-prev.T)
				}
				return (line(start) + line(end)) / 2
			}
		}
		return math.NaN()
	}
	sum, mn, mx := 0.0, math.Inf(1), math.Inf(-1)
	for _, s := range in {
		sum += s.V
		mn = min(mn, s.V)
		mx = max(mx, s.V)
	}
	mean := sum / n
	ss := 0.0
	for _, s := range in {
		ss += (s.V - mean) * (s.V - mean)
	}
	svar := 0.0
	if len(in) > 1 {
		svar = ss / (n - 1)
	}
	switch a {
	case AggAvg:
		return mean
	case AggSum:
		return sum
	case AggMin:
		return mn
	case AggMax:
		return mx
	case AggRange:
		return mx - mn
	case AggCount:
		return n
	case AggFirst:
		return in[0].V
	case AggLast:
		return in[len(in)-1].V
	case AggVarP:
		return ss / n
	case AggVarS:
		return svar
	case AggStdP:
		return math.Sqrt(ss / n)
	case AggStdS:
		return math.Sqrt(svar)
	}
	// twa: polyline through the samples, extended to the bucket's edges
	// towards the neighbours, integrated and divided by its span.
	pts := append([]Sample(nil), in...)
	if prev != nil && start < in[0].T {
		f := in[0]
		pts = append([]Sample{{start, prev.V + (f.V-prev.V)*float64(start-prev.T)/float64(f.T-prev.T)}}, pts...)
	}
	if next != nil && end > in[len(in)-1].T {
		l := in[len(in)-1]
		pts = append(pts, Sample{end, l.V + (next.V-l.V)*float64(end-l.T)/float64(next.T-l.T)})
	}
	area := 0.0
	for i := 1; i < len(pts); i++ {
		area += (pts[i-1].V + pts[i].V) / 2 * float64(pts[i].T-pts[i-1].T)
	}
	span := pts[len(pts)-1].T - pts[0].T
	if span == 0 {
		return in[0].V
	}
	return area / float64(span)
}

// naiveRange is RangeOpts with an aggregation computed from the model.
func naiveRange(m model, o *RangeOpts) []Sample {
	a := o.Agg
	var in []Sample
	for _, s := range m.sorted(o.From, o.To) {
		if o.keep(s.T, s.V) {
			in = append(in, s)
		}
	}
	all := m.sorted(math.MinInt64, math.MaxInt64)
	var prevOut, nextOut *Sample
	if a.Type == AggTwa {
		for i := range all {
			if all[i].T < o.From {
				prevOut = &all[i]
			}
			if all[i].T > o.To && nextOut == nil {
				nextOut = &all[i]
			}
		}
	}
	bs := func(t int64) int64 { return BucketStartOf(t, a.Bucket, a.Align) }
	var lo, hi int64
	switch {
	case len(in) > 0:
		lo, hi = bs(in[0].T), bs(in[len(in)-1].T)
		if a.Empty && a.Type == AggTwa && prevOut != nil {
			lo = bs(o.From)
		}
		if a.Empty && a.Type == AggTwa && nextOut != nil {
			hi = bs(o.To)
		}
	case a.Empty && a.Type == AggTwa && prevOut != nil && nextOut != nil:
		lo, hi = bs(o.From), bs(o.To)
	default:
		return nil
	}
	var out []Sample
	i := 0
	for st := lo; st <= hi; st += a.Bucket {
		j := i
		for j < len(in) && in[j].T < st+a.Bucket {
			j++
		}
		if j == i && !a.Empty {
			continue
		}
		prev, next := prevOut, nextOut
		if i > 0 {
			prev = &in[i-1]
		}
		if j < len(in) {
			next = &in[j]
		}
		ts := max(st, 0)
		switch a.TS {
		case BucketEnd:
			ts = st + a.Bucket
		case BucketMid:
			ts = st + a.Bucket/2
		}
		out = append(out, Sample{ts, naiveAgg(a.Type, in[i:j], st, st+a.Bucket, prev, next)})
		i = j
	}
	return o.finish(out)
}

func closeEnough(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func sameApprox(t *testing.T, ctx string, got, want []Sample) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d buckets, want %d\ngot  %v\nwant %v", ctx, len(got), len(want), head(got), head(want))
	}
	for i := range got {
		if got[i].T != want[i].T || !closeEnough(got[i].V, want[i].V) {
			t.Fatalf("%s: bucket %d is %v, want %v", ctx, i, got[i], want[i])
		}
	}
}

func TestAggregationAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for round := 0; round < 400; round++ {
		s := New()
		s.ChunkSize = 64 + 8*r.IntN(60)
		m := model{}
		ts := int64(r.IntN(1000))
		for i := 0; i < 1+r.IntN(600); i++ {
			ts += int64(1 + r.IntN(40))
			if r.IntN(20) == 0 {
				ts += int64(r.IntN(2000)) // gaps make empty buckets
			}
			v := float64(r.IntN(2000))/8 - 100
			s.Add(ts, v, PolicyLast)
			m[ts] = v
		}
		a := &Aggregation{Type: Agg(r.IntN(int(AggTwa) + 1)), Bucket: int64(1 + r.IntN(300)), TS: BucketTS(r.IntN(3)), Empty: r.IntN(2) == 0}
		if r.IntN(2) == 0 {
			a.Align = int64(r.IntN(5000))
		}
		o := &RangeOpts{From: math.MinInt64, To: math.MaxInt64, Count: -1, Agg: a, Reverse: r.IntN(3) == 0}
		if r.IntN(2) == 0 {
			o.From = int64(r.IntN(int(ts) + 100))
			o.To = o.From + int64(r.IntN(int(ts)))
		}
		if r.IntN(3) == 0 {
			o.Count = r.IntN(20)
		}
		if r.IntN(4) == 0 {
			o.HasValue, o.MinV, o.MaxV = true, -50, 50
		}
		if r.IntN(5) == 0 {
			o.HasFilterTS = true
			for t0 := range m {
				if r.IntN(3) == 0 {
					o.FilterTS = append(o.FilterTS, t0)
				}
			}
			sortInts(o.FilterTS)
		}
		sameApprox(t, a.Type.String(), s.Range(o), naiveRange(m, o))
	}
}

func sortInts(a []int64) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func TestTwaDocumentedExample(t *testing.T) {
	s := New()
	for _, v := range []int64{12, 15, 19, 22} {
		s.Add(v, float64(v), PolicyBlock)
	}
	got := s.Range(&RangeOpts{From: math.MinInt64, To: math.MaxInt64, Count: -1, Agg: &Aggregation{Type: AggTwa, Bucket: 10}})
	sameApprox(t, "twa", got, []Sample{{10, 16}, {20, 21}})
	// empty buckets between two far samples take the line through them
	s = New()
	s.Add(10, 34, PolicyBlock)
	s.Add(95, 34, PolicyBlock)
	got = s.Range(&RangeOpts{From: 20, To: 90, Count: -1, Agg: &Aggregation{Type: AggTwa, Bucket: 10, Empty: true}})
	if len(got) != 8 || got[0] != (Sample{20, 34}) || got[7] != (Sample{90, 34}) {
		t.Fatalf("twa EMPTY: %v", got)
	}
	if got = s.Range(&RangeOpts{From: 20, To: 90, Count: -1, Agg: &Aggregation{Type: AggSum, Bucket: 10, Empty: true}}); len(got) != 0 {
		t.Fatalf("sum EMPTY over no samples: %v", got)
	}
}

func TestAlignDocumentedExample(t *testing.T) {
	s := New()
	for _, b := range []int64{1000, 2000, 3000} {
		for k := int64(0); k < 3; k++ {
			s.Add(b+10*k, float64(b/10+10*k), PolicyBlock)
		}
	}
	got := s.Range(&RangeOpts{From: math.MinInt64, To: math.MaxInt64, Count: -1, Agg: &Aggregation{Type: AggMin, Bucket: 20, Align: 10}})
	want := []Sample{{990, 100}, {1010, 110}, {1990, 200}, {2010, 210}, {2990, 300}, {3010, 310}}
	sameApprox(t, "align 10", got, want)
	got = s.Range(&RangeOpts{From: 5, To: math.MaxInt64, Count: -1, Agg: &Aggregation{Type: AggMin, Bucket: 20, Align: 5}})
	want = []Sample{{985, 100}, {1005, 110}, {1985, 200}, {2005, 210}, {2985, 300}, {3005, 310}}
	sameApprox(t, "align start", got, want)
}
