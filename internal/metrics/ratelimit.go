package metrics

import (
	"math"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
	"github.com/abacusdb/abacus/internal/ratelimit"
)

// Rate limits as commands (issue 6): CL.THROTTLE, redis-cell's command,
// and GCRA, Redis 8.8's, both on the generic cell rate algorithm of
// internal/ratelimit; RATELIMIT.SLIDING, Abacus's multi-limit sliding
// window, is in ratelimit_sliding.go.
//
// Both GCRA commands keep a limiter as a plain string key holding its
// theoretical arrival time, with a TTL that ends when the limiter is empty
// again, exactly as the originals store it: GET, TTL and DEL work on a
// limiter, and a limiter moves between Abacus and Redis with its key.
// redis-cell counts nanoseconds, Redis microseconds; each command keeps
// its original's unit, rounding and error texts. Time is the command's
// time (Ctx.Now), so tests drive limiters with the manual clock.

func init() {
	const (
		grp = "rate_limit"
		acl = "@rate_limit"
	)
	engine.Register(
		// redis-cell registers its command with module arity -1 and checks
		// the count itself, replying with its usage text.
		&engine.Command{Name: "cl.throttle", Arity: -1, Flags: engine.FlagWrite, First: 1, Last: 1, Step: 1,
			KeyFlags: "RW access update", ACL: acl, Group: grp,
			Summary: "Rate limit via GCRA, as the redis-cell module does", Since: "redis-cell 0.2.0",
			Complexity: "O(1)", Handler: cmdClThrottle},
		&engine.Command{Name: "gcra", Arity: -5, Flags: engine.FlagWrite | engine.FlagDenyOOM | engine.FlagFast, First: 1, Last: 1, Step: 1,
			KeyFlags: "RW access update", ACL: acl, Group: grp,
			Summary: "Rate limit via GCRA (Generic Cell Rate Algorithm)", Since: "8.8.0",
			Complexity: "O(1)", Handler: cmdGcra},
	)
}

// redis-cell's error replies: the module prefixes every error with
// "Cell error: ", and its own (generic) errors with "Store error: ".
const (
	cellErr        = "Cell error: Store error: "
	errCellUsage   = cellErr + "Usage: cl.throttle <key> <max_burst> <count per period> <period> [<quantity>]"
	errCellZero    = cellErr + "Zero rates are not supported"
	errCellCAS     = cellErr + "Failed to update rate limit after 5 attempts"
	errCellExpire  = cellErr + "Error while setting key expire"
	errGcraKey     = "ERR Invalid GCRA key"
	errGcraNeg     = "ERR Negative time is invalid value for GCRA"
	errGcraPeriod  = "ERR period must be > 0 and < 1e12"
	errGcraTokens  = "ERR Missing TOKENS value"
	errGcraOvTok   = "ERR GCRA limiting uses microsecond accuracy. Combination of period, tokens_per_period and TOKENS would cause an overflow"
	errGcraOvBurst = "ERR GCRA limiting uses microsecond accuracy. Combination of period, tokens_per_period and max_burst would cause an overflow"
)

// parseRustInt parses as Rust's i64::from_str does (what redis-cell
// uses): an optional sign, then one or more ASCII digits, nothing else.
// On failure it returns the text of Rust's ParseIntError.
func parseRustInt(b []byte) (int64, string) {
	if len(b) == 0 {
		return 0, "cannot parse integer from empty string"
	}
	neg := false
	digits := b
	if b[0] == '+' || b[0] == '-' {
		neg = b[0] == '-'
		digits = b[1:]
		if len(digits) == 0 {
			return 0, "invalid digit found in string"
		}
	}
	var v uint64
	over := false
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, "invalid digit found in string"
		}
		if v > (math.MaxUint64-9)/10 {
			over = true
		}
		v = v*10 + uint64(c-'0')
	}
	switch {
	case !neg && (over || v > math.MaxInt64):
		return 0, "number too large to fit in target type"
	case neg && (over || v > 1<<63):
		return 0, "number too small to fit in target type"
	case neg:
		return -int64(v), ""
	}
	return int64(v), ""
}

// satInt64 converts f to int64 as Rust's "as" does: truncating toward
// zero and saturating at the ends (NaN gives 0).
func satInt64(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// cellSeconds rounds a duration in nanoseconds to the seconds redis-cell
// replies with: whole seconds (toward zero), plus one when the
// millisecond part is positive.
func cellSeconds(ns int64) int64 {
	s := ns / 1e9
	if (ns%1e9)/1e6 > 0 {
		s++
	}
	return s
}

// cmdClThrottle is CL.THROTTLE key max_burst count_per_period period
// [quantity]: redis-cell's rate_limit in nanoseconds. Arithmetic wraps as
// redis-cell's release build does; the one difference is that where the
// module would panic on a time out of range, Abacus wraps too.
func cmdClThrottle(c *engine.Ctx) {
	if len(c.Args) != 5 && len(c.Args) != 6 {
		c.Error(errCellUsage)
		return
	}
	var p [4]int64
	p[3] = 1 // quantity
	for i := 2; i < len(c.Args); i++ {
		v, bad := parseRustInt(c.Args[i])
		if bad != "" {
			c.Error(cellErr + "Couldn't parse as integer: " + string(c.Args[i]))
			return
		}
		p[i-2] = v
	}
	maxBurst, count, period, quantity := p[0], p[1], p[2], p[3]
	// Rate::per_period: the period in nanoseconds (an i128 cut to i64),
	// divided by the count in floating point.
	periodNs := period * 1e9 // wraps, as the cast from i128 does
	if count == 0 || periodNs == 0 {
		c.Error(errCellZero)
		return
	}
	emission := satInt64(float64(periodNs) / float64(count))
	if emission == 0 {
		c.Error(errCellZero)
		return
	}
	g := ratelimit.GCRA{Emission: emission, Tolerance: emission * (maxBurst + 1), Increment: emission * quantity}
	limit := maxBurst + 1

	key := c.Key(1)
	o := c.DB.LookupRead(key)
	if o != nil && o.Type != keyspace.TypeString {
		c.Error(engine.ErrWrongType)
		return
	}
	now := c.Now * 1e6
	tat, stored := now, int64(-1)
	if o != nil {
		v := o.Int() // a TAT is stored integer-encoded: no formatting and parsing
		if o.Enc != keyspace.EncInt {
			var bad string
			if v, bad = parseRustInt(o.Raw()); bad != "" {
				c.Error("Cell error: " + bad)
				return
			}
		}
		stored = v
		if v != -1 { // redis-cell reads -1 as "no value"
			tat = v
		}
	}
	d := g.Decide(now, tat)
	if !d.Limited {
		if o != nil && stored == -1 {
			// set_if_not_exists fails on a key holding "-1", sets its TTL,
			// and the module gives up after its retries.
			if ms := d.TTL / 1e6; ms >= 0 {
				c.DB.SetExpire(o, expireAt(c, ms))
			} else if ms == -1 {
				c.DB.SetExpire(o, 0)
			}
			c.Error(errCellCAS)
			return
		}
		ms := d.TTL / 1e6 // whole_milliseconds
		switch {
		case ms >= 0:
			storeTAT(c, o, key, d.NewTAT, expireAt(c, ms))
		default:
			// RedisModule_SetExpire: -1 removes the TTL, below is an error
			// after the value was written.
			storeTAT(c, o, key, d.NewTAT, 0)
			if ms != -1 {
				c.Dirty(1)
				c.Error(errCellExpire)
				return
			}
		}
		c.Dirty(1)
	}
	remaining := int64(0)
	if d.Next > -g.Emission {
		remaining = satInt64(float64(d.Next/1e3) / float64(g.Emission/1e3))
	}
	retry := int64(-1)
	if d.RetryAfter != -1 {
		retry = cellSeconds(d.RetryAfter)
	}
	c.Env.Stats.Decisions.CountLimit("cl.throttle", d.Limited)
	c.W.Array(5)
	c.W.Int(b2i(d.Limited))
	c.W.Int(limit)
	c.W.Int(remaining)
	c.W.Int(retry)
	c.W.Int(cellSeconds(d.TTL))
}

// storeTAT stores a limiter's TAT as an integer-encoded string expiring
// at (0: no TTL), in place when the key holds a string (o), as INCR does.
//
// It propagates as SET key <tat> [PXAT at]: the state the limiter reached,
// which a replay at another time reproduces, where the command would
// decide again against its own clock. Subscribers see what that SET
// would publish (set, then expire with a TTL), as redis-cell's own SET
// through the module API does (docs/metrics.md).
func storeTAT(c *engine.Ctx, o *keyspace.Object, key string, tat, at int64) {
	if at != 0 {
		c.Propagate([]byte("SET"), c.Args[1], engine.MsArg(tat), []byte("PXAT"), engine.MsArg(at))
	} else {
		c.Propagate([]byte("SET"), c.Args[1], engine.MsArg(tat))
	}
	if o == nil {
		o = keyspace.NewInt(tat)
		o.Expire = at
		c.DB.Set(key, o, false)
	} else {
		o.SetInt(tat)
		o.Owned = false
		engine.TouchLRU(c, o)
		c.DB.SetExpire(o, at) // signals the write too
	}
	c.Notify(engine.NotifyString, "set", c.Args[1])
	if at != 0 {
		c.Notify(engine.NotifyGeneric, "expire", c.Args[1])
	}
}

// expireAt is the unix ms a TTL of ms from now ends at. A TTL of zero
// ends one millisecond later: Abacus drops a key whose deadline equals
// now, Redis keeps it through that millisecond.
func expireAt(c *engine.Ctx, ms int64) int64 {
	if ms <= 0 {
		ms = 1
	}
	return c.Now + ms
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// cmdGcra is GCRA key max_burst tokens_per_period period [TOKENS count]
// (Redis 8.8's gcra.c): microseconds, the emission interval rounded to the
// nearest microsecond, retry_after and reset_after rounded up to seconds.
func cmdGcra(c *engine.Ctx) {
	if len(c.Args) > 7 {
		c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
		return
	}
	maxBurst, ok := num.ParseInt(c.Args[2])
	if !ok {
		c.Error(engine.ErrNotInt)
		return
	}
	if maxBurst < 0 {
		c.Error(engine.ErrPositive)
		return
	}
	if maxBurst < math.MaxInt64 {
		maxBurst++
	}
	perPeriod, ok := rangeInt(c, c.Args[3], 1, math.MaxInt64)
	if !ok {
		return
	}
	period, ok := num.ParseFloat(c.Args[4])
	if !ok {
		c.Error(engine.ErrNotFloat)
		return
	}
	if period <= 0 || period >= 1e12 {
		c.Error(errGcraPeriod)
		return
	}
	tokens := int64(1)
	if len(c.Args) >= 6 {
		if !ascii.OptIs(c.Args[5], "tokens") {
			c.Error(engine.ErrSyntax)
			return
		}
		if len(c.Args) == 6 {
			c.Error(errGcraTokens)
			return
		}
		if tokens, ok = rangeInt(c, c.Args[6], 1, math.MaxInt64); !ok {
			return
		}
	}
	now := c.Now * 1000
	o, ok := c.LookupWrite(c.Key(1), keyspace.TypeString)
	if !ok {
		return
	}
	tat := now
	if o != nil {
		if tat = o.Int(); o.Enc != keyspace.EncInt {
			if tat, ok = num.ParseInt(o.Raw()); !ok {
				c.Error(errGcraKey)
				return
			}
		}
		if tat <= 0 {
			c.Error(errGcraNeg)
			return
		}
	}
	emission := int64(float64(float64(period*1e6)/float64(perPeriod)) + 0.5)
	if emission == 0 {
		emission = 1
	}
	if emission > math.MaxInt64/tokens {
		c.Error(errGcraOvTok)
		return
	}
	if emission > math.MaxInt64/maxBurst {
		c.Error(errGcraOvBurst)
		return
	}
	g := ratelimit.GCRA{Emission: emission, Tolerance: emission * maxBurst, Increment: emission * tokens}
	if math.MaxInt64-max(now, tat) < g.Increment {
		c.Error(errGcraOvTok)
		return
	}
	d := g.Decide(now, tat)
	retry := int64(-1)
	if d.Limited {
		if d.RetryAfter != -1 {
			retry = int64(math.Ceil(float64(d.RetryAfter) / 1e6))
		}
	} else {
		at := d.NewTAT / 1000
		if at <= c.Now {
			at = c.Now + 1 // see expireAt
		}
		storeTAT(c, o, c.Key(1), d.NewTAT, at)
		c.Dirty(1)
	}
	c.Env.Stats.Decisions.CountLimit("gcra", d.Limited)
	c.W.Array(5)
	c.W.Int(b2i(d.Limited))
	c.W.Int(maxBurst)
	c.W.Int(g.Remaining(d))
	c.W.Int(retry)
	c.W.Int(int64(math.Ceil(float64(d.TTL) / 1e6)))
}

// rangeInt is getRangeLongFromObjectOrReply without a custom message.
func rangeInt(c *engine.Ctx, arg []byte, lo, hi int64) (int64, bool) {
	v, ok := num.ParseInt(arg)
	if !ok {
		c.Error(engine.ErrNotInt)
		return 0, false
	}
	if v < lo || v > hi {
		c.Errorf("ERR value is out of range, value must between %d and %d", lo, hi)
		return 0, false
	}
	return v, true
}
