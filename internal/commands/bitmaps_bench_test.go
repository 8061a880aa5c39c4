package commands

import (
	"strconv"
	"testing"
)

// Benchmarks of the bitmap and HyperLogLog commands through Env.Execute:
// argument checks, lookup, the operation and the reply, without the
// network. Run with: go test ./internal/commands -run '^$' -bench 'Bitmaps|HLL'

const bmMiB = 1 << 20

// bmBench prepares an Env holding a 1 MiB string at key "bm" (every byte
// 0x5a) and returns a runner for prebuilt commands.
func bmBench(b *testing.B) *bmEnv {
	e := newBMEnv()
	e.do("SETBIT", "bm", strconv.Itoa(bmMiB*8-1), "0")
	e.do("BITOP", "NOT", "bm", "bm") // 1 MiB of 0xff
	e.do("BITFIELD", "bm", "SET", "u8", "0", "90")
	if r := e.do("STRLEN", "bm"); r != ":1048576\r\n" {
		b.Fatalf("setup: STRLEN %q", r)
	}
	return e
}

func bmArgs(args ...string) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = []byte(a)
	}
	return out
}

func (e *bmEnv) run(b *testing.B, cmds [][][]byte) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.w.Reset()
		e.env.Execute(e.sess, cmds[i%len(cmds)], &e.w)
	}
	b.StopTimer()
	if len(e.w.Buf) == 0 || e.w.Buf[0] == '-' {
		b.Fatalf("last reply %q", e.w.Buf)
	}
}

// BenchmarkBitmapsSetbit1MiB sets bits spread over a 1 MiB string.
func BenchmarkBitmapsSetbit1MiB(b *testing.B) {
	e := bmBench(b)
	cmds := make([][][]byte, 1024)
	for i := range cmds {
		off := (i * 7919 * 1031) % (bmMiB * 8)
		cmds[i] = bmArgs("SETBIT", "bm", strconv.Itoa(off), strconv.Itoa(i&1))
	}
	e.run(b, cmds)
}

// BenchmarkBitmapsSetbitGrow appends to a bitmap bit by bit, growing it.
func BenchmarkBitmapsSetbitGrow(b *testing.B) {
	e := newBMEnv()
	b.ReportAllocs()
	args := bmArgs("SETBIT", "grow", "0", "1")
	var num [20]byte
	for i := 0; i < b.N; i++ {
		args[2] = strconv.AppendInt(num[:0], int64(i%(bmMiB*8)), 10)
		e.w.Reset()
		e.env.Execute(e.sess, args, &e.w)
	}
}

// BenchmarkBitmapsBitcount1MiB counts the set bits of a 1 MiB string.
func BenchmarkBitmapsBitcount1MiB(b *testing.B) {
	e := bmBench(b)
	b.SetBytes(bmMiB)
	e.run(b, [][][]byte{bmArgs("BITCOUNT", "bm")})
}

// BenchmarkBitmapsBitcountBitRange1MiB counts a bit range with ragged ends
// over (almost) the whole string.
func BenchmarkBitmapsBitcountBitRange1MiB(b *testing.B) {
	e := bmBench(b)
	b.SetBytes(bmMiB)
	e.run(b, [][][]byte{bmArgs("BITCOUNT", "bm", "3", "-5", "BIT")})
}

// BenchmarkBitmapsBitpos1MiB looks for a clear bit in a string of ones
// (after its first byte), scanning it all.
func BenchmarkBitmapsBitpos1MiB(b *testing.B) {
	e := bmBench(b)
	b.SetBytes(bmMiB)
	e.run(b, [][][]byte{bmArgs("BITPOS", "bm", "0", "1")})
}

// BenchmarkBitmapsBitopAnd1MiB ANDs two 1 MiB strings into a third.
func BenchmarkBitmapsBitopAnd1MiB(b *testing.B) {
	e := bmBench(b)
	e.do("BITOP", "NOT", "bm2", "bm")
	b.SetBytes(2 * bmMiB)
	e.run(b, [][][]byte{bmArgs("BITOP", "AND", "dest", "bm", "bm2")})
}

// BenchmarkBitmapsBitfield runs a mixed BITFIELD on a 1 MiB string.
func BenchmarkBitmapsBitfield(b *testing.B) {
	e := bmBench(b)
	e.run(b, [][][]byte{bmArgs("BITFIELD", "bm", "INCRBY", "u12", "#1000", "1", "GET", "i32", "77777", "OVERFLOW", "SAT", "SET", "i7", "123456", "99")})
}

// BenchmarkHLLPfadd adds one new element per call to a dense HyperLogLog.
func BenchmarkHLLPfadd(b *testing.B) {
	e := newBMEnv()
	cmds := make([][][]byte, 4096)
	for i := range cmds {
		cmds[i] = bmArgs("PFADD", "hll", "element:"+strconv.Itoa(i))
	}
	for _, c := range cmds {
		e.env.Execute(e.sess, c, &e.w)
	}
	e.w.Reset()
	e.run(b, cmds)
}

// BenchmarkHLLPfcountDense counts a dense HyperLogLog whose cache is made
// stale before every count, as after a PFADD.
func BenchmarkHLLPfcountDense(b *testing.B) {
	e := newBMEnv()
	for i := 0; i < 4096; i++ {
		e.do("PFADD", "hll", "element:"+strconv.Itoa(i))
	}
	add, count := bmArgs("PFADD", "hll", "x"), bmArgs("PFCOUNT", "hll")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		add[2] = strconv.AppendInt(add[2][:0], int64(i), 10)
		e.w.Reset()
		e.env.Execute(e.sess, add, &e.w)
		e.env.Execute(e.sess, count, &e.w)
	}
}
