package script

import (
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// strFormat is Lua 5.1's string.format, producing what the C library's
// sprintf produces for each conversion (Go's fmt differs for %g, %s
// precision, infinities and unsigned conversions of negative numbers).
func strFormat(L *lua.LState) int {
	top := L.GetTop()
	format := checkString(L, 1, "format")
	arg := 1
	var b []byte
	for i := 0; i < len(format); {
		c := format[i]
		if c != '%' {
			b = append(b, c)
			i++
			continue
		}
		i++
		if i < len(format) && format[i] == '%' {
			b = append(b, '%')
			i++
			continue
		}
		arg++
		if arg > top {
			argError(L, arg, "format", "no value")
		}
		var spec fmtSpec
		i = spec.scan(L, format, i)
		var conv byte
		if i < len(format) {
			conv = format[i]
		}
		i++
		switch conv {
		case 'c':
			v := checkNumber(L, arg, "format")
			ch := byte(toInt32(v))
			if ch == 0 {
				// sprintf writes the NUL, strlen drops it: only padding.
				b = spec.pad(b, nil, false)
			} else {
				b = spec.pad(b, []byte{ch}, false)
			}
		case 'd', 'i':
			v := toInt64(checkNumber(L, arg, "format"))
			b = spec.formatInt(b, v)
		case 'o', 'u', 'x', 'X':
			v := toUint64(checkNumber(L, arg, "format"))
			b = spec.formatUint(b, v, conv)
		case 'e', 'E', 'f', 'g', 'G':
			v := checkNumber(L, arg, "format")
			b = spec.formatFloat(b, v, conv)
		case 'q':
			b = appendQuoted(b, checkString(L, arg, "format"))
		case 's':
			s := checkString(L, arg, "format")
			if !spec.hasPrec && len(s) >= 100 {
				b = append(b, s...)
				break
			}
			if k := strings.IndexByte(s, 0); k >= 0 {
				s = s[:k] // sprintf's %s stops at NUL
			}
			if spec.hasPrec && len(s) > spec.prec {
				s = s[:spec.prec]
			}
			b = spec.pad(b, []byte(s), false)
		default:
			L.RaiseError("invalid option '%%%c' to 'format'", conv)
		}
	}
	L.Push(lua.LString(b))
	return 1
}

// fmtSpec is one printf directive's flags, width and precision.
type fmtSpec struct {
	minus, plus, space, alt, zero bool
	width                         int
	prec                          int
	hasPrec                       bool
}

// scan reads flags, width (two digits at most) and precision from
// format at i, with Lua 5.1's limits, and returns the conversion's index.
func (s *fmtSpec) scan(L *lua.LState, format string, i int) int {
	start := i
	for i < len(format) && strings.IndexByte("-+ #0", format[i]) >= 0 {
		switch format[i] {
		case '-':
			s.minus = true
		case '+':
			s.plus = true
		case ' ':
			s.space = true
		case '#':
			s.alt = true
		case '0':
			s.zero = true
		}
		i++
	}
	if i-start >= 6 {
		L.RaiseError("invalid format (repeated flags)")
	}
	digits := func() int {
		n := 0
		for k := 0; k < 2 && i < len(format) && isDigit(format[i]); k++ {
			n = n*10 + int(format[i]-'0')
			i++
		}
		return n
	}
	s.width = digits()
	if i < len(format) && format[i] == '.' {
		i++
		s.hasPrec = true
		s.prec = digits()
	}
	if i < len(format) && isDigit(format[i]) {
		L.RaiseError("invalid format (width or precision too long)")
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// pad appends body padded to the width: on the right with '-', with
// zeros after the sign/prefix when zeros is set, else with spaces.
func (s *fmtSpec) pad(b, body []byte, zeros bool) []byte {
	n := s.width - len(body)
	if n <= 0 {
		return append(b, body...)
	}
	if s.minus {
		b = append(b, body...)
		return append(b, strings.Repeat(" ", n)...)
	}
	if zeros {
		// Zeros go after any sign and 0x prefix.
		pre := 0
		if len(body) > 0 && (body[0] == '-' || body[0] == '+' || body[0] == ' ') {
			pre = 1
		}
		if len(body) > pre+1 && body[pre] == '0' && (body[pre+1] == 'x' || body[pre+1] == 'X') {
			pre += 2
		}
		b = append(b, body[:pre]...)
		b = append(b, strings.Repeat("0", n)...)
		return append(b, body[pre:]...)
	}
	b = append(b, strings.Repeat(" ", n)...)
	return append(b, body...)
}

func (s *fmtSpec) sign(neg bool) string {
	switch {
	case neg:
		return "-"
	case s.plus:
		return "+"
	case s.space:
		return " "
	}
	return ""
}

func (s *fmtSpec) formatInt(b []byte, v int64) []byte {
	neg := v < 0
	var mag uint64
	if neg {
		mag = uint64(-v) // also right for MinInt64
	} else {
		mag = uint64(v)
	}
	digits := strconv.FormatUint(mag, 10)
	digits = s.precise(digits, mag == 0)
	body := s.sign(neg) + digits
	return s.pad(b, []byte(body), s.zero && !s.minus && !s.hasPrec)
}

// precise applies an integer conversion's precision: at least prec
// digits, and no digits at all for zero with precision zero.
func (s *fmtSpec) precise(digits string, zero bool) string {
	if !s.hasPrec {
		return digits
	}
	if zero && s.prec == 0 {
		return ""
	}
	if len(digits) < s.prec {
		digits = strings.Repeat("0", s.prec-len(digits)) + digits
	}
	return digits
}

func (s *fmtSpec) formatUint(b []byte, v uint64, conv byte) []byte {
	var digits, prefix string
	switch conv {
	case 'o':
		digits = strconv.FormatUint(v, 8)
	case 'u':
		digits = strconv.FormatUint(v, 10)
	case 'x':
		digits = strconv.FormatUint(v, 16)
		if s.alt && v != 0 {
			prefix = "0x"
		}
	case 'X':
		digits = strings.ToUpper(strconv.FormatUint(v, 16))
		if s.alt && v != 0 {
			prefix = "0X"
		}
	}
	digits = s.precise(digits, v == 0)
	if conv == 'o' && s.alt && (digits == "" || digits[0] != '0') {
		digits = "0" + digits
	}
	return s.pad(b, []byte(prefix+digits), s.zero && !s.minus && !s.hasPrec)
}

func (s *fmtSpec) formatFloat(b []byte, v float64, conv byte) []byte {
	neg := math.Signbit(v)
	if nf, ok := nonFinite(v); ok {
		body := strings.TrimPrefix(nf, "-")
		if conv == 'E' || conv == 'G' {
			body = strings.ToUpper(body)
		}
		return s.pad(b, []byte(s.sign(neg)+body), false)
	}
	prec := 6
	if s.hasPrec {
		prec = s.prec
	}
	a := math.Abs(v)
	var body []byte
	switch conv {
	case 'e', 'E':
		body = strconv.AppendFloat(nil, a, 'e', prec, 64)
		if s.alt && prec == 0 {
			k := strings.IndexByte(string(body), 'e')
			body = append(body[:k:k], append([]byte{'.'}, body[k:]...)...)
		}
	case 'f':
		body = strconv.AppendFloat(nil, a, 'f', prec, 64)
		if s.alt && prec == 0 {
			body = append(body, '.')
		}
	case 'g', 'G':
		body = appendG(nil, a, prec, s.alt)
	}
	if conv == 'E' || conv == 'G' {
		body = []byte(strings.ToUpper(string(body)))
	}
	full := append([]byte(s.sign(neg)), body...)
	return s.pad(b, full, s.zero && !s.minus)
}

// toUint64 is a C cast of a double to unsigned long long on x86-64.
func toUint64(v float64) uint64 {
	if v >= 9223372036854775808.0 && v < 18446744073709551616.0 {
		return uint64(v)
	}
	return uint64(toInt64(v))
}

// appendQuoted is %q: a Lua string literal that reads back as s.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\', '\n':
			b = append(b, '\\', c)
		case '\r':
			b = append(b, '\\', 'r')
		case 0:
			b = append(b, '\\', '0', '0', '0')
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
