package ts

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// naiveMatch evaluates a filter expression from its documented meaning.
func naiveMatch(expr string, labels map[string]string) bool {
	for _, op := range []string{"!=", "="} {
		for i := 0; i+len(op) <= len(expr); i++ {
			if expr[i:i+len(op)] != op {
				continue
			}
			if op == "=" && i > 0 && expr[i-1] == '!' {
				continue
			}
			name, val := expr[:i], expr[i+len(op):]
			cur, has := labels[name]
			var set []string
			if len(val) > 1 && val[0] == '(' && val[len(val)-1] == ')' {
				for _, p := range splitComma(val[1 : len(val)-1]) {
					set = append(set, p)
				}
			} else {
				set = []string{val}
			}
			in := false
			for _, v := range set {
				if v == "" && !has || has && v == cur {
					in = true
				}
			}
			if op == "=" {
				return in
			}
			return !in
		}
	}
	panic(expr)
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

func TestIndexAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	names := []string{"a", "b", "c"}
	vals := []string{"x", "y", "z"}
	x := NewIndex()
	series := map[string]map[string]string{}
	for i := 0; i < 200; i++ {
		key := fmt.Sprintf("k%d", r.IntN(120))
		lm := map[string]string{}
		var ls []Label
		for _, n := range names {
			if r.IntN(3) > 0 {
				v := vals[r.IntN(len(vals))]
				lm[n] = v
				ls = append(ls, Label{n, v})
			}
		}
		if r.IntN(10) == 0 {
			x.Remove(key)
			delete(series, key)
			continue
		}
		x.Set(key, ls)
		series[key] = lm
	}
	gen := func() string {
		n := names[r.IntN(len(names))]
		op := []string{"=", "!="}[r.IntN(2)]
		switch r.IntN(3) {
		case 0:
			return n + op
		case 1:
			return n + op + vals[r.IntN(len(vals))]
		}
		return n + op + "(" + vals[r.IntN(3)] + "," + vals[r.IntN(3)] + ")"
	}
	for q := 0; q < 2000; q++ {
		var exprs []string
		var ms []Matcher
		for k := 0; k < 1+r.IntN(3); k++ {
			e := gen()
			m, err := ParseMatcher(e)
			if err != nil {
				t.Fatal(e, err)
			}
			exprs = append(exprs, e)
			ms = append(ms, m)
		}
		positive := slices.ContainsFunc(ms, func(m Matcher) bool { return m.Positive() })
		var want []string
		for key, lm := range series {
			ok := true
			for _, e := range exprs {
				ok = ok && naiveMatch(e, lm)
			}
			if ok {
				want = append(want, key)
			}
		}
		slices.Sort(want)
		if !positive {
			continue // RedisTimeSeries refuses such filters
		}
		got := x.Query(ms, nil, false)
		if !slices.Equal(got, want) {
			t.Fatalf("%v: got %v want %v", exprs, got, want)
		}
	}
	if x.Len() != len(series) {
		t.Fatalf("index holds %d keys, want %d", x.Len(), len(series))
	}
}

func TestParseMatcher(t *testing.T) {
	for _, bad := range []string{"", "=", "!=x", "abc"} {
		if _, err := ParseMatcher(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	m, _ := ParseMatcher("l!=(a, b)")
	if m.Label != "l" || !m.Neg || !slices.Equal(m.Values, []string{"a", "b"}) || m.Positive() {
		t.Fatalf("%+v", m)
	}
	m, _ = ParseMatcher("l=")
	if m.Positive() || !m.Matches(nil) || m.Matches([]Label{{"l", "v"}}) {
		t.Fatalf("l= %+v", m)
	}
}
