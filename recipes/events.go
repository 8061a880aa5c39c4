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
	c     redis.UniversalClient
	key   string
	keep  time.Duration
	opts  Options
	mode  modeOf
	setup setupOnce
}

// eventChunkSize is the native series' CHUNK_SIZE: a count decodes at
// most two chunks, each about this many bytes (2 bytes an event at
// irregular milliseconds).
const eventChunkSize = 128

// NewEvents returns the events of key, remembered for keep (the longest
// window that Count will be asked for).
func NewEvents(c redis.UniversalClient, key string, keep time.Duration, opts Options) *Events {
	return &Events{c: c, key: oneSlot(key, c), keep: keep, opts: opts}
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
	// One bucket as long as the window, aligned at its start.
	r, err := e.c.Do(ctx, "TS.RANGE", e.key, from, now, "AGGREGATION", "sum", now-from+1, "ALIGN", "-").Result()
	if err != nil {
		return 0, ignoreErr(err, "the key does not exist")
	}
	pts, err := parseSamples(r)
	if err != nil {
		return 0, err
	}
	var n float64
	for _, p := range pts {
		n += p.V
	}
	return int64(n), nil
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
