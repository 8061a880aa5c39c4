package bitmap

import (
	"encoding/binary"
	"math/bits"
)

// Word-at-a-time kernels. encoding/binary loads compile to single 64-bit
// moves on the platforms we care about; byte order does not matter for the
// bitwise kernels and popcount, and big-endian is what makes
// LeadingZeros64 find the first bit in Redis's order.

func load64(b []byte) uint64     { return binary.LittleEndian.Uint64(b) }
func store64(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) }
func load64BE(b []byte) uint64   { return binary.BigEndian.Uint64(b) }

// popcount counts the set bits of b, four words per step so the adds do
// not wait on each other.
func popcount(b []byte) int64 {
	var c0, c1, c2, c3 int
	for len(b) >= 32 {
		c0 += bits.OnesCount64(load64(b[0:8]))
		c1 += bits.OnesCount64(load64(b[8:16]))
		c2 += bits.OnesCount64(load64(b[16:24]))
		c3 += bits.OnesCount64(load64(b[24:32]))
		b = b[32:]
	}
	for len(b) >= 8 {
		c0 += bits.OnesCount64(load64(b))
		b = b[8:]
	}
	for _, x := range b {
		c0 += bits.OnesCount8(x)
	}
	return int64(c0 + c1 + c2 + c3)
}

// The kernels below combine src into dst over their common length. The
// loop conditions let the compiler drop bounds checks inside a block.

func andInto(dst, src []byte) {
	for len(dst) >= 32 && len(src) >= 32 {
		d, s := dst[:32], src[:32]
		store64(d[0:8], load64(d[0:8])&load64(s[0:8]))
		store64(d[8:16], load64(d[8:16])&load64(s[8:16]))
		store64(d[16:24], load64(d[16:24])&load64(s[16:24]))
		store64(d[24:32], load64(d[24:32])&load64(s[24:32]))
		dst, src = dst[32:], src[32:]
	}
	n := min(len(dst), len(src))
	for i := range dst[:n] {
		dst[i] &= src[i]
	}
}

func orInto(dst, src []byte) {
	for len(dst) >= 32 && len(src) >= 32 {
		d, s := dst[:32], src[:32]
		store64(d[0:8], load64(d[0:8])|load64(s[0:8]))
		store64(d[8:16], load64(d[8:16])|load64(s[8:16]))
		store64(d[16:24], load64(d[16:24])|load64(s[16:24]))
		store64(d[24:32], load64(d[24:32])|load64(s[24:32]))
		dst, src = dst[32:], src[32:]
	}
	n := min(len(dst), len(src))
	for i := range dst[:n] {
		dst[i] |= src[i]
	}
}

func xorInto(dst, src []byte) {
	for len(dst) >= 32 && len(src) >= 32 {
		d, s := dst[:32], src[:32]
		store64(d[0:8], load64(d[0:8])^load64(s[0:8]))
		store64(d[8:16], load64(d[8:16])^load64(s[8:16]))
		store64(d[16:24], load64(d[16:24])^load64(s[16:24]))
		store64(d[24:32], load64(d[24:32])^load64(s[24:32]))
		dst, src = dst[32:], src[32:]
	}
	n := min(len(dst), len(src))
	for i := range dst[:n] {
		dst[i] ^= src[i]
	}
}

// andNotInto clears in dst the bits set in src.
func andNotInto(dst, src []byte) {
	for len(dst) >= 32 && len(src) >= 32 {
		d, s := dst[:32], src[:32]
		store64(d[0:8], load64(d[0:8])&^load64(s[0:8]))
		store64(d[8:16], load64(d[8:16])&^load64(s[8:16]))
		store64(d[16:24], load64(d[16:24])&^load64(s[16:24]))
		store64(d[24:32], load64(d[24:32])&^load64(s[24:32]))
		dst, src = dst[32:], src[32:]
	}
	n := min(len(dst), len(src))
	for i := range dst[:n] {
		dst[i] &^= src[i]
	}
}

// notFrom sets dst to the complement of src.
func notFrom(dst, src []byte) {
	for len(dst) >= 32 && len(src) >= 32 {
		d, s := dst[:32], src[:32]
		store64(d[0:8], ^load64(s[0:8]))
		store64(d[8:16], ^load64(s[8:16]))
		store64(d[16:24], ^load64(s[16:24]))
		store64(d[24:32], ^load64(s[24:32]))
		dst, src = dst[32:], src[32:]
	}
	n := min(len(dst), len(src))
	for i := range dst[:n] {
		dst[i] = ^src[i]
	}
}

// seenInto folds src into the pair (once, more): once collects bits seen
// in any source so far, more the bits seen in at least two.
func seenInto(once, more, src []byte) {
	for len(once) >= 32 && len(more) >= 32 && len(src) >= 32 {
		o, m, s := once[:32], more[:32], src[:32]
		for k := 0; k < 32; k += 8 {
			ow, sw := load64(o[k:k+8]), load64(s[k:k+8])
			store64(m[k:k+8], load64(m[k:k+8])|ow&sw)
			store64(o[k:k+8], ow|sw)
		}
		once, more, src = once[32:], more[32:], src[32:]
	}
	n := min(len(once), len(more), len(src))
	for i := range once[:n] {
		more[i] |= once[i] & src[i]
		once[i] |= src[i]
	}
}
