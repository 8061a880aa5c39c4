package command

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

// TestLookupCase: every command is found by its name in any case, and no
// name is longer than the 32 bytes Lookup lowers on the stack.
func TestLookupCase(t *testing.T) {
	for _, c := range All() {
		if len(c.Name) > 32 {
			t.Errorf("%q is longer than 32 bytes", c.Name)
		}
		upper := []byte(c.Name)
		for i, b := range upper {
			if 'a' <= b && b <= 'z' {
				upper[i] = b - 'a' + 'A'
			}
		}
		mixed := append([]byte(nil), upper...)
		mixed[0] = c.Name[0]
		for _, n := range [][]byte{[]byte(c.Name), upper, mixed} {
			if Lookup(n) != c {
				t.Errorf("Lookup(%q) = %v", n, Lookup(n))
			}
		}
	}
	for _, n := range []string{"", "nosuchcommand", string(make([]byte, 40)), "GET\x00"} {
		if c := Lookup([]byte(n)); c != nil {
			t.Errorf("Lookup(%q) = %q", n, c.Name)
		}
	}
	if n := testing.AllocsPerRun(100, func() { Lookup([]byte("INCR")) }); n != 0 {
		t.Errorf("Lookup allocates %.1f times", n)
	}
}
