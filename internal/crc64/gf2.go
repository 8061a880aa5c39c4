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

// nib4 holds, for a 4-bit value v (coefficients of x^0..x^3 in its high
// nibble order), v*x^4 reduced mod P's overflow: mulx4(r) = r>>4 ^ nib4[r&15].
var nib4 = func() (t [16]uint64) {
	for v := range t {
		r := uint64(v)
		for range 4 {
			r = mulx(r)
		}
		t[v] = r
	}
	return
}()

// mulmod returns a*b mod P four bits of a at a time (Horner's rule from the
// highest power of x in a down to x^0): about 16 steps of a shift, two table
// lookups and two xors.
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
	// The low nibble of a holds x^60..x^63: start there, multiply the
	// running product by x^4 and add the next lower group.
	var p uint64
	for s := 0; s < 64; s += 4 {
		p = p>>4 ^ nib4[p&15] ^ m[a>>s&15]
	}
	return p
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
