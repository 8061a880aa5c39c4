package bitmap

import (
	"bytes"
	"math/big"
	mrand "math/rand"
	"math/rand/v2"
	"testing"
)

// The naive model: one bit at a time, no words, no masks.

func bitAt(b []byte, i int64) int {
	if i < 0 || i >= int64(len(b))*8 {
		return 0
	}
	return int(b[i/8]>>(7-i%8)) & 1
}

// naiveCount counts set bits at positions lo..hi inclusive.
func naiveCount(b []byte, lo, hi int64) int64 {
	var n int64
	for i := lo; i <= hi; i++ {
		n += int64(bitAt(b, i))
	}
	return n
}

// naiveRange restates BITCOUNT/BITPOS index rules as bit positions.
func naiveRange(b []byte, start, end int64, unitIsBit bool) (lo, hi int64, ok bool) {
	units := int64(len(b))
	if unitIsBit {
		units *= 8
	}
	norm := func(i int64) int64 {
		if i < 0 {
			i += units
		}
		return max(i, 0)
	}
	start, end = norm(start), min(norm(end), units-1)
	if start > end {
		return 0, 0, false
	}
	if unitIsBit {
		return start, end, true
	}
	return start * 8, end*8 + 7, true
}

func naiveCountRange(b []byte, start, end int64, unitIsBit bool) int64 {
	if start < 0 && end < 0 && start > end {
		return 0
	}
	lo, hi, ok := naiveRange(b, start, end, unitIsBit)
	if !ok {
		return 0
	}
	return naiveCount(b, lo, hi)
}

func naivePos(b []byte, bit int, start, end int64, endGiven, unitIsBit bool) int64 {
	if !endGiven {
		end = -1
	}
	lo, hi, ok := naiveRange(b, start, end, unitIsBit)
	if !ok {
		return -1
	}
	for i := lo; i <= hi; i++ {
		if bitAt(b, i) == bit {
			return i
		}
	}
	if bit == 0 && !endGiven {
		return hi + 1
	}
	return -1
}

func naiveOp(op OpCode, srcs [][]byte) []byte {
	n := 0
	for _, s := range srcs {
		n = max(n, len(s))
	}
	if op == OpNot {
		n = len(srcs[0])
	}
	if n == 0 {
		return nil
	}
	out := make([]byte, n)
	for i := int64(0); i < int64(n)*8; i++ {
		ones := 0
		for _, s := range srcs {
			ones += bitAt(s, i)
		}
		x := bitAt(srcs[0], i)
		ys := ones - x // how many of the others have the bit
		var r int
		switch op {
		case OpAnd:
			r = b2i(ones == len(srcs))
		case OpOr:
			r = b2i(ones > 0)
		case OpXor:
			r = ones % 2
		case OpNot:
			r = 1 - x
		case OpDiff:
			r = b2i(x == 1 && ys == 0)
		case OpDiff1:
			r = b2i(x == 0 && ys > 0)
		case OpAndOr:
			r = b2i(x == 1 && ys > 0)
		case OpOne:
			r = b2i(ones == 1)
		}
		if r == 1 {
			out[i/8] |= 0x80 >> (i % 8)
		}
	}
	return out
}

func b2i(c bool) int {
	if c {
		return 1
	}
	return 0
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	// Mix dense, sparse and saturated content so runs of 0x00 and 0xff
	// exercise the word-skipping paths.
	mode := r.IntN(4)
	for i := range b {
		switch mode {
		case 0:
			b[i] = byte(r.Uint32())
		case 1:
			if r.IntN(40) == 0 {
				b[i] = byte(1) << r.IntN(8)
			}
		case 2:
			b[i] = 0xff
			if r.IntN(40) == 0 {
				b[i] &^= byte(1) << r.IntN(8)
			}
		default:
			b[i] = []byte{0, 0xff, 0x0f, 0xf0}[r.IntN(4)]
		}
	}
	return b
}

func randIndex(r *rand.Rand, units int64) int64 {
	switch r.IntN(8) {
	case 0:
		return -units - 1 - r.Int64N(10)
	case 1:
		return units + r.Int64N(10)
	case 2:
		return -1 - r.Int64N(units+1)
	default:
		return r.Int64N(units + 1)
	}
}

func TestCountPosAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 20000 {
		n := r.IntN(80)
		if iter%100 == 0 {
			n = r.IntN(3000)
		}
		b := randBytes(r, n)
		unitIsBit := r.IntN(2) == 0
		units := int64(n)
		if unitIsBit {
			units *= 8
		}
		start, end := randIndex(r, units), randIndex(r, units)
		if got, want := Count(b, start, end, unitIsBit), naiveCountRange(b, start, end, unitIsBit); got != want {
			t.Fatalf("Count(%x, %d, %d, bit=%v) = %d, want %d", b, start, end, unitIsBit, got, want)
		}
		if got, want := CountAll(b), naiveCount(b, 0, units*8); got != want {
			t.Fatalf("CountAll(%x) = %d, want %d", b, got, want)
		}
		bit := r.IntN(2)
		endGiven := r.IntN(3) > 0
		ub := unitIsBit && endGiven
		if got, want := Pos(b, bit, start, end, endGiven, ub), naivePos(b, bit, start, end, endGiven, ub); got != want {
			t.Fatalf("Pos(%x, %d, %d, %d, endGiven=%v, bit=%v) = %d, want %d", b, bit, start, end, endGiven, ub, got, want)
		}
	}
}

func TestOpAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := range 3000 {
		op := OpCode(r.IntN(8))
		k := 1 + r.IntN(6)
		if op == OpNot {
			k = 1
		}
		srcs := make([][]byte, k)
		maxLen := 100
		if iter%50 == 0 {
			maxLen = 10000 // crosses ONE's 4 KiB blocks
		}
		for i := range srcs {
			if r.IntN(8) > 0 {
				srcs[i] = randBytes(r, r.IntN(maxLen))
			}
		}
		orig := make([][]byte, k)
		for i, s := range srcs {
			orig[i] = bytes.Clone(s)
		}
		got, want := Op(op, srcs), naiveOp(op, srcs)
		if !bytes.Equal(got, want) {
			t.Fatalf("%v over %d sources: got %x\nwant %x", op, k, got, want)
		}
		for i := range srcs {
			if !bytes.Equal(srcs[i], orig[i]) {
				t.Fatalf("%v modified source %d", op, i)
			}
		}
	}
}

func TestSetBitAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var b []byte
	model := map[int64]int{}
	maxBit := int64(0)
	for range 20000 {
		off := r.Int64N(5000)
		v := r.IntN(2)
		var old int
		b, old = SetBit(b, uint64(off), v)
		if old != model[off] {
			t.Fatalf("SetBit(%d) old = %d, want %d", off, old, model[off])
		}
		model[off] = v
		maxBit = max(maxBit, off)
		if want := int(maxBit/8) + 1; len(b) != want {
			t.Fatalf("len %d, want %d", len(b), want)
		}
		q := r.Int64N(5100)
		if got := GetBit(b, uint64(q)); got != model[q] {
			t.Fatalf("GetBit(%d) = %d, want %d", q, got, model[q])
		}
	}
}

// naiveGetField reads bits one by one, as Redis's getUnsignedBitfield does.
func naiveGetField(b []byte, offset int64, bits int) uint64 {
	var v uint64
	for i := range int64(bits) {
		v = v<<1 | uint64(bitAt(b, offset+i))
	}
	return v
}

func TestFieldBitsAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	b := randBytes(r, 64)
	for range 50000 {
		bits := 1 + r.IntN(64)
		off := r.Int64N(int64(len(b))*8 + 80)
		want := naiveGetField(b, off, bits)
		if got := GetUnsigned(b, uint64(off), bits); got != want {
			t.Fatalf("GetUnsigned(off %d, bits %d) = %x, want %x", off, bits, got, want)
		}
		if got, w := GetSigned(b, uint64(off), bits), int64(want<<(64-bits))>>(64-bits); got != w {
			t.Fatalf("GetSigned(off %d, bits %d) = %d, want %d", off, bits, got, w)
		}
		if r.IntN(3) == 0 {
			v := r.Uint64()
			before := bytes.Clone(b)
			b = SetBits(b, uint64(off), bits, v)
			mask := uint64(1)<<bits - 1
			if bits == 64 {
				mask = ^uint64(0)
			}
			if got := naiveGetField(b, off, bits); got != v&mask {
				t.Fatalf("SetBits(off %d, bits %d, %x) then read %x", off, bits, v, got)
			}
			// Nothing outside the field changed.
			for i := int64(0); i < int64(len(b))*8; i++ {
				if (i < off || i >= off+int64(bits)) && bitAt(b, i) != bitAt(before, i) {
					t.Fatalf("SetBits(off %d, bits %d) changed bit %d", off, bits, i)
				}
			}
			if want := (off + int64(bits) + 7) / 8; int64(len(b)) < want {
				t.Fatalf("SetBits did not grow: len %d, want >= %d", len(b), want)
			}
		}
	}
}

// TestFieldOverflowAgainstModel checks SET and INCRBY under every policy
// against exact arithmetic on big integers.
func TestFieldOverflowAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	rb := mrand.New(mrand.NewSource(11)) // big.Int.Rand wants math/rand
	for iter := range 30000 {
		bits := 1 + r.IntN(64)
		signed := r.IntN(2) == 0 || bits == 64
		ow := Overflow(r.IntN(3))
		lo, hi := new(big.Int), new(big.Int).Lsh(big.NewInt(1), uint(bits))
		hi.Sub(hi, big.NewInt(1))
		if signed {
			lo.Lsh(big.NewInt(1), uint(bits-1)).Neg(lo)
			hi.Lsh(big.NewInt(1), uint(bits-1)).Sub(hi, big.NewInt(1))
		}
		span := new(big.Int).Sub(hi, lo)
		span.Add(span, big.NewInt(1))
		// Values around the field's range, clipped to int64.
		pick := func() int64 {
			if r.IntN(4) == 0 {
				return int64(r.Uint64())
			}
			x := new(big.Int).Rand(rb, new(big.Int).Lsh(span, 2))
			x.Add(x, lo).Sub(x, span)
			if !x.IsInt64() {
				if x.Sign() > 0 {
					return 1<<63 - 1
				}
				return -1 << 63
			}
			return x.Int64()
		}
		fit := func(x *big.Int) (res *big.Int, overflow bool) {
			if x.Cmp(lo) >= 0 && x.Cmp(hi) <= 0 {
				return x, false
			}
			switch ow {
			case Sat:
				if x.Cmp(hi) > 0 {
					return new(big.Int).Set(hi), true
				}
				return new(big.Int).Set(lo), true
			case Wrap:
				m := new(big.Int).Sub(x, lo)
				m.Mod(m, span)
				return m.Add(m, lo), true
			}
			return nil, true
		}
		off := uint64(r.IntN(40))
		start := randBytes(r, r.IntN(12))
		set, incr := pick(), pick()

		// SET: an unsigned field reads the value as a uint64, as Redis does.
		setVal := big.NewInt(set)
		if !signed {
			setVal = new(big.Int).SetUint64(uint64(set))
		}
		prev := naiveGetField(start, int64(off), bits)
		b, old, ok := FieldSet(bytes.Clone(start), off, bits, signed, set, ow)
		res, overflow := fit(setVal)
		if signed && ow == Sat && setVal.Cmp(lo) < 0 {
			// Redis's quirk: when max-value overflows int64 the value
			// saturates to max.
			if d := new(big.Int).Sub(hi, setVal); !d.IsInt64() {
				res = new(big.Int).Set(hi)
			}
		}
		cur := new(big.Int).SetUint64(prev)
		if signed {
			cur = big.NewInt(int64(prev<<(64-bits)) >> (64 - bits))
		}
		if ok != !(overflow && ow == Fail) {
			t.Fatalf("iter %d: SET %s%d %d %v: ok %v", iter, sign(signed), bits, set, ow, ok)
		}
		if ok {
			if old != cur.Int64() {
				t.Fatalf("iter %d: SET old %d, want %d", iter, old, cur.Int64())
			}
			cur = res
		}
		if got := fieldValue(b, off, bits, signed); got.Cmp(cur) != 0 {
			t.Fatalf("iter %d: SET %s%d %d %v stored %v, want %v", iter, sign(signed), bits, set, ow, got, cur)
		}
		if uint64(len(b))*8 < off+uint64(bits) {
			t.Fatalf("iter %d: SET did not grow the string", iter)
		}

		// INCRBY from whatever SET left.
		b2, val, ok := FieldIncrBy(b, off, bits, signed, incr, ow)
		sum := new(big.Int).Add(cur, big.NewInt(incr))
		res, overflow = fit(sum)
		if ok != !(overflow && ow == Fail) {
			t.Fatalf("iter %d: INCRBY %s%d %v+%d %v: ok %v", iter, sign(signed), bits, cur, incr, ow, ok)
		}
		if ok {
			if val != res.Int64() {
				t.Fatalf("iter %d: INCRBY %s%d %v+%d %v = %d, want %v", iter, sign(signed), bits, cur, incr, ow, val, res)
			}
			cur = res
		}
		if got := fieldValue(b2, off, bits, signed); got.Cmp(cur) != 0 {
			t.Fatalf("iter %d: INCRBY stored %v, want %v", iter, got, cur)
		}
	}
}

func fieldValue(b []byte, off uint64, bits int, signed bool) *big.Int {
	if signed {
		return big.NewInt(GetSigned(b, off, bits))
	}
	return new(big.Int).SetUint64(GetUnsigned(b, off, bits))
}

func sign(signed bool) string {
	if signed {
		return "i"
	}
	return "u"
}
