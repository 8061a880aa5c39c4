package metrics_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// rlClients keeps one go-redis client per instance for rlInts.
var rlClients sync.Map // *servertest.Instance -> *redis.Client

// rlInts runs a command through go-redis and returns its integer array.
func rlInts(t *testing.T, inst *servertest.Instance, args ...any) []int64 {
	t.Helper()
	c, ok := rlClients.Load(inst)
	if !ok {
		c = inst.Client(t)
		rlClients.Store(inst, c)
		t.Cleanup(func() { rlClients.Delete(inst) })
	}
	v, err := c.(*redis.Client).Do(servertest.Ctx, args...).Int64Slice()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

func rlEq(t *testing.T, what string, got []int64, want ...int64) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

// TestClThrottleRedisCellCases replays the table of redis-cell's own
// rate_limit test (limit 5: max_burst 4, one per second) through the
// command, on the manual clock.
func TestClThrottleRedisCellCases(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	c := inst.Client(t)
	cases := []struct {
		at      int64 // ms after the start
		qty     int64
		want    []int64
		comment string
	}{
		{0, 6, []int64{1, 5, 5, -1, 0}, "more than the limiter holds: never, no retry"},
		{0, 1, []int64{0, 5, 4, -1, 1}, ""},
		{0, 1, []int64{0, 5, 3, -1, 2}, ""},
		{0, 1, []int64{0, 5, 2, -1, 3}, ""},
		{0, 1, []int64{0, 5, 1, -1, 4}, ""},
		{0, 1, []int64{0, 5, 0, -1, 5}, ""},
		{0, 1, []int64{1, 5, 0, 1, 5}, "limited, retry in a second"},
		{3000, 1, []int64{0, 5, 2, -1, 3}, ""},
		{3100, 1, []int64{0, 5, 1, -1, 4}, "3.9 s rounds up"},
		{4000, 1, []int64{0, 5, 1, -1, 4}, ""},
		{8000, 1, []int64{0, 5, 4, -1, 1}, ""},
		{9500, 1, []int64{0, 5, 4, -1, 1}, ""},
		{9500, 0, []int64{0, 5, 4, -1, 1}, "quantity 0 peeks"},
		{9500, 2, []int64{0, 5, 2, -1, 3}, ""},
		{9500, 5, []int64{1, 5, 2, 3, 3}, "too large for now"},
	}
	for i, tc := range cases {
		inst.Clock.Set(servertest.T0 + tc.at)
		rlEq(t, fmt.Sprintf("case %d %s", i, tc.comment), rlInts(t, inst, "CL.THROTTLE", "foo", 4, 1, 1, tc.qty), tc.want...)
	}
	// The state is a string key holding the TAT in nanoseconds, with a
	// TTL that ends with it: 3 s left at case 14's time.
	tat, err := c.Get(servertest.Ctx, "foo").Int64()
	servertest.NoErr(t, err)
	servertest.Eq(t, "stored TAT", tat, (servertest.T0+12500)*1_000_000)
	servertest.Eq(t, "PTTL", c.PTTL(servertest.Ctx, "foo").Val(), 3000*time.Millisecond)
	// Once the TAT passes the key is gone and the limiter is full.
	inst.Clock.Set(servertest.T0 + 12500)
	servertest.Eq(t, "EXISTS after the TAT", c.Exists(servertest.Ctx, "foo").Val(), int64(0))
	rlEq(t, "fresh again", rlInts(t, inst, "CL.THROTTLE", "foo", 4, 1, 1), 0, 5, 4, -1, 1)
}

func TestClThrottleErrors(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	r := inst.Raw(t)
	usage := "-Cell error: Store error: Usage: cl.throttle <key> <max_burst> <count per period> <period> [<quantity>]\r\n"
	for _, args := range [][]string{{"CL.THROTTLE"}, {"CL.THROTTLE", "k", "1", "1"}, {"cl.throttle", "k", "1", "1", "1", "1", "1"}} {
		servertest.Eq(t, strings.Join(args, " "), r.Do(args...), usage)
	}
	servertest.Eq(t, "not an integer", r.Do("CL.THROTTLE", "k", "x1", "1", "1"), "-Cell error: Store error: Couldn't parse as integer: x1\r\n")
	servertest.Eq(t, "float", r.Do("CL.THROTTLE", "k", "1", "1.5", "1"), "-Cell error: Store error: Couldn't parse as integer: 1.5\r\n")
	servertest.Eq(t, "quantity", r.Do("CL.THROTTLE", "k", "1", "1", "1", " 1"), "-Cell error: Store error: Couldn't parse as integer:  1\r\n")
	servertest.Eq(t, "zero count", r.Do("CL.THROTTLE", "k", "1", "0", "1"), "-Cell error: Store error: Zero rates are not supported\r\n")
	servertest.Eq(t, "zero period", r.Do("CL.THROTTLE", "k", "1", "1", "0"), "-Cell error: Store error: Zero rates are not supported\r\n")
	// Rust's parser takes a plus sign.
	servertest.Eq(t, "plus sign", r.Do("CL.THROTTLE", "k", "+1", "+1", "+1"), "*5\r\n:0\r\n:2\r\n:1\r\n:-1\r\n:1\r\n")
	r.Do("SET", "bad", "abc")
	servertest.Eq(t, "stored non-integer", r.Do("CL.THROTTLE", "bad", "1", "1", "1"), "-Cell error: invalid digit found in string\r\n")
	r.Do("SET", "empty", "")
	servertest.Eq(t, "stored empty", r.Do("CL.THROTTLE", "empty", "1", "1", "1"), "-Cell error: cannot parse integer from empty string\r\n")
	r.Do("RPUSH", "list", "a")
	servertest.Eq(t, "list", r.Do("CL.THROTTLE", "list", "1", "1", "1"), "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n")
	// A limiter holding -1 reads as empty; the module cannot replace it.
	r.Do("SET", "minus", "-1")
	servertest.Eq(t, "stored -1", r.Do("CL.THROTTLE", "minus", "1", "1", "1"), "-Cell error: Store error: Failed to update rate limit after 5 attempts\r\n")
	servertest.Eq(t, "GET minus", r.Do("GET", "minus"), "$2\r\n-1\r\n")
	servertest.Eq(t, "COMMAND INFO key", r.Do("COMMAND", "GETKEYS", "CL.THROTTLE", "lim", "1", "1", "1"), "*1\r\n$3\r\nlim\r\n")
}

// TestGcraDocumented follows Redis 8.8's GCRA: 10 tokens per 60 s with a
// burst of 5 is an emission interval of 6 s and a capacity of 6.
func TestGcraDocumented(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	c := inst.Client(t)
	rlEq(t, "first", rlInts(t, inst, "GCRA", "api:user:123", 5, 10, 60), 0, 6, 5, -1, 6)
	for i := 0; i < 5; i++ {
		rlInts(t, inst, "GCRA", "api:user:123", 5, 10, 60)
	}
	rlEq(t, "exhausted", rlInts(t, inst, "GCRA", "api:user:123", 5, 10, 60), 1, 6, 0, 6, 36)
	// The TAT in microseconds, expiring (PXAT) when it is reached.
	tat, err := c.Get(servertest.Ctx, "api:user:123").Int64()
	servertest.NoErr(t, err)
	servertest.Eq(t, "TAT", tat, (servertest.T0+36000)*1000)
	servertest.Eq(t, "PEXPIRETIME", c.PExpireTime(servertest.Ctx, "api:user:123").Val(), time.Duration(servertest.T0+36000)*time.Millisecond)
	inst.Clock.Set(servertest.T0 + 12000) // two tokens back
	rlEq(t, "TOKENS 3 too many", rlInts(t, inst, "GCRA", "api:user:123", 5, 10, 60, "TOKENS", 3), 1, 6, 2, 6, 24)
	rlEq(t, "TOKENS 2", rlInts(t, inst, "GCRA", "api:user:123", 5, 10, 60, "tokens", 2), 0, 6, 0, -1, 36)
	rlEq(t, "fresh TOKENS 3", rlInts(t, inst, "GCRA", "other", 5, 10, 60, "TOKENS", 3), 0, 6, 3, -1, 18)
	rlEq(t, "more than capacity", rlInts(t, inst, "GCRA", "other2", 5, 10, 60, "TOKENS", 7), 1, 6, 6, -1, 0)
	// A fractional period; emission rounds to the nearest microsecond.
	rlEq(t, "fractional", rlInts(t, inst, "GCRA", "frac", 0, 3, 0.5), 0, 1, 0, -1, 1)
	tat, _ = c.Get(servertest.Ctx, "frac").Int64()
	servertest.Eq(t, "frac TAT", tat, (servertest.T0+12000)*1000+166667)
	rlEq(t, "frac limited", rlInts(t, inst, "GCRA", "frac", 0, 3, 0.5), 1, 1, 0, 1, 1)
	inst.Clock.Set(servertest.T0 + 12167)
	rlEq(t, "frac again", rlInts(t, inst, "GCRA", "frac", 0, 3, 0.5), 0, 1, 0, -1, 1)
}

func TestGcraErrors(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	r := inst.Raw(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"GCRA", "k", "1", "1"}, "-ERR wrong number of arguments for 'gcra' command\r\n"},
		{[]string{"GCRA", "k", "1", "1", "1", "TOKENS", "1", "x"}, "-ERR wrong number of arguments for 'gcra' command\r\n"},
		{[]string{"GCRA", "k", "x", "1", "1"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"GCRA", "k", "-1", "1", "1"}, "-ERR value is out of range, must be positive\r\n"},
		{[]string{"GCRA", "k", "1", "0", "1"}, "-ERR value is out of range, value must between 1 and 9223372036854775807\r\n"},
		{[]string{"GCRA", "k", "1", "1", "abc"}, "-ERR value is not a valid float\r\n"},
		{[]string{"GCRA", "k", "1", "1", "0"}, "-ERR period must be > 0 and < 1e12\r\n"},
		{[]string{"GCRA", "k", "1", "1", "1e12"}, "-ERR period must be > 0 and < 1e12\r\n"},
		{[]string{"GCRA", "k", "1", "1", "inf"}, "-ERR period must be > 0 and < 1e12\r\n"},
		{[]string{"GCRA", "k", "1", "1", "1", "COUNT"}, "-ERR syntax error\r\n"},
		{[]string{"GCRA", "k", "1", "1", "1", "TOKENS"}, "-ERR Missing TOKENS value\r\n"},
		{[]string{"GCRA", "k", "1", "1", "1", "TOKENS", "0"}, "-ERR value is out of range, value must between 1 and 9223372036854775807\r\n"},
		{[]string{"GCRA", "k", "1", "1", "1", "TOKENS", "9223372036854775807"}, "-ERR GCRA limiting uses microsecond accuracy. Combination of period, tokens_per_period and TOKENS would cause an overflow\r\n"},
		{[]string{"GCRA", "k", "9223372036854775806", "1", "1"}, "-ERR GCRA limiting uses microsecond accuracy. Combination of period, tokens_per_period and max_burst would cause an overflow\r\n"},
	}
	for _, tc := range cases {
		servertest.Eq(t, strings.Join(tc.args, " "), r.Do(tc.args...), tc.want)
	}
	r.Do("SET", "s", "abc")
	servertest.Eq(t, "not a TAT", r.Do("GCRA", "s", "1", "1", "1"), "-ERR Invalid GCRA key\r\n")
	r.Do("SET", "z", "0")
	servertest.Eq(t, "zero TAT", r.Do("GCRA", "z", "1", "1", "1"), "-ERR Negative time is invalid value for GCRA\r\n")
	r.Do("SADD", "set", "a")
	servertest.Eq(t, "set", r.Do("GCRA", "set", "1", "1", "1"), "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n")
	// RESP3 replies with the same integers.
	r.Do("HELLO", "3")
	servertest.Eq(t, "RESP3", r.Do("GCRA", "r3", "0", "1", "1"), "*5\r\n:0\r\n:1\r\n:0\r\n:-1\r\n:1\r\n")
}
