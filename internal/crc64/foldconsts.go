package crc64

import "math/bits"

// Constants for carry-less multiplication folding (see docs/crc64.md). They
// are computed here from the polynomial, at package initialisation, and the
// assembly reads them from foldK; nothing is pasted in.
//
// A 128-bit block of message, loaded little-endian, holds the coefficient of
// x^(127-m) in bit m (reflected order). Its low half H and high half L stand
// for H*x^64 + L. Carrying the block F bits further down the message
// multiplies it by x^F, and
//
//	H*x^(64+F) + L*x^F  ≡  H*(x^(63+F) mod P)*x + L*(x^(F-1) mod P)*x
//
// where the extra x is what a carry-less product of two reflected 64-bit
// values lacks: clmul(a, b) puts the coefficient of x^(126-m) in bit m. So a
// fold by F bits takes the pair (x^(63+F) mod P, x^(F-1) mod P).

// foldPair is a constant pair for one folding distance, laid out as one
// 128-bit register: lo multiplies the block's low half, hi its high half.
type foldPair struct{ lo, hi uint64 }

func foldPairFor(fbits uint64) foldPair {
	return foldPair{lo: xpowSlow(fbits + 63), hi: xpowSlow(fbits - 1)}
}

// foldConsts is read by the assembly; keep the field offsets in step with
// the offsets used there (each field is 16 bytes).
type foldConsts struct {
	k128   foldPair    // 0: one 16-byte block
	k1024  foldPair    // 16: eight blocks (SSE loop)
	lanes  [7]foldPair // 32: lane i of 8 onto lane 7: 128*(7-i) bits
	final  foldPair    // 144: x^127 for the low half (the high half just moves down)
	barret foldPair    // 160: lo = mu, hi = p
	k4096  foldPair    // 176: 32 blocks (AVX-512 loop, 8 registers of 4)
	k2048  foldPair    // 192: 16 blocks
	k512   foldPair    // 208: 4 blocks (one 64-byte register)
}

var foldK = func() *foldConsts {
	k := &foldConsts{
		k128:  foldPairFor(128),
		k1024: foldPairFor(1024),
		k4096: foldPairFor(4096),
		k2048: foldPairFor(2048),
		k512:  foldPairFor(512),
	}
	for i := range k.lanes {
		k.lanes[i] = foldPairFor(uint64(128 * (7 - i)))
	}
	// Reducing the final block B = H*x^64 + L to B*x^64 mod P: first
	// H*x^128 + L*x^64 ≡ H*(x^127 mod P)*x + L*x^64, a 128-bit value Q
	// (the fold formula with F = 64, whose second constant x^63 is the
	// identity); then Q mod P by Barrett reduction.
	k.final = foldPair{lo: xpowSlow(127), hi: xpowSlow(63)}
	poly := uint64(Poly)
	k.barret = foldPair{lo: barrettMu(), hi: poly << 1}
	return k
}()

// xpowSlow returns x^e mod P in reflected form.
func xpowSlow(e uint64) uint64 { return mulPowSlow(e) }

// barrettMu returns the constant for the quotient step of Barrett reduction:
// mu = floor(x^128 / P) has degree 64; in the layout the assembly wants, bit j
// holds the coefficient of x^(64-j) (so bit 0 is mu's leading term and mu's
// x^0 term, which only affects the discarded high half, is dropped).
func barrettMu() uint64 {
	// Long division in normal bit order (bit k = coefficient of x^k) on a
	// 129-bit remainder held as hi:lo plus the implicit x^128.
	pn := bits.Reverse64(Poly) // P - x^64, normal order
	var q uint64               // quotient bits x^63..x^0 (x^64 is implicit)
	// x^128 = x^64 * x^64: first step subtracts P*x^64, leaving pn*x^64.
	hi, lo := pn, uint64(0)
	for d := 63; d >= 0; d-- { // remainder degree 64+d
		if hi>>uint(d)&1 != 0 {
			q |= 1 << uint(d)
			// subtract P*x^d = x^(64+d) + pn*x^d
			hi ^= 1 << uint(d)
			hi ^= pn >> (64 - uint(d)) // d == 0 gives pn>>64 == 0 in Go
			lo ^= pn << uint(d)
		}
	}
	// reflected layout: x^(64-j) in bit j
	mu := uint64(1) // x^64
	for k := 1; k <= 63; k++ {
		if q>>uint(k)&1 != 0 {
			mu |= 1 << uint(64-k)
		}
	}
	return mu
}
