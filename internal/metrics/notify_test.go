package metrics_test

import (
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Keyspace notifications of the time-series commands, with
// RedisTimeSeries's event names (module class d), and of the rate
// limiters (docs/metrics.md): CL.THROTTLE and GCRA publish what the SET
// they propagate would, RATELIMIT.SLIDING what HINCRBY and PEXPIREAT on
// its hashes would.
func TestNotifyTimeSeries(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	sub := inst.Notifications(t, "KEAn")
	c := inst.Raw(t)
	ev := servertest.EventList
	step := func(args []string, want ...string) {
		t.Helper()
		if r := c.Do(args...); r[0] == '-' {
			t.Fatalf("%v: %q", args, r)
		}
		servertest.ExpectEvents(t, sub, want...)
	}
	step([]string{"TS.CREATE", "t"}, ev("new", "t", "ts.create", "t")...)
	step([]string{"TS.ADD", "t", "1000", "1"}, ev("ts.add", "t")...)
	step([]string{"TS.ADD", "t2", "1000", "1"}, ev("new", "t2", "ts.add", "t2")...)
	step([]string{"TS.MADD", "t", "2000", "2", "t2", "2000", "3"}, ev("ts.add", "t", "ts.add", "t2")...)
	step([]string{"TS.INCRBY", "t", "5", "TIMESTAMP", "3000"}, ev("ts.incrby", "t")...)
	step([]string{"TS.DECRBY", "t", "1", "TIMESTAMP", "3000"}, ev("ts.decrby", "t")...)
	step([]string{"TS.ALTER", "t", "RETENTION", "0"}, ev("ts.alter", "t")...)
	step([]string{"TS.CREATE", "agg"}, ev("new", "agg", "ts.create", "agg")...)
	step([]string{"TS.CREATERULE", "t", "agg", "AGGREGATION", "sum", "10000"}, ev("ts.createrule", "t", "ts.createrule", "agg")...)
	step([]string{"TS.ADD", "t", "5000", "1"}, ev("ts.add", "t")...)
	// A sample in the next bucket closes the first: the compaction's
	// event comes before the source's.
	step([]string{"TS.ADD", "t", "15000", "1"}, ev("ts.add:dest", "agg", "ts.add", "t")...)
	step([]string{"TS.DELETERULE", "t", "agg"}, ev("ts.deleterule", "t", "ts.deleterule", "agg")...)
	step([]string{"TS.DEL", "t", "0", "2500"}, ev("ts.del", "t")...)
	step([]string{"DEL", "t"}, ev("del", "t")...)
}

func TestNotifyRateLimiters(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	sub := inst.Notifications(t, "KEA")
	c := inst.Raw(t)
	ev := servertest.EventList
	c.Do("CL.THROTTLE", "cl", "4", "1", "1")
	servertest.ExpectEvents(t, sub, ev("set", "cl", "expire", "cl")...)
	c.Do("CL.THROTTLE", "cl", "4", "1", "1", "0") // a peek writes nothing new, but the state is stored again
	servertest.ExpectEvents(t, sub, ev("set", "cl", "expire", "cl")...)
	c.Do("CL.THROTTLE", "cl", "0", "1", "60", "5") // limited: nothing written
	servertest.ExpectEvents(t, sub)
	c.Do("GCRA", "g", "5", "10", "60")
	servertest.ExpectEvents(t, sub, ev("set", "g", "expire", "g")...)
	c.Do("RATELIMIT.SLIDING", "2", "u", "ip", "LIMITS", "1", "10", "3", "1")
	servertest.ExpectEvents(t, sub, ev("hincrby", "u", "expire", "u", "hincrby", "ip", "expire", "ip")...)
}
