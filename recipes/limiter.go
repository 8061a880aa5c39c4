package recipes

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed lua/fixed.lua
	fixedLua string
	//go:embed lua/sliding.lua
	slidingLua string
	//go:embed lua/gcra.lua
	gcraLua string

	fixedScript   = redis.NewScript(fixedLua)
	slidingScript = redis.NewScript(slidingLua)
	gcraScript    = redis.NewScript(gcraLua)
)

// FallbackScripts returns the Lua source of the sliding-window and GCRA
// fallbacks, the limiters RATELIMIT.SLIDING and CL.THROTTLE replace (the
// rate-limit benchmark runs them on redis-server, and internal/metrics
// holds the commands to their decisions).
func FallbackScripts() (sliding, gcra string) { return slidingLua, gcraLua }

// Decision is a limiter's answer to one request.
type Decision struct {
	Allowed bool
	// Remaining is what may still be taken now (the least over the
	// limits and keys asked).
	Remaining int64
	// RetryAfter is how long until a request of the same weight would
	// pass: 0 when allowed, -1 when it never can (the weight is over the
	// limit).
	RetryAfter time.Duration
	// ResetAfter (GCRA) is how long until the bucket is full again.
	ResetAfter time.Duration
}

// FixedWindow allows Limit units of weight per key in each window of
// Window, windows aligned to the Unix epoch (the window's key carries its
// number, so no clock but the client's decides which window a request is
// in). A request that would pass the limit is refused and counts nothing.
//
// Native: INCREX key BYINT w UBOUND limit PX ttl ENX, one command.
// Fallback: GET, INCRBY and PEXPIRE NX in a script.
//
// Calls made at the same time through one client share a pipeline
// (combine.go), one command or script per call, each with its own
// arguments (and clock reading, where the client's clock decides).
type FixedWindow struct {
	c      redis.UniversalClient
	prefix string
	limit  int64
	window time.Duration
	opts   Options
	mode   modeOf
	allow  combinerRef // the client's combiner of Allow calls
}

// NewFixedWindow returns a limiter whose keys are prefix:<key>:<window>.
func NewFixedWindow(c redis.UniversalClient, prefix string, limit int64, window time.Duration, opts Options) *FixedWindow {
	return &FixedWindow{c: c, prefix: prefix, limit: limit, window: window, opts: opts}
}

// Mode reports the path in use, detecting it if needed.
func (l *FixedWindow) Mode(ctx context.Context) (Mode, error) {
	return l.mode.get(ctx, l.c, l.opts.Mode)
}

// Allow counts a request of the given weight against key's window.
func (l *FixedWindow) Allow(ctx context.Context, key string, weight int64) (Decision, error) {
	m, err := l.Mode(ctx)
	if err != nil {
		return Decision{}, err
	}
	now := l.opts.nowMs()
	w := l.window.Milliseconds()
	idx := now / w
	left := (idx+1)*w - now
	k := l.prefix + ":" + key + ":" + strconv.FormatInt(idx, 10)
	cmd, err := pipeOne(ctx, l.c, &l.allow, func(ctx context.Context, p redis.Pipeliner) *redis.Cmd {
		if m == Native {
			return p.Do(ctx, "INCREX", k, "BYINT", weight, "UBOUND", l.limit, "PX", left, "ENX")
		}
		return fixedScript.EvalSha(ctx, p, []string{k}, weight, l.limit, left)
	})
	if err != nil {
		return Decision{}, err
	}
	r, err := cmd.Int64Slice()
	if err != nil {
		return Decision{}, err
	}
	if len(r) != 2 {
		return Decision{}, fmt.Errorf("recipes: unexpected fixed-window reply %v", r)
	}
	d := Decision{Allowed: r[1] == weight && r[0] <= l.limit, Remaining: max(l.limit-r[0], 0)}
	switch {
	case weight > l.limit:
		d.RetryAfter = -1
	case !d.Allowed:
		d.RetryAfter = time.Duration(left) * time.Millisecond
	}
	return d, nil
}

// Limit is one window of a SlidingWindow: at most Max in any Window,
// counted in sub-buckets of Precision (the window slides in steps of
// Precision; a Precision equal to Window makes it fixed).
type Limit struct {
	Window    time.Duration
	Max       int64
	Precision time.Duration
}

// SlidingWindow checks several limits at once over several keys (a user
// and an IP address): a request counts against every limit of every key,
// or, refused, against none.
//
// Native: RATELIMIT.SLIDING, one command. Fallback: the classic
// sliding-window script over the same hash layout, making the same
// decisions.
//
// Calls made at the same time through one client share a pipeline
// (combine.go), one command or script per call, each with its own
// arguments (and clock reading, where the client's clock decides).
type SlidingWindow struct {
	c      redis.UniversalClient
	limits []Limit
	opts   Options
	mode   modeOf
	allow  combinerRef // the client's combiner of Allow calls
}

// SlidingDecision is a SlidingWindow's answer: per limit, in the order
// given, the remaining capacity and the time until a request of the same
// weight would pass (-1: never).
type SlidingDecision struct {
	Allowed bool
	Limits  []Decision
}

// NewSlidingWindow returns a limiter with the given limits.
func NewSlidingWindow(c redis.UniversalClient, limits []Limit, opts Options) *SlidingWindow {
	return &SlidingWindow{c: c, limits: limits, opts: opts}
}

// Mode reports the path in use, detecting it if needed.
func (l *SlidingWindow) Mode(ctx context.Context) (Mode, error) {
	return l.mode.get(ctx, l.c, l.opts.Mode)
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

// Allow counts a request of the given weight (0 looks without counting)
// against every key.
func (l *SlidingWindow) Allow(ctx context.Context, weight int64, keys ...string) (SlidingDecision, error) {
	m, err := l.Mode(ctx)
	if err != nil {
		return SlidingDecision{}, err
	}
	now := strconv.FormatFloat(float64(l.opts.nowMs())/1000, 'f', 3, 64)
	var args []any
	if m == Native {
		args = []any{"RATELIMIT.SLIDING", len(keys)}
		for _, k := range keys {
			args = append(args, k)
		}
		args = append(args, "LIMITS", len(l.limits))
		for _, x := range l.limits {
			args = append(args, secs(x.Window), x.Max, secs(x.Precision))
		}
		args = append(args, "WEIGHT", weight, "NOW", now)
	} else {
		args = []any{weight, now}
		for _, x := range l.limits {
			args = append(args, secs(x.Window), x.Max, secs(x.Precision))
		}
	}
	cmd, err := pipeOne(ctx, l.c, &l.allow, func(ctx context.Context, p redis.Pipeliner) *redis.Cmd {
		if m == Native {
			return p.Do(ctx, args...)
		}
		return slidingScript.EvalSha(ctx, p, keys, args...)
	})
	if err != nil {
		return SlidingDecision{}, err
	}
	r, err := cmd.Int64Slice()
	if err != nil {
		return SlidingDecision{}, err
	}
	if len(r) != 1+2*len(l.limits) {
		return SlidingDecision{}, fmt.Errorf("recipes: unexpected sliding-window reply %v", r)
	}
	d := SlidingDecision{Allowed: r[0] == 0, Limits: make([]Decision, len(l.limits))}
	for i := range l.limits {
		wait := time.Duration(r[2+2*i]) * time.Millisecond
		if r[2+2*i] < 0 {
			wait = -1
		}
		d.Limits[i] = Decision{Allowed: r[2+2*i] == 0, Remaining: r[1+2*i], RetryAfter: wait}
	}
	return d, nil
}

// GCRA is a token bucket by the generic cell rate algorithm: Rate
// requests per Period, bursts of Burst more allowed, one string key per
// limiter holding the theoretical arrival time.
//
// Native: CL.THROTTLE (redis-cell's command), on the server's clock.
// Fallback: the same algorithm in a script, on the client's clock
// (Options.Now). Period is whole seconds, as CL.THROTTLE takes it.
//
// Calls made at the same time through one client share a pipeline
// (combine.go), one command or script per call, each with its own
// arguments (and clock reading, where the client's clock decides).
type GCRA struct {
	c           redis.UniversalClient
	burst, rate int64
	period      time.Duration
	opts        Options
	mode        modeOf
	allow       combinerRef // the client's combiner of Allow calls
}

// NewGCRA returns a token bucket of the given burst, rate and period.
func NewGCRA(c redis.UniversalClient, burst, rate int64, period time.Duration, opts Options) *GCRA {
	return &GCRA{c: c, burst: burst, rate: rate, period: period.Truncate(time.Second), opts: opts}
}

// Mode reports the path in use, detecting it if needed.
func (l *GCRA) Mode(ctx context.Context) (Mode, error) { return l.mode.get(ctx, l.c, l.opts.Mode) }

// Allow takes tokens (0 only looks) from key's bucket. RetryAfter and
// ResetAfter are whole seconds, rounded up, as redis-cell reports them.
func (l *GCRA) Allow(ctx context.Context, key string, tokens int64) (Decision, error) {
	m, err := l.Mode(ctx)
	if err != nil {
		return Decision{}, err
	}
	period := int64(l.period / time.Second)
	now := l.opts.nowMs()
	cmd, err := pipeOne(ctx, l.c, &l.allow, func(ctx context.Context, p redis.Pipeliner) *redis.Cmd {
		if m == Native {
			return p.Do(ctx, "CL.THROTTLE", key, l.burst, l.rate, period, tokens)
		}
		return gcraScript.EvalSha(ctx, p, []string{key}, l.burst, l.rate, period, tokens, now)
	})
	if err != nil {
		return Decision{}, err
	}
	r, err := cmd.Int64Slice()
	if err != nil {
		return Decision{}, err
	}
	if len(r) != 5 {
		return Decision{}, fmt.Errorf("recipes: unexpected GCRA reply %v", r)
	}
	d := Decision{Allowed: r[0] == 0, Remaining: r[2], ResetAfter: time.Duration(r[4]) * time.Second}
	switch {
	case r[3] >= 0:
		d.RetryAfter = time.Duration(r[3]) * time.Second
	case !d.Allowed:
		d.RetryAfter = -1
	}
	return d, nil
}
