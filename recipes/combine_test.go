package recipes

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"
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
