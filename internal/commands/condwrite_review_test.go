package commands_test

import (
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// BYFLOAT's type limits are ±LDBL_MAX and act as bounds, as the INCREX
// documentation says: a result past them is skipped ([current, 0], key
// untouched) or, with SATURATE, capped at the limit. (It was an error.)
func TestIncrexFloatTypeLimits(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	r := inst.Raw(t)
	r.Do("SET", "huge", "1e4932", "EX", "100")
	rep := r.Do("INCREX", "huge", "BYFLOAT", "1e4932")
	if !strings.HasPrefix(rep, "*2\r\n$4933\r\n1000000000000000000") || !strings.HasSuffix(rep, "\r\n$1\r\n0\r\n") {
		t.Fatalf("skipped: %q", rep)
	}
	servertest.Eq(t, "untouched", r.Do("GET", "huge"), "$6\r\n1e4932\r\n")
	servertest.Eq(t, "TTL kept", r.Do("TTL", "huge"), ":100\r\n")
	rep = r.Do("INCREX", "huge", "BYFLOAT", "1e4932", "SATURATE")
	// LDBL_MAX = 1.18973149535723176502e4932
	if !strings.HasPrefix(rep, "*2\r\n$4933\r\n118973149535723176502") {
		t.Fatalf("saturated: %q", rep)
	}
	get := r.Do("GET", "huge")
	if !strings.HasPrefix(get, "$4933\r\n118973149535723176502") || !strings.Contains(rep, get[7:len(get)-2]) {
		t.Fatalf("stored %q after %q", get[:40], rep[:40])
	}
	// At the limit, adding a little rounds back to it: in range, applied 0.
	rep = r.Do("INCREX", "huge", "BYFLOAT", "1")
	if !strings.HasSuffix(rep, "\r\n$1\r\n0\r\n") {
		t.Fatalf("at the limit: %q", rep[len(rep)-20:])
	}
	// Downwards too, with an explicit bound tighter than the limit.
	r.Do("SET", "neg", "-1e4932")
	servertest.Eq(t, "neg saturate to LBOUND", r.Do("INCREX", "neg", "BYFLOAT", "-1e4932", "LBOUND", "-5", "SATURATE")[:12], "*2\r\n$2\r\n-5\r\n")
	// A stored infinity is still the INCRBYFLOAT error.
	r.Do("SET", "inf", "inf")
	servertest.Eq(t, "stored inf", r.Do("INCREX", "inf", "BYFLOAT", "1"), "-ERR increment would produce NaN or Infinity\r\n")
}
