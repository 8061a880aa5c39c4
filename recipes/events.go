package recipes

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Events counts events in windows that slide with the clock ("logins in
// the last minute, the last ten minutes, the last hour").
//
// Native: a time series that keeps Keep, one sample per event with
// duplicates summed (events of one millisecond add up); an event is one
// TS.MADD adding 1. Count is one TS.SUM over the window (Abacus's sum of
// a range's values, one value in the reply, as TS.RANGE's single sum
// bucket would give): Abacus keeps each chunk's count and sum (and
// running totals over the chunks), so the server decodes
// only the two chunks at the window's edges, however many events the
// window holds; small chunks (CHUNK_SIZE 128, about 60 events) keep the
// edges cheap. The window ends at now: an event timestamped after now (a
// client clock ahead) is not counted until now passes it, as in the
// fallback. Series retention drops old samples.
//
// Fallback: a sorted set, one member per event (its time as the score, a
// random id to keep members unique), trimmed to Keep on every write;
// counts are ZCOUNT.
//
// Calls made at the same time through one client share round trips
// (combine.go): natively, the events of any number of series go in one
// TS.MADD; in the fallback, their ZADDs and trims in one MULTI. Counts
// share a pipeline, one command per key and window end.
type Events struct {
	c      redis.UniversalClient
	key    string
	keyArg any // key, boxed once for the commands' argument lists
	keep   time.Duration
	opts   Options
	mode   modeOf
	setup  setupOnce
	// the client's combiners of Record and Count calls (one path's each)
	record, count combinerRef
}

// eventChunkSize is the native series' CHUNK_SIZE: a count decodes at
// most two chunks, each about this many bytes (2 bytes an event at
// irregular milliseconds).
const eventChunkSize = 128

// NewEvents returns the events of key, remembered for keep (the longest
// window that Count will be asked for).
func NewEvents(c redis.UniversalClient, key string, keep time.Duration, opts Options) *Events {
	k := oneSlot(key, c)
	return &Events{c: c, key: k, keyArg: k, keep: keep, opts: opts}
}

// Mode reports the path in use, detecting it if needed.
func (e *Events) Mode(ctx context.Context) (Mode, error) { return e.mode.get(ctx, e.c, e.opts.Mode) }

// create makes the native series; "already exists" is fine.
func (e *Events) create(ctx context.Context) error {
	return e.setup.do(func() error {
		err := e.c.Do(ctx, "TS.CREATE", e.key, "RETENTION", e.keep.Milliseconds(), "DUPLICATE_POLICY", "SUM", "CHUNK_SIZE", eventChunkSize).Err()
		return ignoreErr(err, "already")
	})
}

// Record counts one event now.
func (e *Events) Record(ctx context.Context) error {
	m, err := e.Mode(ctx)
	if err != nil {
		return err
	}
	now := e.opts.nowMs()
	if m == Native {
		return onSeries(ctx, &e.setup, e.create, func() error {
			_, err := combined(ctx, e.c, &e.record, kindMadd, sendMadd, &maddIn{[]any{e.keyArg, now, 1}})
			return err
		})
	}
	member, cut := strconv.FormatInt(now, 10)+":"+randomID(), "("+strconv.FormatInt(now-e.keep.Milliseconds(), 10)
	_, err = combined(ctx, e.c, &e.record, kindMulti, sendMulti, piped(func(ctx context.Context, p redis.Pipeliner) func() error {
		cmds := []redis.Cmder{
			p.ZAdd(ctx, e.key, redis.Z{Score: float64(now), Member: member}),
			p.ZRemRangeByScore(ctx, e.key, "-inf", cut),
		}
		return func() error { return firstErr(cmds) }
	}))
	return err
}

// eventIn is one Count call: the key (boxed once, or a string for the
// fallback's typed commands), the window's end and its first millisecond.
type eventIn struct {
	key  any
	t    int64
	from int64
}

// Count returns the events of the last window: those recorded after
// now - window and not after now. A window longer than keep counts what
// is kept.
func (e *Events) Count(ctx context.Context, window time.Duration) (int64, error) {
	m, err := e.Mode(ctx)
	if err != nil {
		return 0, err
	}
	now := e.opts.nowMs()
	from := now - window.Milliseconds() + 1
	if m == Fallback {
		return combined(ctx, e.c, &e.count, "events.count.fallback", countFallback, eventIn{key: e.key, t: now, from: from})
	}
	if from < 0 {
		from = 0
	}
	if from > now {
		return 0, nil
	}
	return combined(ctx, e.c, &e.count, "events.count", countNative, eventIn{key: e.keyArg, t: now, from: from})
}

// countNative counts each call's window with TS.SUM: the sum of the
// window's samples, one value in the reply, read by go-redis without
// allocating (TS.RANGE's list of one [timestamp, value] pair cost both
// ends more than the fallback's ZCOUNT).
func countNative(ctx context.Context, c redis.UniversalClient, calls []*call) {
	countEach(ctx, c, calls, func(p cmdable, in eventIn) func() (int64, error) {
		cmd := redis.NewFloatCmd(ctx, "TS.SUM", in.key, in.from, in.t)
		_ = p.Process(ctx, cmd) // the error is cmd's, read below
		return func() (int64, error) {
			v, err := cmd.Result()
			if err != nil {
				return 0, ignoreErr(err, "the key does not exist")
			}
			return int64(v), nil
		}
	})
}

// countFallback counts each call's window with ZCOUNT.
func countFallback(ctx context.Context, c redis.UniversalClient, calls []*call) {
	countEach(ctx, c, calls, func(p cmdable, in eventIn) func() (int64, error) {
		return p.ZCount(ctx, in.key.(string), strconv.FormatInt(in.from, 10), strconv.FormatInt(in.t, 10)).Result
	})
}

// cmdable is what a client and a pipeline both have.
type cmdable interface {
	redis.Cmdable
	Do(ctx context.Context, args ...any) *redis.Cmd
	Process(ctx context.Context, cmd redis.Cmder) error
}

// countEach answers calls with one command per distinct window (calls
// made in the same millisecond on the same key share theirs): count sends
// the command for in on p and returns how to read its answer. A single
// command is sent alone, several in one pipeline.
func countEach(ctx context.Context, c redis.UniversalClient, calls []*call, count func(p cmdable, in eventIn) func() (int64, error)) {
	if len(calls) == 1 {
		calls[0].n, calls[0].err = count(c, calls[0].in.(eventIn))()
		return
	}
	var (
		ins     []eventIn
		results []func() (int64, error)
	)
	of := make([]int, len(calls)) // each call's window, in ins
	_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error {
	next:
		for i, cl := range calls {
			in := cl.in.(eventIn)
			for j := range ins {
				if ins[j] == in {
					of[i] = j
					continue next
				}
			}
			of[i] = len(ins)
			ins = append(ins, in)
			results = append(results, count(p, in))
		}
		return nil
	})
	for i, cl := range calls {
		cl.n, cl.err = results[of[i]]()
	}
}

// Preen removes the events older than keep. The fallback's writes preen
// as they go, so only a key that stopped receiving events needs it; the
// native series' retention does this by itself and Preen does nothing.
func (e *Events) Preen(ctx context.Context) error {
	m, err := e.Mode(ctx)
	if err != nil || m == Native {
		return err
	}
	return e.c.ZRemRangeByScore(ctx, e.key, "-inf", "("+strconv.FormatInt(e.opts.nowMs()-e.keep.Milliseconds(), 10)).Err()
}
