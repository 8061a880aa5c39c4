package num

import (
	"strings"
	"testing"
)

// TestParseLongDoubleStrtold checks the inputs where big.Float's parser and
// C's strtold (as Redis's string2ld uses it) disagree. redis-server 7.0's
// INCRBYFLOAT answers are the reference (see the command package's
// differential tests).
func TestParseLongDoubleStrtold(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // "" means refused
	}{
		{"1.5", "1.5"},
		{".5", "0.5"},
		{"5.", "5"},
		{"+5", "5"},
		{"-0", "0"},
		{"00012", "12"},
		{"1E2", "100"},
		{"1e+2", "100"},
		{"0x10", "16"},
		{"0x1p3", "8"},
		{"0X1P-2", "0.25"},
		{"0x1.8", "1.5"},
		{"0x.8p1", "1"},
		{"inf", "inf"},
		{"-Infinity", "-inf"},
		{"1e-4940", "0"}, // a denormal: accepted, prints as 0
		{"1e4932", "1" + strings.Repeat("0", 4932)[:1] /* checked below */},
		{"1_000", ""},
		{"0x1_0", ""},
		{"0b101", ""},
		{"0o7", ""},
		{"0x", ""},
		{"0xg", ""},
		{"0x1p", ""},
		{"1e", ""},
		{"1e+", ""},
		{".", ""},
		{"", ""},
		{" 1", ""},
		{"1 ", ""},
		{"nan", ""},
		{"1i", ""},
		{"1e5000", ""},  // overflows to HUGE_VALL: ERANGE
		{"1e-5000", ""}, // underflows to 0: ERANGE
		{"0." + strings.Repeat("0", 5116) + "1", ""}, // 1e-5117: underflow
		{"1." + strings.Repeat("0", 5117), "1"},      // 5119 bytes
		{"1." + strings.Repeat("0", 5118), ""},       // 5120 bytes: too long
	} {
		f, ok := ParseLongDouble([]byte(c.in))
		if c.want == "" {
			if ok {
				t.Errorf("ParseLongDouble(%.20q) = %s, want refused", c.in, FormatLongDouble(f))
			}
			continue
		}
		if !ok {
			t.Errorf("ParseLongDouble(%.20q) refused, want %s", c.in, c.want)
			continue
		}
		got := FormatLongDouble(f)
		if c.in == "1e4932" {
			if len(got) != 4933 || got[0] != '1' {
				t.Errorf("ParseLongDouble(1e4932) = %.30s... (%d digits)", got, len(got))
			}
			continue
		}
		if got != c.want {
			t.Errorf("ParseLongDouble(%.20q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestLongDoubleInRange(t *testing.T) {
	max, _ := ParseLongDouble([]byte("1.18e4932"))
	if !LongDoubleInRange(max) {
		t.Error("1.18e4932 is a finite long double")
	}
	if LongDoubleInRange(AddLongDouble(max, max)) {
		t.Error("2.36e4932 overflows a long double")
	}
}
