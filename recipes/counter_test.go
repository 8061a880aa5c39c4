package recipes

import (
	"math/rand"
	"testing"
	"time"
)

// TestCounter hits a multi-precision counter over three weeks (bursts,
// pauses of seconds, minutes and hours) and checks every precision's last
// slices against a model.
func TestCounter(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		precs := []Precision{{time.Second, 10}, {time.Minute, 20}, {time.Hour, 30}, {24 * time.Hour, 10}}
		k := NewCounter(e.client(t, 0), "hits", precs, e.opts)
		m, err := k.Mode(ctx)
		e.checkMode(t, m, err)
		model := map[int64]map[int64]float64{} // step ms -> slice start -> hits
		rng := rand.New(rand.NewSource(2))
		for i := 0; i < 800; i++ {
			switch r := rng.Intn(20); {
			case r < 8:
			case r < 16:
				e.advance(time.Duration(rng.Intn(3000)) * time.Millisecond)
			case r < 19:
				e.advance(time.Duration(rng.Intn(90)) * time.Minute)
			default:
				e.advance(time.Duration(rng.Intn(30)) * time.Hour)
			}
			n := int64(1 + rng.Intn(3))
			must(t, k.Incr(ctx, n))
			now := e.opts.Now().UnixMilli()
			for _, p := range precs {
				st := p.Step.Milliseconds()
				if model[st] == nil {
					model[st] = map[int64]float64{}
				}
				model[st][now-now%st] += float64(n)
			}
			if i%40 == 0 {
				must(t, k.Cleanup(ctx))
			}
			if i%20 != 0 {
				continue
			}
			for _, p := range precs {
				got, err := k.Slices(ctx, p.Step, p.Keep)
				must(t, err)
				st := p.Step.Milliseconds()
				from := now - now%st - int64(p.Keep-1)*st
				want := map[int64]float64{}
				for s, v := range model[st] {
					if s >= from {
						want[s] = v
					}
				}
				if len(got) != len(want) {
					t.Fatalf("hit %d, step %v: %d slices %v, want %d %v", i, p.Step, len(got), got, len(want), want)
				}
				for _, pt := range got {
					if want[pt.T.UnixMilli()] != pt.V {
						t.Fatalf("hit %d, step %v, slice %v: %v, want %v", i, p.Step, pt.T.UTC(), pt.V, want[pt.T.UnixMilli()])
					}
				}
			}
		}
		// Series deleted behind the counter's back are made again.
		must(t, e.client(t, 0).FlushDB(ctx).Err())
		must(t, k.Incr(ctx, 4))
		if got, err := k.Slices(ctx, time.Minute, 1); err != nil || len(got) != 1 || got[0].V != 4 {
			t.Fatalf("after FLUSHDB: %v %v", got, err)
		}
		// One precision's series deleted: the hit is made again there
		// and added once, not twice, to the others.
		must(t, e.client(t, 0).Del(ctx, k.sliceKey(time.Minute)).Err())
		must(t, k.Incr(ctx, 5))
		for _, c := range []struct {
			step time.Duration
			want float64
		}{{time.Second, 9}, {time.Minute, 5}, {time.Hour, 9}} {
			if got, err := k.Slices(ctx, c.step, 1); err != nil || len(got) != 1 || got[0].V != c.want {
				t.Fatalf("after deleting the minute series, step %v: %v %v, want %v", c.step, got, err, c.want)
			}
		}
		if m == Fallback {
			// The cleanup pass leaves each hash no more than it keeps.
			must(t, k.Cleanup(ctx))
			for _, p := range precs {
				n, err := e.client(t, 0).HLen(ctx, k.sliceKey(p.Step)).Result()
				must(t, err)
				if n > int64(p.Keep) {
					t.Fatalf("step %v: %d slices after cleanup", p.Step, n)
				}
			}
		}
	})
}
