package crc64

import "sync"

// Arithmetic in GF(2)[x] modulo P, in the reflected representation the CRC
// register uses: bit 63-i of a uint64 is the coefficient of x^i, so x^0 is
// the top bit and "multiply by x" is a right shift.

// xPow0 is the polynomial 1 in reflected form.
const xPow0 = uint64(1) << 63

// mulx returns a*x mod P.
func mulx(a uint64) uint64 {
	if a&1 != 0 {
		return a>>1 ^ Poly
	}
	return a >> 1
}

// mulmodSlow returns a*b mod P one bit of a at a time. It is the definition
// the faster multipliers are tested against, and builds their tables.
func mulmodSlow(a, b uint64) uint64 {
	var p uint64
	for m := xPow0; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		b = mulx(b)
	}
	return p
}

// mulmod returns a*b mod P without carry-less multiply instructions. The
// nibble of a at bits s..s+3 stands for v(x)*x^(60-s) with v of degree 3 or
// less; with m[v] = v*b mod P precomputed, a*b is the sum of the sixteen
// m[v]*x^(60-s). Those are independent of each other (no chain of
// reductions): each is shifted into a 128-bit value (high word: degrees
// 63..0, low word: degrees 127..64) and the low word is reduced once at the
// end with the slicing tables.
func mulmod(a, b uint64) uint64 {
	// m[v] = v(x)*b where v is a nibble whose bits 3..0 are x^0..x^3.
	var m [16]uint64
	b1 := mulx(b)
	b2 := mulx(b1)
	b3 := mulx(b2)
	m[8], m[4], m[2], m[1] = b, b1, b2, b3
	m[12], m[10], m[9] = b^b1, b^b2, b^b3
	m[6], m[5], m[3] = b1^b2, b1^b3, b2^b3
	m[14], m[13], m[11], m[7] = b^b1^b2, b^b1^b3, b^b2^b3, b1^b2^b3
	m[15] = b ^ b1 ^ b2 ^ b3
	// The top nibble (s = 60) needs no shift.
	hi := m[a>>60]
	var lo uint64
	for s := uint(0); s < 60; s += 4 {
		v := m[a>>s&15]
		k := 60 - s // multiply by x^k: k places toward the low word
		hi ^= v >> k
		lo ^= v << (64 - k)
	}
	return hi ^ fold8(0, lo)
}

// xpow8[k] is x^(8*2^k) mod P: appending 2^k zero bytes to a message
// multiplies its CRC by it. xpowDigit[j][d] is x^(8*d*256^j) mod P, so that
// shifting by n bytes takes one multiplication per non-zero base-256 digit of
// n. Both are built on first use.
var (
	gfOnce    sync.Once
	xpow8     [64]uint64
	xpowDigit *[8][256]uint64
)

func initPowers() {
	x := mulmodSlow(xPow0>>8, xPow0) // x^8
	for k := range xpow8 {
		xpow8[k] = x
		x = mulmod(x, x)
	}
	t := new([8][256]uint64)
	for j := range t {
		t[j][0] = xPow0
		step := xpow8[8*j] // x^(8*256^j)
		for d := 1; d < 256; d++ {
			t[j][d] = mulmod(t[j][d-1], step)
		}
	}
	xpowDigit = t
}

// xpow8n returns x^(8n) mod P.
func xpow8n(n uint64) uint64 {
	gfOnce.Do(initPowers)
	t := xpowDigit
	r := xPow0
	first := true
	for j := 0; n != 0; j, n = j+1, n>>8 {
		d := n & 0xff
		if d == 0 {
			continue
		}
		if first {
			r, first = t[j][d], false
		} else {
			r = mul(r, t[j][d])
		}
	}
	return r
}

// shift returns crc*x^(8n) mod P: the CRC register after n zero bytes.
func shift(crc, n uint64) uint64 {
	return mul(crc, xpow8n(n))
}
