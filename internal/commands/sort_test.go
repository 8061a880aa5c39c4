package commands_test

// Tests of SORT and SORT_RO against an in-process server, through go-redis
// and raw RESP: every option, the errors, the effects of STORE (WATCH,
// blocked clients, TTL, dirty count), expiry of the keys patterns read,
// and the statistics. Helpers start with "so".

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

func soEqual(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s = %q, want %q", what, got, want)
	}
}

func TestSortGoRedis(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.RPush(ctx, "l", 3, 1, 2, 10, "1.5").Err())

	got, err := c.Sort(ctx, "l", &redis.Sort{}).Result()
	must(err)
	soEqual(t, "SORT l", got, []string{"1", "1.5", "2", "3", "10"})
	got, err = c.Sort(ctx, "l", &redis.Sort{Order: "DESC"}).Result()
	must(err)
	soEqual(t, "SORT l DESC", got, []string{"10", "3", "2", "1.5", "1"})
	got, err = c.Sort(ctx, "l", &redis.Sort{Alpha: true}).Result()
	must(err)
	soEqual(t, "SORT l ALPHA", got, []string{"1", "1.5", "10", "2", "3"})
	got, err = c.Sort(ctx, "l", &redis.Sort{Offset: 1, Count: 2}).Result()
	must(err)
	soEqual(t, "SORT l LIMIT 1 2", got, []string{"1.5", "2"})
	got, err = c.SortRO(ctx, "l", &redis.Sort{Offset: 3, Count: 100, Order: "DESC"}).Result()
	must(err)
	soEqual(t, "SORT_RO l LIMIT 3 100 DESC", got, []string{"1.5", "1"})
	got, err = c.Sort(ctx, "l", &redis.Sort{By: "nosort", Order: "DESC", Offset: 1, Count: 2}).Result()
	must(err)
	soEqual(t, "SORT l BY nosort DESC LIMIT 1 2", got, []string{"10", "2"})

	// BY weights in string keys and hash fields; GET #, keys, fields.
	must(c.MSet(ctx, "w_1", 5, "w_2", 4, "w_3", 3, "w_10", 2, "w_1.5", 1).Err())
	got, err = c.Sort(ctx, "l", &redis.Sort{By: "w_*"}).Result()
	must(err)
	soEqual(t, "SORT l BY w_*", got, []string{"1.5", "10", "3", "2", "1"})
	must(c.HSet(ctx, "u_1", "name", "one", "age", "30").Err())
	must(c.HSet(ctx, "u_2", "name", "two", "age", "20").Err())
	must(c.HSet(ctx, "u_3", "name", "three").Err())
	vals, err := c.SortInterfaces(ctx, "l", &redis.Sort{By: "u_*->age", Get: []string{"#", "u_*->name"}}).Result()
	must(err)
	want := []any{"1.5", nil, "10", nil, "3", "three", "2", "two", "1", "one"}
	if !slices.Equal(vals, want) {
		t.Fatalf("SORT l BY u_*->age GET # GET u_*->name = %q, want %q", vals, want)
	}
	got, err = c.Sort(ctx, "l", &redis.Sort{By: "u_*->name", Alpha: true, Get: []string{"u_*->name"}, Offset: 2, Count: 3}).Result()
	must(err)
	soEqual(t, "SORT l BY u_*->name ALPHA LIMIT 2 3 GET u_*->name", got, []string{"one", "three", "two"})

	// STORE: a list of the rows, its length as the reply.
	n, err := c.SortStore(ctx, "l", "dst", &redis.Sort{Order: "DESC", Get: []string{"#", "w_*"}}).Result()
	must(err)
	if n != 10 {
		t.Fatalf("SORT STORE = %d, want 10", n)
	}
	got, err = c.LRange(ctx, "dst", 0, -1).Result()
	must(err)
	soEqual(t, "stored list", got, []string{"10", "2", "3", "3", "2", "4", "1.5", "1", "1", "5"})
	if n, err := c.SortStore(ctx, "l", "dst", &redis.Sort{Offset: 10, Count: 1}).Result(); err != nil || n != 0 {
		t.Fatalf("SORT STORE of nothing = %d, %v", n, err)
	}
	if n := c.Exists(ctx, "dst").Val(); n != 0 {
		t.Fatal("an empty SORT STORE must delete the destination")
	}

	// Sets and sorted sets.
	must(c.SAdd(ctx, "s", 5, 3, 9).Err())
	got, err = c.Sort(ctx, "s", &redis.Sort{Order: "DESC"}).Result()
	must(err)
	soEqual(t, "SORT s DESC", got, []string{"9", "5", "3"})
	must(c.ZAdd(ctx, "z", redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 1, Member: "c"}, redis.Z{Score: 3, Member: "a"}).Err())
	got, err = c.Sort(ctx, "z", &redis.Sort{By: "nosort"}).Result()
	must(err)
	soEqual(t, "SORT z BY nosort", got, []string{"c", "b", "a"})
	got, err = c.Sort(ctx, "z", &redis.Sort{Alpha: true}).Result()
	must(err)
	soEqual(t, "SORT z ALPHA", got, []string{"a", "b", "c"})
	if enc := c.ObjectEncoding(ctx, "z").Val(); enc != "skiplist" {
		t.Fatalf("a sorted set SORT read is %q, want skiplist (Redis converts it)", enc)
	}

	// Errors.
	must(c.Set(ctx, "str", "x", 0).Err())
	if err := c.Sort(ctx, "str", &redis.Sort{}).Err(); err == nil || err.Error() != "WRONGTYPE Operation against a key holding the wrong kind of value" {
		t.Fatalf("SORT of a string: %v", err)
	}
	if err := c.Sort(ctx, "z", &redis.Sort{}).Err(); err == nil || err.Error() != "ERR One or more scores can't be converted into double" {
		t.Fatalf("numeric SORT of words: %v", err)
	}
	if err := c.SortStore(ctx, "z", "dst", &redis.Sort{}).Err(); err == nil {
		t.Fatal("numeric SORT STORE of words must fail")
	}
	if c.Exists(ctx, "dst").Val() != 0 {
		t.Fatal("a failed SORT STORE must not write")
	}
	var rerr redis.Error
	if err := c.Do(ctx, "SORT_RO", "l", "STORE", "dst").Err(); !errors.As(err, &rerr) || err.Error() != "ERR syntax error" {
		t.Fatalf("SORT_RO STORE: %v", err)
	}
	if err := c.Do(ctx, "SORT", "l", "LIMIT", "x", "1").Err(); err == nil || err.Error() != "ERR value is not an integer or out of range" {
		t.Fatalf("SORT LIMIT x: %v", err)
	}
	if got := c.Sort(ctx, "nokey", &redis.Sort{Get: []string{"#"}}).Val(); len(got) != 0 {
		t.Fatalf("SORT of a missing key = %q", got)
	}
}

func TestSortRaw(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	expect := func(want string, args ...string) {
		t.Helper()
		if got := c.Do(args...); got != want {
			t.Fatalf("%q: got %q, want %q", args, got, want)
		}
	}
	expect(":3\r\n", "RPUSH", "l", "b", "a", "c")
	expect("*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", "SORT", "l", "ALPHA")
	expect("*3\r\n$-1\r\n$-1\r\n$-1\r\n", "SORT", "l", "BY", "nosort", "GET", "missing_*")
	expect("*6\r\n$1\r\nb\r\n$-1\r\n$1\r\na\r\n$-1\r\n$1\r\nc\r\n$-1\r\n", "SORT", "l", "BY", "nosort", "GET", "#", "GET", "nostar")
	expect("-ERR wrong number of arguments for 'sort' command\r\n", "SORT")
	expect("-ERR wrong number of arguments for 'sort_ro' command\r\n", "SORT_RO")
	expect("-ERR syntax error\r\n", "SORT", "l", "LIMIT", "1")
	expect("-ERR syntax error\r\n", "SORT_RO", "l", "STORE", "d")
	expect(":3\r\n", "SORT", "l", "ALPHA", "GET", "missing_*", "STORE", "d")
	expect("*3\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n", "LRANGE", "d", "0", "-1") // missing GET values are stored empty
	// RESP3 nulls.
	if r := c.Do("HELLO", "3"); !strings.HasPrefix(r, "%") {
		t.Fatalf("HELLO 3: %q", r)
	}
	expect("*2\r\n$1\r\nb\r\n_\r\n", "SORT", "l", "BY", "nosort", "LIMIT", "0", "1", "GET", "#", "GET", "missing_*")
	// Keys for WATCH, ACL and clusters: the key, and STORE's destination.
	expect("*2\r\n$1\r\na\r\n$1\r\ne\r\n", "COMMAND", "GETKEYS", "SORT", "a", "STORE", "b", "BY", "c", "GET", "d", "STORE", "e")
	expect("*1\r\n$1\r\na\r\n", "COMMAND", "GETKEYS", "SORT_RO", "a", "BY", "x", "GET", "y")
}

// TestSortStoreEffects: STORE replaces the destination (type and TTL
// included), wakes clients blocked on it and WATCH notices it; an empty
// result deletes it. The dirty count grows as Redis's does.
func TestSortStoreEffects(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	c.Do("RPUSH", "l", "3", "1", "2")
	c.Do("SET", "dst", "x", "EX", "100")
	if r := c.Do("SORT", "l", "STORE", "dst"); r != ":3\r\n" {
		t.Fatalf("SORT STORE: %q", r)
	}
	if r := c.Do("TTL", "dst"); r != ":-1\r\n" {
		t.Fatalf("TTL after SORT STORE: %q", r)
	}
	if r := c.Do("TYPE", "dst"); r != "+list\r\n" {
		t.Fatalf("TYPE after SORT STORE: %q", r)
	}

	// Dirty: the stored length, or 1 for a deletion, nothing otherwise.
	dirty := func() int {
		info := c.Do("INFO", "persistence")
		i := strings.Index(info, "rdb_changes_since_last_save:")
		v, _ := strconv.Atoi(strings.Fields(info[i+len("rdb_changes_since_last_save:"):])[0])
		return v
	}
	for _, tc := range []struct {
		args  []string
		delta int
	}{
		{[]string{"SORT", "l", "GET", "#", "GET", "#", "STORE", "dst"}, 6},
		{[]string{"SORT", "l", "LIMIT", "0", "0", "STORE", "dst"}, 1},
		{[]string{"SORT", "l", "LIMIT", "0", "0", "STORE", "dst"}, 0},
		{[]string{"SORT", "l"}, 0},
	} {
		before := dirty()
		c.Do(tc.args...)
		if got := dirty() - before; got != tc.delta {
			t.Fatalf("%q: dirty grew by %d, want %d", tc.args, got, tc.delta)
		}
	}

	// WATCH sees the destination written.
	w := inst.Raw(t)
	w.Do("WATCH", "dst")
	c.Do("SORT", "l", "STORE", "dst")
	w.Do("MULTI")
	w.Do("PING")
	if r := w.Do("EXEC"); r != "*-1\r\n" {
		t.Fatalf("EXEC after the watched key was stored: %q", r)
	}

	// A client blocked on the destination is served.
	b := inst.Raw(t)
	b.Write(servertest.Encode("BLPOP", "newdst", "0"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		inst.Srv.Lock()
		n := inst.Srv.Env.BlockedOn(0, "newdst")
		inst.Srv.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("BLPOP never blocked")
		}
		time.Sleep(2 * time.Millisecond)
	}
	c.Do("SORT", "l", "DESC", "STORE", "newdst")
	if r := b.Read(); r != "*2\r\n$6\r\nnewdst\r\n$1\r\n3\r\n" {
		t.Fatalf("BLPOP after SORT STORE: %q", r)
	}
}

// TestSortExpiry: keys that BY and GET read and the key sorted expire
// lazily on the manual clock.
func TestSortExpiry(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(1_700_000_000_000))
	c := inst.Raw(t)
	c.Do("RPUSH", "l", "1", "2", "3")
	c.Do("SET", "w_1", "30")
	c.Do("SET", "w_2", "20", "PX", "1000")
	c.Do("SET", "w_3", "10")
	c.Do("HSET", "h_3", "f", "v3")
	if r := c.Do("SORT", "l", "BY", "w_*", "GET", "w_*"); r != "*3\r\n$2\r\n10\r\n$2\r\n20\r\n$2\r\n30\r\n" {
		t.Fatalf("before expiry: %q", r)
	}
	inst.Clock.Advance(1001 * time.Millisecond)
	if r := c.Do("SORT", "l", "BY", "w_*", "GET", "w_*"); r != "*3\r\n$-1\r\n$2\r\n10\r\n$2\r\n30\r\n" {
		t.Fatalf("after w_2 expired: %q", r)
	}
	c.Do("PEXPIRE", "l", "10")
	inst.Clock.Advance(11 * time.Millisecond)
	if r := c.Do("SORT", "l", "GET", "h_*->f"); r != "*0\r\n" {
		t.Fatalf("after the list expired: %q", r)
	}
}

// TestSortDiffStats compares what SORT counts with redis-server's counts:
// keyspace hits and misses (the sorted key and every pattern lookup) and
// the dirty counter.
func TestSortDiffStats(t *testing.T) {
	d, _ := soDiff(t)
	soLines(t, d, `
		RPUSH l 3 1 2
		MSET w_1 1 w_2 2
		HSET h_1 f x
	`)
	stat := func(c *servertest.Conn, section, name string) int {
		info := c.Do("INFO", section)
		i := strings.Index(info, name+":")
		if i < 0 {
			t.Fatalf("INFO %s has no %s", section, name)
		}
		v, _ := strconv.Atoi(strings.Fields(info[i+len(name)+1:])[0])
		return v
	}
	cmds := [][]string{
		{"SORT", "l"},
		{"SORT", "nokey"},
		{"SORT", "l", "BY", "w_*"},
		{"SORT", "l", "BY", "nosort", "GET", "w_*", "GET", "#", "GET", "h_*->f", "GET", "nostar"},
		{"SORT", "l", "BY", "w_*", "LIMIT", "0", "1", "GET", "h_*->f", "STORE", "dst"},
		{"SORT", "l", "LIMIT", "0", "0", "STORE", "dst"},
		{"SORT", "l", "LIMIT", "0", "0", "STORE", "dst"},
		{"SORT_RO", "l", "ALPHA", "BY", "h_*->f"},
		{"SORT", "l", "foo"},
	}
	for _, args := range cmds {
		type counts struct{ hits, misses, dirty int }
		read := func(c *servertest.Conn) counts {
			return counts{stat(c, "stats", "keyspace_hits"), stat(c, "stats", "keyspace_misses"), stat(c, "persistence", "rdb_changes_since_last_save")}
		}
		a0, r0 := read(d.A), read(d.R)
		d.Do(args...)
		a1, r1 := read(d.A), read(d.R)
		da := counts{a1.hits - a0.hits, a1.misses - a0.misses, a1.dirty - a0.dirty}
		dr := counts{r1.hits - r0.hits, r1.misses - r0.misses, r1.dirty - r0.dirty}
		if da != dr {
			t.Errorf("%q: abacus counted %+v, redis-server %+v", args, da, dr)
		}
	}
}

// TestSortDiffKeys compares the keys COMMAND GETKEYS finds in SORT and
// SORT_RO command lines with redis-server's sortGetKeys.
func TestSortDiffKeys(t *testing.T) {
	d, _ := soDiff(t)
	n := soLines(t, d, `
		COMMAND GETKEYS SORT a
		COMMAND GETKEYS SORT a STORE b
		COMMAND GETKEYS SORT a STORE b STORE c
		COMMAND GETKEYS SORT a STORE
		COMMAND GETKEYS SORT a store b by c get d store e
		COMMAND GETKEYS SORT a BY store STORE x
		COMMAND GETKEYS SORT a GET store x
		COMMAND GETKEYS SORT a LIMIT store x STORE y
		COMMAND GETKEYS SORT a LIMIT 1 STORE y
		COMMAND GETKEYS SORT a STORE limit 1 2
		COMMAND GETKEYS SORT a STORE limit STORE z
		COMMAND GETKEYS SORT a STORE get STORE z
		COMMAND GETKEYS SORT a foo bar STORE z
		COMMAND GETKEYS SORT_RO a
		COMMAND GETKEYS SORT_RO a STORE b
		COMMAND GETKEYS SORT_RO a BY x GET y
		COMMAND GETKEYS SORT
		COMMAND GETKEYSANDFLAGS SORT a
		COMMAND GETKEYSANDFLAGS SORT_RO a BY x
	`)
	t.Logf("%d differential cases", n)
}
