package command_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/servertest"
)

func TestKeysGoRedis(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(skT0))
	c := inst.Client(t)

	c.MSet(skCtx, "a", "1", "b", "2", "c", "3")
	skEq(t, "EXISTS counts repeats", c.Exists(skCtx, "a", "a", "nokey").Val(), int64(2))
	skEq(t, "DEL", c.Del(skCtx, "a", "nokey", "a").Val(), int64(1))
	skEq(t, "UNLINK", c.Unlink(skCtx, "b").Val(), int64(1))
	skEq(t, "TYPE", c.Type(skCtx, "c").Val(), "string")
	skEq(t, "TYPE missing", c.Type(skCtx, "nokey").Val(), "none")
	skEq(t, "TOUCH", c.Touch(skCtx, "c", "nokey").Val(), int64(1))
	skEq(t, "DBSIZE", c.DBSize(skCtx).Val(), int64(1))

	skNoErr(t, c.Expire(skCtx, "c", time.Minute).Err())
	skNoErr(t, c.Rename(skCtx, "c", "d").Err())
	skEq(t, "RENAME keeps the TTL", c.TTL(skCtx, "d").Val(), time.Minute)
	skErrIs(t, "RENAME missing", c.Rename(skCtx, "nokey", "x").Err(), "ERR no such key")
	c.Set(skCtx, "e", "5", 0)
	skEq(t, "RENAMENX onto an existing key", c.RenameNX(skCtx, "d", "e").Val(), false)
	skEq(t, "RENAMENX", c.RenameNX(skCtx, "d", "f").Val(), true)
	skEq(t, "value moved", c.Get(skCtx, "f").Val(), "3")

	skEq(t, "MOVE", c.Move(skCtx, "f", 2).Val(), true)
	skEq(t, "gone from db 0", c.Exists(skCtx, "f").Val(), int64(0))
	skEq(t, "COPY", c.Copy(skCtx, "e", "e2", 2, false).Val(), int64(1))
	skEq(t, "COPY onto an existing key", c.Copy(skCtx, "e", "e2", 2, false).Val(), int64(0))
	skEq(t, "COPY REPLACE", c.Copy(skCtx, "e", "e2", 2, true).Val(), int64(1))
	skErrIs(t, "COPY onto itself", c.Copy(skCtx, "e", "e", 0, false).Err(), "ERR source and destination objects are the same")
	skNoErr(t, c.Do(skCtx, "SWAPDB", 0, 2).Err())
	skEq(t, "after SWAPDB", c.Get(skCtx, "f").Val(), "3")
	skEq(t, "TTL moved with MOVE and SWAPDB", c.TTL(skCtx, "f").Val(), time.Minute)
	skEq(t, "copy in db 0 now", c.Get(skCtx, "e2").Val(), "5")

	keys := c.Keys(skCtx, "*").Val()
	slices.Sort(keys)
	skEq(t, "KEYS *", len(keys), 2)
	skEq(t, "KEYS pattern", c.Keys(skCtx, "e?").Val()[0], "e2")
	skEq(t, "RANDOMKEY on two keys", slices.Contains(keys, c.RandomKey(skCtx).Val()), true)
	skNoErr(t, c.FlushDB(skCtx).Err())
	skEq(t, "DBSIZE after FLUSHDB", c.DBSize(skCtx).Val(), int64(0))
	if err := c.RandomKey(skCtx).Err(); err == nil {
		t.Error("RANDOMKEY on an empty database should be nil")
	}
	c.Do(skCtx, "SELECT", "2")
	skNoErr(t, c.FlushAllAsync(skCtx).Err())

	// OBJECT: encoding, refcount, idle time under the manual clock.
	c.Set(skCtx, "i", "7", 0)
	c.Set(skCtx, "s", "text", 0)
	skEq(t, "OBJECT ENCODING int", c.ObjectEncoding(skCtx, "i").Val(), "int")
	skEq(t, "OBJECT REFCOUNT shared", c.ObjectRefCount(skCtx, "i").Val(), int64(2147483647))
	skEq(t, "OBJECT REFCOUNT", c.ObjectRefCount(skCtx, "s").Val(), int64(1))
	inst.Clock.Advance(42 * time.Second)
	skEq(t, "OBJECT IDLETIME", c.ObjectIdleTime(skCtx, "s").Val(), 42*time.Second)
	skEq(t, "OBJECT does not touch", c.ObjectIdleTime(skCtx, "s").Val(), 42*time.Second)
	c.Type(skCtx, "s")
	c.Exists(skCtx, "s")
	c.TTL(skCtx, "s")
	skEq(t, "TYPE, EXISTS and TTL do not touch", c.ObjectIdleTime(skCtx, "s").Val(), 42*time.Second)
	c.Get(skCtx, "s")
	skEq(t, "GET touches", c.ObjectIdleTime(skCtx, "s").Val(), time.Duration(0))
	inst.Clock.Advance(5 * time.Second)
	c.Touch(skCtx, "s")
	skEq(t, "TOUCH touches", c.ObjectIdleTime(skCtx, "s").Val(), time.Duration(0))
	inst.Clock.Advance(5 * time.Second)
	c.Append(skCtx, "s", "x")
	skEq(t, "a write touches", c.ObjectIdleTime(skCtx, "s").Val(), time.Duration(0))
	skErrIs(t, "OBJECT FREQ without LFU", c.ObjectFreq(skCtx, "s").Err(),
		"ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
	skEq(t, "OBJECT HELP lines", len(c.Do(skCtx, "OBJECT", "HELP").Val().([]any)), 15)
}

// TestKeysScanGrowing checks SCAN's guarantee: a key present for the whole
// iteration is returned at least once, here while the keyspace grows from
// 500 keys to many thousands (the table rehashes several times mid-scan).
func TestKeysScanGrowing(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	const orig = 500
	for i := 0; i < orig; i++ {
		c.Do("SET", "orig:"+strconv.Itoa(i), "x")
	}
	seen := map[string]int{}
	cursor, added, calls := "0", 0, 0
	for {
		v, err := skParse(c.Do("SCAN", cursor, "COUNT", "20"))
		if err != nil || len(v.items) != 2 {
			t.Fatalf("SCAN reply: %+v %v", v, err)
		}
		for _, k := range v.items[1].items {
			seen[k.str]++
		}
		cursor = v.items[0].str
		calls++
		if cursor == "0" {
			break
		}
		if calls > 100000 {
			t.Fatal("SCAN does not end")
		}
		// Grow by 150 keys between calls, pipelined, up to 20 times the
		// original size (the table doubles four times or more).
		if added >= 20*orig {
			continue
		}
		var req []byte
		for j := 0; j < 150; j++ {
			req = append(req, servertest.Encode("SET", "new:"+strconv.Itoa(added), "y")...)
			added++
		}
		c.Write(req)
		for j := 0; j < 150; j++ {
			c.Read()
		}
	}
	for i := 0; i < orig; i++ {
		if seen["orig:"+strconv.Itoa(i)] == 0 {
			t.Errorf("orig:%d present for the whole scan but never returned", i)
		}
	}
	if added < 4*orig {
		t.Errorf("the keyspace only grew by %d keys: the test did not exercise rehashing", added)
	}
	t.Logf("%d SCAN calls, %d keys added during the scan", calls, added)
}

// TestKeysScanShrinking is the same guarantee while most other keys are
// deleted during the scan, so the table shrinks under the cursor.
func TestKeysScanShrinking(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	const orig, extra = 300, 6000
	var req []byte
	for i := 0; i < orig; i++ {
		req = append(req, servertest.Encode("SET", "orig:"+strconv.Itoa(i), "x")...)
	}
	for i := 0; i < extra; i++ {
		req = append(req, servertest.Encode("SET", "extra:"+strconv.Itoa(i), "x")...)
	}
	c.Write(req)
	for i := 0; i < orig+extra; i++ {
		c.Read()
	}
	seen := map[string]bool{}
	cursor, deleted := "0", 0
	for {
		v, err := skParse(c.Do("SCAN", cursor, "COUNT", "50"))
		if err != nil || len(v.items) != 2 {
			t.Fatalf("SCAN reply: %+v %v", v, err)
		}
		for _, k := range v.items[1].items {
			seen[k.str] = true
		}
		cursor = v.items[0].str
		if cursor == "0" {
			break
		}
		var del []string
		for j := 0; j < 400 && deleted < extra; j++ {
			del = append(del, "extra:"+strconv.Itoa(deleted))
			deleted++
		}
		if len(del) > 0 {
			c.Do(append([]string{"DEL"}, del...)...)
		}
	}
	for i := 0; i < orig; i++ {
		if !seen["orig:"+strconv.Itoa(i)] {
			t.Errorf("orig:%d present for the whole scan but never returned", i)
		}
	}
	if deleted != extra {
		t.Errorf("only %d keys deleted during the scan", deleted)
	}
}

// TestKeysScanOptions checks MATCH, TYPE and COUNT on Abacus alone (the
// differential test compares whole iterations with redis-server).
func TestKeysScanOptions(t *testing.T) {
	d, inst := skDiff(t)
	skNonString(t, d, inst, 0, "alist")
	c := inst.Client(t)
	for i := 0; i < 100; i++ {
		c.Set(skCtx, "user:"+strconv.Itoa(i), i, 0)
		c.Set(skCtx, "item:"+strconv.Itoa(i), i, 0)
	}
	var users []string
	iter := c.Scan(skCtx, 0, "user:*", 7).Iterator()
	for iter.Next(skCtx) {
		users = append(users, iter.Val())
	}
	skNoErr(t, iter.Err())
	slices.Sort(users)
	users = slices.Compact(users)
	skEq(t, "SCAN MATCH user:*", len(users), 100)
	lists, _, err := c.ScanType(skCtx, 0, "", 1000, "list").Result()
	skNoErr(t, err)
	skEq(t, "SCAN TYPE list", len(lists) == 1 && lists[0] == "alist", true)
	keys, cur, err := c.Scan(skCtx, 0, "", 1000).Result()
	skNoErr(t, err)
	skEq(t, "SCAN COUNT 1000 ends in one call", cur, uint64(0))
	skEq(t, "SCAN COUNT 1000 returns all", len(keys), 201)
}

// TestKeysTouched checks that writes signal the keys they change (what
// WATCH and blocked clients hang on) and that reads and failed writes do
// not.
func TestKeysTouched(t *testing.T) {
	d, inst := skDiff(t)
	skNonString(t, d, inst, 0, "l")
	var touched []string
	inst.Srv.Lock()
	prev := inst.Srv.Env.KS.Touched
	inst.Srv.Env.KS.Touched = func(db *keyspace.DB, key string) {
		touched = append(touched, strconv.Itoa(db.ID)+":"+key)
		if prev != nil {
			prev(db, key)
		}
	}
	inst.Srv.Unlock()
	c := inst.Raw(t)
	check := func(want ...string) {
		t.Helper()
		inst.Srv.Lock()
		got := touched
		touched = nil
		inst.Srv.Unlock()
		if !slices.Equal(got, want) {
			t.Errorf("touched %q, want %q", got, want)
		}
	}
	c.Do("SET", "k", "1")
	check("0:k")
	c.Do("GET", "k")
	c.Do("MGET", "k", "x")
	c.Do("EXISTS", "k")
	c.Do("STRLEN", "k")
	c.Do("GETRANGE", "k", "0", "1")
	c.Do("TTL", "k")
	c.Do("OBJECT", "ENCODING", "k")
	check()
	c.Do("INCR", "k")
	c.Do("INCRBYFLOAT", "k", "1.5")
	c.Do("APPEND", "k", "0")
	c.Do("SETRANGE", "k", "0", "9")
	check("0:k", "0:k", "0:k", "0:k")
	c.Do("INCR", "l")
	c.Do("APPEND", "l", "x")
	c.Do("SET", "k", "v", "NX")
	c.Do("SETRANGE", "k", "0", "")
	c.Do("EXPIRE", "nokey", "10")
	c.Do("PERSIST", "k")
	c.Do("GETEX", "k")
	c.Do("RENAMENX", "k", "l")
	check()
	c.Do("EXPIRE", "k", "100")
	c.Do("PERSIST", "k")
	c.Do("GETEX", "k", "EX", "10")
	c.Do("GETEX", "k", "PERSIST")
	check("0:k", "0:k", "0:k", "0:k")
	c.Do("RENAME", "k", "k2")
	check("0:k", "0:k2")
	c.Do("MOVE", "k2", "1")
	check("0:k2", "1:k2")
	c.Do("COPY", "nokey", "x")
	c.Do("SELECT", "1")
	c.Do("COPY", "k2", "k3", "DB", "0")
	check("0:k3")
	c.Do("MSET", "a", "1", "b", "2")
	c.Do("DEL", "a", "nokey", "b")
	check("1:a", "1:b", "1:a", "1:b")
	c.Do("GETDEL", "k2")
	c.Do("GETSET", "g", "1")
	c.Do("SETNX", "g", "2")
	check("1:k2", "1:g")
	c.Do("EXPIRE", "g", "-1") // deleting by expiry in the past
	check("1:g")
	c.Do("SET", "z", "1")
	check("1:z")
	c.Do("FLUSHDB")
	check("1:z")
}

// TestKeysCopyHook checks COPY of a non-string value: one that does not
// implement keyspace.Value gets a clear error and the destination is left
// alone.
func TestKeysCopyHook(t *testing.T) {
	inst := servertest.Start(t)
	inst.Srv.Lock()
	inst.Srv.Env.KS.DBs[0].Set("odd", keyspace.NewValue(keyspace.TypeStream, nil), false)
	inst.Srv.Unlock()
	c := inst.Raw(t)
	c.Do("SET", "dst", "v")
	got := c.Do("COPY", "odd", "dst", "REPLACE")
	skEq(t, "COPY of an uncopyable type", got, "-ERR COPY of a stream value is not supported yet\r\n")
	skEq(t, "destination kept", c.Do("GET", "dst"), "$1\r\nv\r\n")
	skEq(t, "OBJECT ENCODING of a value without an encoder", c.Do("OBJECT", "ENCODING", "odd"), "$7\r\nunknown\r\n")
}
