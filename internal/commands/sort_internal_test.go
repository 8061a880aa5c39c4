package commands

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestSortPqsortRange: whatever the ties and the range, the partial sort
// puts in lo..hi what a full sort puts there (checked under a total
// order, where that content is unique).
func TestSortPqsortRange(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	cmpAsc := func(a, b *sortItem) int {
		switch {
		case a.score > b.score:
			return 1
		case a.score < b.score:
			return -1
		}
		return bytes.Compare(a.elem, b.elem)
	}
	for round := 0; round < 3000; round++ {
		n := r.IntN(120)
		if round%10 == 0 {
			n = r.IntN(2000)
		}
		v := make([]sortItem, n)
		for i := range v {
			v[i] = sortItem{score: float64(r.IntN(n/3 + 1)), elem: []byte(strconv.Itoa(r.IntN(n + 1)))}
		}
		full := slices.Clone(v)
		slices.SortStableFunc(full, func(a, b sortItem) int { return cmpAsc(&a, &b) })
		lo, hi := r.IntN(n+1), r.IntN(n+1)
		if lo > hi {
			lo, hi = hi, lo
		}
		if hi >= n {
			hi = n - 1
		}
		pqsort(v, cmpAsc, lo, hi)
		for i := lo; i <= hi; i++ {
			if v[i].score != full[i].score || !bytes.Equal(v[i].elem, full[i].elem) {
				t.Fatalf("n=%d range %d..%d: position %d holds %v/%q, a full sort puts %v/%q", n, lo, hi, i, v[i].score, v[i].elem, full[i].score, full[i].elem)
			}
		}
	}
}

// TestSortStrtod checks the weight parser against what glibc's strtod
// and SORT's checks (whole string, no NaN, no ERANGE) make of each input,
// as observed on redis-server 7.0.
func TestSortStrtod(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"", 0, true},
		{"0", 0, true},
		{"12", 12, true},
		{" \t\n\v\f\r12", 12, true},
		{"12 ", 0, false},
		{"  ", 0, false},
		{"+", 0, false},
		{"-", 0, false},
		{"+5", 5, true},
		{"-.5e1", -5, true},
		{"5.", 5, true},
		{".5", 0.5, true},
		{".", 0, false},
		{".e1", 0, false},
		{"1e", 0, false},
		{"1e+", 0, false},
		{"1e+1", 10, true},
		{"1E2", 100, true},
		{"1_0", 0, false},
		{"0x10", 16, true},
		{"0XaB", 171, true},
		{"0x", 0, false},
		{"0x.", 0, false},
		{"0x.8", 0.5, true},
		{"0x1p", 0, false},
		{"0x1p-2", 0.25, true},
		{"0x1_0", 0, false},
		{"inf", math.Inf(1), true},
		{"-Infinity", math.Inf(-1), true},
		{"INF", math.Inf(1), true},
		{"infinit", 0, false},
		{"infx", 0, false},
		{"nan", 0, false},
		{"-nan", 0, false},
		{"nan(1)", 0, false},
		{"1e308", 1e308, true},
		{"1.7976931348623159e308", 0, false},
		{"1e400", 0, false},
		{"0x1p1024", 0, false},
		{"1e-310", 0, false},
		{"1e-400", 0, false},
		{"0e-400", 0, true},
		{"0x1p-1074", 0x1p-1074, true},
		{"0x1p-1075", 0, false},
		{"0x1.8p-1074", 0, false},
		{"2.2250738585072014e-308", 0x1p-1022, true},
		{"2.2250738585072013e-308", 0x1p-1022, true},
		{"2.2250738585072011e-308", 0, false},
		{"3\x00abc", 3, true},
		{"\x00abc", 0, true},
		{" \x001", 0, false},
	} {
		got, ok := strtodWhole([]byte(tc.in))
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("strtodWhole(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzSortStrtod: no input panics, and an accepted value is never NaN.
func FuzzSortStrtod(f *testing.F) {
	for _, s := range []string{"1", " -0x1.8p3", "inf", "1e-310", ".5e", "0x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, ok := strtodWhole(b); ok && math.IsNaN(v) {
			t.Fatalf("%q accepted as NaN", b)
		}
	})
}
