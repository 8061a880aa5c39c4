package recipes

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/timebox.lua
var timeboxLua string

var timeboxScript = redis.NewScript(timeboxLua)

// Timebox keeps members with points for a bounded time after their last
// activity ("the players active in the last ten minutes, with their
// points"). A member that comes back after its time starts from nothing.
//
// Native: one hash, a field per member whose expiry (HPEXPIREAT) is set
// again on every activity; the server drops members by itself. Fallback:
// the seed's two sorted sets (points and last activity) in a script that
// first removes the members whose time is up.
//
// Adds made at the same time through one client share round trips
// (combine.go): natively, their HINCRBY and HPEXPIREAT pairs go in one
// MULTI; in the fallback, their scripts in one pipeline. Each add still
// runs with nothing between its commands, on its own clock reading.
type Timebox struct {
	c    redis.UniversalClient
	key  string
	stay time.Duration
	opts Options
	mode modeOf
	add  combinerRef // the client's combiner of Add calls
}

// NewTimebox returns the box named key (the fallback also uses
// key:seen) whose members stay for stay after their last activity.
func NewTimebox(c redis.UniversalClient, key string, stay time.Duration, opts Options) *Timebox {
	return &Timebox{c: c, key: oneSlot(key, c), stay: stay, opts: opts}
}

// Mode reports the path in use, detecting it if needed.
func (b *Timebox) Mode(ctx context.Context) (Mode, error) { return b.mode.get(ctx, b.c, b.opts.Mode) }

// Add gives member points (it may be 0: a sign of life) and returns its
// total.
func (b *Timebox) Add(ctx context.Context, member string, points int64) (int64, error) {
	m, err := b.Mode(ctx)
	if err != nil {
		return 0, err
	}
	now := b.opts.nowMs()
	if m == Native {
		var incr *redis.IntCmd
		_, err := combined(ctx, b.c, &b.add, kindMulti, sendMulti, piped(func(ctx context.Context, p redis.Pipeliner) func() error {
			incr = p.HIncrBy(ctx, b.key, member, points)
			exp := p.Do(ctx, "HPEXPIREAT", b.key, now+b.stay.Milliseconds(), "FIELDS", 1, member)
			return func() error { return firstErr([]redis.Cmder{incr, exp}) }
		}))
		if err != nil {
			return 0, err
		}
		return incr.Val(), nil
	}
	cmd, err := pipeOne(ctx, b.c, &b.add, func(ctx context.Context, p redis.Pipeliner) *redis.Cmd {
		return timeboxScript.EvalSha(ctx, p, []string{b.key, b.key + ":seen"}, now, b.stay.Milliseconds(), member, points)
	})
	if err != nil {
		return 0, err
	}
	return cmd.Int64()
}

// Members returns the members in the box and their points.
func (b *Timebox) Members(ctx context.Context) (map[string]int64, error) {
	m, err := b.Mode(ctx)
	if err != nil {
		return nil, err
	}
	var flat []string
	if m == Native {
		h, err := b.c.HGetAll(ctx, b.key).Result()
		if err != nil {
			return nil, err
		}
		out := make(map[string]int64, len(h))
		for k, v := range h {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("recipes: timebox %s member %s: %w", b.key, k, err)
			}
			out[k] = n
		}
		return out, nil
	}
	flat, err = timeboxScript.Run(ctx, b.c, []string{b.key, b.key + ":seen"}, b.opts.nowMs(), b.stay.Milliseconds()).StringSlice()
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		n, err := strconv.ParseFloat(flat[i+1], 64)
		if err != nil {
			return nil, err
		}
		out[flat[i]] = int64(n)
	}
	return out, nil
}

// Len returns the number of members in the box.
func (b *Timebox) Len(ctx context.Context) (int, error) {
	m, err := b.Mode(ctx)
	if err != nil {
		return 0, err
	}
	if m == Native {
		n, err := b.c.HLen(ctx, b.key).Result()
		return int(n), err
	}
	all, err := b.Members(ctx)
	return len(all), err
}
