// Package bitmap implements Redis's bit operations on string values held
// as []byte: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP and BITFIELD. Bit 0 is
// the most significant bit of byte 0, as in Redis. Bits past the end of a
// string read as 0; writes grow the string with zero bytes.
//
// The functions take and return plain slices. Functions that write modify
// b in place and return it, reallocated if it had to grow, like append.
// Checks that produce Redis errors (offset limits, the bit argument being 0
// or 1, bitfield type syntax, BITOP key counts) belong to the command
// layer; here invalid arguments of that kind panic.
package bitmap

import (
	"math/bits"
)

// SetBit sets the bit at offset to v (0 or 1), growing b with zero bytes
// if offset is past its end, and returns the updated slice and the bit's
// previous value.
func SetBit(b []byte, offset uint64, v int) (newB []byte, old int) {
	if v&^1 != 0 {
		panic("bitmap: bit value must be 0 or 1")
	}
	b = Grow(b, offset+1)
	i, mask := offset>>3, byte(0x80)>>(offset&7)
	if b[i]&mask != 0 {
		old = 1
	}
	if v == 1 {
		b[i] |= mask
	} else {
		b[i] &^= mask
	}
	return b, old
}

// GetBit returns the bit at offset, 0 past the end of b.
func GetBit(b []byte, offset uint64) int {
	i := offset >> 3
	if i >= uint64(len(b)) {
		return 0
	}
	return int(b[i]>>(7-offset&7)) & 1
}

// Grow returns b extended with zero bytes so that it holds at least nbits
// bits, as Redis pads a string before writing bits to it.
func Grow(b []byte, nbits uint64) []byte {
	need := nbits/8 + min(nbits%8, 1)
	if need <= uint64(len(b)) {
		return b
	}
	if need > uint64(maxLen) {
		panic("bitmap: string too large")
	}
	return append(b, make([]byte, int(need)-len(b))...)
}

const maxLen = int(^uint(0) >> 1)

// CountAll returns the number of set bits in b: BITCOUNT without a range.
func CountAll(b []byte) int64 { return popcount(b) }

// Count returns the number of set bits between start and end inclusive,
// counted in bytes or, if unitIsBit, in bits: BITCOUNT key start end
// [BYTE|BIT]. Negative indexes count from the end (-1 is the last byte or
// bit). Redis's clamping applies, quirks included: if both indexes are
// negative and start > end the count is 0; otherwise indexes are clamped
// into the string, so a range entirely before its start counts the first
// byte or bit.
func Count(b []byte, start, end int64, unitIsBit bool) int64 {
	lo, hi, ok := clampRange(len(b), start, end, unitIsBit)
	if !ok || start < 0 && end < 0 && start > end {
		return 0
	}
	if !unitIsBit {
		return popcount(b[lo : hi+1])
	}
	return countBits(b, uint64(lo), uint64(hi))
}

// clampRange applies the index rules BITCOUNT and BITPOS share, returning
// inclusive bounds in the given unit, or ok false for an empty range.
func clampRange(n int, start, end int64, unitIsBit bool) (lo, hi int64, ok bool) {
	total := int64(n)
	if unitIsBit {
		total *= 8
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	end = min(end, total-1)
	if start > end {
		return 0, 0, false
	}
	return start, end, true
}

// countBits counts the set bits at positions lo..hi inclusive.
func countBits(b []byte, lo, hi uint64) int64 {
	first, last := lo>>3, hi>>3
	headMask := byte(0xff) >> (lo & 7)
	tailMask := byte(0xff) << (7 - hi&7)
	if first == last {
		return int64(bits.OnesCount8(b[first] & headMask & tailMask))
	}
	n := int64(bits.OnesCount8(b[first]&headMask)) + int64(bits.OnesCount8(b[last]&tailMask))
	return n + popcount(b[first+1:last])
}

// Pos returns the position of the first bit equal to bit (0 or 1) between
// start and end inclusive, counted in bytes or, if unitIsBit, bits: BITPOS
// key bit [start [end [BYTE|BIT]]]. The range rules are Count's, without
// its special case for two negative indexes. The result is -1 when the
// range is empty or holds no such bit, except that when looking for a 0
// with no end given (endGiven false), a string of all ones answers the
// first bit past its end, as if it were padded with zeros. The form
// without a range is Pos(b, bit, 0, 0, false, false).
//
// A key that does not exist answers 0 for bit 0 and -1 for bit 1 in Redis;
// an empty b answers -1, so the command layer handles missing keys.
func Pos(b []byte, bit int, start, end int64, endGiven, unitIsBit bool) int64 {
	if bit&^1 != 0 {
		panic("bitmap: bit must be 0 or 1")
	}
	if !endGiven {
		end = -1
	}
	lo, hi, ok := clampRange(len(b), start, end, unitIsBit)
	if !ok {
		return -1
	}
	if !unitIsBit {
		lo, hi = lo*8, hi*8+7
	}
	if p := findBit(b, bit, uint64(lo), uint64(hi)); p >= 0 {
		return p
	}
	if bit == 1 || endGiven {
		return -1
	}
	return hi + 1
}

// findBit returns the position of the first bit equal to bit at positions
// lo..hi inclusive, or -1.
func findBit(b []byte, bit int, lo, hi uint64) int64 {
	var flip byte
	var flip64 uint64
	if bit == 0 {
		flip, flip64 = 0xff, ^uint64(0)
	}
	i, last := lo>>3, hi>>3
	tailMask := byte(0xff) << (7 - hi&7)
	x := (b[i] ^ flip) & (0xff >> (lo & 7))
	if i == last {
		x &= tailMask
	}
	if x != 0 {
		return int64(i*8) + int64(bits.LeadingZeros8(x))
	}
	if i == last {
		return -1
	}
	i++
	for ; i+8 <= last; i += 8 {
		if w := load64BE(b[i:]) ^ flip64; w != 0 {
			return int64(i*8) + int64(bits.LeadingZeros64(w))
		}
	}
	for ; i < last; i++ {
		if x := b[i] ^ flip; x != 0 {
			return int64(i*8) + int64(bits.LeadingZeros8(x))
		}
	}
	if x := (b[last] ^ flip) & tailMask; x != 0 {
		return int64(last*8) + int64(bits.LeadingZeros8(x))
	}
	return -1
}
