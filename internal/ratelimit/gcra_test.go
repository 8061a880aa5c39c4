package ratelimit

import "testing"

// TestDecide walks a limiter of capacity 3 (emission 10, burst 2) through
// its states by hand.
func TestDecide(t *testing.T) {
	g := GCRA{Emission: 10, Tolerance: 30, Increment: 10}
	tat := int64(100) // empty limiter at time 100
	steps := []struct {
		now                int64
		limited            bool
		retry, ttl, remain int64
	}{
		{100, false, -1, 10, 2},
		{100, false, -1, 20, 1},
		{100, false, -1, 30, 0},
		{100, true, 10, 30, 0},
		{105, true, 5, 25, 0},
		{110, false, -1, 30, 0},
		{200, false, -1, 10, 2}, // long idle: empty again
	}
	for i, s := range steps {
		d := g.Decide(s.now, max(tat, s.now))
		if d.Limited != s.limited || d.RetryAfter != s.retry || d.TTL != s.ttl || g.Remaining(d) != s.remain {
			t.Fatalf("step %d: %+v remaining %d, want %+v", i, d, g.Remaining(d), s)
		}
		if !d.Limited {
			tat = d.NewTAT
		}
	}
	// More than the capacity: limited, and no retry would help.
	big := GCRA{Emission: 10, Tolerance: 30, Increment: 40}
	if d := big.Decide(0, 0); !d.Limited || d.RetryAfter != -1 || d.TTL != 0 || big.Remaining(d) != 3 {
		t.Fatalf("oversized request: %+v", d)
	}
	// A zero increment peeks: allowed, the TAT unchanged.
	peek := GCRA{Emission: 10, Tolerance: 30}
	if d := peek.Decide(50, 70); d.Limited || d.NewTAT != 70 || peek.Remaining(d) != 1 {
		t.Fatalf("peek: %+v", d)
	}
}
