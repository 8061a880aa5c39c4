package engine

import (
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// With the runtime's memory past its limit (hold.excess), the evicting
// policies evict down to maxmemory less the excess; noeviction refuses
// nothing for it.
func TestEvictionTargetExcess(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // the used-memory estimate must not restart mid-test
	for _, policy := range []string{"allkeys-random", "noeviction"} {
		e := NewEnv(keyspace.New(1), config.New(), clock.Real{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		p, _ := config.Lookup("maxmemory-policy")
		if err := e.Cfg.Set(p, policy); err != nil {
			t.Fatal(err)
		}
		e.MeasureMemory()
		db := e.KS.DBs[0]
		val := []byte(strings.Repeat("v", 1000))
		for i := range 1000 {
			db.StoreString(nil, []byte("k"+strconv.Itoa(i)), val, 0, false)
		}
		maxmem := e.UsedMemory()
		const excess = 256 << 10
		e.mem.hold.excess = excess
		res := evictRunning
		for res == evictRunning { // the time budget spent: the next command goes on
			res = e.performEvictions(maxmem)
		}
		left := db.Len()
		switch {
		case policy == "noeviction" && (res != evictOK || left != 1000):
			t.Errorf("noeviction: result %d, %d keys left: want OK and all", res, left)
		case policy != "noeviction" && (res != evictOK || left > 1000-200 || left < 1000-300 || e.UsedMemory() > maxmem-excess):
			t.Errorf("%s: result %d, %d keys left, used %d: want about 250 evicted, used under %d",
				policy, res, left, e.UsedMemory(), maxmem-excess)
		}
		runtime.KeepAlive(val)
	}
}

// Eviction's target leaves the collector evictRoom under its heap goal at
// the RSS bound, within 1/8 of maxmemory; where the limit was raised for
// the collector's room (small maxmemory) it is maxmemory itself.
func TestEvictTargetForRoom(t *testing.T) {
	const mb = 1 << 20
	m := int64(256 * mb)
	lim := rssBoundLimit(m)
	goal := (lim - 14*mb) / 100 * 97
	if got, want := evictTargetForRoom(m, lim, 14*mb), goal-evictRoom(m); got != want || got >= m {
		t.Errorf("256 MB, 14 MB overhead: target %d, want %d (under maxmemory)", got, want)
	}
	if got := evictTargetForRoom(m, lim, 100*mb); got != m-m/8 {
		t.Errorf("256 MB, 100 MB overhead: target %d, want %d", got, m-m/8)
	}
	small := int64(32 * mb)
	if got := evictTargetForRoom(small, tunedLimit(small, 10*mb), 10*mb); got != small {
		t.Errorf("32 MB: target %d, want maxmemory", got)
	}
}

// A target computed for another maxmemory is not used.
func TestTargetForRoomOtherMaxmemory(t *testing.T) {
	defer roomTarget.Store(roomTarget.Load())
	roomTarget.Store(&evictTarget{maxmem: 256 << 20, used: 240 << 20})
	if got := targetForRoom(512 << 20); got != 512<<20 {
		t.Errorf("target for 512 MB after one for 256 MB: %d", got)
	}
}
