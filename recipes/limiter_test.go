package recipes

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// TestFixedWindow checks the fixed window against a model, and that both
// servers answer alike.
func TestFixedWindow(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		const limit = 10
		l := NewFixedWindow(e.client(t, 0), "rl", limit, time.Minute, e.opts)
		m, err := l.Mode(ctx)
		e.checkMode(t, m, err)
		rng := rand.New(rand.NewSource(4))
		used := map[string]int64{}
		var log []string
		for i := 0; i < 400; i++ {
			e.advance(time.Duration(rng.Intn(4000)) * time.Millisecond)
			user := fmt.Sprint("u", rng.Intn(3))
			w := int64(rng.Intn(4))
			if rng.Intn(50) == 0 {
				w = limit + 1
			}
			d, err := l.Allow(ctx, user, w)
			must(t, err)
			now := e.opts.Now().UnixMilli()
			k := fmt.Sprint(user, now/60000)
			ok := used[k]+w <= limit
			if ok {
				used[k] += w
			}
			if d.Allowed != ok || d.Remaining != limit-used[k] {
				t.Fatalf("request %d (%s, %d): %+v, want allowed %v remaining %d", i, user, w, d, ok, limit-used[k])
			}
			if w > limit && d.RetryAfter != -1 || ok && d.RetryAfter != 0 {
				t.Fatalf("request %d: retry after %v", i, d.RetryAfter)
			}
			log = append(log, fmt.Sprintf("%+v", d))
		}
		same(t, e, log)
	})
}

// TestSlidingWindow runs several limits over two keys with random
// weights and gaps: the counts never pass a limit over any window, and
// both servers answer alike.
func TestSlidingWindow(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		limits := []Limit{{time.Second, 10, 100 * time.Millisecond}, {time.Minute, 100, 5 * time.Second}, {time.Hour, 1000, time.Minute}}
		l := NewSlidingWindow(e.client(t, 0), limits, e.opts)
		m, err := l.Mode(ctx)
		e.checkMode(t, m, err)
		rng := rand.New(rand.NewSource(5))
		var log []string
		type req struct {
			ms, w int64
			keys  []string
		}
		var allowed []req
		for i := 0; i < 800; i++ {
			switch r := rng.Intn(10); {
			case r < 6:
				e.advance(time.Duration(rng.Intn(300)) * time.Millisecond)
			case r < 9:
				e.advance(time.Duration(rng.Intn(10)) * time.Second)
			default:
				e.advance(time.Duration(rng.Intn(20)) * time.Minute)
			}
			keys := []string{fmt.Sprint("user:", rng.Intn(2))}
			if rng.Intn(2) == 0 {
				keys = append(keys, "ip:1")
			}
			w := int64(rng.Intn(4))
			d, err := l.Allow(ctx, w, keys...)
			must(t, err)
			now := e.opts.Now().UnixMilli()
			if d.Allowed && w > 0 {
				allowed = append(allowed, req{now, w, keys})
				// No fixed window of any limit's length ending now holds
				// more than the limit: the sliding window is at least as
				// strict, as its sub-buckets start at or before now-D.
				for _, lim := range limits {
					for _, k := range keys {
						var sum int64
						for _, a := range allowed {
							if a.ms > now-lim.Window.Milliseconds()+lim.Precision.Milliseconds() && contains(a.keys, k) {
								sum += a.w
							}
						}
						if sum > lim.Max {
							t.Fatalf("request %d: %s holds %d in the last %v, limit %d", i, k, sum, lim.Window, lim.Max)
						}
					}
				}
			}
			log = append(log, fmt.Sprintf("%v %+v", keys, d))
		}
		same(t, e, log)
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestGCRA: a bucket of 30 a minute with bursts of 15, drained and
// refilled, the same answers on both servers, and the burst then the rate
// honoured.
func TestGCRA(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		l := NewGCRA(e.client(t, 0), 15, 30, time.Minute, e.opts)
		m, err := l.Mode(ctx)
		e.checkMode(t, m, err)
		var log []string
		// A full bucket gives 16 at once, then one every 2 s.
		for i := 0; i < 16; i++ {
			d, err := l.Allow(ctx, "user:1", 1)
			must(t, err)
			if !d.Allowed || d.Remaining != int64(15-i) {
				t.Fatalf("burst request %d: %+v", i, d)
			}
		}
		d, err := l.Allow(ctx, "user:1", 1)
		must(t, err)
		if d.Allowed || d.RetryAfter != 2*time.Second {
			t.Fatalf("past the burst: %+v", d)
		}
		e.advance(2 * time.Second)
		if d, err := l.Allow(ctx, "user:1", 1); err != nil || !d.Allowed {
			t.Fatalf("2 s later: %+v %v", d, err)
		}
		if d, err := l.Allow(ctx, "user:1", 17); err != nil || d.Allowed || d.RetryAfter != -1 {
			t.Fatalf("more than the bucket holds: %+v %v", d, err)
		}
		rng := rand.New(rand.NewSource(6))
		for i := 0; i < 300; i++ {
			e.advance(time.Duration(rng.Intn(3000)) * time.Millisecond)
			d, err := l.Allow(ctx, fmt.Sprint("user:", rng.Intn(3)), int64(rng.Intn(4)))
			must(t, err)
			log = append(log, fmt.Sprintf("%+v", d))
		}
		same(t, e, log)
	})
}
