package recipes

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Events counts events in windows that slide with the clock ("logins in
// the last minute, the last ten minutes, the last hour").
//
// Native: a time series that keeps Keep, one sample per event with
// duplicates summed (events of one millisecond add up); an event is one
// TS.MADD adding 1. Count is one TS.RANGE over the window aggregated as
// one sum bucket as long as the window: Abacus keeps each chunk's count
// and sum (and running totals over the chunks), so the server decodes
// only the two chunks at the window's edges, however many events the
// window holds; small chunks (CHUNK_SIZE 128, about 60 events) keep the
// edges cheap. The window ends at now: an event timestamped after now (a
// client clock ahead) is not counted until now passes it, as in the
// fallback. Series retention drops old samples.
//
// Fallback: a sorted set, one member per event (its time as the score, a
// random id to keep members unique), trimmed to Keep on every write;
// counts are ZCOUNT.
type Events struct {
	c      redis.UniversalClient
	key    string
	keyArg any // key, boxed once for the commands' argument lists
	keep   time.Duration
	opts   Options
	mode   modeOf
	setup  setupOnce
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
		return madd(ctx, e.c, &e.setup, e.create, []any{"TS.MADD", e.key, now, 1})
	}
	_, err = e.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, e.key, redis.Z{Score: float64(now), Member: strconv.FormatInt(now, 10) + ":" + randomID()})
		p.ZRemRangeByScore(ctx, e.key, "-inf", "("+strconv.FormatInt(now-e.keep.Milliseconds(), 10))
		return nil
	})
	return err
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
		return e.c.ZCount(ctx, e.key, strconv.FormatInt(from, 10), strconv.FormatInt(now, 10)).Result()
	}
	if from < 0 {
		from = 0
	}
	if from > now {
		return 0, nil
	}
	// One bucket from 0 that ends after any timestamp holds the window's
	// samples. The arguments are boxed once where they can be (the key,
	// the constants) and the reply is read in place: at 50 goroutines the
	// client's CPU bounds a count as much as the server's does.
	r, err := e.c.Do(ctx, "TS.RANGE", e.keyArg, from, now, "AGGREGATION", "sum", eventsBucket).Result()
	if err != nil {
		return 0, ignoreErr(err, "the key does not exist")
	}
	return sumOfOneBucket(r)
}

// eventsBucket is Count's bucket duration: longer than any timestamp,
// and short enough that a bucket's end does not overflow.
const eventsBucket int64 = 1 << 62

// sumOfOneBucket reads TS.RANGE's reply of at most one aggregated
// bucket: its value, or 0 when the window holds no sample.
func sumOfOneBucket(r any) (int64, error) {
	list, ok := r.([]any)
	if !ok || len(list) > 1 {
		return 0, fmt.Errorf("recipes: unexpected range reply %v", r)
	}
	if len(list) == 0 {
		return 0, nil
	}
	pair, ok := list[0].([]any)
	if !ok || len(pair) != 2 {
		return 0, fmt.Errorf("recipes: unexpected sample %v", list[0])
	}
	v, err := sampleValue(pair[1])
	return int64(v), err
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
