package metrics_test

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

func rlHash(t *testing.T, inst *servertest.Instance, key string) string {
	t.Helper()
	m := inst.Client(t).HGetAll(servertest.Ctx, key).Val()
	var fields []string
	for k := range m {
		fields = append(fields, k)
	}
	sort.Strings(fields)
	for i, f := range fields {
		fields[i] = f + "=" + m[f]
	}
	return strings.Join(fields, " ")
}

// TestSlidingOneLimit: 3 per 10 s counted in 1 s sub-buckets.
func TestSlidingOneLimit(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	lim := []any{"RATELIMIT.SLIDING", 1, "u", "LIMITS", 1, 10, 3, 1}
	at := func(now string, want ...int64) {
		t.Helper()
		rlEq(t, "NOW "+now, rlInts(t, inst, append(append([]any{}, lim...), "NOW", now)...), want...)
	}
	at("100", 0, 2, 0)
	at("100.5", 0, 1, 0)
	servertest.Eq(t, "hash", rlHash(t, inst, "u"), "10000:1000:=2 10000:1000:100=2 10000:1000:o=91")
	// Full: the next request waits until sub-bucket 100 leaves (at 110 s).
	at("101", 0, 0, 9000)
	at("105", 1, 0, 5000)
	at("109.999", 1, 0, 1)
	// Denied requests count nothing, but the trim point moves with time.
	servertest.Eq(t, "hash after denials", rlHash(t, inst, "u"), "10000:1000:=3 10000:1000:100=2 10000:1000:101=1 10000:1000:o=100")
	// At 110 s sub-bucket 100 has left the window: trimmed, then counted.
	at("110", 0, 1, 0)
	servertest.Eq(t, "hash trimmed", rlHash(t, inst, "u"), "10000:1000:=2 10000:1000:101=1 10000:1000:110=1 10000:1000:o=101")
	// A request from the past counts in the newest sub-bucket (110), and
	// the wait is measured from its NOW: sub-bucket 101 leaves at 111 s.
	at("50", 0, 0, 61000)
	servertest.Eq(t, "hash past", rlHash(t, inst, "u"), "10000:1000:=3 10000:1000:101=1 10000:1000:110=2 10000:1000:o=101")
	// The TTL ends when the newest sub-bucket leaves the window: 10 s
	// after its start, measured from NOW (50 s): 70 s.
	servertest.Eq(t, "PTTL", inst.Client(t).PTTL(servertest.Ctx, "u").Val(), 70*time.Second)
	// Long after, everything is trimmed.
	at("1000", 0, 2, 0)
	servertest.Eq(t, "hash later", rlHash(t, inst, "u"), "10000:1000:=1 10000:1000:1000=1 10000:1000:o=991")
}

// TestSlidingSeveralKeysAndLimits: every limit of every key is checked
// before anything is counted, and nothing is counted when one denies.
func TestSlidingSeveralKeysAndLimits(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	c := inst.Client(t)
	do := func(now string, w int, want ...int64) {
		t.Helper()
		rlEq(t, "NOW "+now, rlInts(t, inst, "RATELIMIT.SLIDING", 2, "user:1", "ip:9", "LIMITS", 2,
			1, 2, 0.1, 60, 5, 60, "WEIGHT", w, "NOW", now), want...)
	}
	do("1000", 1, 0, 1, 0, 4, 0)
	// Another user behind the same address, two seconds later: the
	// address's second has rolled over, its minute has not.
	rlEq(t, "user 2", rlInts(t, inst, "RATELIMIT.SLIDING", 2, "user:2", "ip:9", "LIMITS", 2,
		1, 2, 0.1, 60, 5, 60, "WEIGHT", 2, "NOW", "1002"), 0, 0, 1000, 2, 0)
	// user:1 has room everywhere, the address not in its minute; and the
	// weight is above the per-second limit: that limit never passes.
	do("1003", 3, 1, 2, -1, 2, 17000)
	servertest.Eq(t, "user:1 not counted", rlHash(t, inst, "user:1"), "1000:100:=0 1000:100:o=10021 60000:60000:=1 60000:60000:16=1 60000:60000:o=16")
	do("1003", 2, 0, 0, 1000, 0, 17000)
	servertest.Eq(t, "user:1 counted", rlHash(t, inst, "user:1"), "1000:100:=2 1000:100:10030=2 1000:100:o=10021 60000:60000:=3 60000:60000:16=3 60000:60000:o=16")
	// The minute is a fixed window (precision = duration): it empties at
	// its boundary (1020 s).
	do("1020", 1, 0, 1, 0, 4, 0)
	do("1020", 3, 1, 1, -1, 4, 0)
	// A key named twice counts once.
	rlEq(t, "repeated key", rlInts(t, inst, "RATELIMIT.SLIDING", 3, "dup", "dup2", "dup", "LIMITS", 1, 10, 5, 10, "NOW", 1), 0, 4, 0)
	servertest.Eq(t, "dup counted once", rlHash(t, inst, "dup"), "10000:10000:=1 10000:10000:0=1 10000:10000:o=0")
	// Weight 0 peeks: allowed, counts nothing, creates nothing.
	rlEq(t, "peek", rlInts(t, inst, "RATELIMIT.SLIDING", 1, "fresh", "LIMITS", 1, 1, 0, 1, "WEIGHT", 0, "NOW", 5), 0, 0, 0)
	servertest.Eq(t, "no key", c.Exists(servertest.Ctx, "fresh").Val(), int64(0))
	// Without NOW, the server clock.
	inst.Clock.Set(1_000_000)
	rlEq(t, "server clock", rlInts(t, inst, "RATELIMIT.SLIDING", 1, "clk", "LIMITS", 1, 10, 1, 1), 0, 0, 10000)
	servertest.Eq(t, "clk bucket", rlHash(t, inst, "clk"), "10000:1000:=1 10000:1000:1000=1 10000:1000:o=991")
}

func TestSlidingErrors(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	r := inst.Raw(t)
	cases := []struct {
		args string
		want string
	}{
		{"RATELIMIT.SLIDING 1 k LIMITS 1 10", "-ERR wrong number of arguments for 'ratelimit.sliding' command"},
		{"RATELIMIT.SLIDING x k LIMITS 1 10 3 1", "-ERR value is not an integer or out of range"},
		{"RATELIMIT.SLIDING 0 k LIMITS 1 10 3 1", "-ERR numkeys must be greater than 0"},
		{"RATELIMIT.SLIDING 9 k LIMITS 1 10 3 1", "-ERR Number of keys can't be greater than number of args"},
		{"RATELIMIT.SLIDING 1 k LIMIT 1 10 3 1", "-ERR syntax error"},
		{"RATELIMIT.SLIDING 2 k j LIMITS 1 10 3", "-ERR syntax error"},
		{"RATELIMIT.SLIDING 1 k LIMITS 0 10 3 1", "-ERR the number of limits must be greater than 0"},
		{"RATELIMIT.SLIDING 1 k LIMITS 2 10 3 1", "-ERR syntax error"},
		{"RATELIMIT.SLIDING 1 k LIMITS 1 ten 3 1", "-ERR value is not a valid float"},
		{"RATELIMIT.SLIDING 1 k LIMITS 1 10 -3 1", "-ERR limit must be a non-negative integer"},
		{"RATELIMIT.SLIDING 1 k LIMITS 1 10 3.5 1", "-ERR limit must be a non-negative integer"},
		{"RATELIMIT.SLIDING 1 k LIMITS 1 0 3 0", "-ERR duration and precision must be between 0.001 and 1000000000 seconds"},
		{"RATELIMIT.SLIDING 1 k LIMITS 1 10 3 0.0001", "-ERR duration and precision must be between 0.001 and 1000000000 seconds"},
		{"RATELIMIT.SLIDING 1 k LIMITS 1 10 3 11", "-ERR precision must not exceed duration"},
		{"RATELIMIT.SLIDING 1 k LIMITS 1 100 3 0.001", "-ERR a window may have at most 10000 sub-buckets (duration/precision)"},
		{"RATELIMIT.SLIDING 1 k LIMITS 2 10 3 1 10 5 1", "-ERR duplicate limit: each duration and precision pair may appear once"},
		{"RATELIMIT.SLIDING 1 k LIMITS 1 10 3 1 WEIGHT -1", "-ERR weight must be a non-negative integer"},
		{"RATELIMIT.SLIDING 1 k LIMITS 1 10 3 1 WEIGHT", "-ERR syntax error"},
		{"RATELIMIT.SLIDING 1 k LIMITS 1 10 3 1 NOW -5", "-ERR NOW must be a unix time in seconds between 0 and 1000000000000"},
		{"RATELIMIT.SLIDING 1 k LIMITS 1 10 3 1 EXTRA 1", "-ERR syntax error"},
	}
	for _, tc := range cases {
		servertest.Eq(t, tc.args, r.Do(strings.Fields(tc.args)...), tc.want+"\r\n")
	}
	r.Do("SET", "str", "x")
	r.Do("HSET", "h", "a", "1")
	servertest.Eq(t, "WRONGTYPE before any write", r.Do("RATELIMIT.SLIDING", "2", "h2", "str", "LIMITS", "1", "10", "3", "1"),
		"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n")
	servertest.Eq(t, "nothing written", r.Do("EXISTS", "h2"), ":0\r\n")
	r.Do("HSET", "bad", "10000:1000:o", "x")
	servertest.Eq(t, "tampered hash", r.Do("RATELIMIT.SLIDING", "1", "bad", "LIMITS", "1", "10", "3", "1"), "-ERR hash value is not an integer\r\n")
	servertest.Eq(t, "GETKEYS", r.Do("COMMAND", "GETKEYS", "RATELIMIT.SLIDING", "2", "a", "b", "LIMITS", "1", "1", "1", "1"), "*2\r\n$1\r\na\r\n$1\r\nb\r\n")
}
