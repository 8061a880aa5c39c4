package rdb

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/abacusdb/abacus/internal/ds/set"
)

// appendLen appends a length in the shortest of its forms.
func appendLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|len14<<6, byte(n))
	case n <= math.MaxUint32:
		b = append(b, len32)
		return binary.BigEndian.AppendUint32(b, uint32(n))
	}
	b = append(b, len64)
	return binary.BigEndian.AppendUint64(b, n)
}

// appendIntEnc appends v as an integer-encoded string if it fits 32 bits.
func appendIntEnc(b []byte, v int64) ([]byte, bool) {
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		return append(b, lenEncV<<6|encInt8, byte(v)), true
	case v >= math.MinInt16 && v <= math.MaxInt16:
		b = append(b, lenEncV<<6|encInt16)
		return binary.LittleEndian.AppendUint16(b, uint16(v)), true
	case v >= math.MinInt32 && v <= math.MaxInt32:
		b = append(b, lenEncV<<6|encInt32)
		return binary.LittleEndian.AppendUint32(b, uint32(v)), true
	}
	return b, false
}

// appendInt appends the string form of v, integer-encoded when it fits.
func appendInt(b []byte, v int64) []byte {
	if out, ok := appendIntEnc(b, v); ok {
		return out
	}
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], v, 10)
	b = appendLen(b, uint64(len(s)))
	return append(b, s...)
}

// appendString appends s as rdbSaveRawString does: integer-encoded if it
// is a canonical integer of up to 11 characters that fits 32 bits, LZF
// when compress is set, s is longer than 20 bytes and shrinks, else raw.
func appendString(b, s []byte, compress bool) []byte {
	if len(s) <= 11 && len(s) > 0 {
		if v, ok := canonicalInt(s); ok {
			if out, ok := appendIntEnc(b, v); ok {
				return out
			}
		}
	}
	if compress && len(s) > 20 {
		sc := getScratch(len(s))
		c := lzfCompressTo(*sc, s)
		if c != nil {
			b = append(b, lenEncV<<6|encLZF)
			b = appendLen(b, uint64(len(c)))
			b = appendLen(b, uint64(len(s)))
			b = append(b, c...)
			*sc = c
		}
		putScratch(sc)
		if c != nil {
			return b
		}
	}
	b = appendLen(b, uint64(len(s)))
	return append(b, s...)
}

// canonicalInt parses s as a decimal int64 written the way Redis prints
// integers (no sign on zero, no leading zeros or plus sign, no spaces):
// Redis's string2ll, which ds/set implements without allocating.
func canonicalInt(s []byte) (int64, bool) { return set.ParseInt(s) }

func appendBinaryDouble(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

func appendMillis(b []byte, ms int64) []byte {
	return binary.LittleEndian.AppendUint64(b, uint64(ms))
}
