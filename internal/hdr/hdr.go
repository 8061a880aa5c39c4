// Package hdr is the HDR histogram Redis 7.0 keeps per command for
// latency tracking: values from 1 to 1e9 (nanoseconds) with two
// significant figures, so every value is kept within 1% of itself. The
// layout, the percentile rule and the logarithmic iteration are HdrHistogram's
// (as in Redis's deps/hdr_histogram), so INFO latencystats and LATENCY
// HISTOGRAM compute the same figures from the same samples.
package hdr

import "math/bits"

// The configuration Redis uses (LATENCY_HISTOGRAM_MIN_VALUE, _MAX_VALUE,
// _PRECISION): lowest discernible value 1, highest trackable 1e9, two
// significant figures. From these HdrHistogram derives 256 sub-buckets
// (the smallest power of two above 2*10^2), of which each bucket past
// the first uses the upper half, and 23 buckets to reach 1e9.
const (
	Min = 1
	Max = 1_000_000_000

	subHalfMag  = 7
	subCount    = 1 << (subHalfMag + 1)
	subHalf     = subCount / 2
	subMask     = subCount - 1
	bucketCount = 23
	countsLen   = (bucketCount + 1) * subHalf
)

// Histogram counts values. Its zero value is empty and ready; it holds
// its counts inline (24 KB), so it is allocated once per tracked command.
type Histogram struct {
	total  int64
	counts [countsLen]int64
}

func bucketIndex(v int64) int {
	return 64 - bits.LeadingZeros64(uint64(v|subMask)) - (subHalfMag + 1)
}

func countsIndex(v int64) int {
	b := bucketIndex(v)
	return (b+1)<<subHalfMag + int(v>>b) - subHalf
}

// valueAt is the lowest value counted at index i.
func valueAt(i int) int64 {
	b := i>>subHalfMag - 1
	s := i&(subHalf-1) + subHalf
	if b < 0 {
		s -= subHalf
		b = 0
	}
	return int64(s) << b
}

func lowestEquivalent(v int64) int64 {
	b := bucketIndex(v)
	return (v >> b) << b
}

func highestEquivalent(v int64) int64 {
	b := bucketIndex(v)
	if v>>b >= subCount {
		b++
	}
	return lowestEquivalent(v) + 1<<b - 1
}

// Record counts v, clamped to [Min, Max] as Redis clamps a duration.
func (h *Histogram) Record(v int64) {
	v = min(max(v, Min), Max)
	h.counts[countsIndex(v)]++
	h.total++
}

// Count is how many values were recorded.
func (h *Histogram) Count() int64 { return h.total }

// ValueAtPercentile is HdrHistogram's hdr_value_at_percentile: the
// highest value equivalent to the one at which the cumulative count
// reaches p percent of the total (rounded half up, at least 1); 0 when
// the histogram is empty.
func (h *Histogram) ValueAtPercentile(p float64) int64 {
	want := max(int64(min(p, 100)/100*float64(h.total)+0.5), 1)
	var cum, v int64
	for i := range countsLen {
		if cum += h.counts[i]; cum >= want {
			v = valueAt(i)
			break
		}
	}
	if p == 0 {
		return lowestEquivalent(v)
	}
	return highestEquivalent(v)
}

// LogBuckets walks the histogram as Redis's LATENCY HISTOGRAM does
// (HdrHistogram's logarithmic iterator from 1024 with base 2): for each
// power-of-two bucket whose cumulative count grew, f gets the bucket's
// highest equivalent value and the cumulative count.
func (h *Histogram) LogBuckets(f func(highest, cumulative int64)) {
	level := int64(1024)
	levelLow := lowestEquivalent(level)
	idx := -1
	var value, highest, cum, prev int64
	for cum < h.total || idx < countsLen && valueAt(idx+1) > levelLow {
		for {
			if value >= levelLow {
				level *= 2
				levelLow = lowestEquivalent(level)
				break
			}
			idx++
			if idx >= countsLen {
				break
			}
			cum += h.counts[idx]
			value = valueAt(idx)
			highest = highestEquivalent(value)
		}
		if cum > prev {
			f(highest, cum)
		}
		prev = cum
	}
}
