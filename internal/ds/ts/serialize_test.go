package ts

import (
	"math"
	"math/rand"
	"reflect"
	"testing"
)

// copyByChunkData rebuilds s through EachChunkData and AppendChunkData.
func copyByChunkData(t *testing.T, s *Series) *Series {
	t.Helper()
	out := New()
	out.Uncompressed, out.ChunkSize = s.Uncompressed, s.ChunkSize
	s.EachChunkData(func(d *ChunkData) {
		cp := ChunkData{N: d.N, Bits: d.Bits, Stream: append([]byte(nil), d.Stream...),
			TS: append([]int64(nil), d.TS...), VS: append([]float64(nil), d.VS...)}
		if err := out.AppendChunkData(&cp); err != nil {
			t.Fatalf("AppendChunkData: %v", err)
		}
	})
	return out
}

func samplesOf(s *Series) []Sample {
	var out []Sample
	s.Scan(math.MinInt64, math.MaxInt64, func(t int64, v float64) bool {
		out = append(out, Sample{t, v})
		return true
	})
	return out
}

// A chunk loaded from its stream is the chunk that was written: the same
// samples, and the same stream after further appends and an update of the
// latest sample (the encoder's state was recovered).
func TestChunkDataRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, raw := range []bool{false, true} {
		for trial := 0; trial < 20; trial++ {
			s := New()
			s.Uncompressed, s.ChunkSize = raw, 48+8*rng.Intn(100)
			tm := int64(rng.Intn(1000)) - 500
			vals := []float64{0, 1, -1, math.Inf(1), math.NaN(), 1e-300, 3.25}
			for i := 0; i < rng.Intn(3000); i++ {
				tm += 1 + rng.Int63n([]int64{2, 100, 1 << 40}[rng.Intn(3)])
				v := vals[rng.Intn(len(vals))]
				if rng.Intn(2) == 0 {
					v = rng.NormFloat64()
				}
				s.Add(tm, v, PolicyLast)
			}
			c := copyByChunkData(t, s)
			if s.Len() != c.Len() || s.Chunks() != c.Chunks() || !reflect.DeepEqual(bitsOf(samplesOf(s)), bitsOf(samplesOf(c))) {
				t.Fatalf("raw=%v trial %d: samples differ", raw, trial)
			}
			for i := 0; i < 50; i++ {
				tm += 1 + rng.Int63n(1000)
				v := rng.NormFloat64()
				s.Add(tm, v, PolicyLast)
				c.Add(tm, v, PolicyLast)
				if rng.Intn(5) == 0 { // update the latest in place
					s.Add(tm, 7, PolicyLast)
					c.Add(tm, 7, PolicyLast)
				}
			}
			if !reflect.DeepEqual(chunkStreams(s), chunkStreams(c)) {
				t.Fatalf("raw=%v trial %d: streams differ after appends", raw, trial)
			}
		}
	}
}

func bitsOf(ss []Sample) [][2]uint64 {
	out := make([][2]uint64, len(ss))
	for i, s := range ss {
		out[i] = [2]uint64{uint64(s.T), math.Float64bits(s.V)}
	}
	return out
}

// chunkStreams is each chunk's stream, or its samples' bits.
func chunkStreams(s *Series) []any {
	var out []any
	s.EachChunkData(func(d *ChunkData) {
		var ss []Sample
		for i, t := range d.TS {
			ss = append(ss, Sample{t, d.VS[i]})
		}
		out = append(out, d.N, d.Bits, string(d.Stream), bitsOf(ss))
	})
	return out
}

// Damaged streams are refused or loaded as some samples, never a panic;
// whatever loads keeps timestamps strictly increasing.
func TestChunkDataCorrupt(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	s := New()
	for i := 0; i < 500; i++ {
		s.Add(int64(i*10+rng.Intn(5)), rng.NormFloat64(), PolicyLast)
	}
	var good []ChunkData
	s.EachChunkData(func(d *ChunkData) {
		good = append(good, ChunkData{N: d.N, Bits: d.Bits, Stream: append([]byte(nil), d.Stream...)})
	})
	for trial := 0; trial < 20000; trial++ {
		d := good[rng.Intn(len(good))]
		d.Stream = append([]byte(nil), d.Stream...)
		switch rng.Intn(4) {
		case 0:
			d.Stream[rng.Intn(len(d.Stream))] ^= byte(1 << rng.Intn(8))
		case 1:
			d.N += rng.Intn(5) - 2
		case 2:
			d.Bits = uint32(int(d.Bits) + rng.Intn(17) - 8)
			d.Stream = append(d.Stream, 0)[:(d.Bits+7)/8]
		case 3:
			d.Stream[rng.Intn(len(d.Stream))] = byte(rng.Intn(256))
			d.Stream[rng.Intn(len(d.Stream))] = byte(rng.Intn(256))
		}
		out := New()
		if err := out.AppendChunkData(&d); err != nil {
			continue
		}
		prev := int64(math.MinInt64)
		for i, x := range samplesOf(out) {
			if i > 0 && x.T <= prev {
				t.Fatalf("trial %d: timestamps not increasing", trial)
			}
			prev = x.T
		}
	}
}
