package hll

import "encoding/binary"

// Dense encoding: register i occupies bits 6*i .. 6*i+5 of the register
// bytes, least significant bit first. Four registers fill three bytes:
//
//	byte 0: r1[1:0] r0[5:0]   byte 1: r2[3:0] r1[5:2]   byte 2: r3[5:0] r2[5:4]
//
// A register starting at bit 0 or 2 of its byte lies inside that byte; one
// starting at bit 4 or 6 continues into the next. The last register starts at
// bit 2, so no access reaches past the 12288 register bytes.

// denseGet returns register i of regs (the bytes after the header).
func denseGet(regs []byte, i int) uint8 {
	pos := i * regBits
	byt, fb := pos>>3, uint(pos&7)
	v := regs[byt] >> fb
	if fb > 8-regBits {
		v |= regs[byt+1] << (8 - fb)
	}
	return v & 63
}

// densePut stores v (0..63) in register i.
func densePut(regs []byte, i int, v uint8) {
	pos := i * regBits
	byt, fb := pos>>3, uint(pos&7)
	regs[byt] = regs[byt]&^(63<<fb) | v<<fb
	if fb > 8-regBits {
		regs[byt+1] = regs[byt+1]&^(63>>(8-fb)) | v>>(8-fb)
	}
}

// denseSet raises register i to count if count is larger, reporting 1 when
// it changed and 0 otherwise (Redis's hllDenseSet).
func denseSet(regs []byte, i int, count uint8) int {
	if count > denseGet(regs, i) {
		densePut(regs, i, count)
		return 1
	}
	return 0
}

// histogram counts registers by value. Values reach 63 in crafted dense
// strings even though hashing never produces more than 51.
type histogram [64]int

// denseHisto adds the 16384 dense registers of regs to h.
func denseHisto(regs []byte, h *histogram) {
	regs = regs[:Registers*regBits/8]
	// Six bytes hold eight registers. Four histograms, summed at the end,
	// keep increments of the same (usually popular) value from waiting on
	// each other.
	var hs [4]histogram
	k := 0
	for ; k+8 <= len(regs); k += 6 {
		x := binary.LittleEndian.Uint64(regs[k:]) & (1<<48 - 1)
		if x == 0 {
			hs[0][0] += 8
			continue
		}
		hs[0][x&63]++
		hs[1][x>>6&63]++
		hs[2][x>>12&63]++
		hs[3][x>>18&63]++
		hs[0][x>>24&63]++
		hs[1][x>>30&63]++
		hs[2][x>>36&63]++
		hs[3][x>>42&63]++
	}
	for ; k < len(regs); k += 3 {
		b0, b1, b2 := regs[k], regs[k+1], regs[k+2]
		hs[0][b0&63]++
		hs[1][(b0>>6|b1<<2)&63]++
		hs[2][(b1>>4|b2<<4)&63]++
		hs[3][b2>>2]++
	}
	for i := range h {
		h[i] += hs[0][i] + hs[1][i] + hs[2][i] + hs[3][i]
	}
}

// denseMax raises each m[i] to dense register i.
func denseMax(regs []byte, m *[Registers]uint8) {
	regs = regs[:Registers*regBits/8]
	k, i := 0, 0
	for ; k+8 <= len(regs); k, i = k+6, i+8 {
		x := binary.LittleEndian.Uint64(regs[k:]) & (1<<48 - 1)
		if x == 0 {
			continue
		}
		r := m[i : i+8 : i+8]
		r[0] = max(r[0], uint8(x)&63)
		r[1] = max(r[1], uint8(x>>6)&63)
		r[2] = max(r[2], uint8(x>>12)&63)
		r[3] = max(r[3], uint8(x>>18)&63)
		r[4] = max(r[4], uint8(x>>24)&63)
		r[5] = max(r[5], uint8(x>>30)&63)
		r[6] = max(r[6], uint8(x>>36)&63)
		r[7] = max(r[7], uint8(x>>42)&63)
	}
	for ; k < len(regs); k, i = k+3, i+4 {
		b0, b1, b2 := regs[k], regs[k+1], regs[k+2]
		r := m[i : i+4 : i+4]
		r[0] = max(r[0], b0&63)
		r[1] = max(r[1], (b0>>6|b1<<2)&63)
		r[2] = max(r[2], (b1>>4|b2<<4)&63)
		r[3] = max(r[3], b2>>2)
	}
}

// densePack writes all registers from m (values 0..63).
func densePack(regs []byte, m *[Registers]uint8) {
	regs = regs[:Registers*regBits/8]
	for k, i := 0, 0; k < len(regs); k, i = k+3, i+4 {
		r := m[i : i+4 : i+4]
		regs[k] = r[0] | r[1]<<6
		regs[k+1] = r[1]>>2 | r[2]<<4
		regs[k+2] = r[2]>>4 | r[3]<<2
	}
}

// rawHisto adds the registers of m (one byte each) to h.
func rawHisto(m *[Registers]uint8, h *histogram) {
	var hs [4]histogram
	for i := 0; i < len(m); i += 8 {
		x := binary.LittleEndian.Uint64(m[i:])
		if x == 0 {
			hs[0][0] += 8
			continue
		}
		hs[0][x&63]++
		hs[1][x>>8&63]++
		hs[2][x>>16&63]++
		hs[3][x>>24&63]++
		hs[0][x>>32&63]++
		hs[1][x>>40&63]++
		hs[2][x>>48&63]++
		hs[3][x>>56&63]++
	}
	for i := range h {
		h[i] += hs[0][i] + hs[1][i] + hs[2][i] + hs[3][i]
	}
}
