package commands

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestZsScanCursorOrder(t *testing.T) {
	vals := []float64{math.Inf(-1), -math.MaxFloat64, -1e300, -1, -math.SmallestNonzeroFloat64, 0,
		math.SmallestNonzeroFloat64, 1e-300, 0.5, 1, 2, 1e300, math.MaxFloat64, math.Inf(1)}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 1000; i++ {
		vals = append(vals, math.Float64frombits(r.Uint64()))
	}
	vals = slices.DeleteFunc(vals, math.IsNaN)
	for _, a := range vals {
		ca := zsScanCursor(a)
		if ca == 0 {
			t.Fatalf("cursor 0 for %v", a)
		}
		back, past := zsScanFrom(ca)
		if past || back != a && !(a == 0 && back == 0) {
			t.Fatalf("%v -> %d -> %v (past %v)", a, ca, back, past)
		}
		for _, b := range vals {
			cb := zsScanCursor(b)
			if (a < b) != (ca < cb) || (a == b) != (ca == cb) {
				t.Fatalf("order: %v %v -> %d %d", a, b, ca, cb)
			}
		}
	}
	if zsScanCursor(math.Copysign(0, -1)) != zsScanCursor(0) {
		t.Fatal("-0 and +0 differ")
	}
	// Cursors no score maps to: below -inf starts over, above +inf ends.
	if f, past := zsScanFrom(1); past || !math.IsInf(f, -1) {
		t.Fatalf("cursor 1: %v %v", f, past)
	}
	if _, past := zsScanFrom(math.MaxUint64); !past {
		t.Fatal("cursor MaxUint64 is not past the end")
	}
}

func TestZsListpackScore(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {1, "1"}, {-7, "-7"}, {0.5, "0.5"}, {0.1, "0.10000000000000001"},
		{1e18, "1000000000000000000"}, {1 << 62, "4611686018427387904"}, {-(1 << 62), "-4611686018427387904"},
		{1<<62 + 1024, "4.6116860184273889e+18"}, {1e20, "1e+20"}, {math.Inf(1), "inf"}, {math.Inf(-1), "-inf"},
		{123456789012345678, "123456789012345680"}, {2.5e-7, "2.4999999999999999e-07"},
	} {
		if got := zsListpackScore(tc.v); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestZsStrtod(t *testing.T) {
	for _, tc := range []struct {
		in     string
		v      float64
		n      int
		erange bool
	}{
		{"1", 1, 1, false}, {" 1", 1, 2, false}, {"\t\n-2.5x", -2.5, 6, false}, {"", 0, 0, false},
		{"  ", 0, 0, false}, {"-", 0, 0, false}, {".", 0, 0, false}, {"1.", 1, 2, false}, {".5", 0.5, 2, false},
		{"1e", 1, 1, false}, {"1e+", 1, 1, false}, {"1e5", 1e5, 3, false}, {"1E-2", 0.01, 4, false},
		{"inf", math.Inf(1), 3, false}, {"-Infinity", math.Inf(-1), 9, false}, {"infinit", math.Inf(1), 3, false},
		{"0x", 0, 1, false}, {"0x10", 16, 4, false}, {"0x1p-2", 0.25, 6, false}, {"0x1p", 1, 3, false},
		{"0x.8", 0.5, 4, false}, {"-0x1P+3", -8, 7, false}, {"1e400", math.Inf(1), 5, true},
		{"-1e400", math.Inf(-1), 6, true}, {"1e-400", 0, 6, true}, {"0e-400", 0, 6, false},
		{"1_000", 1, 1, false}, {"1\x002", 1, 1, false}, {"0x1p-1100", 0, 9, true},
	} {
		v, n, erange := zsStrtod([]byte(tc.in))
		if v != tc.v || n != tc.n || erange != tc.erange || math.Signbit(v) != math.Signbit(tc.v) {
			t.Errorf("%q: %v %d %v, want %v %d %v", tc.in, v, n, erange, tc.v, tc.n, tc.erange)
		}
	}
	// Integers take a shortcut below 16 digits: every length across it,
	// signs, "-0", leading zeros and what may follow the digits, against
	// strconv (which rounds as strtod does).
	rng := rand.New(rand.NewPCG(21, 1))
	for i := 0; i < 100_000; i++ {
		digits := make([]byte, 1+rng.IntN(19))
		for k := range digits {
			digits[k] = byte('0' + rng.IntN(10))
		}
		if rng.IntN(4) == 0 {
			digits[0] = '0'
		}
		in := string(digits)
		if r := rng.IntN(3); r == 1 {
			in = "-" + in
		} else if r == 2 {
			in = "+" + in
		}
		tail := []string{"", "x", "e", ".", ".5", "e2", " "}[rng.IntN(7)]
		want, err := strconv.ParseFloat(in+strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(tail, "e"), "x")), 64)
		if err != nil {
			t.Fatal(err)
		}
		v, n, erange := zsStrtod([]byte(in + tail))
		wantN := len(in) + map[string]int{"": 0, "x": 0, "e": 0, ".": 1, ".5": 2, "e2": 2, " ": 0}[tail]
		if v != want || math.Signbit(v) != math.Signbit(want) || n != wantN || erange {
			t.Fatalf("%q: %v %d %v, want %v %d", in+tail, v, n, erange, want, wantN)
		}
	}
	if v, n, _ := zsStrtod([]byte("nan(abc)x")); !math.IsNaN(v) || n != 8 {
		t.Errorf("nan(abc)x: %v %d", v, n)
	}
	for _, in := range []string{"1", "-1.5", "0x10", "inf", "1e-310", "+7"} {
		if _, ok := zsParseDouble([]byte(in)); !ok {
			t.Errorf("string2d refused %q", in)
		}
	}
	for _, in := range []string{"", " 1", "1 ", "nan", "1e400", "1e-400", "1_0", "1\x00", "0x"} {
		if v, ok := zsParseDouble([]byte(in)); ok {
			t.Errorf("string2d took %q as %v", in, v)
		}
	}
}
