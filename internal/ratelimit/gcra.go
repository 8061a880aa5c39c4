// Package ratelimit holds the arithmetic of Abacus's rate limiters,
// independent of how their state is stored: the generic cell rate
// algorithm behind CL.THROTTLE (redis-cell) and GCRA (Redis 8.8).
//
// GCRA keeps one number per limiter, the theoretical arrival time (TAT):
// the moment the limiter would be empty again if requests kept arriving at
// exactly the sustained rate. A request of n tokens pushes the TAT n
// emission intervals further; it is allowed when the pushed TAT is at most
// the delay variation tolerance (the bucket's size, in time) ahead of now.
// Times are integers in one unit of the caller's choice (redis-cell counts
// nanoseconds, Redis microseconds); all arithmetic wraps as two's
// complement integers do, so absurd parameters give absurd but defined
// answers rather than panics.
package ratelimit

// GCRA is one limiter's parameters, in the caller's time unit.
type GCRA struct {
	Emission  int64 // the interval between two tokens at the sustained rate
	Tolerance int64 // how far the TAT may run ahead of now: Emission * (burst+1)
	Increment int64 // what this request adds to the TAT: Emission * tokens
}

// Decision is the outcome of one request.
type Decision struct {
	Limited bool
	// NewTAT is the TAT to store when the request is allowed.
	NewTAT int64
	// RetryAfter is how long until the same request would be allowed, or
	// -1 when it is allowed now or could never be (more tokens than the
	// limiter holds).
	RetryAfter int64
	// TTL is how long until the limiter is empty again (reset_after): the
	// stored TAT minus now.
	TTL int64
	// Next is Tolerance - TTL: the room left, in time, for further
	// requests; Remaining turns it into tokens.
	Next int64
}

// Decide applies a request at now to a limiter whose TAT is tat (pass now
// for a limiter without state).
func (g GCRA) Decide(now, tat int64) Decision {
	base := tat
	if now > tat {
		base = now
	}
	d := Decision{RetryAfter: -1}
	newTAT := base + g.Increment
	allowAt := newTAT - g.Tolerance
	if diff := now - allowAt; diff < 0 {
		d.Limited = true
		if g.Increment <= g.Tolerance {
			d.RetryAfter = -diff
		}
		d.TTL = tat - now
	} else {
		d.NewTAT = newTAT
		d.TTL = newTAT - now
	}
	d.Next = g.Tolerance - d.TTL
	return d
}

// Remaining is the number of whole tokens that fit in the room left (the
// integer division Redis's GCRA does): 0 when the room is less than one
// emission interval below zero or the interval is not positive.
func (g GCRA) Remaining(d Decision) int64 {
	if g.Emission <= 0 || d.Next <= -g.Emission {
		return 0
	}
	return d.Next / g.Emission
}
