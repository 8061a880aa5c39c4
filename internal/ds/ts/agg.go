package ts

import (
	"math"
	"sort"
)

// Agg is an aggregation type.
type Agg uint8

// The aggregators of AGGREGATION and compaction rules.
const (
	AggAvg Agg = iota
	AggSum
	AggMin
	AggMax
	AggRange
	AggCount
	AggFirst
	AggLast
	AggStdP
	AggStdS
	AggVarP
	AggVarS
	AggTwa
)

var aggNames = [...]string{"avg", "sum", "min", "max", "range", "count", "first", "last", "std.p", "std.s", "var.p", "var.s", "twa"}

// String is the aggregator's name in lower case.
func (a Agg) String() string { return aggNames[a] }

// ParseAgg reads an aggregator name, any case.
func ParseAgg(s string) (Agg, bool) {
	for i, n := range aggNames {
		if equalFold(s, n) {
			return Agg(i), true
		}
	}
	return 0, false
}

// BucketTS says which timestamp reports a bucket.
type BucketTS uint8

// BUCKETTIMESTAMP - (start), + (end), ~ (middle).
const (
	BucketStart BucketTS = iota
	BucketEnd
	BucketMid
)

// BucketStartOf is the start of the bucket holding t: buckets of duration d
// start at multiples of d shifted by align.
func BucketStartOf(t, d, align int64) int64 {
	m := (t - align) % d
	if m < 0 {
		m += d
	}
	return t - m
}

// bucket accumulates the samples of one bucket.
type bucket struct {
	n           int64
	sum         float64
	min, max    float64
	first, last float64
	dsum, dsq   float64 // sum of (v - first) and of its squares: the variance, shifted for accuracy
	firstT      int64
	lastT       int64
	area        float64 // twa: trapezoid area between the bucket's samples
}

func (b *bucket) add(t int64, v float64) {
	if b.n == 0 {
		b.min, b.max, b.first, b.firstT = v, v, v, t
	} else {
		if v < b.min {
			b.min = v
		}
		if v > b.max {
			b.max = v
		}
		b.area += (b.last + v) / 2 * float64(t-b.lastT)
		d := v - b.first
		b.dsum += d
		b.dsq += d * d
	}
	b.n++
	b.sum += v
	b.last, b.lastT = v, t
}

// m2 is the sum of squared deviations from the mean.
func (b *bucket) m2() float64 {
	m := b.dsq - b.dsum*b.dsum/float64(b.n)
	return max(m, 0)
}

// interpolate is the value at t on the line through a and b.
func interpolate(a, b Sample, t int64) float64 {
	if b.T == a.T {
		return a.V
	}
	return a.V + (b.V-a.V)*float64(t-a.T)/float64(b.T-a.T)
}

// value is the bucket's aggregate. start and end bound the bucket; prev and
// next are the samples just outside it, used by twa to weigh the edges.
func (b *bucket) value(a Agg, start, end int64, prev, next *Sample) float64 {
	if b.n == 0 {
		switch a {
		case AggSum, AggCount:
			return 0
		case AggTwa:
			if prev != nil && next != nil {
				return (interpolate(*prev, *next, start) + interpolate(*prev, *next, end)) / 2
			}
		}
		return math.NaN()
	}
	n := float64(b.n)
	switch a {
	case AggAvg:
		return b.sum / n
	case AggSum:
		return b.sum
	case AggMin:
		return b.min
	case AggMax:
		return b.max
	case AggRange:
		return b.max - b.min
	case AggCount:
		return n
	case AggFirst:
		return b.first
	case AggLast:
		return b.last
	case AggVarP:
		return b.m2() / n
	case AggVarS:
		if b.n == 1 {
			return 0
		}
		return b.m2() / (n - 1)
	case AggStdP:
		return math.Sqrt(b.m2() / n)
	case AggStdS:
		if b.n == 1 {
			return 0
		}
		return math.Sqrt(b.m2() / (n - 1))
	}
	// twa: the area under the line through the samples, extended to the
	// bucket's edges by interpolating towards the neighbours when there
	// are any, divided by the time it covers.
	area, lo, hi := b.area, b.firstT, b.lastT
	if prev != nil && start < b.firstT {
		vs := interpolate(*prev, Sample{b.firstT, b.first}, start)
		area += (vs + b.first) / 2 * float64(b.firstT-start)
		lo = start
	}
	if next != nil && end > b.lastT {
		ve := interpolate(Sample{b.lastT, b.last}, *next, end)
		area += (b.last + ve) / 2 * float64(end-b.lastT)
		hi = end
	}
	if hi == lo {
		return b.first
	}
	return area / float64(hi-lo)
}

// Aggregation is an AGGREGATION clause.
type Aggregation struct {
	Type   Agg
	Bucket int64 // duration, ms (> 0)
	Align  int64
	TS     BucketTS
	Empty  bool
}

// RangeOpts are TS.RANGE's options.
type RangeOpts struct {
	From, To    int64
	FilterTS    []int64 // sorted; used when HasFilterTS
	HasFilterTS bool
	HasValue    bool
	MinV, MaxV  float64
	Count       int // < 0: no limit
	Reverse     bool
	Agg         *Aggregation
	// Extra, when set, is a sample newer than the series' latest that the
	// query treats as stored (LATEST: a compaction's open bucket).
	Extra *Sample
}

// scan is Series.Scan over the options' range, Extra included.
func (s *Series) scan(o *RangeOpts, fn func(t int64, v float64) bool) {
	more := true
	s.Scan(o.From, o.To, func(t int64, v float64) bool {
		more = fn(t, v)
		return more
	})
	if e := o.Extra; more && e != nil && e.T >= o.From && e.T <= o.To {
		fn(e.T, e.V)
	}
}

// scanReverse is Series.ScanReverse over the options' range, Extra
// included.
func (s *Series) scanReverse(o *RangeOpts, fn func(t int64, v float64) bool) {
	if e := o.Extra; e != nil && e.T >= o.From && e.T <= o.To && !fn(e.T, e.V) {
		return
	}
	s.ScanReverse(o.From, o.To, fn)
}

// Reduce aggregates values with one aggregator, as GROUPBY ... REDUCE
// does across series (first, last and twa are not reducers).
func Reduce(a Agg, vs []float64) float64 {
	var b bucket
	for i, v := range vs {
		b.add(int64(i), v)
	}
	return b.value(a, 0, 0, nil, nil)
}

func (o *RangeOpts) keep(t int64, v float64) bool {
	if o.HasFilterTS {
		i := sort.Search(len(o.FilterTS), func(i int) bool { return o.FilterTS[i] >= t })
		if i == len(o.FilterTS) || o.FilterTS[i] != t {
			return false
		}
	}
	return !o.HasValue || (v >= o.MinV && v <= o.MaxV)
}

// Range answers TS.RANGE / TS.REVRANGE.
func (s *Series) Range(o *RangeOpts) []Sample {
	var out []Sample
	if o.Agg == nil {
		fn := func(t int64, v float64) bool {
			if o.keep(t, v) {
				out = append(out, Sample{t, v})
			}
			return o.Count < 0 || len(out) < o.Count
		}
		if o.Count == 0 {
			return nil
		}
		if o.Reverse {
			s.scanReverse(o, fn)
		} else {
			s.scan(o, fn)
		}
		return out
	}
	limit := -1
	if !o.Reverse {
		limit = o.Count
	}
	return o.finish(s.aggregate(o, limit))
}

// finish puts samples produced in timestamp order in the reply's order and
// applies COUNT.
func (o *RangeOpts) finish(out []Sample) []Sample {
	if o.Reverse {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	if o.Count >= 0 && len(out) > o.Count {
		out = out[:o.Count]
	}
	return out
}

// aggregate computes the buckets of [From, To] in order, at most limit of
// them (limit < 0: all).
func (s *Series) aggregate(o *RangeOpts, limit int) []Sample {
	a := o.Agg
	d := a.Bucket
	var out []Sample
	full := func() bool { return limit >= 0 && len(out) >= limit }
	// A reverse query with COUNT keeps only the last tail buckets: a bucket
	// followed by tail others cannot be in the reply, and no bucket's value
	// depends on the buckets before it (the neighbours are passed), so runs
	// of empty buckets are cut to their last tail and out is trimmed as it
	// grows. Without this, EMPTY over a long span would walk every bucket.
	tail := -1
	if o.Reverse && o.Count >= 0 && limit < 0 {
		tail = o.Count
	}
	emit := func(start int64, b *bucket, prev, next *Sample) {
		t := max(start, 0)
		switch a.TS {
		case BucketEnd:
			t = start + d
		case BucketMid:
			t = start + d/2
		}
		end := start + d
		if end < start { // the bucket reaches past MaxInt64
			end = math.MaxInt64
		}
		out = append(out, Sample{t, b.value(a.Type, start, end, prev, next)})
		if tail >= 0 && len(out) >= 2*tail+64 {
			out = append(out[:0], out[len(out)-tail:]...)
		}
	}
	var prevOut, nextOut *Sample // neighbours outside the range, for twa
	if a.Type == AggTwa {
		if o.From > math.MinInt64 {
			if p, ok := s.Prev(o.From - 1); ok {
				prevOut = &p
			}
		}
		if o.To < math.MaxInt64 {
			if n, ok := s.Next(o.To + 1); ok {
				nextOut = &n
			}
		}
	}
	empties := func(from, to int64, prev, next *Sample) { // empty buckets starting in [from, to]
		if from > to || tail == 0 {
			return
		}
		if tail > 0 {
			// the last tail of them; (to-from) may pass MaxInt64 as a
			// difference, not as an unsigned one
			n := uint64(to-from)/uint64(d) + 1
			if n > uint64(tail) {
				from = int64(uint64(from) + (n-uint64(tail))*uint64(d))
			}
		}
		var e bucket
		for st := from; st <= to && !full(); {
			emit(st, &e, prev, next)
			ns := st + d
			if ns < st { // past MaxInt64: st was the last bucket start
				break
			}
			st = ns
		}
	}
	var cur bucket
	var curStart int64
	started := false
	prev := prevOut
	var last Sample
	if limit == 0 {
		return nil
	}
	filtered := o.HasFilterTS || o.HasValue
	curEnd := int64(math.MinInt64)
	// With whole chunks taken from their summaries (summary.go), sums
	// need to know whether the bucket's samples so far are exact integers.
	runs := !filtered && summarizable(a.Type) && !walkOnly
	var ex exactness
	// enter makes the bucket holding t current, emitting the one before;
	// v is the sample at t (twa's neighbour). False: the reply is full.
	enter := func(t int64, v float64) bool {
		bs := BucketStartOf(t, d, a.Align)
		if bs > math.MaxInt64-d {
			curEnd = math.MaxInt64
		} else {
			curEnd = bs + d
		}
		if !started {
			started = true
			if a.Empty && a.Type == AggTwa && prevOut != nil {
				empties(BucketStartOf(o.From, d, a.Align), bs-d, prevOut, &Sample{t, v})
			}
		} else if bs != curStart {
			next := Sample{t, v}
			emit(curStart, &cur, prev, &next)
			if a.Empty {
				empties(curStart+d, bs-d, &last, &next)
			}
			p := last
			prev = &p
			cur = bucket{}
			ex = exactness{}
		}
		if full() {
			return false
		}
		curStart = bs
		return true
	}
	sample := func(t int64, v float64) bool {
		if filtered && !o.keep(t, v) {
			return true
		}
		if !started || t >= curEnd {
			if !enter(t, v) {
				return false
			}
		}
		cur.add(t, v)
		if runs {
			ex.add(v)
		}
		last = Sample{t, v}
		return true
	}
	if runs {
		bucketLast := func(t int64) int64 {
			bs := BucketStartOf(t, d, a.Align)
			if bs > math.MaxInt64-d {
				return math.MaxInt64
			}
			return bs + d - 1
		}
		minmax := a.Type != AggCount && a.Type != AggSum && a.Type != AggAvg
		s.scanRuns(o, bucketLast, sample, func(i, j int, start int64) (bool, bool) {
			r := s.run(i, j, start, minmax)
			fresh := !started || start >= curEnd
			if !r.fits(a.Type, fresh, &ex) {
				return false, true
			}
			if fresh && !enter(start, math.NaN()) {
				return true, false
			}
			cur.merge(&r, &ex)
			last = Sample{s.chunks[j].last, s.chunks[j].lastValue()}
			return true, true
		})
	} else {
		s.scan(o, sample)
	}
	if full() {
		return out
	}
	if !started {
		if a.Empty && a.Type == AggTwa && prevOut != nil && nextOut != nil {
			empties(BucketStartOf(o.From, d, a.Align), BucketStartOf(o.To, d, a.Align), prevOut, nextOut)
		}
		return out
	}
	emit(curStart, &cur, prev, nextOut)
	if a.Empty && a.Type == AggTwa && nextOut != nil {
		empties(curStart+d, BucketStartOf(o.To, d, a.Align), &last, nextOut)
	}
	if limit >= 0 && len(out) > limit {
		out = out[:limit]
	}
	if tail >= 0 && len(out) > tail {
		out = out[len(out)-tail:]
	}
	return out
}
