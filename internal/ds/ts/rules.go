package ts

import "math"

// Rule is a compaction rule: the source series aggregates its samples into
// buckets and writes each bucket to Dest when a later sample closes it.
// Only samples added after the rule exists are compacted.
type Rule struct {
	Dest   string
	Agg    Agg
	Bucket int64
	Align  int64

	open    bool
	used    bool  // a bucket was opened once
	origin  int64 // start of the first bucket the rule opened
	start   int64 // start of the open bucket
	cur     bucket
	prev    Sample // the sample before the open bucket (twa)
	hasPrev bool
}

// Write is a change a compaction makes to its destination: set the sample
// at T to V, or, when Delete, remove the samples in [T, To].
type Write struct {
	Dest   string
	T      int64
	V      float64
	Delete bool
	To     int64
}

// AddRule adds a compaction rule to s.
func (s *Series) AddRule(dest string, a Agg, bucket, align int64) {
	s.Rules = append(s.Rules, &Rule{Dest: dest, Agg: a, Bucket: bucket, Align: align})
}

// DeleteRule removes the rule writing to dest; false if there is none.
func (s *Series) DeleteRule(dest string) bool {
	for i, r := range s.Rules {
		if r.Dest == dest {
			s.Rules = append(s.Rules[:i:i], s.Rules[i+1:]...)
			return true
		}
	}
	return false
}

// Rule returns the rule writing to dest.
func (s *Series) Rule(dest string) *Rule {
	for _, r := range s.Rules {
		if r.Dest == dest {
			return r
		}
	}
	return nil
}

// Latest is the aggregate of the rule's open, possibly partial bucket (for
// LATEST); ok is false when no bucket is open.
func (r *Rule) Latest() (Sample, bool) {
	if !r.open || r.cur.n == 0 {
		return Sample{}, false
	}
	var p *Sample
	if r.hasPrev {
		p = &r.prev
	}
	return Sample{max(r.start, 0), r.cur.value(r.Agg, r.start, r.start+r.Bucket, p, nil)}, true
}

// feedRules passes a newly appended latest sample to the rules.
func (s *Series) feedRules(t int64, v float64) []Write {
	var out []Write
	for _, r := range s.Rules {
		bs := BucketStartOf(t, r.Bucket, r.Align)
		switch {
		case !r.open:
			r.open, r.start, r.cur = true, bs, bucket{}
			if !r.used {
				r.used, r.origin = true, bs
			} else {
				// reopened after a delete emptied the open bucket
				s.Scan(bs, t-1, func(t int64, v float64) bool {
					r.cur.add(t, v)
					return true
				})
			}
			r.prev, r.hasPrev = s.Prev(bs - 1)
		case bs != r.start:
			next := Sample{t, v}
			var p *Sample
			if r.hasPrev {
				p = &r.prev
			}
			out = append(out, Write{Dest: r.Dest, T: max(r.start, 0), V: r.cur.value(r.Agg, r.start, r.start+r.Bucket, p, &next)})
			r.prev, r.hasPrev = Sample{r.cur.lastT, r.cur.last}, true
			r.start, r.cur = bs, bucket{}
		}
		r.cur.add(t, v)
	}
	return out
}

// recompute follows an edit of the samples in [from, to] that was not an
// append: the closed buckets it touched are computed again from the source
// (and written, or deleted when they became empty), and the open bucket is
// rebuilt.
func (s *Series) recompute(from, to int64) []Write {
	var out []Write
	for _, r := range s.Rules {
		if !r.open {
			continue
		}
		b0 := max(BucketStartOf(from, r.Bucket, r.Align), r.origin)
		b1 := min(BucketStartOf(to, r.Bucket, r.Align), r.start-r.Bucket)
		if b0 <= b1 {
			out = append(out, Write{Dest: r.Dest, Delete: true, T: max(b0, 0), To: max(b1, 0)})
			o := RangeOpts{From: b0, To: b1 + r.Bucket - 1, Count: -1, Agg: &Aggregation{Type: r.Agg, Bucket: r.Bucket, Align: r.Align}}
			for _, sm := range s.aggregate(&o, -1) {
				out = append(out, Write{Dest: r.Dest, T: sm.T, V: sm.V})
			}
		}
		if BucketStartOf(to, r.Bucket, r.Align) >= r.start {
			r.cur = bucket{}
			s.Scan(r.start, math.MaxInt64, func(t int64, v float64) bool {
				r.cur.add(t, v)
				return true
			})
			r.prev, r.hasPrev = s.Prev(r.start - 1)
			if r.cur.n == 0 {
				// the open bucket emptied: the next sample opens a new one
				r.open = false
			}
		}
	}
	return out
}
