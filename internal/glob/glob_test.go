package glob

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// The reference matcher: the pattern is first parsed into tokens by
// Redis's rules (which depend on the pattern alone), then matched with a
// dynamic-programming table, with no backtracking and no early exits. It
// shares no code with Match, so agreement on random inputs checks the
// backtracking matcher and its skip-longer-matches shortcut.

type tokKind uint8

const (
	tokStar tokKind = iota
	tokAny
	tokLit
	tokClass
)

type classItem struct{ lo, hi int } // signed-char bounds, lo <= hi; literal: lo == hi, esc marks \x

type token struct {
	kind  tokKind
	lit   int
	neg   bool
	items []classItem
	esc   []bool // per item: escaped literal (compared without case folding)
}

func sc(b byte) int { return int(int8(b)) }

func tokenize(p string) []token {
	var out []token
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*':
			out = append(out, token{kind: tokStar})
		case '?':
			out = append(out, token{kind: tokAny})
		case '\\':
			if i+1 < len(p) {
				i++
			}
			out = append(out, token{kind: tokLit, lit: sc(p[i])})
		case '[':
			t := token{kind: tokClass}
			i++
			if i < len(p) && p[i] == '^' {
				t.neg = true
				i++
			}
			for {
				if i >= len(p) {
					i = len(p) - 1
					break
				}
				if p[i] == '\\' && i+1 < len(p) {
					t.items = append(t.items, classItem{sc(p[i+1]), sc(p[i+1])})
					t.esc = append(t.esc, true)
					i += 2
					continue
				}
				if p[i] == ']' {
					break
				}
				if i+2 < len(p) && p[i+1] == '-' {
					lo, hi := sc(p[i]), sc(p[i+2])
					if lo > hi {
						lo, hi = hi, lo
					}
					t.items = append(t.items, classItem{lo, hi})
					t.esc = append(t.esc, false)
					i += 3
					continue
				}
				t.items = append(t.items, classItem{sc(p[i]), sc(p[i])})
				t.esc = append(t.esc, false)
				i++
			}
			out = append(out, t)
		default:
			out = append(out, token{kind: tokLit, lit: sc(p[i])})
		}
	}
	return out
}

func (t token) matches(b byte, nocase bool) bool {
	c := sc(b)
	switch t.kind {
	case tokAny:
		return true
	case tokLit:
		if nocase {
			return lower(t.lit) == lower(c)
		}
		return t.lit == c
	case tokClass:
		in := false
		for k, it := range t.items {
			lo, hi, x := it.lo, it.hi, c
			if nocase && !t.esc[k] {
				lo, hi, x = lower(lo), lower(hi), lower(x)
			}
			if x >= lo && x <= hi {
				in = true
			}
		}
		return in != t.neg
	}
	return false
}

func reference(p, s string, nocase bool) bool {
	if len(s) == 0 {
		// Redis's loop never starts on an empty string: only the empty
		// pattern matches it.
		return len(p) == 0
	}
	toks := tokenize(p)
	n, m := len(toks), len(s)
	// dp[i][j]: toks[i:] matches s[j:].
	dp := make([][]bool, n+1)
	for i := range dp {
		dp[i] = make([]bool, m+1)
	}
	dp[n][m] = true
	for i := n - 1; i >= 0; i-- {
		for j := m; j >= 0; j-- {
			t := toks[i]
			if t.kind == tokStar {
				dp[i][j] = dp[i+1][j] || (j < m && dp[i][j+1])
			} else {
				dp[i][j] = j < m && t.matches(s[j], nocase) && dp[i+1][j+1]
			}
		}
	}
	return dp[0][0]
}

func TestTable(t *testing.T) {
	cases := []struct {
		p, s   string
		nocase bool
		want   bool
	}{
		{"", "", false, true},
		{"*", "", false, false},
		{"**", "", false, false},
		{"", "a", false, false},
		{"*", "abc", false, true},
		{"a*", "a", false, true},
		{"a*c", "abbbc", false, true},
		{"a*c", "abbbd", false, false},
		{"h?llo", "hello", false, true},
		{"h?llo", "hllo", false, false},
		{"h[ae]llo", "hallo", false, true},
		{"h[ae]llo", "hillo", false, false},
		{"h[^e]llo", "hallo", false, true},
		{"h[^e]llo", "hello", false, false},
		{"h[a-b]llo", "hbllo", false, true},
		{"h[b-a]llo", "hbllo", false, true},
		{"h[a-b]llo", "hcllo", false, false},
		{`h\*llo`, "h*llo", false, true},
		{`h\*llo`, "hello", false, false},
		{`h[\]]llo`, "h]llo", false, true},
		{`\`, `\`, false, true},
		{`a\`, `a\`, false, true},
		{"[", "x", false, false},
		{"[^", "x", false, true},
		{"[abc", "b", false, true},
		{"[abc", "bc", false, false},
		{"[a-]", "]", false, true},  // a range up to ']', class unterminated
		{"[a-]", "b", false, false}, // ']' (93) < 'a' (97): range ]..a
		{"[a-]", "^", false, true},
		{"[]a]", "]a]", false, false},
		{"[]a]", "a]", false, false},
		{"[]", "x", false, false},
		{"HELLO", "hello", true, true},
		{"HELLO", "hello", false, false},
		{"[A-C]x", "bX", true, true},
		{`[\A]`, "a", true, false}, // escaped class members ignore nocase
		{"[a-\xff]", "\x80", false, false},
		{"[a-\xff]", "0", false, true}, // 0xff is -1: the range is -1..'a'
		{"[\x80-\x90]", "\x85", false, true},
		{"*\x00*", "a\x00b", false, true},
	}
	for _, c := range cases {
		if got := Match(c.p, c.s, c.nocase); got != c.want {
			t.Errorf("Match(%q, %q, %v) = %v, want %v", c.p, c.s, c.nocase, got, c.want)
		}
		if got := reference(c.p, c.s, c.nocase); got != c.want {
			t.Errorf("reference(%q, %q, %v) = %v, want %v", c.p, c.s, c.nocase, got, c.want)
		}
		if got := Match([]byte(c.p), []byte(c.s), c.nocase); got != c.want {
			t.Errorf("Match([]byte) disagrees for %q %q", c.p, c.s)
		}
	}
}

func TestNestingLimit(t *testing.T) {
	s := strings.Repeat("a", 1100)
	// 1001 stars, the last of which needs no recursion: 1000 levels.
	if !Match(strings.Repeat("a*", 1001), s, false) {
		t.Error("1000 nested stars should still match")
	}
	if Match(strings.Repeat("*a", 1001), s, false) {
		t.Error("1001 nested stars should give up, as Redis does")
	}
}

// TestPathological checks that the skip-longer-matches shortcut keeps a
// pattern of many stars against a long non-matching string fast.
func TestPathological(t *testing.T) {
	p := strings.Repeat("a*", 30) + "b"
	s := strings.Repeat("a", 5000)
	if Match(p, s, false) {
		t.Fatal("should not match")
	}
}

var alphabet = []byte("ab*?[]^-\\Ac\x00\x80\xff")

func randBytes(r *rand.Rand, n int, from []byte) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = from[r.IntN(len(from))]
	}
	return string(b)
}

func TestRandomAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		p := randBytes(r, r.IntN(9), alphabet)
		s := randBytes(r, r.IntN(9), []byte("abAc]^-\\*?\x00\x80\xff"))
		nocase := r.IntN(4) == 0
		if got, want := Match(p, s, nocase), reference(p, s, nocase); got != want {
			t.Fatalf("Match(%q, %q, %v) = %v, reference says %v", p, s, nocase, got, want)
		}
	}
}

func FuzzMatch(f *testing.F) {
	f.Add("h[a-c]*o", "hello", false)
	f.Add("[^", "x", true)
	f.Add(`\[*`, "[x", false)
	f.Add("*a*b*c", "aXbXc", false)
	f.Fuzz(func(t *testing.T, p, s string, nocase bool) {
		if len(p) > 64 || len(s) > 64 {
			return
		}
		if got, want := Match(p, s, nocase), reference(p, s, nocase); got != want {
			t.Fatalf("Match(%q, %q, %v) = %v, reference says %v", p, s, nocase, got, want)
		}
	})
}

func BenchmarkMatch(b *testing.B) {
	keys := []string{"user:1000:profile", "session:abcdef", "user:42:friends", "cache:item:99"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Match("user:*:profile", keys[i%len(keys)], false)
	}
}
