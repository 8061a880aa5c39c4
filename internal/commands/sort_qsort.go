package commands

import (
	"math"
	"math/big"
	"strconv"

	"github.com/abacusdb/abacus/internal/ascii"
)

// The two parts of SORT whose exact behaviour comes from C: the partial
// quicksort Redis uses for SORT ... BY ... LIMIT, and strtod, which turns
// the weights of a numeric SORT into doubles.

// pqsort orders v enough for positions lo..hi (inclusive) to hold what a
// full sort would put there, with the algorithm of Redis's pqsort.c
// (Bentley and McIlroy's quicksort as in NetBSD's libc, skipping the
// partitions that do not overlap lo..hi). Elements that compare equal end
// up where Redis puts them, which is what makes SORT BY ... ALPHA LIMIT with
// ties reply as redis-server does.
func pqsort[T any](v []T, cmp func(a, b *T) int, lo, hi int) {
	pqsortPart(v, cmp, 0, len(v), lo, hi)
}

// pqsortPart sorts the n elements from index a. A sub-partition is
// visited only when it overlaps lo..hi.
func pqsortPart[T any](v []T, cmp func(a, b *T) int, a, n, lo, hi int) {
	c := func(i, j int) int { return cmp(&v[i], &v[j]) }
	swap := func(i, j int) { v[i], v[j] = v[j], v[i] }
	insertion := func(a, n int) {
		for m := a + 1; m < a+n; m++ {
			for l := m; l > a && c(l-1, l) > 0; l-- {
				swap(l, l-1)
			}
		}
	}
	med3 := func(x, y, z int) int {
		if c(x, y) < 0 {
			if c(y, z) < 0 {
				return y
			}
			if c(x, z) < 0 {
				return z
			}
			return x
		}
		if c(y, z) > 0 {
			return y
		}
		if c(x, z) < 0 {
			return x
		}
		return z
	}
	// outside reports whether the k elements from s miss lo..hi entirely.
	outside := func(s, k int) bool {
		return (lo < s && hi < s) || (lo > s+k-1 && hi > s+k-1)
	}
	for {
		if n < 7 {
			insertion(a, n)
			return
		}
		pm := a + n/2
		if n > 7 {
			pl, pn := a, a+n-1
			if n > 40 {
				d := n / 8
				pl = med3(pl, pl+d, pl+2*d)
				pm = med3(pm-d, pm, pm+d)
				pn = med3(pn-2*d, pn-d, pn)
			}
			pm = med3(pl, pm, pn)
		}
		swap(a, pm)
		pa, pb := a+1, a+1
		pc, pd := a+n-1, a+n-1
		for {
			for pb <= pc {
				r := c(pb, a)
				if r > 0 {
					break
				}
				if r == 0 {
					swap(pa, pb)
					pa++
				}
				pb++
			}
			for pb <= pc {
				r := c(pc, a)
				if r < 0 {
					break
				}
				if r == 0 {
					swap(pc, pd)
					pd--
				}
				pc--
			}
			if pb > pc {
				break
			}
			swap(pb, pc)
			pb++
			pc--
		}
		pn := a + n
		r := min(pa-a, pb-pa)
		for k := 0; k < r; k++ {
			swap(a+k, pb-r+k)
		}
		r = min(pd-pc, pn-pd-1)
		for k := 0; k < r; k++ {
			swap(pb+k, pn-r+k)
		}
		if r = pb - pa; r > 1 && !outside(a, r) {
			pqsortPart(v, cmp, a, r, lo, hi)
		}
		if r = pd - pc; r > 1 {
			a, n = pn-r, r
			if !outside(a, n) {
				continue
			}
		}
		return
	}
}

// strtodWhole converts a weight as SORT does with strtod: the value ends
// at its first NUL byte; leading white space, a sign, decimal or
// hexadecimal digits with an optional exponent, "inf" and "infinity" are
// taken; the whole of it must be consumed (an empty string is 0); NaN,
// overflow and inexact results below the normal range (ERANGE) fail.
func strtodWhole(b []byte) (float64, bool) {
	s := ascii.CStr(b)
	if len(s) == 0 {
		return 0, true // strtod converts nothing and stops at the NUL
	}
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	num := i // where the number, with its sign, starts
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	rest := s[i:]
	if prefixFold(rest, "inf") {
		k := 3
		if prefixFold(rest, "infinity") {
			k = 8
		}
		if i+k != len(s) {
			return 0, false
		}
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	if prefixFold(rest, "nan") {
		return 0, false // NaN, or NaN followed by more: refused either way
	}
	hex := len(rest) >= 2 && rest[0] == '0' && rest[1]|0x20 == 'x'
	var end, mantStart int
	var nonzero, hasExp bool
	if hex {
		end, nonzero, hasExp = scanFloat(s, i+2, true)
		mantStart = i + 2
		if end == mantStart {
			// "0x" without digits: strtod takes the "0" and stops at 'x'.
			return 0, false
		}
	} else {
		end, nonzero, hasExp = scanFloat(s, i, false)
		mantStart = i
		if end == mantStart {
			return 0, false // no digits: nothing converted
		}
	}
	if end != len(s) {
		return 0, false
	}
	lit := string(s[num:])
	if hex && !hasExp {
		lit += "p0" // Go's hexadecimal floats need the exponent
	}
	v, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return 0, false // overflow: ERANGE (the syntax was checked above)
	}
	if math.Abs(v) < 0x1p-1022 {
		// Underflow: glibc sets ERANGE for a result below the normal
		// range unless it is exact.
		if v == 0 {
			return v, !nonzero
		}
		r, ok := new(big.Rat).SetString(lit)
		if !ok || r.Cmp(new(big.Rat).SetFloat64(v)) != 0 {
			return 0, false
		}
	}
	return v, true
}

// scanFloat scans the digits [. digits] [exponent] of a C floating
// constant from s[i], returning where it stops (i when there are no
// digits), whether a mantissa digit is non-zero and whether an exponent
// was taken ('e' for decimal, 'p' for hexadecimal, with at least one
// decimal digit, else not consumed).
func scanFloat(s []byte, i int, hex bool) (end int, nonzero, hasExp bool) {
	isDigit := func(c byte) bool {
		if hex {
			return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f'
		}
		return '0' <= c && c <= '9'
	}
	start, digits := i, 0
	for i < len(s) && isDigit(s[i]) {
		nonzero = nonzero || s[i] != '0'
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			nonzero = nonzero || s[j] != '0'
			j++
			digits++
		}
		if digits > 0 {
			i = j
		}
	}
	if digits == 0 {
		return start, false, false
	}
	expCh := byte('e')
	if hex {
		expCh = 'p'
	}
	if i < len(s) && s[i]|0x20 == expCh {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && '0' <= s[k] && s[k] <= '9' {
			k++
		}
		if k > j {
			i, hasExp = k, true
		}
	}
	return i, nonzero, hasExp
}

func isCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// prefixFold reports whether s starts with the lower-case word, ignoring
// ASCII case.
func prefixFold(s []byte, word string) bool {
	if len(s) < len(word) {
		return false
	}
	for i := 0; i < len(word); i++ {
		if s[i]|0x20 != word[i] {
			return false
		}
	}
	return true
}
