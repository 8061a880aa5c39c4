package commands_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// A worker pool on go-redis as applications write it: producers XADD,
// workers XREADGROUP (blocking) and XACK, and a reaper XAUTOCLAIMs what a
// crashed worker left pending. Every event is processed, each by one
// worker at a time, and nothing stays pending.
func TestStreamWorkerPoolGoRedis(t *testing.T) {
	inst := servertest.Start(t)
	ctx := context.Background()
	rdb := inst.Client(t)
	const (
		events  = 2000
		workers = 4
	)
	if err := rdb.XGroupCreateMkStream(ctx, "events", "workers", "$").Err(); err != nil {
		t.Fatal(err)
	}
	// A worker that reads five events and dies without acknowledging.
	for i := 0; i < 5; i++ {
		rdb.XAdd(ctx, &redis.XAddArgs{Stream: "events", Values: []string{"n", strconv.Itoa(-1 - i)}})
	}
	lost, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "crashed", Streams: []string{"events", ">"}, Count: 5}).Result()
	if err != nil || len(lost[0].Messages) != 5 {
		t.Fatalf("crashed worker's read: %v %v", lost, err)
	}

	var mu sync.Mutex
	seen := map[string]int{}
	done := make(chan struct{})
	var wg sync.WaitGroup
	process := func(msgs []redis.XMessage, c *redis.Client) {
		for _, m := range msgs {
			mu.Lock()
			seen[m.Values["n"].(string)]++
			mu.Unlock()
			if err := c.XAck(ctx, "events", "workers", m.ID).Err(); err != nil {
				t.Error(err)
			}
		}
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(name string) {
			defer wg.Done()
			c := inst.Client(t)
			for {
				select {
				case <-done:
					return
				default:
				}
				res, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: name, Streams: []string{"events", ">"}, Count: 10, Block: 50 * time.Millisecond}).Result()
				if errors.Is(err, redis.Nil) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				process(res[0].Messages, c)
			}
		}("w" + strconv.Itoa(w))
	}
	time.Sleep(30 * time.Millisecond) // the crashed worker's entries are idle
	// The reaper takes over the crashed worker's events, while the workers
	// run (with a minimum idle time they have not reached).
	msgs, _, err := rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: "events", Group: "workers", Consumer: "reaper", Start: "0", Count: 100, MinIdle: 20 * time.Millisecond}).Result()
	if err != nil {
		t.Fatal(err)
	}
	process(msgs, rdb)
	if len(msgs) != 5 {
		t.Fatalf("reaper claimed %d entries", len(msgs))
	}
	for i := 0; i < events; i++ {
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "events", MaxLen: 100000, Approx: true, Values: []string{"n", strconv.Itoa(i)}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for {
		p, err := rdb.XPending(ctx, "events", "workers").Result()
		if err != nil {
			t.Fatal(err)
		}
		info, err := rdb.XInfoGroups(ctx, "events").Result()
		if err != nil {
			t.Fatal(err)
		}
		if p.Count == 0 && info[0].Lag == 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(done)
	wg.Wait()
	if len(seen) != events+5 {
		t.Fatalf("%d distinct events processed, want %d", len(seen), events+5)
	}
	for n, c := range seen {
		if c != 1 {
			t.Fatalf("event %s processed %d times", n, c)
		}
	}
}
