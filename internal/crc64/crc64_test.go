package crc64

import (
	"hash/crc64"
	"math/rand/v2"
	"testing"
)

// refUpdate is the definition: one bit at a time, least significant bit of
// each byte first, register starting at crc, no inversion.
func refUpdate(crc uint64, p []byte) uint64 {
	for _, c := range p {
		crc ^= uint64(c)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ Poly
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

// impls lists every implementation compiled into this build.
func impls() map[string]func(uint64, []byte) uint64 {
	m := map[string]func(uint64, []byte) uint64{
		"slicing8":  updateSlicing8,
		"slicing16": updateSlicing16,
		"slicing3":  updateSlicing3,
		"generic":   updateGeneric,
		"Update":    Update,
	}
	addArchImpls(m)
	return m
}

func randBytes(r *rand.Rand, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	return p
}

func TestCheckValue(t *testing.T) {
	for name, f := range impls() {
		if got := f(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
			t.Errorf("%s(123456789) = %#x, want 0xe9c6d914c4b8d9ca", name, got)
		}
	}
	if got := Checksum([]byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Errorf("Checksum = %#x", got)
	}
	if got := Checksum(nil); got != 0 {
		t.Errorf("Checksum(nil) = %#x, want 0", got)
	}
}

// Go's hash/crc64 inverts the register on the way in and out; undoing both
// gives Redis's value, an independent check of the table.
func TestAgainstHashCRC64(t *testing.T) {
	table := crc64.MakeTable(Poly)
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		p := randBytes(r, r.IntN(5000))
		want := ^crc64.Update(^uint64(0), table, p)
		if got := Checksum(p); got != want {
			t.Fatalf("len %d: Checksum %#x, hash/crc64 %#x", len(p), got, want)
		}
	}
}

// Every implementation against the bit-by-bit reference, on random lengths
// up to several KiB, at every alignment of the slice start, with random
// starting registers.
func TestImplementationsAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	buf := randBytes(r, 3*stride+8192+64)
	lengths := []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 63, 64, 65, 127, 128, 129,
		255, 256, 257, 511, 512, 1023, 1024, 4095, 4096, 3 * stride, 3*stride + 1, 3*stride + 8191}
	for range 150 {
		lengths = append(lengths, r.IntN(8192))
	}
	for _, n := range lengths {
		for off := 0; off < 64; off++ {
			if off > 8 && n > 1024 && off%8 != 1 {
				continue // keep the long cases quick
			}
			p := buf[off : off+n]
			crc := r.Uint64()
			if r.IntN(4) == 0 {
				crc = 0
			}
			want := refUpdate(crc, p)
			for name, f := range impls() {
				if got := f(crc, p); got != want {
					t.Fatalf("%s(%#x, len %d, offset %d) = %#x, want %#x", name, crc, n, off, got, want)
				}
			}
		}
	}
}

func TestUpdateChaining(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		p := randBytes(r, r.IntN(20000))
		want := Checksum(p)
		crc := uint64(0)
		rest := p
		for len(rest) > 0 {
			k := min(r.IntN(3000), len(rest))
			crc = Update(crc, rest[:k])
			rest = rest[k:]
		}
		if crc != want {
			t.Fatalf("len %d: chained %#x, whole %#x", len(p), crc, want)
		}
		d := New()
		d.Write(p[:len(p)/3])
		d.Write(p[len(p)/3:])
		if d.Sum64() != want {
			t.Fatalf("digest %#x, want %#x", d.Sum64(), want)
		}
		s := d.Sum([]byte{1})
		if len(s) != 9 || s[0] != 1 || s[8] != byte(want) || s[1] != byte(want>>56) {
			t.Fatalf("Sum = %x for %#x", s, want)
		}
	}
}

func TestCombine(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 500 {
		p := randBytes(r, r.IntN(10000))
		cut := 0
		switch r.IntN(5) {
		case 0:
			cut = 0
		case 1:
			cut = len(p)
		default:
			cut = r.IntN(len(p) + 1)
		}
		a, b := p[:cut], p[cut:]
		got := Combine(Checksum(a), Checksum(b), int64(len(b)))
		if want := Checksum(p); got != want {
			t.Fatalf("split %d+%d: Combine %#x, Checksum %#x", len(a), len(b), got, want)
		}
	}
	// Huge lengths: Combine(crc, 0, n) is crc followed by n zero bytes,
	// which Update can check for n up to a few MiB, and the multiplicative
	// structure checks beyond: shifting by n then m equals shifting by n+m.
	zeros := make([]byte, 3<<20+12345)
	for _, n := range []int{1, 255, 256, 257, 65535, 65536, 1 << 20, len(zeros)} {
		crc := r.Uint64()
		if got, want := Combine(crc, 0, int64(n)), Update(crc, zeros[:n]); got != want {
			t.Fatalf("Combine(crc, 0, %d) = %#x, Update with zeros %#x", n, got, want)
		}
	}
	for range 200 {
		crc := r.Uint64()
		n, m := int64(r.Uint64()>>2), int64(r.Uint64()>>2)
		if got, want := Combine(Combine(crc, 0, n), 0, m), Combine(crc, 0, n+m); got != want {
			t.Fatalf("shift %d then %d: %#x, at once %#x", n, m, got, want)
		}
	}
	if got := Combine(5, 7, -3); got != 5^7 {
		t.Fatalf("negative length: %#x", got)
	}
}

func TestMulmod(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 2000 {
		a, b := r.Uint64(), r.Uint64()
		want := mulmodSlow(a, b)
		if got := mulmod(a, b); got != want {
			t.Fatalf("mulmod(%#x, %#x) = %#x, want %#x", a, b, got, want)
		}
		if got := mul(a, b); got != want {
			t.Fatalf("mul(%#x, %#x) = %#x, want %#x", a, b, got, want)
		}
	}
}

func TestChecksumParallel(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	buf := randBytes(r, 4*ChunkSize+9000)
	sizes := []int{0, 1, ChunkSize - 1, ChunkSize, ChunkSize + 1, 2*ChunkSize - 1, 2 * ChunkSize,
		2*ChunkSize + 1, 3*ChunkSize + 4095, 3*ChunkSize + 4097, 4 * ChunkSize, len(buf)}
	for _, n := range sizes {
		p := buf[len(buf)-n:]
		want := Checksum(p)
		for _, w := range []int{0, 1, 2, 3, 4, 7, 64} {
			if got := ChecksumParallel(p, w); got != want {
				t.Fatalf("size %d, %d workers: %#x, want %#x", n, w, got, want)
			}
		}
	}
}
