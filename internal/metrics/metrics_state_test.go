package metrics_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Two servers in one process keep their own label indexes: a series
// created on one is not found by the other's TS.QUERYINDEX, nor dropped by
// the other's FLUSHALL.
func TestTSIndexPerServer(t *testing.T) {
	a := servertest.Start(t).Client(t)
	b := servertest.Start(t).Client(t)
	ctx := servertest.Ctx
	tsDo(t, a, "OK", "TS.CREATE", "sa", "LABELS", "l", "v")
	tsDo(t, b, []any{}, "TS.QUERYINDEX", "l=v")
	tsDo(t, b, "OK", "TS.CREATE", "sb", "LABELS", "l", "v")
	tsDo(t, a, []any{"sa"}, "TS.QUERYINDEX", "l=v")
	tsDo(t, b, []any{"sb"}, "TS.QUERYINDEX", "l=v")
	b.FlushAll(ctx)
	tsDo(t, b, []any{}, "TS.QUERYINDEX", "l=v")
	tsDo(t, a, []any{"sa"}, "TS.QUERYINDEX", "l=v")
}

// The label index follows the keyspace through SWAPDB, MOVE, expiry,
// DEBUG RELOAD and FLUSHALL.
func TestTSIndexFollowsKeyspace(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(1_700_000_000_000),
		servertest.WithConfig("dir", t.TempDir(), "enable-debug-command", "yes"))
	c0 := inst.Client(t)
	c1 := redis.NewClient(&redis.Options{Addr: inst.Addr, DB: 1, Protocol: 2})
	defer c1.Close()
	ctx := servertest.Ctx

	tsDo(t, c0, "OK", "TS.CREATE", "a", "LABELS", "l", "v")
	tsDo(t, c0, "OK", "TS.CREATE", "b", "LABELS", "l", "v")
	tsDo(t, c0, "OK", "SWAPDB", "0", "1")
	tsDo(t, c0, []any{}, "TS.QUERYINDEX", "l=v")
	tsDo(t, c1, []any{"a", "b"}, "TS.QUERYINDEX", "l=v")
	tsDo(t, c1, int64(1), "MOVE", "b", "0")
	tsDo(t, c0, []any{"b"}, "TS.QUERYINDEX", "l=v")
	tsDo(t, c1, []any{"a"}, "TS.QUERYINDEX", "l=v")

	tsDo(t, c1, int64(1), "PEXPIRE", "a", "100")
	inst.Clock.Advance(200 * time.Millisecond)
	tsDo(t, c1, []any{}, "TS.QUERYINDEX", "l=v")

	tsDo(t, c1, "OK", "TS.CREATE", "c", "LABELS", "l", "w")
	tsDo(t, c0, "OK", "DEBUG", "RELOAD")
	tsDo(t, c0, []any{"b"}, "TS.QUERYINDEX", "l=v")
	tsDo(t, c1, []any{"c"}, "TS.QUERYINDEX", "l=w")

	tsDo(t, c0, "OK", "FLUSHALL")
	tsDo(t, c0, []any{}, "TS.QUERYINDEX", "l=v")
	tsDo(t, c1, []any{}, "TS.QUERYINDEX", "l=w")
	c0.Do(ctx, "TS.CREATE", "d", "LABELS", "l", "v")
	tsDo(t, c0, []any{"d"}, "TS.QUERYINDEX", "l=v")
}
