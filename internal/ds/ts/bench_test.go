package ts

import (
	"math"
	"math/rand/v2"
	"testing"
)

// gauge yields one sample a second of a slowly changing gauge: a reading
// that moves by a quarter step on about one sample in ten (the shape of a
// temperature or queue-depth metric sampled faster than it changes).
type gauge struct {
	r *rand.Rand
	t int64
	v float64
}

func newGauge() *gauge { return &gauge{r: rand.New(rand.NewPCG(5, 6)), t: 1_700_000_000_000, v: 20} }

func (g *gauge) next() (int64, float64) {
	g.t += 1000
	if g.r.IntN(10) == 0 {
		g.v += float64(g.r.IntN(3)-1) * 0.25
	}
	return g.t, g.v
}

// decimalGauge is the same gauge rounded to one decimal, which XOR encodes
// worse (0.1 has no short binary form).
func (g *gauge) nextDecimal() (int64, float64) {
	g.t += 1000
	if g.r.IntN(10) == 0 {
		g.v = math.Round((g.v+float64(g.r.IntN(3)-1)*0.1)*10) / 10
	}
	return g.t, g.v
}

// nextEvery moves by a quarter step up or down on every sample.
func (g *gauge) nextEvery() (int64, float64) {
	g.t += 1000
	g.v += float64(g.r.IntN(2)*2-1) * 0.25
	return g.t, g.v
}

func bytesPerSample(n int, next func() (int64, float64)) (data, chunks float64) {
	s := New()
	for i := 0; i < n; i++ {
		t, v := next()
		s.Add(t, v, PolicyBlock)
	}
	return float64(s.DataBytes()) / float64(n), float64(s.Chunks()*DefaultChunkSize) / float64(n)
}

// TestBytesPerSampleGoal holds the goal of issue 6: at most 2 bytes a
// sample for one sample a second of a slowly changing gauge.
func TestBytesPerSampleGoal(t *testing.T) {
	g := newGauge()
	data, _ := bytesPerSample(100_000, g.next)
	if data > 2 {
		t.Fatalf("%.3f bytes per sample", data)
	}
}

// BenchmarkBytesPerSample reports the encoded size per sample (data: the
// chunks' encoded bytes; alloc: whole 4096-byte chunks, as RedisTimeSeries
// allocates them).
func BenchmarkBytesPerSample(b *testing.B) {
	for _, c := range []struct {
		name string
		next func(*gauge) (int64, float64)
	}{{"quarter-steps", (*gauge).next}, {"one-decimal", (*gauge).nextDecimal}, {"step-every-sample", (*gauge).nextEvery}} {
		b.Run(c.name, func(b *testing.B) {
			var data, alloc float64
			for b.Loop() {
				g := newGauge()
				data, alloc = bytesPerSample(86_400, func() (int64, float64) { return c.next(g) })
			}
			b.ReportMetric(data, "data-B/sample")
			b.ReportMetric(alloc, "chunk-B/sample")
		})
	}
}

// BenchmarkAppend is the cost of adding one in-order sample.
func BenchmarkAppend(b *testing.B) {
	for _, raw := range []bool{false, true} {
		name := "compressed"
		if raw {
			name = "uncompressed"
		}
		b.Run(name, func(b *testing.B) {
			g := newGauge()
			s := New()
			s.Uncompressed = raw
			cpu0, n := cpuNanos(), 0
			for b.Loop() {
				t, v := g.next()
				s.Add(t, v, PolicyBlock)
				n++
			}
			b.ReportMetric(float64(cpuNanos()-cpu0)/float64(n), "cpu-ns/op")
		})
	}
}

// BenchmarkAppendWithRule adds samples to a series feeding one compaction.
func BenchmarkAppendWithRule(b *testing.B) {
	g := newGauge()
	s := New()
	s.AddRule("d", AggAvg, 60_000, 0)
	for b.Loop() {
		t, v := g.next()
		s.Add(t, v, PolicyBlock)
	}
}

func millionSeries(raw bool) *Series {
	g := newGauge()
	s := New()
	s.Uncompressed = raw
	for i := 0; i < 1_000_000; i++ {
		t, v := g.next()
		s.Add(t, v, PolicyBlock)
	}
	return s
}

// BenchmarkRangeAggregation is TS.RANGE - + AGGREGATION over 1,000,000
// samples (11.6 days at 1/s) into one-hour buckets.
func BenchmarkRangeAggregation(b *testing.B) {
	for _, raw := range []bool{false, true} {
		s := millionSeries(raw)
		for _, a := range []Agg{AggAvg, AggMax, AggStdS, AggTwa} {
			name := a.String()
			if raw {
				name += "/uncompressed"
			}
			b.Run(name, func(b *testing.B) {
				o := &RangeOpts{From: math.MinInt64, To: math.MaxInt64, Count: -1, Agg: &Aggregation{Type: a, Bucket: 3_600_000}}
				cpu0, n := cpuNanos(), 0
				for b.Loop() {
					if k := len(s.Range(o)); k < 270 {
						b.Fatal(k)
					}
					n++
				}
				b.ReportMetric(float64(cpuNanos()-cpu0)/float64(n)/1e6, "cpu-ms/op")
			})
		}
	}
}

// BenchmarkRangeRaw decodes 1,000,000 samples into a reply-sized slice.
func BenchmarkRangeRaw(b *testing.B) {
	s := millionSeries(false)
	for b.Loop() {
		if n := len(s.Range(all())); n != 1_000_000 {
			b.Fatal(n)
		}
	}
}
