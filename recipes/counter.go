package recipes

import (
	"context"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Precision is one resolution of a Counter: slices of Step, Keep of them
// kept (the one still open included).
type Precision struct {
	Step time.Duration
	Keep int
}

// DefaultPrecisions are Redis in Action's: 1 s, 5 s, 1 min, 5 min, 1 h,
// 5 h and 1 day, 120 slices each.
var DefaultPrecisions = []Precision{
	{time.Second, 120}, {5 * time.Second, 120}, {time.Minute, 120}, {5 * time.Minute, 120},
	{time.Hour, 120}, {5 * time.Hour, 120}, {24 * time.Hour, 120},
}

// Counter counts hits at several precisions at once, each keeping its
// own number of slices. Slices are aligned to the Unix epoch (a day is a
// UTC day).
//
// Native: a time series per precision (RETENTION Step*Keep,
// DUPLICATE_POLICY SUM), a sample per slice at its start; a hit is one
// TS.MADD adding n at the current slice of every precision. Fallback: a
// hash per precision, a field per slice, one HINCRBY per precision per
// hit, and Cleanup, the daemon's pass, to delete old slices.
//
// The native path writes the slices itself rather than one raw series
// with a compaction rule per precision: a hit in the same millisecond as
// the previous one, or from a client whose clock is a little behind,
// makes the server aggregate each rule's open bucket again from the raw
// samples, up to a day of them for a daily precision (docs/metrics.md,
// "Compatibility notes"), and that made a hit 50 µs of server CPU in
// bench/recipesbench.
//
// Hits counted at the same time through one client share round trips
// (combine.go): natively, their samples go in one TS.MADD (each hit's
// samples still added together, in one command); in the fallback, their
// HINCRBYs in one pipeline, as each hit's were alone.
type Counter struct {
	c     redis.UniversalClient
	key   string
	keys  []any // each precision's key, boxed once for TS.MADD
	precs []Precision
	opts  Options
	mode  modeOf
	setup setupOnce
	incr  combinerRef // the client's combiner of Incr calls
}

// NewCounter returns the counter named key. Its keys are key:<step in ms>,
// one per precision.
func NewCounter(c redis.UniversalClient, key string, precs []Precision, opts Options) *Counter {
	k := &Counter{c: c, key: oneSlot(key, c), precs: precs, opts: opts}
	for _, pr := range precs {
		k.keys = append(k.keys, k.sliceKey(pr.Step))
	}
	return k
}

// Mode reports the path in use, detecting it if needed.
func (k *Counter) Mode(ctx context.Context) (Mode, error) { return k.mode.get(ctx, k.c, k.opts.Mode) }

func (k *Counter) sliceKey(step time.Duration) string {
	return k.key + ":" + strconv.FormatInt(step.Milliseconds(), 10)
}

// create makes the native series; "already exists" answers from an
// earlier process are fine.
func (k *Counter) create(ctx context.Context) error {
	return k.setup.do(func() error {
		cmds, _ := k.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, pr := range k.precs {
				p.Do(ctx, "TS.CREATE", k.sliceKey(pr.Step), "RETENTION", pr.Step.Milliseconds()*int64(pr.Keep), "DUPLICATE_POLICY", "SUM")
			}
			return nil
		})
		for _, c := range cmds {
			if err := ignoreErr(c.Err(), "already"); err != nil {
				return err
			}
		}
		return nil
	})
}

// Incr adds n to every precision's current slice.
func (k *Counter) Incr(ctx context.Context, n int64) error {
	m, err := k.Mode(ctx)
	if err != nil {
		return err
	}
	now := k.opts.nowMs()
	if m == Native {
		in := &maddIn{make([]any, 0, 3*len(k.precs))}
		for i, pr := range k.precs {
			st := pr.Step.Milliseconds()
			in.samples = append(in.samples, k.keys[i], now-now%st, n)
		}
		return onSeries(ctx, &k.setup, k.create, func() error {
			_, err := combined(ctx, k.c, &k.incr, kindMadd, sendMadd, in)
			return err
		})
	}
	_, err = combined(ctx, k.c, &k.incr, kindPipe, sendPiped, piped(func(ctx context.Context, p redis.Pipeliner) func() error {
		cmds := make([]redis.Cmder, len(k.precs))
		for i, pr := range k.precs {
			st := pr.Step.Milliseconds()
			cmds[i] = p.HIncrBy(ctx, k.keys[i].(string), strconv.FormatInt(now-now%st, 10), n)
		}
		return func() error { return firstErr(cmds) }
	}))
	return err
}

// Slices returns the slices of the given step among the last n (the open
// one included), oldest first; slices without hits are left out. n is
// at most the precision's Keep.
func (k *Counter) Slices(ctx context.Context, step time.Duration, n int) ([]Point, error) {
	m, err := k.Mode(ctx)
	if err != nil {
		return nil, err
	}
	now := k.opts.nowMs()
	st := step.Milliseconds()
	from := now - now%st - int64(n-1)*st
	if m == Native {
		if err := k.create(ctx); err != nil {
			return nil, err
		}
		r, err := k.c.Do(ctx, "TS.RANGE", k.sliceKey(step), max(from, 0), now).Result()
		if err != nil {
			return nil, err
		}
		return parseSamples(r)
	}
	h, err := k.c.HGetAll(ctx, k.sliceKey(step)).Result()
	if err != nil {
		return nil, err
	}
	out := make([]Point, 0, n)
	for f, v := range h {
		t, err1 := strconv.ParseInt(f, 10, 64)
		x, err2 := strconv.ParseFloat(v, 64)
		if err1 != nil || err2 != nil || t < from || t > now {
			continue
		}
		out = append(out, Point{T: time.UnixMilli(t), V: x})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].T.Before(out[j].T) })
	return out, nil
}

// Cleanup deletes, in the fallback's hashes, the slices older than each
// precision keeps (the cleanup daemon's pass; run it every so often). The
// native compactions' retention does this by itself.
func (k *Counter) Cleanup(ctx context.Context) error {
	m, err := k.Mode(ctx)
	if err != nil || m == Native {
		return err
	}
	now := k.opts.nowMs()
	for _, pr := range k.precs {
		st := pr.Step.Milliseconds()
		oldest := now - now%st - int64(pr.Keep-1)*st
		fields, err := k.c.HKeys(ctx, k.sliceKey(pr.Step)).Result()
		if err != nil {
			return err
		}
		var old []string
		for _, f := range fields {
			if t, err := strconv.ParseInt(f, 10, 64); err == nil && t < oldest {
				old = append(old, f)
			}
		}
		if len(old) > 0 {
			if err := k.c.HDel(ctx, k.sliceKey(pr.Step), old...).Err(); err != nil {
				return err
			}
		}
	}
	return nil
}
