package crc64

import "encoding/binary"

// tab[0] is the classic byte-at-a-time table: tab[0][b] is the register after
// feeding byte b to a zero register. tab[k][b] is the contribution of a byte
// that is followed by k more bytes, so slicing-by-n folds n bytes with n
// independent lookups.
// tab is an array, not a pointer, so the loops address it directly.
var tab = makeTab()

func makeTab() (t [16][256]uint64) {
	for b := range 256 {
		r := uint64(b)
		for range 8 {
			r = mulx(r)
		}
		t[0][b] = r
	}
	for k := 1; k < 16; k++ {
		for b := range 256 {
			v := t[k-1][b]
			t[k][b] = v>>8 ^ t[0][byte(v)]
		}
	}
	return t
}

// updateBytes is the one-table loop, for short inputs and tails.
func updateBytes(crc uint64, p []byte) uint64 {
	for _, c := range p {
		crc = crc>>8 ^ tab[0][byte(crc)^c]
	}
	return crc
}

// fold8 feeds the eight bytes of the little-endian word v to crc. The Go
// compiler does not inline it (too large), so the loops below repeat its
// body; it is kept for mulmod and as their specification.
func fold8(crc, v uint64) uint64 {
	crc ^= v
	return tab[7][byte(crc)] ^ tab[6][byte(crc>>8)] ^ tab[5][byte(crc>>16)] ^
		tab[4][byte(crc>>24)] ^ tab[3][byte(crc>>32)] ^ tab[2][byte(crc>>40)] ^
		tab[1][byte(crc>>48)] ^ tab[0][byte(crc>>56)]
}

// updateSlicing8 is slicing-by-8: one 64-bit word per step.
func updateSlicing8(crc uint64, p []byte) uint64 {
	for len(p) >= 8 {
		crc ^= binary.LittleEndian.Uint64(p)
		crc = tab[7][byte(crc)] ^ tab[6][byte(crc>>8)] ^ tab[5][byte(crc>>16)] ^
			tab[4][byte(crc>>24)] ^ tab[3][byte(crc>>32)] ^ tab[2][byte(crc>>40)] ^
			tab[1][byte(crc>>48)] ^ tab[0][byte(crc>>56)]
		p = p[8:]
	}
	return updateBytes(crc, p)
}

// updateSlicing16 is slicing-by-16: two words per step, sixteen lookups.
func updateSlicing16(crc uint64, p []byte) uint64 {
	t := &tab
	for len(p) >= 16 {
		a := crc ^ binary.LittleEndian.Uint64(p)
		b := binary.LittleEndian.Uint64(p[8:])
		crc = t[15][byte(a)] ^ t[14][byte(a>>8)] ^ t[13][byte(a>>16)] ^
			t[12][byte(a>>24)] ^ t[11][byte(a>>32)] ^ t[10][byte(a>>40)] ^
			t[9][byte(a>>48)] ^ t[8][byte(a>>56)] ^
			t[7][byte(b)] ^ t[6][byte(b>>8)] ^ t[5][byte(b>>16)] ^
			t[4][byte(b>>24)] ^ t[3][byte(b>>32)] ^ t[2][byte(b>>40)] ^
			t[1][byte(b>>48)] ^ t[0][byte(b>>56)]
		p = p[16:]
	}
	return updateSlicing8(crc, p)
}

// stride is the length of each of the three streams in one round of
// updateSlicing3; xpowStride = x^(8*stride) mod P moves a stream's CRC past
// the next stream.
const stride = 4096

var xpowStride = mulPowSlow(8 * stride)

// mulPowSlow returns x^e mod P by square-and-multiply on mulmodSlow (used at
// package initialisation only).
func mulPowSlow(e uint64) uint64 {
	r, b := xPow0, xPow0>>1 // 1, x
	for ; e != 0; e >>= 1 {
		if e&1 != 0 {
			r = mulmodSlow(r, b)
		}
		b = mulmodSlow(b, b)
	}
	return r
}

// updateSlicing3 runs three slicing-by-8 streams over adjacent stride-byte
// blocks in one loop, so that the three table-lookup chains overlap in the
// CPU, then joins the three CRCs: two multiplications per 12 KiB.
func updateSlicing3(crc uint64, p []byte) uint64 {
	for len(p) >= 3*stride {
		a, b, c := p[:stride:stride], p[stride:2*stride:2*stride], p[2*stride:3*stride:3*stride]
		c0, c1, c2 := crc, uint64(0), uint64(0)
		for i := 0; i < stride; i += 8 {
			c0 ^= binary.LittleEndian.Uint64(a[i:])
			c1 ^= binary.LittleEndian.Uint64(b[i:])
			c2 ^= binary.LittleEndian.Uint64(c[i:])
			c0 = tab[7][byte(c0)] ^ tab[6][byte(c0>>8)] ^ tab[5][byte(c0>>16)] ^
				tab[4][byte(c0>>24)] ^ tab[3][byte(c0>>32)] ^ tab[2][byte(c0>>40)] ^
				tab[1][byte(c0>>48)] ^ tab[0][byte(c0>>56)]
			c1 = tab[7][byte(c1)] ^ tab[6][byte(c1>>8)] ^ tab[5][byte(c1>>16)] ^
				tab[4][byte(c1>>24)] ^ tab[3][byte(c1>>32)] ^ tab[2][byte(c1>>40)] ^
				tab[1][byte(c1>>48)] ^ tab[0][byte(c1>>56)]
			c2 = tab[7][byte(c2)] ^ tab[6][byte(c2>>8)] ^ tab[5][byte(c2>>16)] ^
				tab[4][byte(c2>>24)] ^ tab[3][byte(c2>>32)] ^ tab[2][byte(c2>>40)] ^
				tab[1][byte(c2>>48)] ^ tab[0][byte(c2>>56)]
		}
		crc = mul(mul(c0, xpowStride)^c1, xpowStride) ^ c2
		p = p[3*stride:]
	}
	return updateSlicing16(crc, p)
}

// updateGeneric is the portable implementation.
func updateGeneric(crc uint64, p []byte) uint64 {
	if len(p) >= 3*stride {
		return updateSlicing3(crc, p)
	}
	return updateSlicing16(crc, p)
}
