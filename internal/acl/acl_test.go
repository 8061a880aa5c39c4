package acl

import (
	"fmt"
	"testing"
)

func testCatalog() *Catalog {
	return NewCatalog([]*Command{
		{Name: "get", Cats: CategoryBit("read") | CategoryBit("string") | CategoryBit("fast")},
		{Name: "set", Cats: CategoryBit("write") | CategoryBit("string") | CategoryBit("slow")},
		{Name: "auth", NoAuth: true, Cats: CategoryBit("connection")},
		{Name: "config", Cats: CategoryBit("slow"), Subs: []*Command{
			{Name: "config|get", Cats: CategoryBit("admin") | CategoryBit("slow") | CategoryBit("dangerous")},
			{Name: "config|set", Cats: CategoryBit("admin") | CategoryBit("slow") | CategoryBit("dangerous")},
		}},
		{Name: "select", Cats: CategoryBit("fast") | CategoryBit("connection")},
	})
}

func user(t testing.TB, cat *Catalog, rules ...string) *User {
	t.Helper()
	r := NewRegistry(cat)
	if err := r.SetUser("u", rules, false); err != nil {
		t.Fatal(err)
	}
	return r.User("u")
}

func args(a ...string) [][]byte {
	out := make([][]byte, len(a))
	for i, s := range a {
		out[i] = []byte(s)
	}
	return out
}

func TestCheck(t *testing.T) {
	cat := testCatalog()
	get, set, sel, cget := cat.Lookup("get"), cat.Lookup("set"), cat.Lookup("select"), cat.Lookup("config|get")
	u := user(t, cat, "on", "%R~r:*", "%W~w:*", "~rw:*", "+get", "+set", "+select|0", "+config|get", "(~s:* +set)")
	cases := []struct {
		c    *Command
		a    [][]byte
		keys []KeyRef
		want Reason
	}{
		{get, args("get", "r:1"), []KeyRef{{1, NeedRead}}, Allowed},
		{get, args("get", "w:1"), []KeyRef{{1, NeedRead}}, DeniedKey},
		{set, args("set", "w:1", "v"), []KeyRef{{1, NeedWrite}}, Allowed},
		{set, args("set", "r:1", "v"), []KeyRef{{1, NeedWrite}}, DeniedKey},
		{set, args("set", "s:1", "v"), []KeyRef{{1, NeedWrite}}, Allowed}, // the selector
		{set, args("set", "rw:1", "v"), []KeyRef{{1, NeedRead | NeedWrite}}, Allowed},
		{sel, args("select", "0"), nil, Allowed},
		{sel, args("select", "1"), nil, DeniedCmd},
		{cget, args("config", "get", "x"), nil, Allowed},
		{cat.Lookup("config|set"), args("config", "set", "x", "y"), nil, DeniedCmd},
		{cat.Lookup("auth"), args("auth", "x"), nil, Allowed},
	}
	for _, c := range cases {
		if got, _ := u.Check(c.c, c.a, c.keys, nil); got != c.want {
			t.Errorf("%q: %v, want %v", c.a, got, c.want)
		}
	}
}

func TestPasswords(t *testing.T) {
	u := user(t, testCatalog(), "on", ">secret", "#"+HashPassword([]byte("other")))
	for p, want := range map[string]bool{"secret": true, "other": true, "nope": false, "": false} {
		if u.CheckPassword([]byte(p)) != want {
			t.Errorf("%q: want %v", p, want)
		}
	}
	if err := u.Apply("<nope", false); err != ErrNoSuchPass {
		t.Errorf("<nope: %v", err)
	}
	u.Apply("off", false)
	if u.CheckPassword([]byte("secret")) {
		t.Error("a disabled user authenticated")
	}
}

func TestChannelAllowed(t *testing.T) {
	u := user(t, testCatalog(), "on", "&news.*", "&exact")
	for _, c := range []struct {
		ch      string
		pattern bool
		want    bool
	}{
		{"news.x", false, true}, {"sport", false, false}, {"news.*", true, true},
		{"news.x*", true, false}, {"exact", false, true},
	} {
		if got := u.ChannelAllowed(c.ch, c.pattern); got != c.want {
			t.Errorf("%q pattern=%v: %v", c.ch, c.pattern, got)
		}
	}
}

func TestDescribeRoundTrip(t *testing.T) {
	cat := testCatalog()
	u := user(t, cat, "on", "nopass", "~a", "%R~b", "&c", "+@all", "-config|set", "(+get ~x)")
	d := u.Describe()
	v := user(t, cat, splitRules(d)...)
	if v.Describe() != d {
		t.Errorf("round trip:\n%s\n%s", d, v.Describe())
	}
}

func splitRules(d string) []string {
	var out []string
	cur := ""
	depth := 0
	for _, f := range splitSpace(d) {
		if depth > 0 || (len(f) > 0 && f[0] == '(') {
			if cur != "" {
				cur += " "
			}
			cur += f
			if f[len(f)-1] == ')' {
				out = append(out, cur)
				cur, depth = "", 0
			} else {
				depth = 1
			}
			continue
		}
		out = append(out, f)
	}
	return out
}

func splitSpace(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	return out
}

// BenchmarkCheck: the check for the default user (open) and for a user
// with 10 key patterns, the matching one last.
func BenchmarkCheck(b *testing.B) {
	cat := testCatalog()
	get := cat.Lookup("get")
	a := args("get", "key:123456")
	keys := []KeyRef{{1, NeedRead}}
	rules := []string{"on", "+@all"}
	for i := 0; i < 9; i++ {
		rules = append(rules, fmt.Sprintf("~nomatch%d:*", i))
	}
	rules = append(rules, "~key:*")
	for name, u := range map[string]*User{"default": NewRegistry(cat).Default, "10patterns": user(b, cat, rules...)} {
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if r, _ := u.Check(get, a, keys, nil); r != Allowed {
					b.Fatal(r)
				}
			}
		})
	}
}

// The prefix shortcut agrees with glob matching.
func TestKeyPatternShortcut(t *testing.T) {
	for _, c := range []struct {
		pat, key string
		want     bool
	}{
		{"key:*", "key:1", true}, {"key:*", "key:", true}, {"key:*", "key", false}, {"key:*", "kex:1", false},
		{"*", "", false}, {"*", "a", true}, {"", "", true}, {"a?c", "abc", true}, {"a\\*", "a*", true}, {"k[ab]*", "kb1", true},
	} {
		s := &Selector{keys: []keyPattern{newKeyPattern(c.pat, permAll)}}
		if got := s.KeyAllowed([]byte(c.key), NeedRead); got != c.want {
			t.Errorf("%q ~ %q: %v", c.pat, c.key, got)
		}
	}
}
