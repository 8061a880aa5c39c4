package ts

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randBits returns float64 bit patterns that stress the XOR encoding:
// special values, NaNs with payloads, small changes, random bits.
func randBits(r *rand.Rand, prev uint64) uint64 {
	switch r.IntN(10) {
	case 0:
		specials := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64, -1}
		return math.Float64bits(specials[r.IntN(len(specials))])
	case 1:
		return 0x7ff0000000000000 | r.Uint64()&0x000fffffffffffff | 1 | r.Uint64()&(1<<63) // NaN, any payload and sign
	case 2:
		return prev
	case 3:
		return prev ^ 1<<r.IntN(64)
	case 4:
		return math.Float64bits(math.Float64frombits(prev&^(1<<63|0x7ff<<52)|0x3ff<<52) + float64(r.IntN(5)))
	case 5:
		return math.Float64bits(float64(r.IntN(1000)) / 4)
	default:
		return r.Uint64()
	}
}

// randDelta returns gaps between timestamps from every dod class.
func randDelta(r *rand.Rand, prev int64) int64 {
	switch r.IntN(8) {
	case 0, 1, 2:
		return max(prev, 1)
	case 3:
		return max(1, prev+int64(r.IntN(129))-64)
	case 4:
		return 1 + int64(r.IntN(5000))
	case 5:
		return 1 + int64(r.IntN(1<<31))
	case 6:
		return 1 + r.Int64N(1<<40)
	default:
		return 1 + int64(r.IntN(300))
	}
}

func TestChunkRoundTripBitExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 300; round++ {
		raw := round%5 == 0
		size := 48 + 8*r.IntN(600)
		n := 1 + r.IntN(3000)
		ts := make([]int64, n)
		bs := make([]uint64, n)
		cur := r.Int64N(1 << 50)
		delta := int64(1)
		prev := uint64(0)
		for i := range ts {
			if i > 0 {
				delta = randDelta(r, delta)
				if cur > math.MaxInt64-delta {
					delta = 1
				}
				cur += delta
			}
			ts[i] = cur
			prev = randBits(r, prev)
			bs[i] = prev
		}
		vs := make([]float64, n)
		for i := range bs {
			vs[i] = math.Float64frombits(bs[i])
		}
		chunks := encodeChunks(ts, vs, raw, size)
		i := 0
		for _, c := range chunks {
			if c.bytes() > size {
				t.Fatalf("round %d: chunk of %d bytes, size %d", round, c.bytes(), size)
			}
			it := c.iter()
			for it.next() {
				if i >= n {
					t.Fatalf("round %d: more samples than written", round)
				}
				if it.t != ts[i] || it.bits != bs[i] {
					t.Fatalf("round %d sample %d: got (%d, %#x) want (%d, %#x)", round, i, it.t, it.bits, ts[i], bs[i])
				}
				i++
			}
		}
		if i != n {
			t.Fatalf("round %d: %d samples back, want %d", round, i, n)
		}
	}
}

func TestChunkExtremeTimestamps(t *testing.T) {
	ts := []int64{0, 1, math.MaxInt64 / 2, math.MaxInt64 - 1, math.MaxInt64}
	vs := []float64{math.NaN(), math.Inf(1), math.Copysign(0, -1), 1, -1}
	for _, c := range encodeChunks(ts, vs, false, 4096) {
		got, gv := c.decode(nil, nil)
		for i := range ts {
			if got[i] != ts[i] || math.Float64bits(gv[i]) != math.Float64bits(vs[i]) {
				t.Fatalf("sample %d: got (%d, %v)", i, got[i], gv[i])
			}
		}
	}
}

func TestBitWriterReader(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var w bitWriter
	type item struct {
		v uint64
		n uint
	}
	var items []item
	for i := 0; i < 10000; i++ {
		n := uint(1 + r.IntN(64))
		v := r.Uint64()
		if n < 64 {
			v &= 1<<n - 1
		}
		w.write(v, n)
		items = append(items, item{v, n})
	}
	rd := bitReader{w: w.w}
	for i, it := range items {
		if got := rd.read(it.n); got != it.v {
			t.Fatalf("item %d: got %#x want %#x (%d bits)", i, got, it.v, it.n)
		}
	}
}
