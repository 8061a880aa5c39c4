package script

import (
	"math"
	"strconv"
	"strings"
)

// Number formatting as the C library formats it. Lua 5.1 turns numbers
// into strings with printf's "%.14g" (tostring, concatenation in the
// functions written here, cjson), Redis passes them to commands with
// "%.17g" and replies doubles with "%.17g"; Go's own formatting differs in
// the shortest-representation rule, in "+Inf"/"NaN" and in when to switch
// to the exponent form, so these helpers spell out C's rules.

// appendG appends v as C's "%.<prec>g". alt is the '#' flag: keep
// trailing zeros and the decimal point.
func appendG(dst []byte, v float64, prec int, alt bool) []byte {
	if s, ok := nonFinite(v); ok {
		return append(dst, s...)
	}
	if prec == 0 {
		prec = 1
	}
	if prec > 400 {
		prec = 400
	}
	var tmp [64]byte
	e := strconv.AppendFloat(tmp[:0], v, 'e', prec-1, 64)
	// e is "[-]d.ddde±XX"; find the exponent.
	i := len(e) - 1
	for e[i] != 'e' {
		i--
	}
	exp, _ := strconv.Atoi(string(e[i+1:]))
	if exp < -4 || exp >= prec {
		mant := e[:i]
		if !alt {
			mant = trimFraction(mant)
		}
		dst = append(dst, mant...)
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
	f := strconv.AppendFloat(tmp[:0], v, 'f', prec-1-exp, 64)
	if !alt {
		f = trimFraction(f)
	} else if !containsByte(f, '.') {
		f = append(f, '.')
	}
	return append(dst, f...)
}

// trimFraction removes trailing zeros after a decimal point, and the
// point itself when nothing follows it.
func trimFraction(b []byte) []byte {
	if !containsByte(b, '.') {
		return b
	}
	for len(b) > 0 && b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	if len(b) > 0 && b[len(b)-1] == '.' {
		b = b[:len(b)-1]
	}
	return b
}

func containsByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

// nonFinite returns glibc's spelling of an infinity or NaN. A NaN keeps
// its sign bit, as "-nan" (0/0 computed on x86 has it set).
func nonFinite(v float64) (string, bool) {
	switch {
	case math.IsInf(v, 1):
		return "inf", true
	case math.IsInf(v, -1):
		return "-inf", true
	case math.IsNaN(v):
		if math.Signbit(v) {
			return "-nan", true
		}
		return "nan", true
	}
	return "", false
}

// appendNum14 appends a Lua number as Lua's tostring does ("%.14g").
func appendNum14(dst []byte, v float64) []byte {
	if v == math.Trunc(v) && v > -1e14 && v < 1e14 {
		if v == 0 && math.Signbit(v) {
			return append(dst, "-0"...)
		}
		return strconv.AppendInt(dst, int64(v), 10)
	}
	return appendG(dst, v, 14, false)
}

// num14 is appendNum14 as a string.
func num14(v float64) string {
	if v == math.Trunc(v) && v > -1e14 && v < 1e14 && !(v == 0 && math.Signbit(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	var tmp [32]byte
	return string(appendNum14(tmp[:0], v))
}

// appendNum17 appends a number as Redis passes one to a command from a
// script ("%.17g").
func appendNum17(dst []byte, v float64) []byte {
	if v == math.Trunc(v) && v > -1e17 && v < 1e17 {
		if v == 0 && math.Signbit(v) {
			return append(dst, "-0"...)
		}
		return strconv.AppendInt(dst, int64(v), 10)
	}
	return appendG(dst, v, 17, false)
}

// toInt64 converts a Lua number to a C long long the way a cast does on
// x86-64: truncation toward zero, and the "integer indefinite" value
// (the smallest int64) for NaN and anything out of range.
func toInt64(v float64) int64 {
	if v != v || v >= 9223372036854775808.0 || v < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(v)
}

// toInt32 is a C cast to int (luaL_checkint): truncation, with the
// integer indefinite value for what does not fit.
func toInt32(v float64) int32 {
	if v != v || v >= 2147483648.0 || v < -2147483648.0 {
		return math.MinInt32
	}
	return int32(v)
}

// str2number converts a string to a number as Lua 5.1's luaO_str2d does
// with glibc's strtod: leading and trailing white space, a sign, decimal
// or hexadecimal (0x..., also with a binary exponent) forms, "inf",
// "infinity" and "nan". It reports false when the string is not a number.
func str2number(s string) (float64, bool) {
	if v, ok := smallInt(s); ok {
		return v, true
	}
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	t := s[i:j]
	if t == "" {
		return 0, false
	}
	neg := false
	body := t
	if body[0] == '+' || body[0] == '-' {
		neg = body[0] == '-'
		body = body[1:]
	}
	if len(body) >= 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') {
		v, ok := parseHexFloat(body[2:])
		if !ok {
			return 0, false
		}
		if neg {
			v = -v
		}
		return v, true
	}
	lb := strings.ToLower(body)
	switch lb {
	case "inf", "infinity":
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case "nan":
		if neg {
			return math.Copysign(math.NaN(), -1), true
		}
		return math.NaN(), true
	}
	if strings.HasPrefix(lb, "nan(") && strings.HasSuffix(lb, ")") {
		return math.NaN(), true
	}
	// Only the characters of a decimal float: Go's ParseFloat also takes
	// underscores, "0b..." and the like, which strtod does not.
	seenDigit := false
	for k := 0; k < len(body); k++ {
		c := body[k]
		switch {
		case c >= '0' && c <= '9':
			seenDigit = true
		case c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-':
		default:
			return 0, false
		}
	}
	if !seenDigit {
		return 0, false
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return v, true // ±Inf or 0, as strtod gives with ERANGE
		}
		return 0, false
	}
	return v, true
}

// smallInt is str2number's fast path for the common case, a plain decimal
// integer of at most 15 digits (exact in a float64), optionally negative.
func smallInt(s string) (float64, bool) {
	body := s
	if len(body) > 0 && body[0] == '-' {
		body = body[1:]
	}
	if len(body) == 0 || len(body) > 15 {
		return 0, false
	}
	var n int64
	for k := 0; k < len(body); k++ {
		c := body[k]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if len(body) < len(s) {
		if n == 0 {
			return math.Copysign(0, -1), true // strtod's -0
		}
		n = -n
	}
	return float64(n), true
}

// parseHexFloat parses the digits after "0x": hex digits, an optional
// fraction and an optional binary exponent (p±N).
func parseHexFloat(s string) (float64, bool) {
	var mant float64
	exp := 0
	digits := 0
	i := 0
	for ; i < len(s); i++ {
		d, ok := hexDigit(s[i])
		if !ok {
			break
		}
		mant = mant*16 + float64(d)
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for ; i < len(s); i++ {
			d, ok := hexDigit(s[i])
			if !ok {
				break
			}
			mant = mant*16 + float64(d)
			exp -= 4
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(s) && (s[i] == 'p' || s[i] == 'P') {
		i++
		sign := 1
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			if s[i] == '-' {
				sign = -1
			}
			i++
		}
		start := i
		e := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			if e < 100000 {
				e = e*10 + int(s[i]-'0')
			}
		}
		if i == start {
			return 0, false
		}
		exp += sign * e
	}
	if i != len(s) {
		return 0, false
	}
	return math.Ldexp(mant, exp), true
}

func hexDigit(c byte) (int, bool) {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0'), true
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10, true
	}
	return 0, false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
