// Package num parses and formats numbers exactly as Redis does, so that
// replies and stored values are byte-identical to redis-server's.
package num

import (
	"math"
	"math/big"
	"strconv"
)

// ParseInt is Redis's string2ll: an optional '-', then digits with no
// leading zero (except "0" itself), no '+', no spaces, within int64.
func ParseInt(b []byte) (int64, bool) {
	n := len(b)
	if n == 0 || n > 20 {
		return 0, false
	}
	if n == 1 && b[0] == '0' {
		return 0, true
	}
	neg := false
	i := 0
	if b[0] == '-' {
		neg = true
		i = 1
		if n == 1 {
			return 0, false
		}
	}
	if b[i] < '1' || b[i] > '9' {
		return 0, false
	}
	var v uint64
	if n-i <= 18 {
		// At most 18 digits stay below 10^18 < 2^63: nothing to check
		// but the digits (timestamps, counters and ids are this short).
		for ; i < n; i++ {
			d := b[i] - '0'
			if d > 9 {
				return 0, false
			}
			v = v*10 + uint64(d)
		}
		if neg {
			return -int64(v), true
		}
		return int64(v), true
	}
	for ; i < n; i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > math.MaxUint64/10 {
			return 0, false
		}
		v *= 10
		d := uint64(c - '0')
		if v > math.MaxUint64-d {
			return 0, false
		}
		v += d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// ParseIntString is ParseInt for a string.
func ParseIntString(s string) (int64, bool) {
	// The conversion does not allocate: the compiler sees it does not escape.
	return ParseInt([]byte(s))
}

// AppendInt appends the decimal form of v.
func AppendInt(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }

// ParseFloat parses a double as Redis's getDoubleFromObject does (strtod):
// no leading space, the whole string consumed, NaN refused; "inf", "-inf",
// "+inf" and "infinity" accepted, case-insensitively.
func ParseFloat(b []byte) (float64, bool) {
	if len(b) == 0 || isSpace(b[0]) {
		return 0, false
	}
	s := string(b)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			// strtod returns +-HUGE_VAL or 0 with ERANGE; Redis accepts the
			// result unless it is NaN.
			return v, true
		}
		return parseHexFloat(s)
	}
	if math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// parseHexFloat accepts C's hexadecimal floats without a binary exponent
// ("0x10"), which strconv refuses but strtod takes.
func parseHexFloat(s string) (float64, bool) {
	t := s
	neg := false
	if len(t) > 0 && (t[0] == '-' || t[0] == '+') {
		neg = t[0] == '-'
		t = t[1:]
	}
	if len(t) < 3 || t[0] != '0' || (t[1] != 'x' && t[1] != 'X') {
		return 0, false
	}
	v, err := strconv.ParseFloat("0x"+t[2:]+"p0", 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f'
}

// LongDouble is an x87 80-bit extended value as Redis's INCRBYFLOAT and
// HINCRBYFLOAT compute with: a 64-bit mantissa. big.Float with precision 64
// and round-to-nearest-even gives the same results for the same operations.
type LongDouble = *big.Float

const ldPrec = 64

// ParseLongDouble is Redis's string2ld: strtold over the whole string, no
// leading space, NaN refused. Infinities are accepted here; callers check.
func ParseLongDouble(b []byte) (LongDouble, bool) {
	if len(b) == 0 || isSpace(b[0]) || len(b) >= 5*1024 || !strtoldSyntax(b) {
		return nil, false
	}
	s := string(b)
	f := new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven)
	if _, ok := f.SetString(s); ok {
		if !LongDoubleInRange(f) {
			return nil, false // strtold's ERANGE: HUGE_VALL or 0
		}
		return f, true
	}
	switch lower(s) {
	case "inf", "+inf", "infinity", "+infinity":
		return f.SetInf(false), true
	case "-inf", "-infinity":
		return f.SetInf(true), true
	}
	if v, ok := parseHexFloat(s); ok {
		return f.SetFloat64(v), true
	}
	return nil, false
}

// strtoldSyntax reports whether all of b is a number strtold reads: an
// optional sign, then "inf", "infinity", or decimal digits with an optional
// point and e-exponent, or 0x hex digits with an optional point and
// p-exponent. big.Float alone also takes "1_000", "0b101" and "0o7".
func strtoldSyntax(b []byte) bool {
	i, n := 0, len(b)
	if i < n && (b[i] == '+' || b[i] == '-') {
		i++
	}
	switch lower(string(b[i:])) {
	case "inf", "infinity":
		return true
	}
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	digit, exp := isDigit, byte('e')
	if n-i > 2 && b[i] == '0' && (b[i+1] == 'x' || b[i+1] == 'X') {
		i += 2
		digit = func(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }
		exp = 'p'
	}
	digits := 0
	for ; i < n && digit(b[i]); i++ {
		digits++
	}
	if i < n && b[i] == '.' {
		for i++; i < n && digit(b[i]); i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < n && b[i]|0x20 == exp {
		i++
		if i < n && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i == n {
			return false
		}
		for ; i < n && isDigit(b[i]); i++ {
		}
	}
	return i == n
}

// LongDoubleInRange reports whether a finite f is representable as an x87
// long double without overflowing to infinity or underflowing to zero.
func LongDoubleInRange(f LongDouble) bool {
	if f.IsInf() || f.Sign() == 0 {
		return true
	}
	e := f.MantExp(nil) // f = m * 2^e, 0.5 <= |m| < 1
	// Largest finite: just under 2^16384. Smallest denormal: 2^-16445;
	// anything at or below half of it rounds to zero.
	return e <= 16384 && e > -16445
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

// AddLongDouble returns a+b rounded to a long double.
func AddLongDouble(a, b LongDouble) LongDouble {
	return new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven).Add(a, b)
}

// LongDoubleFromInt converts an integer exactly (int64 fits in 64 bits).
func LongDoubleFromInt(v int64) LongDouble {
	return new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven).SetInt64(v)
}

// FormatLongDouble formats like Redis's ld2string in "human" mode: "%.17Lf"
// with trailing zeros and a trailing dot removed, "-0" shown as "0".
func FormatLongDouble(f LongDouble) string {
	if f.IsInf() {
		if f.Signbit() {
			return "-inf"
		}
		return "inf"
	}
	s := f.Text('f', 17)
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			j := len(s)
			for j > i+1 && s[j-1] == '0' {
				j--
			}
			if j == i+1 {
				j = i
			}
			s = s[:j]
			break
		}
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// AppendDouble appends a double the way Redis 7.0 replies with one
// (addReplyDouble / d2string): "inf", "-inf", integers within 2^53 without a
// fraction, otherwise printf's "%.17g".
func AppendDouble(dst []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(dst, "inf"...)
	case math.IsInf(v, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(v):
		return append(dst, "nan"...)
	}
	if v == math.Trunc(v) && v > -(1<<53) && v < 1<<53 {
		if v == 0 && math.Signbit(v) {
			return append(dst, "-0"...)
		}
		return strconv.AppendInt(dst, int64(v), 10)
	}
	return appendG17(dst, v)
}

// appendG17 is C's "%.17g": 17 significant digits, exponent form when the
// exponent is < -4 or >= 17, trailing zeros removed.
func appendG17(dst []byte, v float64) []byte {
	e := strconv.AppendFloat(nil, v, 'e', 16, 64)
	// e is like "-1.2345678901234567e+05"
	mant, exp := e, 0
	for i := len(e) - 1; i >= 0; i-- {
		if e[i] == 'e' {
			mant = e[:i]
			x, _ := strconv.Atoi(string(e[i+1:]))
			exp = x
			break
		}
	}
	if exp < -4 || exp >= 17 {
		m := trimZeros(mant)
		dst = append(dst, m...)
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(exp), 10)
	}
	f := strconv.AppendFloat(nil, v, 'f', 16-exp, 64)
	return append(dst, trimZeros(f)...)
}

func trimZeros(b []byte) []byte {
	dot := -1
	for i, c := range b {
		if c == '.' {
			dot = i
			break
		}
	}
	if dot < 0 {
		return b
	}
	j := len(b)
	for j > dot+1 && b[j-1] == '0' {
		j--
	}
	if j == dot+1 {
		j = dot
	}
	return b[:j]
}
