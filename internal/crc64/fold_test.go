package crc64

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// clmul is a software carry-less multiplication: the 128-bit product hi:lo.
func clmul(a, b uint64) (hi, lo uint64) {
	for i := range 64 {
		if b>>uint(i)&1 != 0 {
			lo ^= a << uint(i)
			if i > 0 {
				hi ^= a >> uint(64-i)
			}
		}
	}
	return
}

type u128 struct{ lo, hi uint64 }

// foldBy is one folding step in the assembly's terms.
func foldBy(x u128, k foldPair) u128 {
	h1, l1 := clmul(x.lo, k.lo)
	h2, l2 := clmul(x.hi, k.hi)
	return u128{l1 ^ l2, h1 ^ h2}
}

// reduce is the final step of the assembly: 128 bits to the 64-bit CRC.
func reduce(x u128) uint64 {
	// Q = H*(x^127 mod P)*x + L*x^64: its low half holds the terms of
	// degree 64 and above, which Barrett reduction folds into the high half.
	qhi, qlo := clmul(x.lo, foldK.final.lo)
	qlo ^= x.hi
	_, q := clmul(qlo, foldK.barret.lo) // floor(Q / P)
	r, _ := clmul(q, foldK.barret.hi)   // low 64 terms of q*P, but for q*1
	return r ^ q ^ qhi
}

// foldEmu mirrors the assembly's algorithm with software multiplications:
// lanes 128-bit lanes, then the lanes folded onto the last, then single
// blocks, then Barrett reduction. len(p) must be a multiple of 16 and at
// least 16*lanes.
func foldEmu(crc uint64, p []byte, lanes int, kLoop foldPair) uint64 {
	ld := func(b []byte) u128 {
		return u128{binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])}
	}
	x := make([]u128, lanes)
	for i := range x {
		x[i] = ld(p[16*i:])
	}
	x[0].lo ^= crc
	p = p[16*lanes:]
	for len(p) >= 16*lanes {
		for i := range x {
			f, d := foldBy(x[i], kLoop), ld(p[16*i:])
			x[i] = u128{f.lo ^ d.lo, f.hi ^ d.hi}
		}
		p = p[16*lanes:]
	}
	acc := x[lanes-1]
	for i := 0; i < lanes-1; i++ {
		f := foldBy(x[i], foldPairFor(uint64(128*(lanes-1-i))))
		acc = u128{acc.lo ^ f.lo, acc.hi ^ f.hi}
	}
	for len(p) >= 16 {
		f, d := foldBy(acc, foldK.k128), ld(p)
		acc = u128{f.lo ^ d.lo, f.hi ^ d.hi}
		p = p[16:]
	}
	return reduce(acc)
}

func TestFoldConstants(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, lanes := range []int{1, 2, 8} {
		k := foldPairFor(uint64(128 * lanes))
		for range 200 {
			n := 16 * (lanes + r.IntN(40))
			p := randBytes(r, n)
			crc := r.Uint64()
			if got, want := foldEmu(crc, p, lanes, k), refUpdate(crc, p); got != want {
				t.Fatalf("%d lanes, len %d: fold %#x, reference %#x", lanes, n, got, want)
			}
		}
	}
	// mu is floor(x^128/P): check mu*P + x^128 has degree below 64, in
	// normal order with software multiplication.
}

// mulEmu mirrors mulCLMUL: a*b mod P with one carry-less product and Barrett
// reduction. b is shifted up one place so that the product lands in the
// 128-bit layout the reduction expects; b's x^0 term, shifted out, adds a.
func mulEmu(a, b uint64) uint64 {
	vhi, vlo := clmul(a, b<<1)
	if b>>63 != 0 {
		vhi ^= a
	}
	_, q := clmul(vlo, foldK.barret.lo)
	r, _ := clmul(q, foldK.barret.hi)
	return r ^ q ^ vhi
}

func TestMulEmu(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for range 2000 {
		a, b := r.Uint64(), r.Uint64()
		if r.IntN(3) == 0 {
			b |= 1 << 63
		}
		if got, want := mulEmu(a, b), mulmodSlow(a, b); got != want {
			t.Fatalf("mulEmu(%#x, %#x) = %#x, want %#x", a, b, got, want)
		}
	}
}
