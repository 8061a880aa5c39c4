package commands_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/servertest"
)

func TestKeysGoRedis(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	c := inst.Client(t)

	c.MSet(servertest.Ctx, "a", "1", "b", "2", "c", "3")
	servertest.Eq(t, "EXISTS counts repeats", c.Exists(servertest.Ctx, "a", "a", "nokey").Val(), int64(2))
	servertest.Eq(t, "DEL", c.Del(servertest.Ctx, "a", "nokey", "a").Val(), int64(1))
	servertest.Eq(t, "UNLINK", c.Unlink(servertest.Ctx, "b").Val(), int64(1))
	servertest.Eq(t, "TYPE", c.Type(servertest.Ctx, "c").Val(), "string")
	servertest.Eq(t, "TYPE missing", c.Type(servertest.Ctx, "nokey").Val(), "none")
	servertest.Eq(t, "TOUCH", c.Touch(servertest.Ctx, "c", "nokey").Val(), int64(1))
	servertest.Eq(t, "DBSIZE", c.DBSize(servertest.Ctx).Val(), int64(1))

	servertest.NoErr(t, c.Expire(servertest.Ctx, "c", time.Minute).Err())
	servertest.NoErr(t, c.Rename(servertest.Ctx, "c", "d").Err())
	servertest.Eq(t, "RENAME keeps the TTL", c.TTL(servertest.Ctx, "d").Val(), time.Minute)
	servertest.ErrIs(t, "RENAME missing", c.Rename(servertest.Ctx, "nokey", "x").Err(), "ERR no such key")
	c.Set(servertest.Ctx, "e", "5", 0)
	servertest.Eq(t, "RENAMENX onto an existing key", c.RenameNX(servertest.Ctx, "d", "e").Val(), false)
	servertest.Eq(t, "RENAMENX", c.RenameNX(servertest.Ctx, "d", "f").Val(), true)
	servertest.Eq(t, "value moved", c.Get(servertest.Ctx, "f").Val(), "3")

	servertest.Eq(t, "MOVE", c.Move(servertest.Ctx, "f", 2).Val(), true)
	servertest.Eq(t, "gone from db 0", c.Exists(servertest.Ctx, "f").Val(), int64(0))
	servertest.Eq(t, "COPY", c.Copy(servertest.Ctx, "e", "e2", 2, false).Val(), int64(1))
	servertest.Eq(t, "COPY onto an existing key", c.Copy(servertest.Ctx, "e", "e2", 2, false).Val(), int64(0))
	servertest.Eq(t, "COPY REPLACE", c.Copy(servertest.Ctx, "e", "e2", 2, true).Val(), int64(1))
	servertest.ErrIs(t, "COPY onto itself", c.Copy(servertest.Ctx, "e", "e", 0, false).Err(), "ERR source and destination objects are the same")
	servertest.NoErr(t, c.Do(servertest.Ctx, "SWAPDB", 0, 2).Err())
	servertest.Eq(t, "after SWAPDB", c.Get(servertest.Ctx, "f").Val(), "3")
	servertest.Eq(t, "TTL moved with MOVE and SWAPDB", c.TTL(servertest.Ctx, "f").Val(), time.Minute)
	servertest.Eq(t, "copy in db 0 now", c.Get(servertest.Ctx, "e2").Val(), "5")

	keys := c.Keys(servertest.Ctx, "*").Val()
	slices.Sort(keys)
	servertest.Eq(t, "KEYS *", len(keys), 2)
	servertest.Eq(t, "KEYS pattern", c.Keys(servertest.Ctx, "e?").Val()[0], "e2")
	servertest.Eq(t, "RANDOMKEY on two keys", slices.Contains(keys, c.RandomKey(servertest.Ctx).Val()), true)
	servertest.NoErr(t, c.FlushDB(servertest.Ctx).Err())
	servertest.Eq(t, "DBSIZE after FLUSHDB", c.DBSize(servertest.Ctx).Val(), int64(0))
	if err := c.RandomKey(servertest.Ctx).Err(); err == nil {
		t.Error("RANDOMKEY on an empty database should be nil")
	}
	c.Do(servertest.Ctx, "SELECT", "2")
	servertest.NoErr(t, c.FlushAllAsync(servertest.Ctx).Err())

	// OBJECT: encoding, refcount, idle time under the manual clock.
	c.Set(servertest.Ctx, "i", "7", 0)
	c.Set(servertest.Ctx, "s", "text", 0)
	servertest.Eq(t, "OBJECT ENCODING int", c.ObjectEncoding(servertest.Ctx, "i").Val(), "int")
	servertest.Eq(t, "OBJECT REFCOUNT shared", c.ObjectRefCount(servertest.Ctx, "i").Val(), int64(2147483647))
	servertest.Eq(t, "OBJECT REFCOUNT", c.ObjectRefCount(servertest.Ctx, "s").Val(), int64(1))
	inst.Clock.Advance(42 * time.Second)
	servertest.Eq(t, "OBJECT IDLETIME", c.ObjectIdleTime(servertest.Ctx, "s").Val(), 42*time.Second)
	servertest.Eq(t, "OBJECT does not touch", c.ObjectIdleTime(servertest.Ctx, "s").Val(), 42*time.Second)
	c.Type(servertest.Ctx, "s")
	c.Exists(servertest.Ctx, "s")
	c.TTL(servertest.Ctx, "s")
	servertest.Eq(t, "TYPE, EXISTS and TTL do not touch", c.ObjectIdleTime(servertest.Ctx, "s").Val(), 42*time.Second)
	c.Get(servertest.Ctx, "s")
	servertest.Eq(t, "GET touches", c.ObjectIdleTime(servertest.Ctx, "s").Val(), time.Duration(0))
	inst.Clock.Advance(5 * time.Second)
	c.Touch(servertest.Ctx, "s")
	servertest.Eq(t, "TOUCH touches", c.ObjectIdleTime(servertest.Ctx, "s").Val(), time.Duration(0))
	inst.Clock.Advance(5 * time.Second)
	c.Append(servertest.Ctx, "s", "x")
	servertest.Eq(t, "a write touches", c.ObjectIdleTime(servertest.Ctx, "s").Val(), time.Duration(0))
	servertest.ErrIs(t, "OBJECT FREQ without LFU", c.ObjectFreq(servertest.Ctx, "s").Err(),
		"ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
	servertest.Eq(t, "OBJECT HELP lines", len(c.Do(servertest.Ctx, "OBJECT", "HELP").Val().([]any)), 15)
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
		v, err := servertest.Parse(c.Do("SCAN", cursor, "COUNT", "20"))
		if err != nil || len(v.Items) != 2 {
			t.Fatalf("SCAN reply: %+v %v", v, err)
		}
		for _, k := range v.Items[1].Items {
			seen[k.Str]++
		}
		cursor = v.Items[0].Str
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
		v, err := servertest.Parse(c.Do("SCAN", cursor, "COUNT", "50"))
		if err != nil || len(v.Items) != 2 {
			t.Fatalf("SCAN reply: %+v %v", v, err)
		}
		for _, k := range v.Items[1].Items {
			seen[k.Str] = true
		}
		cursor = v.Items[0].Str
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
	d, inst := servertest.StartDiff(t)
	skNonString(t, d, inst, 0, "alist")
	c := inst.Client(t)
	for i := 0; i < 100; i++ {
		c.Set(servertest.Ctx, "user:"+strconv.Itoa(i), i, 0)
		c.Set(servertest.Ctx, "item:"+strconv.Itoa(i), i, 0)
	}
	var users []string
	iter := c.Scan(servertest.Ctx, 0, "user:*", 7).Iterator()
	for iter.Next(servertest.Ctx) {
		users = append(users, iter.Val())
	}
	servertest.NoErr(t, iter.Err())
	slices.Sort(users)
	users = slices.Compact(users)
	servertest.Eq(t, "SCAN MATCH user:*", len(users), 100)
	lists, _, err := c.ScanType(servertest.Ctx, 0, "", 1000, "list").Result()
	servertest.NoErr(t, err)
	servertest.Eq(t, "SCAN TYPE list", len(lists) == 1 && lists[0] == "alist", true)
	keys, cur, err := c.Scan(servertest.Ctx, 0, "", 1000).Result()
	servertest.NoErr(t, err)
	servertest.Eq(t, "SCAN COUNT 1000 ends in one call", cur, uint64(0))
	servertest.Eq(t, "SCAN COUNT 1000 returns all", len(keys), 201)
}

// TestKeysTouched checks that writes signal the keys they change (what
// WATCH and blocked clients hang on) and that reads and failed writes do
// not.
func TestKeysTouched(t *testing.T) {
	d, inst := servertest.StartDiff(t)
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
	servertest.Eq(t, "COPY of an uncopyable type", got, "-ERR COPY of a stream value is not supported yet\r\n")
	servertest.Eq(t, "destination kept", c.Do("GET", "dst"), "$1\r\nv\r\n")
	servertest.Eq(t, "OBJECT ENCODING of a value without an encoder", c.Do("OBJECT", "ENCODING", "odd"), "$7\r\nunknown\r\n")
}
