// Package ascii holds the byte-string helpers commands use on their
// arguments: ASCII case folding without allocation (as Redis compares
// command names and options) and C-string views of binary-safe arguments.
// It is a leaf: it imports nothing of the module.
package ascii

// AppendLower appends b to dst with ASCII letters lowered.
func AppendLower(dst, b []byte) []byte {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// Lower is b with ASCII letters lowered, as a string.
func Lower(b []byte) string { return string(AppendLower(make([]byte, 0, len(b)), b)) }

// EqualFold compares b with a lower-case ASCII word, ignoring case.
func EqualFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i, ch := range b {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		if ch != lower[i] {
			return false
		}
	}
	return true
}

// CStr cuts b at its first NUL byte, as Redis's %s of a C string does.
func CStr(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

// Trunc cuts b to at most n bytes (C's %.<n>s; Go's counts runes).
func Trunc(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// OptIs reports whether an option argument equals word as Redis compares
// them: strcasecmp on the C string, which ends at the first NUL byte.
func OptIs(arg []byte, word string) bool {
	arg = CStr(arg)
	if len(arg) != len(word) {
		return false
	}
	for i := 0; i < len(arg); i++ {
		a, b := arg[i], word[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}
