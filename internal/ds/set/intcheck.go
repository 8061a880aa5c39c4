package set

import (
	"math"
	"strconv"
)

// maxIntLen is the longest decimal form of an int64: "-9223372036854775808".
const maxIntLen = 20

// ParseInt reports whether b is an integer member and returns its value.
//
// A member is an integer exactly when Redis's string2ll accepts it: the
// canonical decimal form of an int64. That means an optional '-' followed by
// digits, no '+', no spaces, no leading zeros ("0" alone is fine, "-0" and
// "007" are not), and a value within the int64 range. Only such members may
// live in the integer encodings, because formatting the stored int64 must
// give back the exact bytes the client sent.
func ParseInt(b []byte) (int64, bool) {
	n := len(b)
	if n == 0 || n > maxIntLen {
		return 0, false
	}
	i := 0
	neg := b[0] == '-'
	if neg {
		if n == 1 {
			return 0, false
		}
		i = 1
	}
	c := b[i]
	if c < '1' || c > '9' {
		// A leading zero is only allowed for "0" itself; "-0" is rejected.
		if c == '0' && n == 1 {
			return 0, true
		}
		return 0, false
	}
	u := uint64(c - '0')
	for i++; i < n; i++ {
		c = b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > math.MaxUint64/10 {
			return 0, false
		}
		u *= 10
		d := uint64(c - '0')
		if u > math.MaxUint64-d {
			return 0, false
		}
		u += d
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		// For u == 1<<63 the two's complement negation wraps to MinInt64,
		// which is the right answer.
		return int64(-u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// appendInt appends the canonical decimal form of v, the inverse of ParseInt.
func appendInt(dst []byte, v int64) []byte {
	return strconv.AppendInt(dst, v, 10)
}

// intLen is the length of the decimal form of v.
func intLen(v int64) int {
	n := 1
	u := uint64(v)
	if v < 0 {
		n++
		u = -u
	}
	for u >= 10 {
		u /= 10
		n++
	}
	return n
}
