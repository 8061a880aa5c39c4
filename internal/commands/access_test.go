package commands_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Per-key access metadata: OBJECT FREQ and IDLETIME as Redis's, RESTORE's
// FREQ and IDLETIME, and CLIENT NO-TOUCH.

func TestAccessMetadataDiff(t *testing.T) {
	d, _ := servertest.StartDiff(t)
	defer d.Do("CONFIG", "SET", "maxmemory-policy", "noeviction")
	d.Lines(`
CONFIG SET maxmemory-policy allkeys-lfu
SET k v
OBJECT FREQ k
OBJECT IDLETIME k
OBJECT FREQ nokey
GET k
SET k v2
CONFIG SET maxmemory-policy allkeys-lru
OBJECT FREQ k
`)
	dump := d.Do("DUMP", "k")
	payload := servertest.BulkBody(t, dump)
	d.Do("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
	d.Do("RESTORE", "f", "0", payload, "FREQ", "100")
	d.Do("OBJECT", "FREQ", "f")
	d.Do("RESTORE", "f", "0", payload, "FREQ", "256", "REPLACE")
	d.Do("RESTORE", "f", "0", payload, "FREQ", "7", "IDLETIME", "5", "REPLACE")
	d.Do("RESTORE", "f", "0", payload, "FREQ", "0", "REPLACE")
	d.Do("OBJECT", "FREQ", "f")
	d.Do("RESTORE", "i", "0", payload, "IDLETIME", "1000")
	d.Do("OBJECT", "FREQ", "i") // LFU: the idle time is ignored
	d.Do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	d.Do("RESTORE", "j", "0", payload, "IDLETIME", "1000")
	d.Do("RESTORE", "g", "0", payload, "FREQ", "100")
	for _, c := range []*servertest.Conn{d.A, d.R} {
		idle := idleOf(t, c, "j")
		if idle < 1000 || idle > 1002 {
			t.Errorf("OBJECT IDLETIME after RESTORE IDLETIME 1000: %d", idle)
		}
	}
}

func idleOf(t *testing.T, c *servertest.Conn, key string) int {
	t.Helper()
	r := c.Do("OBJECT", "IDLETIME", key)
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(r, ":")))
	if err != nil {
		t.Fatalf("OBJECT IDLETIME %s: %q", key, r)
	}
	return n
}

func TestAccessLFUCounter(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("maxmemory-policy", "allkeys-lfu"))
	c := inst.Raw(t)
	c.Do("SET", "hot", "v")
	c.Do("SET", "cold", "v")
	for range 1000 {
		c.Do("GET", "hot")
	}
	c.Do("GET", "cold")
	hot, cold := freqOf(t, c, "hot"), freqOf(t, c, "cold")
	// lfu-log-factor 10: about 18 after 1,000 hits (redis.conf's table).
	if hot < 10 || hot > 30 || cold > 6 {
		t.Fatalf("OBJECT FREQ after 1000 reads %d, after 1 read %d", hot, cold)
	}
	// Under NO-TOUCH reads leave the counter alone; TOUCH still counts.
	if r := c.Do("CLIENT", "NO-TOUCH", "ON"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	for range 300 {
		c.Do("GET", "cold")
	}
	if f := freqOf(t, c, "cold"); f != cold {
		t.Fatalf("OBJECT FREQ moved under NO-TOUCH: %d -> %d", cold, f)
	}
	c.Do("CONFIG", "SET", "lfu-log-factor", "0")
	for range 3 {
		c.Do("TOUCH", "cold")
	}
	if f := freqOf(t, c, "cold"); f != cold+3 {
		t.Fatalf("TOUCH under NO-TOUCH with lfu-log-factor 0: %d -> %d", cold, f)
	}
}

func TestAccessLFUDecay(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(1_700_000_000_000),
		servertest.WithConfig("maxmemory-policy", "allkeys-lfu", "lfu-decay-time", "2"))
	c := inst.Raw(t)
	c.Do("SET", "k", "v") // counter 5
	inst.Clock.Advance((6 * 60_000) * time.Millisecond)
	if f := freqOf(t, c, "k"); f != 2 {
		t.Fatalf("OBJECT FREQ after 3 decay periods: %d, want 2", f)
	}
	inst.Clock.Advance((60 * 60_000) * time.Millisecond)
	if f := freqOf(t, c, "k"); f != 0 {
		t.Fatalf("OBJECT FREQ after 33 decay periods: %d, want 0", f)
	}
}

func TestAccessIdleNoTouch(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(1_700_000_000_000))
	c := inst.Raw(t)
	c.Do("SET", "k", "v")
	inst.Clock.Advance((10_000) * time.Millisecond)
	c.Do("CLIENT", "NO-TOUCH", "ON")
	c.Do("GET", "k")
	if n := idleOf(t, c, "k"); n != 10 {
		t.Fatalf("OBJECT IDLETIME after a NO-TOUCH GET: %d, want 10", n)
	}
	c.Do("CLIENT", "NO-TOUCH", "OFF")
	c.Do("GET", "k")
	if n := idleOf(t, c, "k"); n != 0 {
		t.Fatalf("OBJECT IDLETIME after a GET: %d, want 0", n)
	}
	inst.Clock.Advance((5_000) * time.Millisecond)
	c.Do("INCR", "k2")
	inst.Clock.Advance((5_000) * time.Millisecond)
	c.Do("APPEND", "k", "x")
	c.Do("CLIENT", "NO-TOUCH", "ON")
	c.Do("TOUCH", "k2")
	if a, b := idleOf(t, c, "k"), idleOf(t, c, "k2"); a != 0 || b != 0 {
		t.Fatalf("OBJECT IDLETIME after APPEND %d, after TOUCH %d; want 0 0", a, b)
	}
}

func freqOf(t *testing.T, c *servertest.Conn, key string) int {
	t.Helper()
	r := c.Do("OBJECT", "FREQ", key)
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(r, ":")))
	if err != nil {
		t.Fatalf("OBJECT FREQ %s: %q", key, r)
	}
	return n
}
