package commands_test

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

func TestStringsGoRedisSet(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	c := inst.Client(t)

	servertest.NoErr(t, c.Set(servertest.Ctx, "k", "v", 0).Err())
	servertest.Eq(t, "GET", c.Get(servertest.Ctx, "k").Val(), "v")
	servertest.Eq(t, "SETNX existing", c.SetNX(servertest.Ctx, "k", "x", 0).Val(), false)
	servertest.Eq(t, "SETNX new", c.SetNX(servertest.Ctx, "n", "x", 0).Val(), true)
	servertest.Eq(t, "SET XX existing", c.SetXX(servertest.Ctx, "k", "v2", 0).Val(), true)
	servertest.Eq(t, "SET XX missing", c.SetXX(servertest.Ctx, "missing", "v", 0).Val(), false)
	servertest.Eq(t, "EXISTS missing", c.Exists(servertest.Ctx, "missing").Val(), int64(0))
	if err := c.Get(servertest.Ctx, "missing").Err(); err != redis.Nil {
		t.Errorf("GET missing: %v", err)
	}

	// SET ... GET returns the old value (nil when there was none).
	old, err := c.SetArgs(servertest.Ctx, "k", "v3", redis.SetArgs{Get: true}).Result()
	servertest.NoErr(t, err)
	servertest.Eq(t, "SET GET", old, "v2")
	if err := c.SetArgs(servertest.Ctx, "fresh", "v", redis.SetArgs{Get: true}).Err(); err != redis.Nil {
		t.Errorf("SET GET on a new key: %v", err)
	}
	servertest.Eq(t, "SET NX GET on existing key keeps it", c.SetArgs(servertest.Ctx, "k", "zzz", redis.SetArgs{Mode: "NX", Get: true}).Val(), "v3")
	servertest.Eq(t, "value kept", c.Get(servertest.Ctx, "k").Val(), "v3")

	// Expiry options, exact under the manual clock.
	servertest.NoErr(t, c.SetArgs(servertest.Ctx, "e", "v", redis.SetArgs{TTL: 100 * time.Second}).Err())
	servertest.Eq(t, "TTL after SET EX", c.TTL(servertest.Ctx, "e").Val(), 100*time.Second)
	servertest.NoErr(t, c.SetArgs(servertest.Ctx, "p", "v", redis.SetArgs{TTL: 1500 * time.Millisecond}).Err())
	servertest.Eq(t, "PTTL after SET PX", c.PTTL(servertest.Ctx, "p").Val(), 1500*time.Millisecond)
	at := time.UnixMilli(servertest.T0 + 123_456)
	servertest.NoErr(t, c.SetArgs(servertest.Ctx, "a", "v", redis.SetArgs{ExpireAt: at}).Err())
	servertest.Eq(t, "PEXPIRETIME after SET PXAT", c.PExpireTime(servertest.Ctx, "a").Val(), time.Duration(servertest.T0+123_456)*time.Millisecond)
	servertest.NoErr(t, c.SetArgs(servertest.Ctx, "a", "v2", redis.SetArgs{KeepTTL: true}).Err())
	servertest.Eq(t, "KEEPTTL keeps the TTL", c.PTTL(servertest.Ctx, "a").Val(), 123_456*time.Millisecond)
	servertest.NoErr(t, c.Set(servertest.Ctx, "a", "v3", 0).Err())
	servertest.Eq(t, "plain SET clears the TTL", c.TTL(servertest.Ctx, "a").Val(), time.Duration(-1))

	servertest.ErrIs(t, "SET EX 0", c.Do(servertest.Ctx, "SET", "k", "v", "EX", "0").Err(), "ERR invalid expire time in 'set' command")
	servertest.ErrIs(t, "SET NX XX", c.Do(servertest.Ctx, "SET", "k", "v", "NX", "XX").Err(), "ERR syntax error")
	servertest.ErrIs(t, "SET EX KEEPTTL", c.Do(servertest.Ctx, "SET", "k", "v", "EX", "1", "KEEPTTL").Err(), "ERR syntax error")
	servertest.ErrIs(t, "SET EX x", c.Do(servertest.Ctx, "SET", "k", "v", "EX", "x").Err(), "ERR value is not an integer or out of range")

	servertest.NoErr(t, c.SetEx(servertest.Ctx, "se", "v", 10*time.Second).Err())
	servertest.Eq(t, "SETEX TTL", c.TTL(servertest.Ctx, "se").Val(), 10*time.Second)
	servertest.NoErr(t, c.Do(servertest.Ctx, "PSETEX", "pse", "2500", "v").Err())
	servertest.Eq(t, "PSETEX PTTL", c.PTTL(servertest.Ctx, "pse").Val(), 2500*time.Millisecond)
	servertest.ErrIs(t, "SETEX 0", c.Do(servertest.Ctx, "SETEX", "se", "0", "v").Err(), "ERR invalid expire time in 'setex' command")
	servertest.ErrIs(t, "PSETEX -1", c.Do(servertest.Ctx, "PSETEX", "se", "-1", "v").Err(), "ERR invalid expire time in 'psetex' command")

	// After the clock passes, the keys are gone.
	inst.Clock.Advance(2 * time.Second)
	servertest.Eq(t, "SET PX 1500 key expired", c.Exists(servertest.Ctx, "p").Val(), int64(0))
	servertest.Eq(t, "PSETEX 2500 key alive", c.Exists(servertest.Ctx, "pse").Val(), int64(1))
	servertest.Eq(t, "PTTL counts down", c.PTTL(servertest.Ctx, "pse").Val(), 500*time.Millisecond)
	inst.Clock.Advance(500 * time.Millisecond)
	servertest.Eq(t, "PSETEX key expired at its exact time", c.Exists(servertest.Ctx, "pse").Val(), int64(0))
	servertest.Eq(t, "SETEX key alive", c.Exists(servertest.Ctx, "se").Val(), int64(1))
}

func TestStringsGoRedisGetFamily(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	c := inst.Client(t)

	servertest.Eq(t, "GETSET new", c.GetSet(servertest.Ctx, "k", "a").Err(), error(redis.Nil))
	servertest.Eq(t, "GETSET old", c.GetSet(servertest.Ctx, "k", "b").Val(), "a")
	servertest.NoErr(t, c.Expire(servertest.Ctx, "k", time.Hour).Err())
	servertest.Eq(t, "GETSET", c.GetSet(servertest.Ctx, "k", "c").Val(), "b")
	servertest.Eq(t, "GETSET clears the TTL", c.TTL(servertest.Ctx, "k").Val(), time.Duration(-1))

	servertest.Eq(t, "GETDEL", c.GetDel(servertest.Ctx, "k").Val(), "c")
	servertest.Eq(t, "GETDEL deleted", c.Exists(servertest.Ctx, "k").Val(), int64(0))
	servertest.Eq(t, "GETDEL missing", c.GetDel(servertest.Ctx, "k").Err(), error(redis.Nil))

	c.Set(servertest.Ctx, "g", "v", 0)
	servertest.Eq(t, "GETEX EX", c.GetEx(servertest.Ctx, "g", 30*time.Second).Val(), "v")
	servertest.Eq(t, "TTL after GETEX EX", c.TTL(servertest.Ctx, "g").Val(), 30*time.Second)
	servertest.Eq(t, "GETEX PX", c.GetEx(servertest.Ctx, "g", 1234*time.Millisecond).Val(), "v")
	servertest.Eq(t, "PTTL after GETEX PX", c.PTTL(servertest.Ctx, "g").Val(), 1234*time.Millisecond)
	servertest.Eq(t, "GETEX PERSIST", c.GetEx(servertest.Ctx, "g", 0).Val(), "v")
	servertest.Eq(t, "TTL after PERSIST", c.TTL(servertest.Ctx, "g").Val(), time.Duration(-1))
	servertest.Eq(t, "GETEX EXAT", c.Do(servertest.Ctx, "GETEX", "g", "EXAT", strconv.FormatInt(servertest.T0/1000+50, 10)).Val(), any("v"))
	servertest.Eq(t, "TTL after EXAT", c.TTL(servertest.Ctx, "g").Val(), 50*time.Second)
	servertest.Eq(t, "GETEX PXAT past", c.Do(servertest.Ctx, "GETEX", "g", "PXAT", strconv.FormatInt(servertest.T0, 10)).Val(), any("v"))
	servertest.Eq(t, "deleted by a past PXAT", c.Exists(servertest.Ctx, "g").Val(), int64(0))

	servertest.NoErr(t, c.MSet(servertest.Ctx, "a", "1", "b", "2").Err())
	servertest.Eq(t, "MSETNX blocked", c.MSetNX(servertest.Ctx, "b", "x", "c", "3").Val(), false)
	servertest.Eq(t, "MSETNX created nothing", c.Exists(servertest.Ctx, "c").Val(), int64(0))
	servertest.Eq(t, "MSETNX", c.MSetNX(servertest.Ctx, "c", "3", "d", "4").Val(), true)
	vals := c.MGet(servertest.Ctx, "a", "b", "nokey", "c", "d").Val()
	want := []any{"1", "2", nil, "3", "4"}
	for i := range want {
		if vals[i] != want[i] {
			t.Errorf("MGET[%d] = %v, want %v", i, vals[i], want[i])
		}
	}
	servertest.ErrIs(t, "MSET odd", c.Do(servertest.Ctx, "MSET", "a", "1", "b").Err(), "ERR wrong number of arguments for 'mset' command")
}

func TestStringsGoRedisEdit(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)

	servertest.Eq(t, "APPEND new", c.Append(servertest.Ctx, "s", "Hello").Val(), int64(5))
	servertest.Eq(t, "APPEND", c.Append(servertest.Ctx, "s", " World").Val(), int64(11))
	servertest.Eq(t, "STRLEN", c.StrLen(servertest.Ctx, "s").Val(), int64(11))
	servertest.Eq(t, "STRLEN missing", c.StrLen(servertest.Ctx, "nokey").Val(), int64(0))
	servertest.Eq(t, "GETRANGE", c.GetRange(servertest.Ctx, "s", 0, 4).Val(), "Hello")
	servertest.Eq(t, "GETRANGE negative", c.GetRange(servertest.Ctx, "s", -5, -1).Val(), "World")
	servertest.Eq(t, "GETRANGE out of range", c.GetRange(servertest.Ctx, "s", 20, 30).Val(), "")
	servertest.Eq(t, "SUBSTR", c.Do(servertest.Ctx, "SUBSTR", "s", "6", "8").Val(), any("Wor"))
	servertest.Eq(t, "SETRANGE", c.SetRange(servertest.Ctx, "s", 6, "Redis").Val(), int64(11))
	servertest.Eq(t, "after SETRANGE", c.Get(servertest.Ctx, "s").Val(), "Hello Redis")
	servertest.Eq(t, "SETRANGE pads", c.SetRange(servertest.Ctx, "pad", 3, "x").Val(), int64(4))
	servertest.Eq(t, "padding is zeros", c.Get(servertest.Ctx, "pad").Val(), "\x00\x00\x00x")
	servertest.ErrIs(t, "SETRANGE negative", c.SetRange(servertest.Ctx, "s", -1, "x").Err(), "ERR offset is out of range")

	servertest.Eq(t, "INCR new", c.Incr(servertest.Ctx, "n").Val(), int64(1))
	servertest.Eq(t, "INCRBY", c.IncrBy(servertest.Ctx, "n", 41).Val(), int64(42))
	servertest.Eq(t, "DECR", c.Decr(servertest.Ctx, "n").Val(), int64(41))
	servertest.Eq(t, "DECRBY", c.DecrBy(servertest.Ctx, "n", 50).Val(), int64(-9))
	c.Set(servertest.Ctx, "max", "9223372036854775807", 0)
	servertest.ErrIs(t, "INCR overflow", c.Incr(servertest.Ctx, "max").Err(), "ERR increment or decrement would overflow")
	servertest.ErrIs(t, "DECRBY min", c.DecrBy(servertest.Ctx, "n", -9223372036854775808).Err(), "ERR decrement would overflow")
	servertest.ErrIs(t, "INCR text", c.Incr(servertest.Ctx, "s").Err(), "ERR value is not an integer or out of range")
	servertest.Eq(t, "INCRBYFLOAT", c.IncrByFloat(servertest.Ctx, "f", 10.5).Val(), 10.5)
	servertest.Eq(t, "INCRBYFLOAT again", c.IncrByFloat(servertest.Ctx, "f", 0.1).Val(), 10.6)
	servertest.Eq(t, "INCRBYFLOAT stores text", c.Get(servertest.Ctx, "f").Val(), "10.6")
	c.Set(servertest.Ctx, "f2", "5.0e3", 0)
	servertest.Eq(t, "INCRBYFLOAT exponent", c.IncrByFloat(servertest.Ctx, "f2", 2.0e2).Val(), 5200.0)
	servertest.ErrIs(t, "INCRBYFLOAT text", c.IncrByFloat(servertest.Ctx, "s", 1).Err(), "ERR value is not a valid float")
	servertest.ErrIs(t, "INCRBYFLOAT inf", c.Do(servertest.Ctx, "INCRBYFLOAT", "f", "inf").Err(), "ERR increment would produce NaN or Infinity")

	c.MSet(servertest.Ctx, "key1", "ohmytext", "key2", "mynewtext")
	servertest.Eq(t, "LCS", c.LCS(servertest.Ctx, &redis.LCSQuery{Key1: "key1", Key2: "key2"}).Val().MatchString, "mytext")
	servertest.Eq(t, "LCS LEN", c.LCS(servertest.Ctx, &redis.LCSQuery{Key1: "key1", Key2: "key2", Len: true}).Val().Len, int64(6))
	m := c.LCS(servertest.Ctx, &redis.LCSQuery{Key1: "key1", Key2: "key2", Idx: true, WithMatchLen: true}).Val()
	servertest.Eq(t, "LCS IDX len", m.Len, int64(6))
	if len(m.Matches) != 2 {
		t.Fatalf("LCS IDX matches: %+v", m.Matches)
	}
	first := redis.LCSMatchedPosition{Key1: redis.LCSPosition{Start: 4, End: 7}, Key2: redis.LCSPosition{Start: 5, End: 8}, MatchLen: 4}
	second := redis.LCSMatchedPosition{Key1: redis.LCSPosition{Start: 2, End: 3}, Key2: redis.LCSPosition{Start: 0, End: 1}, MatchLen: 2}
	servertest.Eq(t, "LCS first match", m.Matches[0], first)
	servertest.Eq(t, "LCS second match", m.Matches[1], second)
	m = c.LCS(servertest.Ctx, &redis.LCSQuery{Key1: "key1", Key2: "key2", Idx: true, MinMatchLen: 4}).Val()
	if len(m.Matches) != 1 || m.Matches[0].Key1 != first.Key1 {
		t.Errorf("LCS MINMATCHLEN 4: %+v", m.Matches)
	}
}

func TestStringsGoRedisWrongType(t *testing.T) {
	d, inst := servertest.StartDiff(t)
	skNonString(t, d, inst, 0, "l")
	c := inst.Client(t)
	const wrong = "WRONGTYPE Operation against a key holding the wrong kind of value"
	for name, err := range map[string]error{
		"GET":         c.Get(servertest.Ctx, "l").Err(),
		"SET GET":     c.SetArgs(servertest.Ctx, "l", "v", redis.SetArgs{Get: true}).Err(),
		"GETSET":      c.GetSet(servertest.Ctx, "l", "v").Err(),
		"GETDEL":      c.GetDel(servertest.Ctx, "l").Err(),
		"GETEX":       c.GetEx(servertest.Ctx, "l", time.Second).Err(),
		"APPEND":      c.Append(servertest.Ctx, "l", "x").Err(),
		"STRLEN":      c.StrLen(servertest.Ctx, "l").Err(),
		"GETRANGE":    c.GetRange(servertest.Ctx, "l", 0, 1).Err(),
		"SETRANGE":    c.SetRange(servertest.Ctx, "l", 0, "x").Err(),
		"INCR":        c.Incr(servertest.Ctx, "l").Err(),
		"INCRBYFLOAT": c.IncrByFloat(servertest.Ctx, "l", 1).Err(),
	} {
		servertest.ErrIs(t, name, err, wrong)
	}
	servertest.ErrIs(t, "LCS", c.LCS(servertest.Ctx, &redis.LCSQuery{Key1: "l", Key2: "x"}).Err(), "ERR The specified keys must contain string values")
	if v := c.MGet(servertest.Ctx, "l").Val(); len(v) != 1 || v[0] != nil {
		t.Errorf("MGET of a list: %v", v)
	}
	servertest.Eq(t, "the list survived", c.Type(servertest.Ctx, "l").Val(), "list")
	// SET overwrites any type.
	servertest.NoErr(t, c.Set(servertest.Ctx, "l", "v", 0).Err())
	servertest.Eq(t, "SET replaced the list", c.Type(servertest.Ctx, "l").Val(), "string")
}

// TestStringsRawBinary sends values with every byte value, CR LF and NUL
// over raw RESP.
func TestStringsRawBinary(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	var all []byte
	for i := 0; i < 256; i++ {
		all = append(all, byte(i))
	}
	v := string(all) + "\r\n\x00end"
	servertest.Eq(t, "SET", c.Do("SET", "bin\r\n\x00", v), "+OK\r\n")
	servertest.Eq(t, "GET", c.Do("GET", "bin\r\n\x00"), "$"+strconv.Itoa(len(v))+"\r\n"+v+"\r\n")
	servertest.Eq(t, "STRLEN", c.Do("STRLEN", "bin\r\n\x00"), ":"+strconv.Itoa(len(v))+"\r\n")
	servertest.Eq(t, "GETRANGE", c.Do("GETRANGE", "bin\r\n\x00", "10", "14"), "$5\r\n\n\x0b\x0c\r\x0e\r\n")
	servertest.Eq(t, "APPEND", c.Do("APPEND", "bin\r\n\x00", "\r\n"), ":"+strconv.Itoa(len(v)+2)+"\r\n")
	servertest.Eq(t, "SETRANGE", c.Do("SETRANGE", "bin\r\n\x00", "0", "\r\n"), ":"+strconv.Itoa(len(v)+2)+"\r\n")
	servertest.Eq(t, "GETRANGE head", c.Do("GETRANGE", "bin\r\n\x00", "0", "2"), "$3\r\n\r\n\x02\r\n")
	servertest.Eq(t, "MGET", c.Do("MGET", "nokey", "bin\r\n\x00", "nokey"), "*3\r\n$-1\r\n$"+strconv.Itoa(len(v)+2)+"\r\n\r\n"+v[2:]+"\r\n\r\n$-1\r\n")
	servertest.Eq(t, "empty value", c.Do("SET", "e", ""), "+OK\r\n")
	servertest.Eq(t, "GET empty", c.Do("GET", "e"), "$0\r\n\r\n")
	servertest.Eq(t, "LCS binary", c.Do("LCS", "bin\r\n\x00", "bin\r\n\x00", "LEN"), ":"+strconv.Itoa(len(v)+2)+"\r\n")
	servertest.Eq(t, "HELLO 3", c.Do("HELLO", "3")[:1], "%")
	servertest.Eq(t, "RESP3 null", c.Do("GET", "nokey"), "_\r\n")
	servertest.Eq(t, "RESP3 MGET", c.Do("MGET", "nokey", "e"), "*2\r\n_\r\n$0\r\n\r\n")
}

// TestStringsRawBig moves multi-megabyte values through every string
// command that touches the whole value.
func TestStringsRawBig(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 256*1024) // 4 MiB
	servertest.Eq(t, "SET 4MiB", c.Do("SET", "big", string(big)), "+OK\r\n")
	got := c.Do("GET", "big")
	if want := "$4194304\r\n" + string(big) + "\r\n"; got != want {
		t.Fatalf("GET 4MiB: %d bytes back, differing", len(got))
	}
	servertest.Eq(t, "APPEND 4MiB", c.Do("APPEND", "big", string(big)), ":8388608\r\n")
	servertest.Eq(t, "STRLEN", c.Do("STRLEN", "big"), ":8388608\r\n")
	servertest.Eq(t, "GETRANGE across the seam", c.Do("GETRANGE", "big", "4194300", "4194307"), "$8\r\ncdef0123\r\n")
	servertest.Eq(t, "SETRANGE far", c.Do("SETRANGE", "far", "10485760", "end"), ":10485763\r\n")
	servertest.Eq(t, "GETRANGE far tail", c.Do("GETRANGE", "far", "-5", "-1"), "$5\r\n\x00\x00end\r\n")
	servertest.Eq(t, "OBJECT ENCODING", c.Do("OBJECT", "ENCODING", "far"), "$3\r\nraw\r\n")
	servertest.Eq(t, "COPY big", c.Do("COPY", "big", "big2"), ":1\r\n")
	servertest.Eq(t, "APPEND to the copy", c.Do("APPEND", "big2", "x"), ":8388609\r\n")
	servertest.Eq(t, "the original is untouched", c.Do("STRLEN", "big"), ":8388608\r\n")
	servertest.Eq(t, "LCS of a big and a small string", c.Do("LCS", "big", "nokey", "LEN"), ":0\r\n")
}

// TestStringsMaxSize lowers proto-max-bulk-len to test the size cap of
// APPEND and SETRANGE at its exact boundary without gigabytes of memory.
func TestStringsMaxSize(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("proto-max-bulk-len", "1mb"))
	c := inst.Raw(t)
	const tooLong = "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"
	servertest.Eq(t, "SETRANGE at the limit", c.Do("SETRANGE", "k", "1048575", "x"), ":1048576\r\n")
	servertest.Eq(t, "SETRANGE past the limit", c.Do("SETRANGE", "k", "1048576", "x"), tooLong)
	servertest.Eq(t, "SETRANGE new key past the limit", c.Do("SETRANGE", "new", "1048575", "xy"), tooLong)
	servertest.Eq(t, "no key created", c.Do("EXISTS", "new"), ":0\r\n")
	servertest.Eq(t, "APPEND past the limit", c.Do("APPEND", "k", "x"), tooLong)
	servertest.Eq(t, "APPEND nothing at the limit", c.Do("APPEND", "k", ""), ":1048576\r\n")
	servertest.Eq(t, "value unchanged", c.Do("STRLEN", "k"), ":1048576\r\n")
	half := strings.Repeat("a", 600*1024)
	servertest.Eq(t, "SET", c.Do("SET", "h", half), "+OK\r\n")
	servertest.Eq(t, "APPEND over", c.Do("APPEND", "h", half), tooLong)
}

// TestStringsEncoding checks OBJECT ENCODING through the life of a value.
func TestStringsEncoding(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	enc := func(k string) string { return c.ObjectEncoding(servertest.Ctx, k).Val() }
	c.Set(servertest.Ctx, "k", "12345", 0)
	servertest.Eq(t, "integer", enc("k"), "int")
	c.Set(servertest.Ctx, "k", strings.Repeat("x", 44), 0)
	servertest.Eq(t, "44 bytes", enc("k"), "embstr")
	c.Set(servertest.Ctx, "k", strings.Repeat("x", 45), 0)
	servertest.Eq(t, "45 bytes", enc("k"), "raw")
	c.Set(servertest.Ctx, "k", "abc", 0)
	c.Append(servertest.Ctx, "k", "d")
	servertest.Eq(t, "after APPEND", enc("k"), "raw")
	c.Set(servertest.Ctx, "k", "abc", 0)
	c.SetRange(servertest.Ctx, "k", 0, "x")
	servertest.Eq(t, "after SETRANGE", enc("k"), "raw")
	c.Incr(servertest.Ctx, "k2")
	servertest.Eq(t, "after INCR", enc("k2"), "int")
	c.IncrByFloat(servertest.Ctx, "k2", 1)
	servertest.Eq(t, "after INCRBYFLOAT", enc("k2"), "embstr")
	c.Set(servertest.Ctx, "k", "99999999999999999999", 0) // > int64
	servertest.Eq(t, "too big for a long", enc("k"), "embstr")
	var e error
	if e = c.ObjectEncoding(servertest.Ctx, "nokey").Err(); !errors.Is(e, redis.Nil) {
		t.Errorf("OBJECT ENCODING of a missing key: %v", e)
	}
}
