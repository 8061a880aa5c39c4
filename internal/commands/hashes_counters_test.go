package commands_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// The recipe hash-field expiration exists for: multi-precision counters.
// Each event increments, for every precision p (1 s, 5 s, 60 s), the field
// of its time slice in the hash counts:<p>, and gives that field a TTL of
// p*N seconds when it has none, so each hash keeps about the last N slices
// and older samples disappear by themselves: the client never deletes
// anything.

const hhKeepSlices = 6

var hhPrecisions = []int64{1, 5, 60}

// hhSlice is the model: one slice's count and when its field was created.
type hhSlice struct {
	count   int64
	firstMs int64
}

func TestHashesMultiPrecisionCounters(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(hhT0), servertest.WithConfig("hz", "100"))
	c := inst.Client(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(2024, 7))

	model := map[int64]map[int64]*hhSlice{} // precision -> slice start (s) -> slice
	for _, p := range hhPrecisions {
		model[p] = map[int64]*hhSlice{}
	}
	now := int64(hhT0)
	live := func(p int64, s *hhSlice) bool { return now < s.firstMs+p*hhKeepSlices*1000 }

	// check compares every counter hash with the model's live slices.
	check := func(when string) {
		t.Helper()
		for _, p := range hhPrecisions {
			got, err := c.HGetAll(ctx, "counts:"+strconv.FormatInt(p, 10)).Result()
			hhNoErr(t, "HGETALL", err)
			want := map[string]string{}
			for slot, s := range model[p] {
				if live(p, s) {
					want[strconv.FormatInt(slot, 10)] = strconv.FormatInt(s.count, 10)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%s: counts:%d holds %d slices, want %d: %v", when, p, len(got), len(want), got)
			}
			for k, v := range want {
				if got[k] != v {
					t.Fatalf("%s: counts:%d slice %s = %q, want %s", when, p, k, got[k], v)
				}
			}
			// At most N+1 slices are ever live: the recipe's memory bound.
			if len(got) > hhKeepSlices+1 {
				t.Fatalf("%s: counts:%d keeps %d slices", when, p, len(got))
			}
		}
	}

	events := 0
	for step := 0; step < 3000; step++ {
		// Bursts and gaps: most steps are a few ms to a second apart,
		// some are long pauses that let whole hashes expire.
		var adv int64
		switch rng.IntN(20) {
		case 0:
			adv = 30_000 + rng.Int64N(400_000)
		case 1, 2:
			adv = 1000 + rng.Int64N(10_000)
		default:
			adv = rng.Int64N(700)
		}
		inst.Clock.Advance(time.Duration(adv) * time.Millisecond)
		now += adv
		for n := 1 + rng.IntN(3); n > 0; n-- {
			// One event, as a client records it: per precision, HINCRBY
			// the slice and HEXPIRE it with NX (the first event of a
			// slice starts its clock; later ones do not extend it).
			pipe := c.Pipeline()
			for _, p := range hhPrecisions {
				key := "counts:" + strconv.FormatInt(p, 10)
				slot := now / 1000 / p * p
				field := strconv.FormatInt(slot, 10)
				pipe.HIncrBy(ctx, key, field, 1)
				pipe.Do(ctx, "HEXPIRE", key, p*hhKeepSlices, "NX", "FIELDS", 1, field)
				s := model[p][slot]
				if s == nil || !live(p, s) {
					s = &hhSlice{firstMs: now}
					model[p][slot] = s
				}
				s.count++
			}
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			events++
		}
		if step%50 == 0 {
			check("step " + strconv.Itoa(step))
		}
	}
	check("the end of the events")
	if events < 3000 {
		t.Fatalf("only %d events", events)
	}
	// Old samples went away with no cleanup code: hundreds of 1 s slices
	// were written, a handful are left.
	if written, kept := len(model[1]), c.HLen(ctx, "counts:1").Val(); written < 300 || kept > hhKeepSlices+1 {
		t.Fatalf("%d one-second slices written, %d kept", written, kept)
	}

	// What the recipe answers: the events of the recent past at each
	// precision, as the sum of the live slices, against the model.
	sum := func(p int64) (got, want int64) {
		all, _ := c.HGetAll(ctx, "counts:"+strconv.FormatInt(p, 10)).Result()
		for _, v := range all {
			n, _ := strconv.ParseInt(v, 10, 64)
			got += n
		}
		for _, s := range model[p] {
			if live(p, s) {
				want += s.count
			}
		}
		return got, want
	}
	for _, p := range hhPrecisions {
		if got, want := sum(p); got != want {
			t.Errorf("counts:%d sums to %d, want %d", p, got, want)
		}
	}

	// With no more events and no command touching the keys, the active
	// cycle empties the hashes and deletes them once their last slice
	// expires.
	inst.Clock.Advance(time.Duration(60*hhKeepSlices+1) * time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for c.DBSize(ctx).Val() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("DBSIZE still %d 10 s after every slice expired", c.DBSize(ctx).Val())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
