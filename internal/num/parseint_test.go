package num

import (
	"math/rand"
	"strconv"
	"testing"
)

// parseIntModel is string2ll spelled out with strconv: an optional '-',
// digits without a leading zero (but "0"), no '+', within int64.
func parseIntModel(b []byte) (int64, bool) {
	s := string(b)
	if s == "0" {
		return 0, true
	}
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if d == "" || d[0] < '1' || d[0] > '9' {
		return 0, false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

func TestParseIntModel(t *testing.T) {
	for _, s := range []string{"", "0", "-0", "00", "01", "-", "+1", " 1", "1 ", "9", "-9",
		"999999999999999999", "-999999999999999999", "1000000000000000000",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"18446744073709551615", "18446744073709551616", "99999999999999999999", "1a", "1700000000000"} {
		v, ok := ParseInt([]byte(s))
		mv, mok := parseIntModel([]byte(s))
		if v != mv || ok != mok {
			t.Errorf("ParseInt(%q) = %d, %v; want %d, %v", s, v, ok, mv, mok)
		}
	}
	rng := rand.New(rand.NewSource(1))
	const alphabet = "0123456789-+ x/:"
	for i := 0; i < 200000; i++ {
		b := make([]byte, rng.Intn(22))
		for j := range b {
			if rng.Intn(8) == 0 {
				b[j] = alphabet[rng.Intn(len(alphabet))]
			} else {
				b[j] = '0' + byte(rng.Intn(10))
			}
		}
		v, ok := ParseInt(b)
		mv, mok := parseIntModel(b)
		if v != mv || ok != mok {
			t.Fatalf("ParseInt(%q) = %d, %v; want %d, %v", b, v, ok, mv, mok)
		}
	}
}
