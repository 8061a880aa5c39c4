package commands_test

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Client-level tests of the hash commands through go-redis and raw RESP.

func hhEq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

func hhNoErr(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func hhErr(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || err.Error() != want {
		t.Errorf("%s: got error %v, want %q", what, err, want)
	}
}

func hhSorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestHashesGoRedisBasics(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := context.Background()

	n, err := c.HSet(ctx, "h", "a", "1", "b", "2", "c", "3").Result()
	hhNoErr(t, "HSET", err)
	hhEq(t, "HSET created", n, int64(3))
	n, _ = c.HSet(ctx, "h", "a", "10", "d", "4").Result()
	hhEq(t, "HSET again", n, int64(1))
	ok, err := c.HMSet(ctx, "h", "e", "5").Result()
	hhNoErr(t, "HMSET", err)
	hhEq(t, "HMSET", ok, true)

	v, err := c.HGet(ctx, "h", "a").Result()
	hhNoErr(t, "HGET", err)
	hhEq(t, "HGET a", v, "10")
	_, err = c.HGet(ctx, "h", "zz").Result()
	hhEq[error](t, "HGET missing field", err, redis.Nil)
	_, err = c.HGet(ctx, "nokey", "a").Result()
	hhEq[error](t, "HGET missing key", err, redis.Nil)

	vals, err := c.HMGet(ctx, "h", "a", "zz", "e").Result()
	hhNoErr(t, "HMGET", err)
	if len(vals) != 3 || vals[0] != "10" || vals[1] != nil || vals[2] != "5" {
		t.Errorf("HMGET: %v", vals)
	}

	all, err := c.HGetAll(ctx, "h").Result()
	hhNoErr(t, "HGETALL", err)
	want := map[string]string{"a": "10", "b": "2", "c": "3", "d": "4", "e": "5"}
	if !maps.Equal(all, want) {
		t.Errorf("HGETALL: %v", all)
	}
	keys, _ := c.HKeys(ctx, "h").Result()
	hhEq(t, "HKEYS order", strings.Join(keys, ","), "a,b,c,d,e") // listpack: insertion order
	hvals, _ := c.HVals(ctx, "h").Result()
	hhEq(t, "HVALS order", strings.Join(hvals, ","), "10,2,3,4,5")
	l, _ := c.HLen(ctx, "h").Result()
	hhEq(t, "HLEN", l, int64(5))
	ex, _ := c.HExists(ctx, "h", "b").Result()
	hhEq(t, "HEXISTS b", ex, true)
	ex, _ = c.HExists(ctx, "h", "zz").Result()
	hhEq(t, "HEXISTS zz", ex, false)
	sl, _ := c.HStrLen(ctx, "h", "a").Result()
	hhEq(t, "HSTRLEN", sl, int64(2))

	set, _ := c.HSetNX(ctx, "h", "a", "x").Result()
	hhEq(t, "HSETNX existing", set, false)
	set, _ = c.HSetNX(ctx, "h", "f", "6").Result()
	hhEq(t, "HSETNX new", set, true)

	d, _ := c.HDel(ctx, "h", "a", "zz", "b").Result()
	hhEq(t, "HDEL", d, int64(2))
	d, _ = c.HDel(ctx, "h", "c", "d", "e", "f").Result()
	hhEq(t, "HDEL rest", d, int64(4))
	e, _ := c.Exists(ctx, "h").Result()
	hhEq(t, "the emptied hash is deleted", e, int64(0))

	// WRONGTYPE.
	c.Set(ctx, "s", "x", 0)
	_, err = c.HSet(ctx, "s", "a", "1").Result()
	hhErr(t, "HSET on a string", err, "WRONGTYPE Operation against a key holding the wrong kind of value")
	_, err = c.HGetAll(ctx, "s").Result()
	hhErr(t, "HGETALL on a string", err, "WRONGTYPE Operation against a key holding the wrong kind of value")
	tp, _ := c.Type(ctx, "h2").Result()
	hhEq(t, "TYPE of nothing", tp, "none")
	c.HSet(ctx, "h2", "a", "1")
	tp, _ = c.Type(ctx, "h2").Result()
	hhEq(t, "TYPE", tp, "hash")
}

func TestHashesGoRedisIncr(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := context.Background()

	n, err := c.HIncrBy(ctx, "h", "n", 5).Result()
	hhNoErr(t, "HINCRBY new", err)
	hhEq(t, "HINCRBY new", n, int64(5))
	n, _ = c.HIncrBy(ctx, "h", "n", -7).Result()
	hhEq(t, "HINCRBY", n, int64(-2))
	c.HSet(ctx, "h", "t", "abc", "max", strconv.FormatInt(1<<63-1, 10))
	_, err = c.HIncrBy(ctx, "h", "t", 1).Result()
	hhErr(t, "HINCRBY text", err, "ERR hash value is not an integer")
	_, err = c.HIncrBy(ctx, "h", "max", 1).Result()
	hhErr(t, "HINCRBY overflow", err, "ERR increment or decrement would overflow")
	_, err = c.Do(ctx, "HINCRBY", "h", "n", "x").Result()
	hhErr(t, "HINCRBY bad increment", err, "ERR value is not an integer or out of range")

	f, err := c.HIncrByFloat(ctx, "h", "f", 10.5).Result()
	hhNoErr(t, "HINCRBYFLOAT", err)
	hhEq(t, "HINCRBYFLOAT", f, 10.5)
	s, _ := c.Do(ctx, "HINCRBYFLOAT", "h", "f", "0.1").Text()
	hhEq(t, "HINCRBYFLOAT formatting", s, "10.6")
	s, _ = c.Do(ctx, "HINCRBYFLOAT", "h", "g", "1e30").Text()
	hhEq(t, "HINCRBYFLOAT 1e30 (as redis-server prints it)", s, "1000000000000000000024696061952")
	s, _ = c.Do(ctx, "HINCRBYFLOAT", "h", "n", "1.5").Text()
	hhEq(t, "HINCRBYFLOAT of an integer", s, "-0.5")
	_, err = c.Do(ctx, "HINCRBYFLOAT", "h", "f", "inf").Result()
	hhErr(t, "HINCRBYFLOAT inf", err, "ERR value is NaN or Infinity")
	_, err = c.Do(ctx, "HINCRBYFLOAT", "h", "t", "1").Result()
	hhErr(t, "HINCRBYFLOAT text", err, "ERR hash value is not a float")
	_, err = c.Do(ctx, "HINCRBYFLOAT", "h", "f", "abc").Result()
	hhErr(t, "HINCRBYFLOAT bad increment", err, "ERR value is not a valid float")
	c.HSet(ctx, "h", "big", "1e4932")
	_, err = c.Do(ctx, "HINCRBYFLOAT", "h", "big", "1e4932").Result()
	hhErr(t, "HINCRBYFLOAT overflow", err, "ERR increment would produce NaN or Infinity")
	v, _ := c.HGet(ctx, "h", "f").Result()
	hhEq(t, "stored float", v, "10.6")
}

func TestHashesGoRedisRandfield(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := context.Background()
	fields := map[string]string{}
	for i := 0; i < 20; i++ {
		fields["f"+strconv.Itoa(i)] = "v" + strconv.Itoa(i)
		c.HSet(ctx, "h", "f"+strconv.Itoa(i), "v"+strconv.Itoa(i))
	}
	got, err := c.HRandField(ctx, "h", 5).Result()
	hhNoErr(t, "HRANDFIELD 5", err)
	hhEq(t, "HRANDFIELD 5 count", len(got), 5)
	seen := map[string]bool{}
	for _, f := range got {
		if _, ok := fields[f]; !ok || seen[f] {
			t.Errorf("HRANDFIELD 5 gave %q (repeated or unknown) in %v", f, got)
		}
		seen[f] = true
	}
	got, _ = c.HRandField(ctx, "h", -50).Result()
	hhEq(t, "HRANDFIELD -50 count", len(got), 50)
	got, _ = c.HRandField(ctx, "h", 100).Result()
	hhEq(t, "HRANDFIELD 100 gives the hash", len(got), 20)
	kv, err := c.HRandFieldWithValues(ctx, "h", -7).Result()
	hhNoErr(t, "HRANDFIELD WITHVALUES", err)
	hhEq(t, "pairs", len(kv), 7)
	for _, p := range kv {
		if fields[p.Key] != p.Value {
			t.Errorf("HRANDFIELD WITHVALUES paired %q with %q", p.Key, p.Value)
		}
	}
	one, err := c.Do(ctx, "HRANDFIELD", "h").Text()
	hhNoErr(t, "HRANDFIELD", err)
	if _, ok := fields[one]; !ok {
		t.Errorf("HRANDFIELD gave %q", one)
	}
	_, err = c.Do(ctx, "HRANDFIELD", "nokey").Result()
	hhEq[error](t, "HRANDFIELD missing", err, redis.Nil)
	empty, _ := c.HRandField(ctx, "nokey", 3).Result()
	hhEq(t, "HRANDFIELD missing count", len(empty), 0)

	// Every field turns up: a rough check that the picks are spread.
	counts := map[string]int{}
	all, _ := c.HRandField(ctx, "h", -4000).Result()
	for _, f := range all {
		counts[f]++
	}
	for f := range fields {
		if counts[f] < 100 { // 200 expected each
			t.Errorf("field %s picked %d times in 4000", f, counts[f])
		}
	}
}

func TestHashesGoRedisScan(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := context.Background()
	c.HSet(ctx, "small", "a", "1", "b", "2", "ab", "3")
	items, cursor, err := c.HScan(ctx, "small", 0, "", 1).Result()
	hhNoErr(t, "HSCAN", err)
	hhEq(t, "small hash in one call", cursor, uint64(0))
	hhEq(t, "small HSCAN", strings.Join(items, ","), "a,1,b,2,ab,3")
	items, _, _ = c.HScan(ctx, "small", 0, "a*", 0).Result()
	hhEq(t, "HSCAN MATCH", strings.Join(items, ","), "a,1,ab,3")
	items, _, err = c.HScanNoValues(ctx, "small", 0, "", 0).Result()
	hhNoErr(t, "HSCAN NOVALUES", err)
	hhEq(t, "HSCAN NOVALUES", strings.Join(items, ","), "a,b,ab")
	items, _, _ = c.HScanNoValues(ctx, "small", 0, "?", 0).Result()
	hhEq(t, "HSCAN MATCH NOVALUES", strings.Join(items, ","), "a,b")
	_, err = c.Do(ctx, "HSCAN", "small", "0", "NOVALUES", "COUNT", "0").Result()
	hhErr(t, "HSCAN COUNT 0", err, "ERR syntax error")

	// A big hash: a whole iteration returns every field, in several calls.
	want := map[string]string{}
	for i := 0; i < 2000; i++ {
		want["field:"+strconv.Itoa(i)] = strconv.Itoa(i * 3)
	}
	args := []any{}
	for k, v := range want {
		args = append(args, k, v)
	}
	c.HSet(ctx, "big", args...)
	enc, _ := c.ObjectEncoding(ctx, "big").Result()
	hhEq(t, "big encoding", enc, "hashtable")
	got := map[string]string{}
	calls := 0
	for cur := uint64(0); ; {
		items, next, err := c.HScan(ctx, "big", cur, "", 50).Result()
		hhNoErr(t, "HSCAN big", err)
		calls++
		for i := 0; i+1 < len(items); i += 2 {
			got[items[i]] = items[i+1]
		}
		if cur = next; cur == 0 {
			break
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("HSCAN iteration returned %d fields of %d", len(got), len(want))
	}
	if calls < 10 {
		t.Errorf("HSCAN COUNT 50 of 2000 fields took %d calls", calls)
	}
	// MATCH and NOVALUES over the big hash.
	var names []string
	for cur := uint64(0); ; {
		items, next, _ := c.HScanNoValues(ctx, "big", cur, "field:1?", 100).Result()
		names = append(names, items...)
		if cur = next; cur == 0 {
			break
		}
	}
	hhEq(t, "MATCH field:1? NOVALUES", len(hhSorted(slices.Compact(hhSorted(names)))), 10)
}

// TestHashesCopyRenameMove checks the keyspace commands on hashes: COPY
// makes an independent copy, RENAME and MOVE take the hash along.
func TestHashesCopyRenameMove(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := context.Background()
	c.HSet(ctx, "h", "a", "1", "b", "2")
	ok, err := c.Copy(ctx, "h", "h2", 0, false).Result()
	hhNoErr(t, "COPY", err)
	hhEq(t, "COPY", ok, int64(1))
	c.HSet(ctx, "h2", "a", "changed")
	v, _ := c.HGet(ctx, "h", "a").Result()
	hhEq(t, "the original after writing the copy", v, "1")
	enc, _ := c.ObjectEncoding(ctx, "h2").Result()
	hhEq(t, "copy's encoding", enc, "listpack")
	c.Rename(ctx, "h2", "h3")
	v, _ = c.HGet(ctx, "h3", "a").Result()
	hhEq(t, "renamed", v, "changed")
	c.Move(ctx, "h3", 1)
	r := inst.Raw(t)
	r.Do("SELECT", "1")
	hhEq(t, "moved", r.Do("HGET", "h3", "b"), "$1\r\n2\r\n")
	mem, err := c.MemoryUsage(ctx, "h").Result()
	hhNoErr(t, "MEMORY USAGE", err)
	if mem <= 0 {
		t.Errorf("MEMORY USAGE %d", mem)
	}
}

// TestHashesRawRESP checks exact replies in RESP2 and RESP3.
func TestHashesRawRESP(t *testing.T) {
	inst := servertest.Start(t)
	r := inst.Raw(t)
	for _, tc := range []struct{ cmd, want string }{
		{"HSET h a 1 b 2", ":2\r\n"},
		{"HGETALL h", "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"},
		{"HGETALL nokey", "*0\r\n"},
		{"HGET h zz", "$-1\r\n"},
		{"HMGET h a zz", "*2\r\n$1\r\n1\r\n$-1\r\n"},
		{"HMSET h c 3", "+OK\r\n"},
		{"HSET h c", "-ERR wrong number of arguments for 'hset' command\r\n"},
		{"HMSET h c", "-ERR wrong number of arguments for 'hmset' command\r\n"},
		{"HRANDFIELD h 2 WITHVALUES x", "-ERR syntax error\r\n"},
		{"HSCAN h 0 MATCH b*", "*2\r\n$1\r\n0\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n"},
		{"HSCAN h 0 MATCH b* NOVALUES", "*2\r\n$1\r\n0\r\n*1\r\n$1\r\nb\r\n"},
		{"HSCAN nokey 0 NOVALUES", "*2\r\n$1\r\n0\r\n*0\r\n"},
		{"HINCRBYFLOAT h f 3.0e3", "$4\r\n3000\r\n"},
		{"HELLO 3", ""},
		{"HGETALL nokey", "%0\r\n"},
		{"HGET h zz", "_\r\n"},
		{"HGETALL h", "%4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nf\r\n$4\r\n3000\r\n"},
		{"HRANDFIELD h 10 WITHVALUES", "*4\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$1\r\nf\r\n$4\r\n3000\r\n"},
		{"HRANDFIELD nokey", "_\r\n"},
		{"HMGET nokey a", "*1\r\n_\r\n"},
	} {
		got := r.Do(strings.Fields(tc.cmd)...)
		if tc.want != "" && got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.cmd, got, tc.want)
		}
	}
}

// TestHashesConfigLimits checks that CONFIG SET of the listpack limits
// applies to existing hashes at their next write.
func TestHashesConfigLimits(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("hash-max-listpack-entries", "4"))
	c := inst.Client(t)
	ctx := context.Background()
	c.HSet(ctx, "h", "a", "1", "b", "2", "c", "3")
	enc, _ := c.ObjectEncoding(ctx, "h").Result()
	hhEq(t, "3 fields", enc, "listpack")
	c.ConfigSet(ctx, "hash-max-listpack-entries", "2")
	enc, _ = c.ObjectEncoding(ctx, "h").Result()
	hhEq(t, "after CONFIG SET, before a write", enc, "listpack")
	c.HSet(ctx, "h", "a", "again")
	enc, _ = c.ObjectEncoding(ctx, "h").Result()
	hhEq(t, "an update adds no entry", enc, "listpack")
	c.HSet(ctx, "h", "d", "4")
	enc, _ = c.ObjectEncoding(ctx, "h").Result()
	hhEq(t, "after an insert", enc, "hashtable")
	c.ConfigSet(ctx, "hash-max-listpack-value", "3")
	c.HSet(ctx, "g", "abc", "xyz")
	enc, _ = c.ObjectEncoding(ctx, "g").Result()
	hhEq(t, "value at the limit", enc, "listpack")
	c.HSet(ctx, "g", "abc", "wxyz")
	enc, _ = c.ObjectEncoding(ctx, "g").Result()
	hhEq(t, "value past the limit", enc, "hashtable")
}

// TestHashesWatch checks that hash writes, in place or not, and the
// deletion of a hash whose last field expired abort a transaction that
// WATCHes the key, and that reads do not.
func TestHashesWatch(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(hhT0), servertest.WithConfig("hz", "100"))
	a, b := inst.Raw(t), inst.Raw(t)
	b.Do("HSET", "h", "a", "1", "b", "2")
	for _, tc := range []struct {
		write   []string
		aborted bool
	}{
		{[]string{"HGET", "h", "a"}, false},
		{[]string{"HGETALL", "h"}, false},
		{[]string{"HSET", "h", "a", "1"}, true},
		{[]string{"HINCRBY", "h", "a", "1"}, true},
		{[]string{"HDEL", "h", "zz"}, false},
		{[]string{"HDEL", "h", "a"}, true},
		{[]string{"HSETNX", "h", "a", "1"}, true},
		{[]string{"HSETNX", "h", "a", "2"}, false},
		{[]string{"HEXPIRE", "h", "100", "FIELDS", "1", "a"}, true},
		{[]string{"HEXPIRE", "h", "100", "NX", "FIELDS", "1", "a"}, false},
		{[]string{"HPERSIST", "h", "FIELDS", "1", "a"}, true},
		{[]string{"HPERSIST", "h", "FIELDS", "1", "a"}, false},
		{[]string{"HGETDEL", "h", "FIELDS", "1", "zz"}, false},
		{[]string{"HSETEX", "h", "FNX", "FIELDS", "1", "a", "x"}, false},
		{[]string{"HSETEX", "h", "FXX", "FIELDS", "1", "a", "x"}, true},
	} {
		a.Do("WATCH", "h")
		b.Do(tc.write...)
		a.Do("MULTI")
		a.Do("HLEN", "h")
		got := a.Do("EXEC")
		if aborted := got == "*-1\r\n"; aborted != tc.aborted {
			t.Errorf("WATCH h, then %v: EXEC gave %q", tc.write, got)
		}
	}

	// The active cycle deleting the hash with its last field is a change.
	b.Do("HPEXPIRE", "h", "100", "FIELDS", "2", "a", "b")
	a.Do("WATCH", "h")
	inst.Clock.Advance(100 * time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for b.Do("DBSIZE") != ":0\r\n" {
		if time.Now().After(deadline) {
			t.Fatal("the expired hash was not reclaimed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	a.Do("MULTI")
	a.Do("HLEN", "h")
	if got := a.Do("EXEC"); got != "*-1\r\n" {
		t.Errorf("EXEC after the watched hash expired: %q", got)
	}
}
