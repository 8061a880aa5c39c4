package ts

import (
	"math"
	"sort"
)

// Chunk summaries: what an aggregation of a whole chunk (count, sum, min,
// max) comes to, kept as the chunk is written, so that a range aggregated
// in buckets longer than a chunk decodes only the chunks at its edges.
//
// The reply must be bit for bit the one a sample-by-sample walk gives.
// Counts, minima and maxima do not depend on grouping (minima and maxima
// only without NaN, which a walk treats by its position). Sums do: float
// addition is not associative. A chunk's sum is its values added in order
// from 0, which is what a bucket that starts empty at the chunk would
// hold; beyond that, sums are grouped only over integer values whose
// absolute values add up to at most 2^53, where every partial sum is an
// exact integer whatever the order.

// walkOnly turns the summaries off, for tests that compare with the walk.
var walkOnly bool

// maxExact is 2^53: integers up to it are exact in a float64.
const maxExact = 1 << 53

// summary is the aggregate of a chunk's values (undefined when empty).
type summary struct {
	sum      float64 // the values added in order from 0
	abs      float64 // the sum of their absolute values, exact unless inexact
	min, max float64
	inexact  bool // a value is not an integer, or abs passed 2^53
	nan      bool // a value is NaN
}

// add takes the chunk's next value; first says it is the chunk's first.
func (m *summary) add(v float64, first bool) {
	if first {
		m.min, m.max = v, v
	} else {
		if v < m.min {
			m.min = v
		}
		if v > m.max {
			m.max = v
		}
	}
	m.sum += v
	if v != v {
		m.nan = true
	}
	if !m.inexact {
		a := math.Abs(v)
		if a > maxExact || v != math.Trunc(v) || m.abs+a > maxExact {
			m.inexact = true
		} else {
			m.abs += a
		}
	}
}

// prefix is the running total of count and sum over a series' chunks in
// order, from the first chunk the series ever had (chunks that retention
// dropped included): the totals of chunks i..j are chunk j's prefix minus
// chunk i's plus chunk i's own.
type prefix struct {
	n   int64
	sum float64 // of the chunks whose summary is exact: exact while abs <= 2^53
	abs float64 // of the same chunks
	bad int64   // chunks whose summary is inexact
}

func (p *prefix) add(c *chunk) {
	p.n += int64(c.n)
	if c.sm.inexact {
		p.bad++
		return
	}
	p.sum += c.sm.sum
	p.abs += c.sm.abs
}

// ensurePrefix makes the prefixes of chunks up to j (a sealed chunk: not
// the last) valid. Writes only ever lower prefixN, so this is where the
// prefixes are computed: a read that needs them pays for what writes
// changed since the last one.
func (s *Series) ensurePrefix(j int) {
	for ; s.prefixN <= j; s.prefixN++ {
		var p prefix
		if k := s.prefixN; k > 0 {
			p = s.chunks[k-1].pre
		}
		c := s.chunks[s.prefixN]
		p.add(c)
		c.pre = p
	}
}

// invalidatePrefix says chunk i changed (or was replaced).
func (s *Series) invalidatePrefix(i int) {
	if s.prefixN > i {
		s.prefixN = i
	}
}

// runTotal is the aggregate of the whole chunks i..j.
type runTotal struct {
	n        int64
	sum      float64
	exact    bool // sum is exact (integers, abs <= 2^53), whatever the grouping
	ordered  bool // sum is the values added in order from 0 (one chunk)
	abs      float64
	min, max float64
	minmax   bool // min and max are valid (no NaN)
}

// run totals the samples of chunks i..j from from on (chunk i's earlier
// samples, if any, decoded and taken off: then there are no min and max);
// withMinMax asks for min and max, which are walked chunk by chunk (counts
// and sums use the prefixes).
func (s *Series) run(i, j int, from int64, withMinMax bool) runTotal {
	r := s.wholeRun(i, j, withMinMax)
	if c := s.chunks[i]; c.first < from {
		// The head's values are exact integers when the chunk's are: its
		// sum and abs are then exact too.
		k, sum, abs := c.head(from)
		r.n -= int64(k)
		r.sum -= sum
		r.abs -= abs
		r.ordered, r.minmax = false, false
	}
	return r
}

// head counts the chunk's samples before t and adds up their values and
// absolute values.
func (c *chunk) head(t int64) (k int, sum, abs float64) {
	if c.raw {
		k = sort.Search(c.n, func(i int) bool { return c.ts[i] >= t })
		for _, v := range c.vs[:k] {
			sum += v
			abs += math.Abs(v)
		}
		return k, sum, abs
	}
	it := c.iter()
	for it.next() && it.t < t {
		v := it.value()
		k++
		sum += v
		abs += math.Abs(v)
	}
	return k, sum, abs
}

// wholeRun totals chunks i..j.
func (s *Series) wholeRun(i, j int, withMinMax bool) runTotal {
	ci := s.chunks[i]
	if i == j {
		return runTotal{n: int64(ci.n), sum: ci.sm.sum, exact: !ci.sm.inexact, ordered: true, abs: ci.sm.abs,
			min: ci.sm.min, max: ci.sm.max, minmax: !ci.sm.nan}
	}
	var r runTotal
	sealed := j
	if j == len(s.chunks)-1 {
		sealed-- // the last chunk takes appends: it has no prefix
	}
	if sealed-i >= 4 {
		s.ensurePrefix(sealed)
		pj := s.chunks[sealed].pre
		bad := pj.bad - ci.pre.bad
		if ci.sm.inexact {
			bad++
		}
		r = runTotal{n: pj.n - ci.pre.n + int64(ci.n), abs: pj.abs - ci.pre.abs + ci.sm.abs,
			exact: bad == 0 && pj.abs <= maxExact}
		if r.exact {
			r.sum = pj.sum - ci.pre.sum + ci.sm.sum
		}
	} else {
		r.exact = true
		for k := i; k <= sealed; k++ {
			r.addChunk(s.chunks[k])
		}
	}
	if sealed < j {
		r.addChunk(s.chunks[j])
	}
	if withMinMax {
		r.minmax = true
		for k := i; k <= j; k++ {
			c := s.chunks[k]
			if c.sm.nan {
				r.minmax = false
				break
			}
			if k == i || c.sm.min < r.min {
				r.min = c.sm.min
			}
			if k == i || c.sm.max > r.max {
				r.max = c.sm.max
			}
		}
	}
	return r
}

func (r *runTotal) addChunk(c *chunk) {
	r.n += int64(c.n)
	r.abs += c.sm.abs
	if c.sm.inexact || r.abs > maxExact {
		r.exact = false
	}
	r.sum += c.sm.sum
}

// summarizable says whether buckets of aggregator a can take whole chunks
// from their summaries.
func summarizable(a Agg) bool {
	switch a {
	case AggCount, AggSum, AggAvg, AggMin, AggMax, AggRange:
		return true
	}
	return false
}

// exactness follows a bucket's samples as summary does a chunk's.
type exactness struct {
	abs     float64
	inexact bool
}

func (e *exactness) add(v float64) {
	if e.inexact {
		return
	}
	a := math.Abs(v)
	if a > maxExact || v != math.Trunc(v) || e.abs+a > maxExact {
		e.inexact = true
		return
	}
	e.abs += a
}

// fits says whether a bucket (fresh: empty; else holding samples whose
// exactness is e) of aggregator a can take the run r and give the value a
// walk of its samples would.
func (r *runTotal) fits(a Agg, fresh bool, e *exactness) bool {
	switch a {
	case AggCount:
		return true
	case AggSum, AggAvg:
		if fresh {
			return r.ordered || r.exact
		}
		return r.exact && !e.inexact && e.abs+r.abs <= maxExact
	}
	return r.minmax
}

// merge adds the run r to the bucket (fits said it may).
func (b *bucket) merge(r *runTotal, e *exactness) {
	if b.n == 0 {
		b.min, b.max = r.min, r.max
	} else {
		if r.min < b.min {
			b.min = r.min
		}
		if r.max > b.max {
			b.max = r.max
		}
	}
	b.n += r.n
	b.sum += r.sum
	e.abs += r.abs
	if !r.exact {
		e.inexact = true
	}
}

// scanRuns is Series.scan for aggregations that take whole chunks from
// their summaries: each run of chunks i..j that ends inside [From, To] and
// inside the bucket of its start (bucketLast(t) is the last timestamp of
// t's bucket), starting at the first chunk's first sample or, for the
// chunk holding From, at From, goes to run, which says whether it took it
// (if not, its first chunk's samples go to fn, and so do the rest of that
// bucket's) and whether to go on; every other sample goes to fn.
func (s *Series) scanRuns(o *RangeOpts, bucketLast func(t int64) int64, fn func(t int64, v float64) bool, run func(i, j int, start int64) (took, more bool)) {
	from, to := max(o.From, s.minKept()), o.To
	more := true
	declined := int64(math.MinInt64) // walk samples through here
	if len(s.chunks) > 0 && from <= to {
		for ci := s.chunkFor(from); ci < len(s.chunks) && more; ci++ {
			c := s.chunks[ci]
			if c.first > to {
				break
			}
			if c.last < from {
				continue
			}
			if start := max(c.first, from); c.last <= to && start > declined {
				lim := min(to, bucketLast(start))
				if c.last <= lim {
					// the chunks from ci on that end by lim: often all (a
					// window that ends now)
					cj := len(s.chunks) - 1
					if s.chunks[cj].last > lim {
						cj = ci + sort.Search(len(s.chunks)-ci, func(k int) bool { return s.chunks[ci+k].last > lim }) - 1
					}
					took, m := run(ci, cj, start)
					if took {
						more = m
						ci = cj
						continue
					}
					declined = lim
				}
			}
			more = c.scan(from, to, fn)
		}
	}
	if e := o.Extra; more && e != nil && e.T >= o.From && e.T <= o.To {
		fn(e.T, e.V)
	}
}
