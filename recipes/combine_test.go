package recipes

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestEventsConcurrent records and counts from many goroutines at once
// through one client, so that calls are combined into shared round trips,
// and checks every series' total and that no count exceeds it.
func TestEventsConcurrent(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		c := e.client(t, 0)
		const series, goroutines, each = 5, 20, 60
		evs := make([]*Events, series)
		for i := range evs {
			evs[i] = NewEvents(c, "events:conc:"+strconv.Itoa(i), time.Hour, e.opts)
		}
		must(t, concurrently(goroutines, each, func(g, i int) error {
			ev := evs[(g+i)%series]
			if err := ev.Record(ctx); err != nil {
				return err
			}
			if n, err := ev.Count(ctx, time.Minute); err != nil {
				return err
			} else if n < 1 || n > goroutines*each/series {
				return fmt.Errorf("count %d", n)
			}
			return nil
		}))
		for i, ev := range evs {
			n, err := ev.Count(ctx, time.Hour)
			must(t, err)
			if n != goroutines*each/series {
				t.Fatalf("series %d: %d events, want %d", i, n, goroutines*each/series)
			}
		}
	})
}

// TestBufferConcurrent increments from many goroutines at once (their
// increments share MULTIs) while a flusher runs, then flushes to the end
// and checks that SQL holds exactly the increments.
func TestBufferConcurrent(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		b, err := NewBuffer(ctx, e.shards(t, 2), "cviews", openSQLite(t), SQLite, BufferOptions{Options: e.opts, Batch: 5})
		must(t, err)
		const goroutines, each, items = 20, 50, 12
		stop := make(chan struct{})
		flushed := make(chan error, 1)
		go func() {
			for {
				select {
				case <-stop:
					flushed <- nil
					return
				default:
				}
				if _, err := b.Flush(ctx); err != nil {
					flushed <- err
					return
				}
			}
		}()
		err = concurrently(goroutines, each, func(g, i int) error {
			return b.Incr(ctx, "page:"+strconv.Itoa((g+i)%items), "day"+strconv.Itoa(i%2), int64(g+1))
		})
		close(stop)
		must(t, <-flushed)
		must(t, err)
		for {
			n, err := b.Flush(ctx)
			must(t, err)
			if n == 0 {
				break
			}
		}
		want := map[string]map[string]int64{}
		for g := 0; g < goroutines; g++ {
			for i := 0; i < each; i++ {
				item := "page:" + strconv.Itoa((g+i)%items)
				if want[item] == nil {
					want[item] = map[string]int64{}
				}
				want[item]["day"+strconv.Itoa(i%2)] += int64(g + 1)
			}
		}
		for item, fields := range want {
			got, err := b.Totals(ctx, item)
			must(t, err)
			for f, v := range fields {
				if got[f] != v {
					t.Fatalf("%s %s in SQL: %d, want %d", item, f, got[f], v)
				}
			}
		}
	})
}

// concurrently calls fn(g, i) for i below each in each of goroutines
// goroutines g at once and returns the first error; a goroutine stops at
// its first.
func concurrently(goroutines, each int, fn func(g, i int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := fn(g, i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// The tests below call each combined recipe from many goroutines at once
// through one client, so that calls share round trips, and check exact
// totals: every call counted once, and each call's own answer.

// TestCounterConcurrent increments one counter from goroutines whose
// clocks differ (each call's slice is its own clock's), through
// Counter values of their own on one client, and checks every slice.
func TestCounterConcurrent(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		c := e.client(t, 0)
		const goroutines, each, gap = 20, 50, 37 // ms between calls' clocks
		precs := []Precision{{time.Second, 100}, {time.Minute, 10}}
		clocks := make([]atomic.Int64, goroutines)
		ks := make([]*Counter, goroutines)
		for g := range ks {
			ks[g] = NewCounter(c, "hits:conc", precs, Options{Now: func() time.Time { return time.UnixMilli(clocks[g].Load()) }})
		}
		model := map[int64]map[int64]float64{}
		for g := 0; g < goroutines; g++ {
			for i := 0; i < each; i++ {
				ms := int64(t0 + (g*each+i)*gap)
				for _, p := range precs {
					st := p.Step.Milliseconds()
					if model[st] == nil {
						model[st] = map[int64]float64{}
					}
					model[st][ms-ms%st] += float64(g + 1)
				}
			}
		}
		must(t, concurrently(goroutines, each, func(g, i int) error {
			clocks[g].Store(int64(t0 + (g*each+i)*gap))
			return ks[g].Incr(ctx, int64(g+1))
		}))
		last := int64(t0 + (goroutines*each-1)*gap)
		r := NewCounter(c, "hits:conc", precs, Options{Now: func() time.Time { return time.UnixMilli(last) }})
		for _, p := range precs {
			pts, err := r.Slices(ctx, p.Step, p.Keep)
			must(t, err)
			st := p.Step.Milliseconds()
			if len(pts) != len(model[st]) {
				t.Fatalf("step %v: %d slices, want %d", p.Step, len(pts), len(model[st]))
			}
			for _, pt := range pts {
				if want := model[st][pt.T.UnixMilli()]; pt.V != want {
					t.Fatalf("step %v slice %d: %v, want %v", p.Step, pt.T.UnixMilli(), pt.V, want)
				}
			}
		}
	})
}

// TestRollupsConcurrent adds to series spread over two shards from many
// goroutines and checks the sums per service and in all.
func TestRollupsConcurrent(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		r := NewRollups(e.shards(t, 2), "creq", []Rollup{{time.Minute, time.Hour}, {time.Hour, 24 * time.Hour}}, e.opts)
		const goroutines, each = 20, 50
		svc := []string{"api", "web", "worker", "auth", "search"}
		must(t, concurrently(goroutines, each, func(g, i int) error {
			return r.Add(ctx, map[string]string{"service": svc[(g+i)%5], "region": strconv.Itoa(i % 3)}, int64(g+1))
		}))
		want := map[string]float64{}
		all := 0.0
		for g := 0; g < goroutines; g++ {
			for i := 0; i < each; i++ {
				want["service="+svc[(g+i)%5]] += float64(g + 1)
				all += float64(g + 1)
			}
		}
		now := e.opts.Now()
		for _, step := range []time.Duration{time.Minute, time.Hour} {
			got, err := r.Query(ctx, step, now.Add(-step), now, nil, "service")
			must(t, err)
			if len(got) != len(want) {
				t.Fatalf("%v: %d groups, want %d", step, len(got), len(want))
			}
			for g, pts := range got {
				if len(pts) != 1 || pts[0].V != want[g] {
					t.Fatalf("%v: %s: %v, want one bucket of %v", step, g, pts, want[g])
				}
			}
			got, err = r.Query(ctx, step, now.Add(-step), now, nil, "")
			must(t, err)
			if pts := got[""]; len(pts) != 1 || pts[0].V != all {
				t.Fatalf("%v: all: %v, want %v", step, pts, all)
			}
		}
	})
}

// TestTimeboxConcurrent adds points to a few members from many goroutines:
// every add's total is its own (the totals a member's adds return are
// distinct and end at the member's sum), and the box holds the sums.
func TestTimeboxConcurrent(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		b := NewTimebox(e.client(t, 0), "cbox", time.Minute, e.opts)
		const goroutines, each, members = 20, 50, 4
		var mu sync.Mutex
		seen := map[string]map[int64]bool{}
		must(t, concurrently(goroutines, each, func(g, i int) error {
			m := "m" + strconv.Itoa((g+i)%members)
			n, err := b.Add(ctx, m, int64(g+1))
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			if seen[m] == nil {
				seen[m] = map[int64]bool{}
			}
			if seen[m][n] {
				return fmt.Errorf("%s: total %d returned twice", m, n)
			}
			seen[m][n] = true
			return nil
		}))
		want := map[string]int64{}
		for g := 0; g < goroutines; g++ {
			for i := 0; i < each; i++ {
				want["m"+strconv.Itoa((g+i)%members)] += int64(g + 1)
			}
		}
		got, err := b.Members(ctx)
		must(t, err)
		for m, n := range want {
			if got[m] != n || !seen[m][n] {
				t.Fatalf("%s: %d in the box, want %d (returned: %v)", m, got[m], n, seen[m][n])
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%d members, want %d", len(got), len(want))
		}
	})
}

// TestLimitersConcurrent spends each limiter's allowance from many
// goroutines at once on one key: exactly the allowance passes. The
// scripts are flushed first, so that the fallback's shared pipeline
// meets NOSCRIPT and loads them.
func TestLimitersConcurrent(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		c := e.client(t, 0)
		must(t, c.ScriptFlush(ctx).Err())
		const goroutines, each, allowance = 20, 30, 250
		fw := NewFixedWindow(c, "crl", allowance, time.Minute, e.opts)
		sw := NewSlidingWindow(c, []Limit{{time.Minute, allowance, time.Second}, {time.Hour, 10 * allowance, time.Minute}}, e.opts)
		gc := NewGCRA(c, allowance-1, 1, time.Hour, e.opts)
		for _, l := range []struct {
			name  string
			allow func() (bool, error)
		}{
			{"fixed", func() (bool, error) { d, err := fw.Allow(ctx, "u", 1); return d.Allowed, err }},
			{"sliding", func() (bool, error) { d, err := sw.Allow(ctx, 1, "{u}:a", "{u}:b"); return d.Allowed, err }},
			{"gcra", func() (bool, error) { d, err := gc.Allow(ctx, "cgcra", 1); return d.Allowed, err }},
		} {
			var allowed atomic.Int64
			must(t, concurrently(goroutines, each, func(g, i int) error {
				ok, err := l.allow()
				if ok {
					allowed.Add(1)
				}
				return err
			}))
			if allowed.Load() != allowance {
				t.Fatalf("%s: %d allowed, want %d", l.name, allowed.Load(), allowance)
			}
		}
	})
}

// TestLockConcurrent has many goroutines take, extend and release one
// lock through one client: never two holders at once, every holder's
// extend and release succeed, and the holders' tokens are distinct.
func TestLockConcurrent(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		c := e.client(t, 0)
		must(t, c.ScriptFlush(ctx).Err())
		l := NewLock(c, "clock", time.Hour, e.opts)
		const goroutines, each = 20, 40
		var holders, taken atomic.Int64
		var mu sync.Mutex
		tokens := map[int64]bool{}
		must(t, concurrently(goroutines, each, func(g, i int) error {
			s, ok, err := l.Acquire(ctx)
			if err != nil || !ok {
				return err
			}
			if holders.Add(1) != 1 {
				return fmt.Errorf("two holders at once")
			}
			taken.Add(1)
			mu.Lock()
			dup := tokens[s.Token]
			tokens[s.Token] = true
			mu.Unlock()
			if dup {
				return fmt.Errorf("token %d twice", s.Token)
			}
			if ok, err := s.Extend(ctx, time.Hour); err != nil || !ok {
				return fmt.Errorf("extend: %v %v", ok, err)
			}
			holders.Add(-1)
			if ok, err := s.Release(ctx); err != nil || !ok {
				return fmt.Errorf("release: %v %v", ok, err)
			}
			return nil
		}))
		if taken.Load() == 0 {
			t.Fatal("nobody took the lock")
		}
		if err := c.Get(ctx, "clock").Err(); err != redis.Nil {
			t.Fatalf("the lock is still held: %v", err)
		}
	})
}
