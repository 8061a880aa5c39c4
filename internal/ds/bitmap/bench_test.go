package bitmap

import (
	"math/rand/v2"
	"testing"
)

const mib = 1 << 20

func benchData(seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 42))
	b := make([]byte, mib)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func BenchmarkCountAll1MiB(b *testing.B) {
	data := benchData(1)
	b.SetBytes(mib)
	for b.Loop() {
		CountAll(data)
	}
}

// BenchmarkCountBitRange1MiB counts a bit range with ragged ends.
func BenchmarkCountBitRange1MiB(b *testing.B) {
	data := benchData(1)
	b.SetBytes(mib)
	for b.Loop() {
		Count(data, 3, -5, true)
	}
}

// BenchmarkPos1MiB scans a whole MiB for a 1 that is at its very end.
func BenchmarkPos1MiB(b *testing.B) {
	data := make([]byte, mib)
	data[mib-1] = 1
	b.SetBytes(mib)
	for b.Loop() {
		if Pos(data, 1, 0, 0, false, false) != mib*8-1 {
			b.Fatal("wrong position")
		}
	}
}

func benchOp(b *testing.B, op OpCode, n int) {
	srcs := make([][]byte, n)
	for i := range srcs {
		srcs[i] = benchData(uint64(i))
	}
	b.SetBytes(int64(n) * mib) // input bytes processed
	b.ReportAllocs()
	for b.Loop() {
		Op(op, srcs)
	}
}

func BenchmarkOpAnd2x1MiB(b *testing.B)    { benchOp(b, OpAnd, 2) }
func BenchmarkOpOr2x1MiB(b *testing.B)     { benchOp(b, OpOr, 2) }
func BenchmarkOpXor2x1MiB(b *testing.B)    { benchOp(b, OpXor, 2) }
func BenchmarkOpNot1MiB(b *testing.B)      { benchOp(b, OpNot, 1) }
func BenchmarkOpDiff2x1MiB(b *testing.B)   { benchOp(b, OpDiff, 2) }
func BenchmarkOpDiff1_2x1MiB(b *testing.B) { benchOp(b, OpDiff1, 2) }
func BenchmarkOpAndOr3x1MiB(b *testing.B)  { benchOp(b, OpAndOr, 3) }
func BenchmarkOpOne3x1MiB(b *testing.B)    { benchOp(b, OpOne, 3) }
func BenchmarkOpOr8x1MiB(b *testing.B)     { benchOp(b, OpOr, 8) }

func BenchmarkSetBit(b *testing.B) {
	data := make([]byte, mib)
	r := rand.New(rand.NewPCG(1, 1))
	b.ReportAllocs()
	for b.Loop() {
		data, _ = SetBit(data, r.Uint64N(mib*8), 1)
	}
}

func BenchmarkFieldIncrBy(b *testing.B) {
	data := make([]byte, 4096)
	b.ReportAllocs()
	off := uint64(0)
	for b.Loop() {
		data, _, _ = FieldIncrBy(data, off, 13, true, 7, Sat)
		off = (off + 13) % (4096*8 - 13)
	}
}
