package bitmap

import "math"

// Overflow is a BITFIELD OVERFLOW policy.
type Overflow int

const (
	// Wrap keeps the low bits of the result: modular arithmetic for
	// unsigned fields, two's complement wrap-around for signed ones.
	Wrap Overflow = iota
	// Sat clamps the result to the field's minimum or maximum.
	Sat
	// Fail leaves the field unchanged and reports the overflow.
	Fail
)

// GetUnsigned reads the bits-wide unsigned integer (1 <= bits <= 64)
// whose most significant bit is at offset. Bits past the end of b read as 0.
func GetUnsigned(b []byte, offset uint64, bits int) uint64 {
	checkWidth(bits, 64)
	i, shift := offset>>3, offset&7
	var w uint64
	var next byte
	if n := uint64(len(b)); i < n && n-i >= 9 {
		w, next = load64BE(b[i:]), b[i+8]
	} else {
		for k := range uint64(9) {
			var c byte
			if i+k < n && i+k >= i {
				c = b[i+k]
			}
			if k < 8 {
				w = w<<8 | uint64(c)
			} else {
				next = c
			}
		}
	}
	// A field of up to 64 bits starting shift bits into byte i spans at
	// most the 8 bytes of w and the one after.
	v := w<<shift | uint64(next)>>(8-shift)
	return v >> (64 - bits)
}

// GetSigned reads the bits-wide two's complement integer (1 <= bits <= 64)
// whose most significant bit is at offset. Bits past the end of b read as 0.
func GetSigned(b []byte, offset uint64, bits int) int64 {
	u := GetUnsigned(b, offset, bits)
	// Shift the field's sign bit to bit 63 and back to extend it.
	return int64(u<<(64-bits)) >> (64 - bits)
}

// SetBits writes the low bits of v (1 <= bits <= 64) as a bits-wide field
// whose most significant bit is at offset, growing b with zero bytes as
// needed, and returns the updated slice.
func SetBits(b []byte, offset uint64, bits int, v uint64) []byte {
	checkWidth(bits, 64)
	end := offset + uint64(bits) // exclusive
	if end < offset {
		panic("bitmap: bit offset overflows")
	}
	b = Grow(b, end)
	for pos := offset; pos < end; {
		i, inByte := pos>>3, pos&7
		n := min(8-inByte, end-pos) // bits of the field in this byte
		chunk := byte(v>>(end-pos-n)) & byte(1<<n-1)
		shift := 8 - inByte - n
		mask := byte(1<<n-1) << shift
		b[i] = b[i]&^mask | chunk<<shift
		pos += n
	}
	return b
}

// FieldSet is BITFIELD SET: it stores v in the field of the given width
// and signedness (i1..i64, u1..u63) at offset, applying the overflow
// policy when v does not fit, and returns the field's previous value. With
// Fail and a v that does not fit, nothing is stored and ok is false (the
// reply is nil). Like Redis, which sizes the string for every write before
// running any, b is grown to cover the field in every case.
//
// Redis's overflow check has one quirk kept here: for a signed field it
// computes max-v in 64 bits, so a v so negative that this wraps
// (v <= -2^63+max) counts as overflowing upward, and Sat stores the
// maximum.
func FieldSet(b []byte, offset uint64, bits int, signed bool, v int64, ow Overflow) (newB []byte, old int64, ok bool) {
	checkField(bits, signed)
	b = Grow(b, offset+uint64(bits))
	var nv uint64
	var overflow bool
	if signed {
		old = GetSigned(b, offset, bits)
		var r int64
		r, overflow = signedAdd(v, 0, bits, ow)
		nv = uint64(r)
	} else {
		old = int64(GetUnsigned(b, offset, bits))
		nv, overflow = unsignedAdd(uint64(v), 0, bits, ow)
	}
	if overflow && ow == Fail {
		return b, 0, false
	}
	return SetBits(b, offset, bits, nv), old, true
}

// FieldIncrBy is BITFIELD INCRBY: it adds incr to the field of the given
// width and signedness (i1..i64, u1..u63) at offset, applying the overflow
// policy, and returns the new value. With Fail and an overflow, nothing is
// stored and ok is false (the reply is nil). b is grown to cover the field
// in every case, as FieldSet does.
func FieldIncrBy(b []byte, offset uint64, bits int, signed bool, incr int64, ow Overflow) (newB []byte, val int64, ok bool) {
	checkField(bits, signed)
	b = Grow(b, offset+uint64(bits))
	var nv uint64
	var overflow bool
	if signed {
		var r int64
		r, overflow = signedAdd(GetSigned(b, offset, bits), incr, bits, ow)
		nv = uint64(r)
	} else {
		nv, overflow = unsignedAdd(GetUnsigned(b, offset, bits), incr, bits, ow)
	}
	if overflow && ow == Fail {
		return b, 0, false
	}
	return SetBits(b, offset, bits, nv), int64(nv), true
}

// unsignedAdd computes value+incr for a bits-wide unsigned field the way
// Redis's checkUnsignedBitfieldOverflow does, including its treatment of
// a value that is already out of range (a SET of a negative number reads
// as a huge unsigned one and overflows upward).
func unsignedAdd(value uint64, incr int64, bits int, ow Overflow) (uint64, bool) {
	limit := uint64(math.MaxUint64)
	if bits < 64 {
		limit = 1<<bits - 1
	}
	maxIncr := int64(limit - value)
	minIncr := -int64(value)
	switch {
	case value > limit || incr > 0 && incr > maxIncr:
		if ow == Sat {
			return limit, true
		}
	case incr < 0 && incr < minIncr:
		if ow == Sat {
			return 0, true
		}
	default:
		return value + uint64(incr), false
	}
	return (value + uint64(incr)) & limit, true
}

// signedAdd is unsignedAdd for two's complement fields, after Redis's
// checkSignedBitfieldOverflow.
func signedAdd(value, incr int64, bits int, ow Overflow) (int64, bool) {
	hi := int64(math.MaxInt64)
	if bits < 64 {
		hi = 1<<(bits-1) - 1
	}
	lo := -hi - 1
	// These may wrap; they are only used once value is known in range.
	maxIncr := int64(uint64(hi) - uint64(value))
	minIncr := lo - value
	switch {
	case value > hi || bits != 64 && incr > maxIncr || value >= 0 && incr > 0 && incr > maxIncr:
		if ow == Sat {
			return hi, true
		}
	case value < lo || bits != 64 && incr < minIncr || value < 0 && incr < 0 && incr < minIncr:
		if ow == Sat {
			return lo, true
		}
	default:
		return value + incr, false
	}
	// Wrap: add modulo 2^64, then sign-extend from the field's top bit.
	c := uint64(value) + uint64(incr)
	if bits < 64 {
		c = uint64(int64(c<<(64-bits)) >> (64 - bits))
	}
	return int64(c), true
}

func checkWidth(bits, maxBits int) {
	if bits < 1 || bits > maxBits {
		panic("bitmap: field width out of range")
	}
}

// checkField enforces BITFIELD's types: i1..i64 and u1..u63 (u64 values
// would not fit the protocol's signed integers).
func checkField(bits int, signed bool) {
	if signed {
		checkWidth(bits, 64)
	} else {
		checkWidth(bits, 63)
	}
}
