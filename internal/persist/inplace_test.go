package persist_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/redis/go-redis/v9"
)

// The encoder reads the objects the walk handed out while the loop goes
// on: every in-place change to such an object (APPEND, SETRANGE, INCRBY,
// a same-size SET, collections' adds and removes, deletes) must reach the
// keyspace's guard first. The writes here land behind the walk and on the
// batches in flight; -race checks the hand-over, the model the contents.
func TestBgsaveInPlaceWritesDuringEncoding(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { bgsaveInPlace(t, seed) })
	}
}

func bgsaveInPlace(t *testing.T, seed uint64) {
	dir := t.TempDir()
	inst := start(t, dir)
	c := inst.Client(t)
	const n = 12000
	p := c.Pipeline()
	for i := 0; i < n; i++ {
		switch i % 6 {
		case 0, 1:
			p.Set(ctx, fmt.Sprintf("s:%d", i), fmt.Sprintf("value-%d-%040d", i, i), 0)
		case 2:
			p.Set(ctx, fmt.Sprintf("s:%d", i), i, 0)
		case 3:
			p.RPush(ctx, fmt.Sprintf("s:%d", i), "a", "b", i)
		case 4:
			p.SAdd(ctx, fmt.Sprintf("s:%d", i), "a", "b", i)
		case 5:
			p.ZAdd(ctx, fmt.Sprintf("s:%d", i), redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: fmt.Sprint(i)})
		}
		if i%40 == 0 {
			// Collections past the compact encodings (ordered, so that DUMP's
			// bytes are the file's): each ends a batch.
			for j := 0; j < 300; j++ {
				p.ZAdd(ctx, fmt.Sprintf("big:%d", i), redis.Z{Score: float64(j), Member: fmt.Sprintf("f%d", j)})
			}
		}
		if p.Len() >= 2000 {
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	ops, stop := startWriters(t, inst, seed, func(g int, r *rand.Rand, cl *redis.Client, k int) error {
		i := r.IntN(n)
		key := fmt.Sprintf("s:%d", i)
		var err error
		switch i % 6 {
		case 0:
			err = cl.Append(ctx, key, "x").Err()
		case 1:
			if r.IntN(2) == 0 {
				err = cl.SetRange(ctx, key, 3, "ZZ").Err()
			} else {
				err = cl.Set(ctx, key, fmt.Sprintf("value-%d-%040d", i, k), 0).Err()
			}
		case 2:
			err = cl.IncrBy(ctx, key, 7).Err()
		case 3:
			err = cl.LPush(ctx, key, k).Err()
		case 4:
			err = cl.SAdd(ctx, key, k).Err()
		case 5:
			err = cl.ZIncrBy(ctx, key, 1, "a").Err()
		}
		if err == nil && k%5 == 0 {
			err = cl.ZAdd(ctx, fmt.Sprintf("big:%d", i/40*40), redis.Z{Score: float64(k), Member: "f1"}).Err()
		}
		if err == nil && k%13 == 0 {
			err = cl.Del(ctx, fmt.Sprintf("s:%d", r.IntN(n))).Err()
		}
		return err
	})
	bgsaveAtMoment(t, inst, dir, ops, 1000, stop)
}

// A save dropped while the encoder works (FLUSHALL ends it, as it kills
// Redis's child) stops the encoder before anything else changes.
func TestBgsaveDroppedWhileEncoding(t *testing.T) {
	dir := t.TempDir()
	inst := start(t, dir)
	c := inst.Client(t)
	p := c.Pipeline()
	for i := 0; i < 30000; i++ {
		p.Set(ctx, fmt.Sprintf("k:%d", i), fmt.Sprintf("v%030d", i), 0)
		if p.Len() >= 2000 {
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 3; round++ {
		if err := c.BgSave(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 200; i++ {
			c.Append(ctx, fmt.Sprintf("k:%d", i*7), "x")
		}
		if err := c.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		inst.Dur.WaitBgsave()
		for i := 0; i < 2000; i++ {
			c.Set(ctx, fmt.Sprintf("k:%d", i), fmt.Sprintf("v%030d", i), 0)
		}
	}
}
