package stream

import "github.com/abacusdb/abacus/internal/num"

// Sizes of elements in Redis's listpack encoding. A node tracks the byte
// size its listpack would have in redis-server, because Redis decides
// when a node is full from that size: matching it keeps node boundaries,
// and so approximate trimming, identical.

// lpIntSize is the encoded size (with backlen) of integer v.
func lpIntSize(v int64) int {
	switch {
	case v >= 0 && v <= 127:
		return 2
	case v >= -4096 && v <= 4095:
		return 3
	case v >= -32768 && v <= 32767:
		return 4
	case v >= -8388608 && v <= 8388607:
		return 5
	case v >= -2147483648 && v <= 2147483647:
		return 6
	}
	return 10
}

// lpBacklenSize is the size of the backlen of an element whose encoding
// (header and data) takes l bytes.
func lpBacklenSize(l int) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// lpStrSize is the encoded size of string s as lpAppend stores it: as an
// integer when it is one in canonical form (lpStringToInt64).
func lpStrSize(s []byte) int {
	if v, ok := ParseCanonicalInt(s); ok {
		return lpIntSize(v)
	}
	l := len(s)
	switch {
	case l < 64:
		l++
	case l < 4096:
		l += 2
	default:
		l += 5
	}
	return l + lpBacklenSize(l)
}

// ParseCanonicalInt parses s as Redis's string2ll does: an optional '-',
// no leading zeros, no '+', no spaces, within int64.
func ParseCanonicalInt(s []byte) (int64, bool) { return num.ParseInt(s) }

// lpHeaderSize is a listpack's fixed overhead: total bytes and count (6)
// and the end byte.
const lpHeaderSize = 7
