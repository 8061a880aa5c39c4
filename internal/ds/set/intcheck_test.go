package set

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// canonicalInt is the oracle: a string is an integer member exactly when it
// parses as an int64 and formats back to itself.
func canonicalInt(s string) (int64, bool) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || strconv.FormatInt(v, 10) != s {
		return 0, false
	}
	return v, true
}

func TestParseIntTable(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1", 1, true},
		{"-1", -1, true},
		{"9", 9, true},
		{"10", 10, true},
		{"123456789", 123456789, true},
		{"-123456789", -123456789, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775806", math.MaxInt64 - 1, true},
		{"-9223372036854775807", math.MinInt64 + 1, true},

		{"", 0, false},
		{"-", 0, false},
		{"-0", 0, false},
		{"00", 0, false},
		{"01", 0, false},
		{"007", 0, false},
		{"-01", 0, false},
		{"+1", 0, false},
		{"+0", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"1\x00", 0, false},
		{"\x001", 0, false},
		{"1a", 0, false},
		{"a1", 0, false},
		{"--1", 0, false},
		{"1-", 0, false},
		{"1.0", 0, false},
		{"1e3", 0, false},
		{"0x10", 0, false},
		{"١", 0, false}, // Arabic-Indic digit one
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"18446744073709551615", 0, false},
		{"18446744073709551616", 0, false},
		{"99999999999999999999", 0, false},
		{"-99999999999999999999", 0, false},
		{"100000000000000000000", 0, false},
		{"-18446744073709551616", 0, false},
		{"00000000000000000001", 0, false},
	}
	for _, tc := range tests {
		v, ok := ParseInt([]byte(tc.in))
		if ok != tc.ok || v != tc.want {
			t.Errorf("ParseInt(%q) = %d, %v; want %d, %v", tc.in, v, ok, tc.want, tc.ok)
		}
		if ov, ook := canonicalInt(tc.in); ook != tc.ok || ov != tc.want {
			t.Errorf("oracle disagrees with table on %q", tc.in)
		}
	}
}

func TestParseIntRoundTripsEveryFormattedInt(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(v int64) {
		s := strconv.FormatInt(v, 10)
		got, ok := ParseInt([]byte(s))
		if !ok || got != v {
			t.Fatalf("ParseInt(%q) = %d, %v", s, got, ok)
		}
		if intLen(v) != len(s) {
			t.Fatalf("intLen(%d) = %d, want %d", v, intLen(v), len(s))
		}
	}
	for _, v := range []int64{0, 1, -1, 9, 10, -9, -10, math.MaxInt64, math.MinInt64, math.MaxInt32, math.MinInt32} {
		check(v)
	}
	for p := int64(1); p > 0 && p <= math.MaxInt64/10; p *= 10 {
		for _, v := range []int64{p - 1, p, p + 1, -p + 1, -p, -p - 1} {
			check(v)
		}
	}
	for range 100000 {
		check(int64(rng.Uint64()))
		check(int64(rng.Uint64() >> rng.IntN(64)))
	}
}

func TestParseIntAgainstOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("0123456789-+ .ex\x00")
	buf := make([]byte, 0, 24)
	for range 500000 {
		buf = buf[:0]
		n := rng.IntN(23)
		for range n {
			if rng.IntN(4) == 0 {
				buf = append(buf, alphabet[rng.IntN(len(alphabet))])
			} else {
				buf = append(buf, byte('0'+rng.IntN(10)))
			}
		}
		got, ok := ParseInt(buf)
		want, wok := canonicalInt(string(buf))
		if ok != wok || got != want {
			t.Fatalf("ParseInt(%q) = %d, %v; oracle %d, %v", buf, got, ok, want, wok)
		}
	}
	// Every string around the int64 boundaries, digit by digit.
	for _, base := range []string{"9223372036854775807", "-9223372036854775808"} {
		for i := range base {
			for d := byte('0'); d <= '9'; d++ {
				b := []byte(base)
				if b[i] == '-' {
					continue
				}
				b[i] = d
				got, ok := ParseInt(b)
				want, wok := canonicalInt(string(b))
				if ok != wok || got != want {
					t.Fatalf("ParseInt(%q) = %d, %v; oracle %d, %v", b, got, ok, want, wok)
				}
			}
		}
	}
}

func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"0", "-0", "01", "+1", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "18446744073709551616", "", "-", " 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseInt([]byte(s))
		want, wok := canonicalInt(s)
		if ok != wok || got != want {
			t.Fatalf("ParseInt(%q) = %d, %v; oracle %d, %v", s, got, ok, want, wok)
		}
	})
}
