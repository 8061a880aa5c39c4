// Package glob matches strings against glob-style patterns exactly as
// Redis's stringmatchlen does, for KEYS, SCAN MATCH, CONFIG GET, PSUBSCRIBE
// and the other commands that take a pattern:
//
//   - any run of bytes, including none
//     ?       any one byte
//     [abc]   one byte of the class; [^abc] one byte not in it; [a-z] a range
//     (reversed bounds are swapped); \x inside a class is a literal x
//     \x      a literal x
//
// Redis's quirks are kept on purpose, so that replies match redis-server
// byte for byte: bytes are compared as C's signed char (so a range that
// spans 0x7f..0x80 is reversed), an unterminated class runs to the end of
// the pattern, "[a-]" is the range a..']', a pattern never matches the empty
// string unless it is empty itself, and a pattern that nests more than 1000
// stars deep stops matching (Redis's guard against pathological patterns).
package glob

// maxNesting is how many '*' deep the matcher recurses before giving up
// and reporting no match, as Redis does.
const maxNesting = 1000

// Match reports whether s matches pattern. With nocase, ASCII letters
// compare case-insensitively (C's tolower in the C locale).
func Match[P, S ~string | ~[]byte](pattern P, s S, nocase bool) bool {
	m := matcher[P, S]{p: pattern, s: s, nocase: nocase}
	return m.match(0, 0, 0)
}

type matcher[P, S ~string | ~[]byte] struct {
	p      P
	s      S
	nocase bool
	// skipLonger is set when a '*' found no match for the rest of the
	// pattern at any position: an earlier '*' cannot do better by
	// swallowing more, so every caller can stop (Redis's fix for
	// exponential backtracking).
	skipLonger bool
}

// at returns pattern byte i as a signed C char, or 0 past the end (the
// pattern is read like a NUL-terminated C string).
func (m *matcher[P, S]) at(i int) int {
	if i >= len(m.p) {
		return 0
	}
	return int(int8(m.p[i]))
}

func lower(c int) int {
	if c >= 'A' && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// match matches pattern[pi:] against s[si:].
func (m *matcher[P, S]) match(pi, si, nesting int) bool {
	if nesting > maxNesting {
		return false
	}
	plen, slen := len(m.p), len(m.s)
	for pi < plen && si < slen {
		switch m.p[pi] {
		case '*':
			for pi+1 < plen && m.p[pi+1] == '*' {
				pi++
			}
			if pi == plen-1 {
				return true
			}
			for ; si < slen; si++ {
				if m.match(pi+1, si, nesting+1) {
					return true
				}
				if m.skipLonger {
					return false
				}
			}
			m.skipLonger = true
			return false
		case '?':
			si++
		case '[':
			var ok bool
			pi, ok = m.class(pi+1, int(int8(m.s[si])))
			if !ok {
				return false
			}
			si++
		case '\\':
			if pi+1 < plen {
				pi++
			}
			fallthrough
		default:
			pc, sc := int(int8(m.p[pi])), int(int8(m.s[si]))
			if m.nocase {
				pc, sc = lower(pc), lower(sc)
			}
			if pc != sc {
				return false
			}
			si++
		}
		pi++
		if si == slen {
			for pi < plen && m.p[pi] == '*' {
				pi++
			}
			break
		}
	}
	return pi == plen && si == slen
}

// class matches the byte c against the class starting at pattern[pi]
// (just after '['). It returns the index of the class's last byte (its ']',
// or the pattern's last byte when the class is not closed) and whether c
// matched.
func (m *matcher[P, S]) class(pi int, c int) (int, bool) {
	plen := len(m.p)
	not := m.at(pi) == '^'
	if not {
		pi++
	}
	match := false
	for {
		switch {
		case m.at(pi) == '\\' && plen-pi >= 2:
			pi++
			if m.at(pi) == c {
				match = true
			}
		case pi < plen && m.p[pi] == ']':
			return pi, match != not
		case pi >= plen:
			// Unterminated: the class ends with the pattern.
			return pi - 1, match != not
		case plen-pi >= 3 && m.p[pi+1] == '-':
			lo, hi, x := m.at(pi), m.at(pi+2), c
			if lo > hi {
				lo, hi = hi, lo
			}
			if m.nocase {
				lo, hi, x = lower(lo), lower(hi), lower(x)
			}
			pi += 2
			if x >= lo && x <= hi {
				match = true
			}
		default:
			pc, x := m.at(pi), c
			if m.nocase {
				pc, x = lower(pc), lower(x)
			}
			if pc == x {
				match = true
			}
		}
		pi++
	}
}
