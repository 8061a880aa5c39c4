package hll

import (
	"encoding/binary"
	"math/bits"
)

// hashSeed is the seed Redis passes to MurmurHash64A for HyperLogLog elements.
const hashSeed = 0xadc83b19

// murmur64A is MurmurHash64A (MurmurHash2, 64-bit variant) as Redis computes
// it: 8-byte blocks are read little-endian whatever the host byte order, so
// the hash (and therefore every register) is the same on every machine.
func murmur64A(data []byte, seed uint64) uint64 {
	const (
		m = 0xc6a4a7935bd1e995
		r = 47
	)
	h := seed ^ (uint64(len(data)) * m)
	for len(data) >= 8 {
		k := binary.LittleEndian.Uint64(data)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		data = data[8:]
	}
	if len(data) > 0 {
		// The tail is folded in with byte i at bit 8*i, then one multiply.
		var t uint64
		for i := len(data) - 1; i >= 0; i-- {
			t = t<<8 | uint64(data[i])
		}
		h ^= t
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// patLen returns the register an element maps to and the value it offers
// that register: the low 14 bits of the hash select the register, and the
// value is the position of the first set bit in the remaining 50 bits
// (1 for "1", 2 for "10", ...). A guard bit above them caps the value at 51.
func patLen(elem []byte) (index int, count uint8) {
	h := murmur64A(elem, hashSeed)
	index = int(h & (Registers - 1))
	h >>= precision
	h |= 1 << (64 - precision)
	return index, uint8(bits.TrailingZeros64(h) + 1)
}
