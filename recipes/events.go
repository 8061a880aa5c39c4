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
// duplicates summed (events of one millisecond add up), and beside it a
// series per level (one second, one minute, shorter than Keep) holding
// the events per slice of that length; an event is one TS.MADD adding 1
// to all of them. Count sums the raw samples only up to the first whole
// second of the window, the seconds up to its first whole minute (or to
// now, for windows under two minutes), and minutes after that, in one
// round trip: the samples it walks are bounded by the levels (under a
// second of raw samples, 120 seconds, and the window's minutes), not by
// the events in the window, which a sum over the raw series alone would
// walk (13 ns of server CPU each: 3 ms per count over an hour of 100,000
// events, against 14 µs this way). The slices
// containing now are counted whole: an event timestamped after now (a
// client clock ahead) counts in them, where the fallback leaves it out.
// Series retention drops old samples and slices.
//
// Fallback: a sorted set, one member per event (its time as the score, a
// random id to keep members unique), trimmed to Keep on every write;
// counts are ZCOUNT.
type Events struct {
	c      redis.UniversalClient
	key    string
	keep   time.Duration
	opts   Options
	mode   modeOf
	setup  setupOnce
	levels []int64 // slice lengths in ms, increasing, each shorter than keep
}

// eventLevels are the slice lengths of Events' native levels.
var eventLevels = []int64{1000, 60_000}

// NewEvents returns the events of key, remembered for keep (the longest
// window that Count will be asked for). The native levels' series are
// key:1000 and key:60000.
func NewEvents(c redis.UniversalClient, key string, keep time.Duration, opts Options) *Events {
	e := &Events{c: c, key: oneSlot(key, c), keep: keep, opts: opts}
	for _, l := range eventLevels {
		if l < keep.Milliseconds() {
			e.levels = append(e.levels, l)
		}
	}
	return e
}

// Mode reports the path in use, detecting it if needed.
func (e *Events) Mode(ctx context.Context) (Mode, error) { return e.mode.get(ctx, e.c, e.opts.Mode) }

func (e *Events) levelKey(i int) string {
	if i == 0 {
		return e.key
	}
	return e.key + ":" + strconv.FormatInt(e.levels[i-1], 10)
}

// create makes the native series; "already exists" is fine.
func (e *Events) create(ctx context.Context) error {
	return e.setup.do(func() error {
		keep := e.keep.Milliseconds()
		cmds, _ := e.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			// Small chunks: a range starts decoding at its first chunk's
			// first sample, so a chunk's length bounds the samples a count
			// decodes before its range begins.
			p.Do(ctx, "TS.CREATE", e.key, "RETENTION", keep, "DUPLICATE_POLICY", "SUM", "CHUNK_SIZE", 512)
			for i, l := range e.levels {
				// A slice that began before the window may hold events in it.
				p.Do(ctx, "TS.CREATE", e.levelKey(i+1), "RETENTION", keep+l, "DUPLICATE_POLICY", "SUM", "CHUNK_SIZE", 256)
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

// Record counts one event now.
func (e *Events) Record(ctx context.Context) error {
	m, err := e.Mode(ctx)
	if err != nil {
		return err
	}
	now := e.opts.nowMs()
	if m == Native {
		args := []any{"TS.MADD", e.key, now, 1}
		for i, l := range e.levels {
			args = append(args, e.levelKey(i+1), now-now%l, 1)
		}
		return madd(ctx, e.c, &e.setup, e.create, args)
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
	// Level i answers [lo, up to the first whole slice of level i+1), the
	// last level the rest, through now.
	type part struct {
		level  int
		lo, hi int64
	}
	var parts []part
	lo, level := from, 0
	for ; level < len(e.levels); level++ {
		l := e.levels[level]
		next := (lo + l - 1) / l * l
		// Each part is a command of its own, costing the server about as
		// much as decoding 50 samples: a level climbs to the next only
		// when that spares more samples than its command costs (raw
		// samples always climb, however few they may be).
		if next > now || level > 0 && now-next < 2*l {
			break
		}
		if next > lo {
			parts = append(parts, part{level, lo, next - 1})
		}
		lo = next
	}
	parts = append(parts, part{level, lo, now})
	cmds, _ := e.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, pt := range parts {
			// One bucket as long as the part, aligned at its start.
			p.Do(ctx, "TS.RANGE", e.levelKey(pt.level), pt.lo, pt.hi, "AGGREGATION", "sum", pt.hi-pt.lo+1, "ALIGN", "-")
		}
		return nil
	})
	var n float64
	for _, c := range cmds {
		r, err := c.(*redis.Cmd).Result()
		if err != nil {
			if ignoreErr(err, "the key does not exist") == nil {
				continue
			}
			return 0, err
		}
		pts, err := parseSamples(r)
		if err != nil {
			return 0, err
		}
		for _, p := range pts {
			n += p.V
		}
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
