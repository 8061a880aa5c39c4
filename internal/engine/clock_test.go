package engine

import (
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/clock"
)

// TestDerivedWallClock: the wall time derived from monotonic readings
// agrees with the wall clock, and a stale offset is replaced.
func TestDerivedWallClock(t *testing.T) {
	for i := 0; i < 3; i++ {
		before := time.Now().UnixMilli()
		got := wallMsAt(time.Since(monoBase))
		after := time.Now().UnixMilli()
		if got < before-1 || got > after+1 {
			t.Fatalf("derived %d, wall clock between %d and %d", got, before, after)
		}
		// Pretend the last sync is old: the next reading resynchronises.
		// (The offset is left alone: other tests read it concurrently.)
		stale := wallSynced.Load() - 2*wallResync
		wallSynced.Store(stale)
		wallMsAt(time.Since(monoBase))
		if wallSynced.Load() == stale {
			t.Fatal("a stale offset was not resynchronised")
		}
	}
	e := &Env{Clock: clock.NewManual(12345)}
	if got := e.NowMs(); got != 12345 {
		t.Fatalf("manual clock: NowMs %d", got)
	}
	if got := e.nowAt(time.Since(monoBase)); got != 12345 {
		t.Fatalf("manual clock: nowAt %d", got)
	}
}
