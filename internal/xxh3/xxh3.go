// Package xxh3 is XXH3-64, the 64-bit hash of xxHash's third generation,
// with seed 0 and the default secret: the digest Redis 8.4 computes for
// DIGEST and for the IFDEQ/IFDNE conditions. (github.com/cespare/xxhash
// is XXH64, a different function.) Portable Go, written from the
// algorithm's description: the input length picks one of six paths, the
// long path folds 64-byte stripes into eight accumulators and scrambles
// them every 1 KiB block.
package xxh3

import (
	"encoding/binary"
	"math/bits"
)

const (
	prime32_1 = 0x9E3779B1
	prime32_2 = 0x85EBCA77
	prime32_3 = 0xC2B2AE3D
	prime64_1 = 0x9E3779B185EBCA87
	prime64_2 = 0xC2B2AE3D27D4EB4F
	prime64_3 = 0x165667B19E3779F9
	prime64_4 = 0x85EBCA77C2B2AE63
	prime64_5 = 0x27D4EB2F165667C5
	primeMx1  = 0x165667919E3779F9
	primeMx2  = 0x9FB21C651E98DF25
)

// secret is XXH3's default 192-byte secret.
var secret = [192]byte{
	0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
	0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
	0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
	0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
	0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
	0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
	0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
	0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
	0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
	0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
	0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
	0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
}

const (
	stripeLen       = 64
	secretConsume   = 8
	stripesPerBlock = (len(secret) - stripeLen) / secretConsume // 16
	blockLen        = stripeLen * stripesPerBlock               // 1024
)

func u64(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) }
func u32(b []byte, i int) uint32 { return binary.LittleEndian.Uint32(b[i:]) }

// fold multiplies two 64-bit values to 128 bits and xors the halves.
func fold(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// avalanche is XXH3's final mix.
func avalanche(h uint64) uint64 {
	h ^= h >> 37
	h *= primeMx1
	return h ^ h>>32
}

// avalanche64 is XXH64's final mix, which XXH3 uses for tiny inputs.
func avalanche64(h uint64) uint64 {
	h ^= h >> 33
	h *= prime64_2
	h ^= h >> 29
	h *= prime64_3
	return h ^ h>>32
}

// rrmxmx is the stronger mix of the 4-8 byte path.
func rrmxmx(h uint64, n int) uint64 {
	h ^= bits.RotateLeft64(h, 49) ^ bits.RotateLeft64(h, 24)
	h *= primeMx2
	h ^= h>>35 + uint64(n)
	h *= primeMx2
	return h ^ h>>28
}

// mix16 mixes 16 input bytes at p with 16 secret bytes at s.
func mix16(b []byte, p int, s int) uint64 {
	return fold(u64(b, p)^u64(secret[:], s), u64(b, p+8)^u64(secret[:], s+8))
}

// Hash returns the XXH3-64 hash of b (seed 0).
func Hash(b []byte) uint64 {
	n := len(b)
	sec := secret[:]
	switch {
	case n == 0:
		return avalanche64(u64(sec, 56) ^ u64(sec, 64))
	case n <= 3:
		c := uint32(b[0])<<16 | uint32(b[n>>1])<<24 | uint32(b[n-1]) | uint32(n)<<8
		return avalanche64(uint64(c) ^ uint64(u32(sec, 0)^u32(sec, 4)))
	case n <= 8:
		in := uint64(u32(b, n-4)) + uint64(u32(b, 0))<<32
		return rrmxmx(in^(u64(sec, 8)^u64(sec, 16)), n)
	case n <= 16:
		lo := u64(b, 0) ^ (u64(sec, 24) ^ u64(sec, 32))
		hi := u64(b, n-8) ^ (u64(sec, 40) ^ u64(sec, 48))
		return avalanche(uint64(n) + bits.ReverseBytes64(lo) + hi + fold(lo, hi))
	case n <= 128:
		acc := uint64(n) * prime64_1
		if n > 32 {
			if n > 64 {
				if n > 96 {
					acc += mix16(b, 48, 96) + mix16(b, n-64, 112)
				}
				acc += mix16(b, 32, 64) + mix16(b, n-48, 80)
			}
			acc += mix16(b, 16, 32) + mix16(b, n-32, 48)
		}
		acc += mix16(b, 0, 0) + mix16(b, n-16, 16)
		return avalanche(acc)
	case n <= 240:
		acc := uint64(n) * prime64_1
		rounds := n / 16
		for i := 0; i < 8; i++ {
			acc += mix16(b, 16*i, 16*i)
		}
		acc = avalanche(acc)
		for i := 8; i < rounds; i++ {
			acc += mix16(b, 16*i, 16*(i-8)+3)
		}
		acc += mix16(b, n-16, 136-17)
		return avalanche(acc)
	}
	return hashLong(b)
}

// accumulate folds one 64-byte stripe at p into acc with the secret at s.
func accumulate(acc *[8]uint64, b []byte, p, s int) {
	in, sec := b[p:p+stripeLen:p+stripeLen], secret[s:s+stripeLen:s+stripeLen]
	// Lanes in pairs: each lane's data goes to its neighbour, its product
	// to itself.
	for i := 0; i < 8; i += 2 {
		v0 := binary.LittleEndian.Uint64(in[8*i:])
		v1 := binary.LittleEndian.Uint64(in[8*i+8:])
		k0 := v0 ^ binary.LittleEndian.Uint64(sec[8*i:])
		k1 := v1 ^ binary.LittleEndian.Uint64(sec[8*i+8:])
		acc[i] += v1 + uint64(uint32(k0))*(k0>>32)
		acc[i+1] += v0 + uint64(uint32(k1))*(k1>>32)
	}
}

func scramble(acc *[8]uint64) {
	s := len(secret) - stripeLen
	for i := range acc {
		a := acc[i]
		a ^= a >> 47
		a ^= u64(secret[:], s+8*i)
		acc[i] = a * prime32_1
	}
}

func hashLong(b []byte) uint64 {
	n := len(b)
	acc := [8]uint64{prime32_3, prime64_1, prime64_2, prime64_3, prime64_4, prime32_2, prime64_5, prime32_1}
	blocks := (n - 1) / blockLen
	for k := 0; k < blocks; k++ {
		for s := 0; s < stripesPerBlock; s++ {
			accumulate(&acc, b, k*blockLen+s*stripeLen, s*secretConsume)
		}
		scramble(&acc)
	}
	stripes := ((n - 1) - blocks*blockLen) / stripeLen
	for s := 0; s < stripes; s++ {
		accumulate(&acc, b, blocks*blockLen+s*stripeLen, s*secretConsume)
	}
	accumulate(&acc, b, n-stripeLen, len(secret)-stripeLen-7)
	res := uint64(n) * prime64_1
	for i := 0; i < 4; i++ {
		res += fold(acc[2*i]^u64(secret[:], 11+16*i), acc[2*i+1]^u64(secret[:], 11+16*i+8))
	}
	return avalanche(res)
}
