package recipes

import (
	"math/rand"
	"testing"
	"time"
)

// TestEvents records events in bursts and gaps against a model and checks
// the windows' counts every few events.
func TestEvents(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		ev := NewEvents(e.client(t, 0), "events:login", time.Hour, e.opts)
		m, err := ev.Mode(ctx)
		e.checkMode(t, m, err)
		rng := rand.New(rand.NewSource(1))
		var times []int64
		windows := []time.Duration{time.Second, time.Minute, 10 * time.Minute, time.Hour}
		for i := 0; i < 600; i++ {
			switch r := rng.Intn(10); {
			case r < 4: // same millisecond
			case r < 8:
				e.advance(time.Duration(rng.Intn(5000)) * time.Millisecond)
			default:
				e.advance(time.Duration(rng.Intn(20)) * time.Minute)
			}
			must(t, ev.Record(ctx))
			times = append(times, e.opts.Now().UnixMilli())
			if i%25 != 0 {
				continue
			}
			// Counted at the event and at a later moment, so that window
			// edges fall anywhere within the native series' chunks.
			for _, later := range []time.Duration{0, time.Duration(rng.Intn(90_000)) * time.Millisecond} {
				e.advance(later)
				now := e.opts.Now().UnixMilli()
				for _, w := range windows {
					var want int64
					for _, x := range times {
						if x > now-w.Milliseconds() {
							want++
						}
					}
					got, err := ev.Count(ctx, w)
					must(t, err)
					if got != want {
						t.Fatalf("event %d: last %v: got %d, want %d", i, w, got, want)
					}
				}
			}
		}
		must(t, ev.Preen(ctx))
		e.advance(2 * time.Hour)
		if n, err := ev.Count(ctx, time.Hour); err != nil || n != 0 {
			t.Fatalf("an hour later: %d, %v", n, err)
		}
		if n, err := NewEvents(e.client(t, 0), "events:none", time.Hour, e.opts).Count(ctx, time.Minute); err != nil || n != 0 {
			t.Fatalf("no events: %d, %v", n, err)
		}
	})
}
