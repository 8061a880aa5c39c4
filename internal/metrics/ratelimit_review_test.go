package metrics_test

import (
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// A count and a weight whose sum passes MaxInt64 are over any limit: the
// check wrapped, admitted the request and stored a negative count.
func TestSlidingWeightOverflow(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	r := inst.Raw(t)
	max := "9223372036854775807"
	servertest.Eq(t, "first", r.Do("RATELIMIT.SLIDING", "1", "k", "LIMITS", "1", "60", max, "1"),
		"*3\r\n:0\r\n:9223372036854775806\r\n:0\r\n")
	servertest.Eq(t, "weight max denied", r.Do("RATELIMIT.SLIDING", "1", "k", "LIMITS", "1", "60", max, "1", "WEIGHT", max),
		"*3\r\n:1\r\n:9223372036854775806\r\n:60000\r\n")
	servertest.Eq(t, "count kept", r.Do("HGET", "k", "60000:1000:"), "$1\r\n1\r\n")
	// A tampered count of MinInt64 does not wrap the remaining capacity
	// (limit - count, saturated) to 0.
	r.Do("HSET", "k", "60000:1000:", "-9223372036854775808")
	servertest.Eq(t, "tampered", r.Do("RATELIMIT.SLIDING", "1", "k", "LIMITS", "1", "60", "5", "1", "WEIGHT", "0"),
		"*3\r\n:0\r\n:9223372036854775807\r\n:0\r\n")
}
