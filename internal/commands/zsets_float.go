package commands

import (
	"math"
	"strconv"
)

// Sorted-set commands read doubles in two ways, and Redis's answers differ
// between them, so both are reproduced here on top of one emulation of C's
// strtod (glibc, "C" locale):
//
//   - scores, increments and weights go through getDoubleFromObject
//     (string2d): the whole argument must be a number, no leading space,
//     overflow to ±inf and underflow to 0 refused, NaN refused;
//   - the min and max of ZRANGEBYSCORE and friends go through
//     zslParseRange, which calls strtod directly and only checks that it
//     stopped at the end of the C string: leading spaces are skipped, an
//     empty string is 0, "1\x00junk" is 1, "1e999" is inf.
//
// num.ParseFloat is neither (it takes Go's "1_000" and accepts overflow),
// hence this file.

// zsStrtod parses the longest prefix of b that C's strtod accepts. It
// returns the value, the number of bytes consumed (0 when nothing converts,
// as strtod then leaves its end pointer at the start) and whether strtod
// would set ERANGE for a result that overflowed to ±inf or underflowed to
// zero (the two cases string2d refuses).
func zsStrtod(b []byte) (v float64, n int, erange bool) {
	i := 0
	for i < len(b) && zsIsSpace(b[i]) {
		i++
	}
	start := i
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	neg := i > start && b[start] == '-'
	rest := b[i:]
	if k := zsMatchFold(rest, "infinity"); k > 0 {
		return zsSigned(math.Inf(1), neg), i + k, false
	}
	if k := zsMatchFold(rest, "inf"); k > 0 {
		return zsSigned(math.Inf(1), neg), i + k, false
	}
	if k := zsMatchFold(rest, "nan"); k > 0 {
		k += zsNanPayload(rest[k:])
		return math.NaN(), i + k, false
	}
	if len(rest) >= 2 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X') {
		if v, k, er, ok := zsParseHex(rest[2:]); ok {
			return zsSigned(v, neg), i + 2 + k, er
		}
		// "0x" without hex digits: strtod converts the "0" alone.
		return zsSigned(0, neg), i + 1, false
	}
	// Decimal: digits [. digits] [e [sign] digits], at least one digit in
	// the mantissa; the exponent counts only when it has digits.
	j := 0
	digits, nonzero := 0, false
	var whole uint64 // the integer part, read while it has at most 15 digits
	for j < len(rest) && zsIsDigit(rest[j]) {
		nonzero = nonzero || rest[j] != '0'
		if digits < 15 {
			whole = whole*10 + uint64(rest[j]-'0')
		}
		j++
		digits++
	}
	intEnd := j
	if j < len(rest) && rest[j] == '.' {
		j++
		for j < len(rest) && zsIsDigit(rest[j]) {
			nonzero = nonzero || rest[j] != '0'
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0, 0, false
	}
	if j < len(rest) && (rest[j] == 'e' || rest[j] == 'E') {
		k := j + 1
		if k < len(rest) && (rest[k] == '+' || rest[k] == '-') {
			k++
		}
		if k < len(rest) && zsIsDigit(rest[k]) {
			for k < len(rest) && zsIsDigit(rest[k]) {
				k++
			}
			j = k
		}
	}
	if j == intEnd && digits <= 15 {
		// An integer of at most 15 digits is below 2^53, exact as a
		// double: the value strtod reads (most scores are integers, such
		// as timestamps).
		return zsSigned(float64(whole), neg), i + j, false
	}
	v, err := strconv.ParseFloat(string(rest[:j]), 64)
	if err != nil && !math.IsInf(v, 0) {
		// Only range errors are possible on this syntax; be safe anyway.
		return 0, 0, false
	}
	erange = math.IsInf(v, 0) || (v == 0 && nonzero)
	return zsSigned(v, neg), i + j, erange
}

// zsParseHex parses the hex digits, point and binary exponent that follow
// "0x". ok is false when no hex digit is there.
func zsParseHex(b []byte) (v float64, n int, erange, ok bool) {
	j, digits, nonzero := 0, 0, false
	for j < len(b) && zsIsHex(b[j]) {
		nonzero = nonzero || b[j] != '0'
		j++
		digits++
	}
	if j < len(b) && b[j] == '.' {
		k := j + 1
		for k < len(b) && zsIsHex(b[k]) {
			nonzero = nonzero || b[k] != '0'
			k++
			digits++
		}
		j = k
	}
	if digits == 0 {
		return 0, 0, false, false
	}
	mant := string(b[:j])
	exp := "p0"
	if j < len(b) && (b[j] == 'p' || b[j] == 'P') {
		k := j + 1
		if k < len(b) && (b[k] == '+' || b[k] == '-') {
			k++
		}
		if k < len(b) && zsIsDigit(b[k]) {
			for k < len(b) && zsIsDigit(b[k]) {
				k++
			}
			exp = "p" + string(b[j+1:k])
			j = k
		}
	}
	if mant[len(mant)-1] == '.' {
		mant += "0"
	}
	if mant[0] == '.' {
		mant = "0" + mant
	}
	v, err := strconv.ParseFloat("0x"+mant+exp, 64)
	if err != nil && !math.IsInf(v, 0) {
		return 0, 0, false, false
	}
	return v, j, math.IsInf(v, 0) || (v == 0 && nonzero), true
}

// zsNanPayload is the length of an optional "(n-char-sequence)" after
// "nan".
func zsNanPayload(b []byte) int {
	if len(b) == 0 || b[0] != '(' {
		return 0
	}
	for k := 1; k < len(b); k++ {
		c := b[k]
		switch {
		case c == ')':
			return k + 1
		case zsIsDigit(c), c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		default:
			return 0
		}
	}
	return 0
}

// zsMatchFold returns len(word) if b starts with word, ignoring ASCII case.
func zsMatchFold(b []byte, word string) int {
	if len(b) < len(word) {
		return 0
	}
	for i := 0; i < len(word); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != word[i] {
			return 0
		}
	}
	return len(word)
}

func zsSigned(v float64, neg bool) float64 {
	if neg {
		return -v
	}
	return v
}

func zsIsSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }
func zsIsDigit(c byte) bool { return '0' <= c && c <= '9' }
func zsIsHex(c byte) bool {
	return zsIsDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// zsParseDouble is Redis's string2d (getDoubleFromObject): the score of
// ZADD, the increment of ZINCRBY, a WEIGHTS value.
func zsParseDouble(b []byte) (float64, bool) {
	if len(b) == 0 || zsIsSpace(b[0]) {
		return 0, false
	}
	v, n, erange := zsStrtod(b)
	if n != len(b) || erange || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// zsParseRangeEnd parses one end of a score range as zslParseRange does:
// an optional "(" marks it exclusive, then strtod must stop at the end of
// the C string (the first NUL byte, or the end).
func zsParseRangeEnd(b []byte) (v float64, exclusive, ok bool) {
	if len(b) > 0 && b[0] == '(' {
		exclusive = true
		b = b[1:]
	}
	v, n, _ := zsStrtod(b)
	if n < len(b) && b[n] != 0 {
		return 0, false, false
	}
	if math.IsNaN(v) {
		return 0, false, false
	}
	return v, exclusive, true
}
