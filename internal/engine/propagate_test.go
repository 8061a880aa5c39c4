package engine_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/servertest"
)

// capture is a propagation sink that records what it is fed, one line per
// command, MULTI/EXEC and SELECT written out as the AOF would have them.
type capture struct {
	mu    sync.Mutex
	lines []string
	db    int
}

func (c *capture) Feed(entries []engine.PropEntry, wrap bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	emit := func(e engine.PropEntry) {
		if e.DB != c.db {
			c.lines = append(c.lines, "SELECT "+string(rune('0'+e.DB)))
			c.db = e.DB
		}
		parts := make([]string, len(e.Argv))
		for i, a := range e.Argv {
			parts[i] = string(a)
		}
		c.lines = append(c.lines, strings.Join(parts, " "))
	}
	if wrap {
		c.lines = append(c.lines, "MULTI")
	}
	for _, e := range entries {
		emit(e)
	}
	if wrap {
		c.lines = append(c.lines, "EXEC")
	}
}

func (c *capture) take() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := strings.Join(c.lines, " | ")
	c.lines = nil
	return s
}

const t0 = 1_700_000_000_000

func propInstance(t *testing.T) (*servertest.Instance, *capture, *servertest.Conn) {
	inst := servertest.Start(t, servertest.WithManualClock(t0))
	cp := &capture{}
	inst.Srv.Lock()
	inst.Srv.Env.SetPropSink(cp)
	inst.Srv.Env.SetActiveExpire(false)
	inst.Srv.Unlock()
	return inst, cp, inst.Raw(t)
}

func TestPropagateRewrites(t *testing.T) {
	_, cp, c := propInstance(t)
	cases := []struct {
		cmd  []string
		want string
	}{
		{[]string{"SET", "a", "1"}, "SET a 1"},
		{[]string{"GET", "a"}, ""},
		{[]string{"SET", "a", "1", "NX"}, ""}, // no change: nothing
		{[]string{"INCR", "a"}, "INCR a"},
		{[]string{"EXPIRE", "a", "100"}, "PEXPIREAT a 1700000100000"},
		{[]string{"PEXPIRE", "a", "500", "GT"}, ""},
		// The condition stays, as in redis-server 7.0.15's replication stream.
		{[]string{"PEXPIRE", "a", "500000", "GT"}, "PEXPIREAT a 1700000500000 GT"},
		{[]string{"EXPIREAT", "a", "1800000000"}, "PEXPIREAT a 1800000000000"},
		{[]string{"SETEX", "b", "10", "v"}, "SET b v PXAT 1700000010000"},
		{[]string{"PSETEX", "b", "10", "v"}, "SET b v PXAT 1700000000010"},
		{[]string{"SET", "c", "v", "EX", "5", "GET"}, "SET c v PXAT 1700000005000"},
		{[]string{"SET", "c", "w", "KEEPTTL"}, "SET c w KEEPTTL"},
		{[]string{"GETEX", "c", "PX", "7"}, "PEXPIREAT c 1700000000007"},
		{[]string{"GETEX", "c", "PERSIST"}, "PERSIST c"},
		{[]string{"GETEX", "c"}, ""},
		{[]string{"INCRBYFLOAT", "f", "1.10"}, "SET f 1.1 KEEPTTL"},
		{[]string{"HINCRBYFLOAT", "h", "x", "2.5"}, "HSET h x 2.5"},
		{[]string{"HINCRBY", "h", "y", "3"}, "HINCRBY h y 3"},
		{[]string{"ZADD", "z", "1", "m"}, "ZADD z 1 m"},
		{[]string{"SADD", "s", "only"}, "SADD s only"},
		{[]string{"SPOP", "s"}, "SREM s only"},
		{[]string{"SPOP", "s"}, ""},
		{[]string{"EXPIRE", "a", "-1"}, "DEL a"},
		{[]string{"DEL", "nothing"}, ""},
		{[]string{"RPUSH", "l", "x", "y"}, "RPUSH l x y"},
		{[]string{"BLPOP", "l", "0"}, "LPOP l"},
		{[]string{"BLMOVE", "l", "l2", "RIGHT", "LEFT", "0"}, "LMOVE l l2 RIGHT LEFT"},
		{[]string{"ZADD", "z", "2", "n"}, "ZADD z 2 n"},
		{[]string{"BZPOPMIN", "z", "0"}, "ZPOPMIN z"},
		{[]string{"BZMPOP", "0", "1", "z", "MAX", "COUNT", "5"}, "ZPOPMAX z 1"},
		{[]string{"RPUSH", "m", "1", "2", "3"}, "RPUSH m 1 2 3"},
		{[]string{"BLMPOP", "0", "1", "m", "RIGHT", "COUNT", "2"}, "RPOP m 2"},
		{[]string{"HSET", "hf", "a", "1", "b", "2"}, "HSET hf a 1 b 2"},
		{[]string{"HEXPIRE", "hf", "10", "FIELDS", "1", "a"}, "HPEXPIREAT hf 1700000010000 FIELDS 1 a"},
		{[]string{"HPEXPIRE", "hf", "10", "NX", "FIELDS", "1", "b"}, "HPEXPIREAT hf 1700000000010 NX FIELDS 1 b"},
		{[]string{"HSETEX", "hf", "EX", "3", "FIELDS", "1", "c", "v"}, "HSETEX hf PXAT 1700000003000 FIELDS 1 c v"},
		{[]string{"HGETEX", "hf", "PX", "4", "FIELDS", "1", "c"}, "HGETEX hf PXAT 1700000000004 FIELDS 1 c"},
		{[]string{"RESTORE", "r", "0", "x"}, ""},
		{[]string{"TS.ADD", "ts", "*", "1"}, "TS.ADD ts 1700000000000 1"},
		{[]string{"TS.ADD", "ts", "1700000000001", "2"}, "TS.ADD ts 1700000000001 2"},
		{[]string{"TS.MADD", "ts", "1700000000002", "3", "ts", "*", "4"}, "TS.MADD ts 1700000000002 3 ts 1700000000000 4"},
		{[]string{"TS.INCRBY", "tc", "5"}, "TS.INCRBY tc 5 TIMESTAMP 1700000000000"},
		{[]string{"TS.DECRBY", "tc", "1", "TIMESTAMP", "*"}, "TS.DECRBY tc 1 TIMESTAMP 1700000000000"},
		{[]string{"SELECT", "2"}, ""},
		{[]string{"SET", "k", "v"}, "SELECT 2 | SET k v"},
		{[]string{"SELECT", "0"}, ""},
	}
	for _, tc := range cases {
		c.Do(tc.cmd...)
		if got := cp.take(); got != tc.want {
			t.Errorf("%v propagated %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

func TestPropagateTransactionsScriptsExpiry(t *testing.T) {
	inst, cp, c := propInstance(t)
	c.Do("MULTI")
	c.Do("INCR", "x")
	c.Do("GET", "x")
	c.Do("EXPIRE", "x", "10")
	c.Do("EXEC")
	if got := cp.take(); got != "MULTI | INCR x | PEXPIREAT x 1700000010000 | EXEC" {
		t.Errorf("EXEC propagated %q", got)
	}
	c.Do("MULTI")
	c.Do("INCR", "x")
	c.Do("EXEC")
	if got := cp.take(); got != "INCR x" {
		t.Errorf("EXEC of one write propagated %q", got)
	}
	c.Do("EVAL", "redis.call('set','s1','a'); redis.call('get','s1'); return redis.call('spop','none')", "0")
	if got := cp.take(); got != "set s1 a" {
		t.Errorf("EVAL propagated %q", got)
	}
	c.Do("EVAL", "redis.call('incr','e1'); redis.call('incr','e2')", "0")
	if got := cp.take(); got != "MULTI | incr e1 | incr e2 | EXEC" {
		t.Errorf("EVAL of two writes propagated %q", got)
	}
	// A transactional script that fails rolls back and emits nothing.
	c.Do("CONFIG", "SET", "script-transactional", "yes")
	r := c.Do("EVAL", "redis.call('incr','e1'); error('boom')", "0")
	if !strings.HasPrefix(r, "-") {
		t.Fatalf("failing script answered %q", r)
	}
	if got := cp.take(); got != "" {
		t.Errorf("rolled-back script propagated %q", got)
	}
	c.Do("CONFIG", "SET", "script-transactional", "no")
	// A lazily expired key is propagated as DEL before the command.
	c.Do("SET", "tmp", "v", "PX", "100")
	cp.take()
	inst.Clock.Advance(200 * time.Millisecond)
	c.Do("GET", "tmp")
	if got := cp.take(); got != "DEL tmp" {
		t.Errorf("lazy expiry propagated %q", got)
	}
	// A blocked client served by another's push: the push, then the pop.
	waiter := inst.Raw(t)
	waiter.Write(servertest.Encode("BRPOP", "q", "0"))
	// A budget in time, not in 1 ms polls (about a second, which a
	// loaded machine can take to schedule the waiter's goroutine).
	for deadline := time.Now().Add(10 * time.Second); ; {
		if strings.Contains(c.Do("INFO", "clients"), "blocked_clients:1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("client did not block")
		}
		time.Sleep(time.Millisecond)
	}
	c.Do("LPUSH", "q", "item")
	if r := waiter.Read(); !strings.Contains(r, "item") {
		t.Fatalf("waiter got %q", r)
	}
	if got := cp.take(); got != "LPUSH q item | RPOP q" {
		t.Errorf("served BRPOP propagated %q", got)
	}
}

func TestPropagateRestoreAbsTTL(t *testing.T) {
	_, cp, c := propInstance(t)
	c.Do("SET", "src", "value")
	r := c.Do("DUMP", "src")
	i := strings.Index(r, "\r\n")
	payload := r[i+2 : len(r)-2]
	cp.take()
	c.Do("RESTORE", "dst", "5000", payload)
	if got, want := cp.take(), "RESTORE dst 1700000005000 "+payload+" ABSTTL"; got != want {
		t.Errorf("RESTORE propagated %q, want %q", got, want)
	}
	c.Do("RESTORE", "dst2", "1800000000000", payload, "ABSTTL")
	if got, want := cp.take(), "RESTORE dst2 1800000000000 "+payload+" ABSTTL"; got != want {
		t.Errorf("RESTORE ABSTTL propagated %q, want %q", got, want)
	}
}

// The active expiry cycle's deletions are propagated as DEL, outside any
// command.
func TestPropagateActiveExpiry(t *testing.T) {
	inst, cp, c := propInstance(t)
	c.Do("SELECT", "4")
	c.Do("SET", "gone", "v", "PX", "100")
	if got := cp.take(); got != "SELECT 4 | SET gone v PXAT 1700000000100" {
		t.Fatalf("SET propagated %q", got)
	}
	inst.Clock.Advance(time.Second)
	inst.Srv.Lock()
	inst.Srv.Env.SetActiveExpire(true)
	inst.Srv.Unlock()
	for i := 0; ; i++ {
		if got := cp.take(); got != "" {
			if got != "DEL gone" {
				t.Fatalf("active expiry propagated %q", got)
			}
			break
		}
		if i > 2000 {
			t.Fatal("the active cycle did not propagate the expired key")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
