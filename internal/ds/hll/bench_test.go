package hll

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func benchElems(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = fmt.Appendf(nil, "user:%d:%d", i, i*7919)
	}
	return out
}

func BenchmarkHash16(b *testing.B) {
	e := []byte("0123456789abcdef")
	b.SetBytes(int64(len(e)))
	for b.Loop() {
		patLen(e)
	}
}

// BenchmarkAddSparse adds one new element per operation to sparse values of
// about 100..600 elements (restarting from a 100-element copy as they fill).
func BenchmarkAddSparse(b *testing.B) {
	elems := benchElems(1 << 16)
	base, _, _ := Add(nil, DefaultSparseMaxBytes, elems[:100]...)
	h := append([]byte(nil), base...)
	i, n := 100, 0
	for b.Loop() {
		if n == 500 {
			h, n = append(h[:0], base...), 0
		}
		h, _, _ = Add(h, DefaultSparseMaxBytes, elems[i&(len(elems)-1)])
		i++
		n++
	}
	if IsDense(h) {
		b.Fatal("went dense")
	}
}

func BenchmarkAddDense(b *testing.B) {
	elems := benchElems(1 << 16)
	h, _, _ := Add(nil, DefaultSparseMaxBytes, elems[:20000]...)
	i := 0
	for b.Loop() {
		h, _, _ = Add(h, DefaultSparseMaxBytes, elems[i&(len(elems)-1)])
		i++
	}
}

func benchCount(b *testing.B, n int, wantDense bool) {
	h, _, _ := Add(nil, DefaultSparseMaxBytes, benchElems(n)...)
	if IsDense(h) != wantDense {
		b.Fatal("wrong encoding")
	}
	for b.Loop() {
		invalidateCache(h)
		Count(h)
	}
}

func BenchmarkCountSparse(b *testing.B) { benchCount(b, 1000, false) }
func BenchmarkCountDense(b *testing.B)  { benchCount(b, 100000, true) }

func BenchmarkCountCached(b *testing.B) {
	h, _, _ := Add(nil, DefaultSparseMaxBytes, benchElems(1000)...)
	Count(h)
	for b.Loop() {
		Count(h)
	}
}

func BenchmarkCountManyDense3(b *testing.B) {
	e := benchElems(300000)
	x, _, _ := Add(nil, DefaultSparseMaxBytes, e[:100000]...)
	y, _, _ := Add(nil, DefaultSparseMaxBytes, e[100000:200000]...)
	z, _, _ := Add(nil, DefaultSparseMaxBytes, e[200000:]...)
	for b.Loop() {
		CountMany(x, y, z)
	}
}

func BenchmarkMergeSparse(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	x, _, _ := Add(nil, DefaultSparseMaxBytes, randElems(r, 300)...)
	y, _, _ := Add(nil, DefaultSparseMaxBytes, randElems(r, 300)...)
	if IsDense(x) || IsDense(y) {
		b.Fatal("went dense")
	}
	for b.Loop() {
		if _, err := Merge(nil, DefaultSparseMaxBytes, x, y); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMergeDense(b *testing.B) {
	e := benchElems(200000)
	x, _, _ := Add(nil, DefaultSparseMaxBytes, e[:100000]...)
	y, _, _ := Add(nil, DefaultSparseMaxBytes, e[100000:]...)
	dst, _ := Merge(nil, DefaultSparseMaxBytes, x)
	for b.Loop() {
		dst, _ = Merge(dst, DefaultSparseMaxBytes, y)
	}
}

// BenchmarkAddSparseBatch adds 64 new elements per operation (one PFADD
// with 64 arguments) to a sparse value of 200 elements.
func BenchmarkAddSparseBatch(b *testing.B) {
	elems := benchElems(1 << 16)
	base, _, _ := Add(nil, DefaultSparseMaxBytes, elems[:200]...)
	h := append([]byte(nil), base...)
	i := 200
	for b.Loop() {
		h = append(h[:0], base...)
		if i+64 > len(elems) {
			i = 200
		}
		h, _, _ = Add(h, DefaultSparseMaxBytes, elems[i:i+64]...)
		i += 64
	}
	if IsDense(h) {
		b.Fatal("went dense")
	}
}
