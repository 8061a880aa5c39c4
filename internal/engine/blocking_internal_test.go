package engine

import (
	"math"
	"testing"
)

// TestBlockTimeoutMs checks the timeout arithmetic against what
// redis-server 7.0 does with the same text (observed: which timeouts it
// refuses as negative, which block for ever, which time out at once):
// seconds as a long double, times 1000, rounded up.
func TestBlockTimeoutMs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ms   int64
		fail bool
	}{
		{in: "0", ms: 0},
		{in: "-0", ms: 0},
		{in: "1", ms: 1000},
		{in: "1.5", ms: 1500},
		{in: "0.0001", ms: 1},
		{in: "0.0000001", ms: 1},
		{in: "1e-400", ms: 1},
		{in: "-0.0001", ms: 0},
		{in: "-0.0005", ms: 0},
		{in: "-0.00099", ms: 0},
		// -0.001 is a hair above -1 ms in long double: it rounds up to 0
		// and waits for ever on redis-server; -0.002 (a hair above -2 ms)
		// rounds up to -1, which is refused as negative.
		{in: "-0.001", ms: 0},
		{in: "-0.002", ms: -1},
		{in: "-0.0011", ms: -1},
		{in: "-1", ms: -1000},
		{in: "0x10", ms: 16000},
		{in: "1e15", ms: 1e18},
		{in: "9223372036854775.807", ms: math.MaxInt64},
		{in: "1e16", ms: math.MinInt64},
		{in: "9223372036854775807", ms: math.MinInt64},
		{in: "inf", ms: math.MinInt64},
		{in: "-inf", ms: math.MinInt64},
		{in: "1e4000", ms: math.MinInt64},
		{in: "nan", fail: true},
		{in: "abc", fail: true},
		{in: "", fail: true},
		{in: " 1", fail: true},
		{in: "1 ", fail: true},
		{in: "1e5000", fail: true},
	} {
		ms, ok := timeoutMs([]byte(tc.in))
		if ok == tc.fail || (ok && ms != tc.ms) {
			t.Errorf("timeoutMs(%q) = %d, %v; want %d, %v", tc.in, ms, ok, tc.ms, !tc.fail)
		}
	}
}
