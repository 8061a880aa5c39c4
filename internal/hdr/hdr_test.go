package hdr

import (
	"fmt"
	"strings"
	"testing"
)

// The expected figures were computed by HdrHistogram's C implementation
// (the version Redis 7.0 bundles) from the same values, with Redis's
// configuration: hdr_value_at_percentile, and the logarithmic iterator
// from 1024 with base 2 as LATENCY HISTOGRAM walks it.
func TestMatchesHdrHistogram(t *testing.T) {
	rnd := func() []int64 {
		x := uint64(12345)
		vs := make([]int64, 100000)
		for i := range vs {
			x = x*6364136223846793005 + 1442695040888963407
			v := int64((x >> 33) % (1 << (1 + (x>>20)%28)))
			vs[i] = max(v, 1)
		}
		return vs
	}
	cases := []struct {
		values   []int64
		pct, log string
	}{
		{[]int64{1000, 1000, 1000, 2000, 15000, 1}, "1 1 1003 15039 15039 15039", "1031/4 2063/5 16511/6"},
		{[]int64{500, 999, 1024, 1031, 1032, 4127, 4128, 123456789, 999999999, 7}, "7 7 1031 1002438655 1002438655 1002438655",
			"1031/5 2063/6 4127/7 8255/8 135266303/9 1073741823/10"},
		{[]int64{1, 2, 3, 4, 5, 255, 256, 257, 511, 512, 1023, 1000000000}, "1 1 255 1002438655 1002438655 1002438655", "1031/11 1073741823/12"},
		{rnd(), "1 1 8127 191889407 261095423 268435455",
			"1031/39417 2063/42980 4127/46517 8255/50089 16511/53640 33023/57193 66047/60717 132095/64227 264191/67729 528383/71326 1056767/74922 2113535/78383 4227071/82000 8454143/85546 16908287/88965 33816575/92347 67633151/95530 135266303/98215 270532607/100000"},
	}
	for i, tc := range cases {
		var h Histogram
		for _, v := range tc.values {
			h.Record(v)
		}
		var pct []string
		for _, p := range []float64{0, 1, 50, 99, 99.9, 100} {
			pct = append(pct, fmt.Sprint(h.ValueAtPercentile(p)))
		}
		if got := strings.Join(pct, " "); got != tc.pct {
			t.Errorf("case %d: percentiles %s, want %s", i, got, tc.pct)
		}
		var log []string
		h.LogBuckets(func(hi, cum int64) { log = append(log, fmt.Sprintf("%d/%d", hi, cum)) })
		if got := strings.Join(log, " "); got != tc.log {
			t.Errorf("case %d: log buckets %s, want %s", i, got, tc.log)
		}
		if h.Count() != int64(len(tc.values)) {
			t.Errorf("case %d: count %d", i, h.Count())
		}
	}
}

func TestEmptyAndClamp(t *testing.T) {
	var h Histogram
	if v := h.ValueAtPercentile(50); v != 0 {
		t.Errorf("empty p50 = %d", v)
	}
	h.LogBuckets(func(int64, int64) { t.Error("bucket in an empty histogram") })
	h.Record(0)
	h.Record(-5)
	h.Record(5_000_000_000)
	if v := h.ValueAtPercentile(100); v != highestEquivalent(Max) {
		t.Errorf("p100 = %d, want the bucket of Max", v)
	}
	if v := h.ValueAtPercentile(10); v != 1 {
		t.Errorf("p10 = %d, want 1 (values under Min count as Min)", v)
	}
}

func BenchmarkRecord(b *testing.B) {
	var h Histogram
	for i := 0; i < b.N; i++ {
		h.Record(int64(i&0xffff) * 37)
	}
}
