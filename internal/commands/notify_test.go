package commands_test

import (
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Hash-field expiry events (Redis 7.4 and 8.0 names: redis-server 7.0
// has none of these commands): hexpire, hpersist, hdel for a time already
// past, and hexpired when fields are reclaimed, lazily or by the active
// cycle, with del when the hash goes with its last field.
func TestNotifyHashFieldExpiry(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(1_700_000_000_000),
		servertest.WithConfig("enable-debug-command", "yes"))
	sub := inst.Notifications(t, "KEAn")
	c := inst.Raw(t)
	do := func(want string, args ...string) {
		t.Helper()
		if got := c.Do(args...); want != "" && got != want {
			t.Errorf("%v: %q, want %q", args, got, want)
		}
	}
	ev := servertest.EventList
	do(":3\r\n", "HSET", "h", "a", "1", "b", "2", "c", "3")
	servertest.ExpectEvents(t, sub, ev("new", "h", "hset", "h")...)
	do("", "HPEXPIRE", "h", "100000", "FIELDS", "1", "a")
	servertest.ExpectEvents(t, sub, ev("hexpire", "h")...)
	do("", "HPEXPIRE", "h", "100000", "NX", "FIELDS", "1", "a") // condition not met
	do("", "HPERSIST", "h", "FIELDS", "1", "a")
	servertest.ExpectEvents(t, sub, ev("hpersist", "h")...)
	do("", "HPERSIST", "h", "FIELDS", "1", "a") // nothing to persist
	do("", "HPEXPIREAT", "h", "1", "FIELDS", "1", "a")
	servertest.ExpectEvents(t, sub, ev("hdel", "h")...)

	// Lazy: a read finds the field due.
	do("+OK\r\n", "DEBUG", "SET-ACTIVE-EXPIRE", "0")
	do("", "HPEXPIRE", "h", "10", "FIELDS", "1", "b")
	servertest.ExpectEvents(t, sub, ev("hexpire", "h")...)
	inst.Clock.Advance(20 * time.Millisecond)
	do("$-1\r\n", "HGET", "h", "b")
	servertest.ExpectEvents(t, sub, ev("hexpired", "h")...)

	// Active: the last field goes, and the key with it.
	do("", "HPEXPIRE", "h", "10", "FIELDS", "1", "c")
	servertest.ExpectEvents(t, sub, ev("hexpire", "h")...)
	inst.Clock.Advance(20 * time.Millisecond)
	do("+OK\r\n", "DEBUG", "SET-ACTIVE-EXPIRE", "1")
	servertest.ExpectEvents(t, sub, ev("hexpired", "h", "del", "h")...)

	// Redis 8.0's HSETEX, HGETEX and HGETDEL.
	do(":1\r\n", "HSETEX", "h2", "PX", "100000", "FIELDS", "2", "f", "v", "g", "w")
	servertest.ExpectEvents(t, sub, ev("new", "h2", "hset", "h2", "hexpire", "h2")...)
	do("", "HGETEX", "h2", "PERSIST", "FIELDS", "1", "f")
	servertest.ExpectEvents(t, sub, ev("hpersist", "h2")...)
	do("", "HGETEX", "h2", "PXAT", "1", "FIELDS", "1", "f")
	servertest.ExpectEvents(t, sub, ev("hdel", "h2")...)
	do("", "HGETDEL", "h2", "FIELDS", "2", "g", "nothere")
	servertest.ExpectEvents(t, sub, ev("hdel", "h2", "del", "h2")...)
	do(":1\r\n", "HSETEX", "h3", "PXAT", "1", "FIELDS", "1", "f", "v")
	servertest.ExpectEvents(t, sub, ev("hset", "h3", "hdel", "h3", "del", "h3")...)
}

// A pattern subscribed to after events were published (and their
// keyevent channels' matches cached) receives the next ones; one
// unsubscribed from receives nothing more.
func TestNotifyPatternChanges(t *testing.T) {
	inst := servertest.Start(t)
	expired := inst.Raw(t)
	expired.Do("PSUBSCRIBE", "__keyevent@*__:expired")
	c := inst.Raw(t)
	c.Do("CONFIG", "SET", "notify-keyspace-events", "KEA")
	c.Do("SET", "k", "v")
	sub := inst.Raw(t)
	sub.Do("PSUBSCRIBE", "__keyevent@*__:set")
	c.Do("SET", "k", "w")
	servertest.ExpectEvents(t, sub, "__keyevent@0__:set k")
	sub.Do("PUNSUBSCRIBE", "__keyevent@*__:set")
	sub.Do("PSUBSCRIBE", "__keyspace@0__:k")
	c.Do("SET", "k", "x")
	servertest.ExpectEvents(t, sub, "__keyspace@0__:k set")
	if r, err := expired.ReadErr(50 * time.Millisecond); err == nil {
		t.Errorf("expired listener got %q", r)
	}
}
