package command_test

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

// skT0 is where the manual clock starts in these tests (unix ms).
const skT0 = 1_700_000_000_000

var skCtx = servertest.Ctx

func skNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func skEq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

func skErrIs(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || err.Error() != want {
		t.Errorf("%s: got error %v, want %q", what, err, want)
	}
}

func TestStringsGoRedisSet(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(skT0))
	c := inst.Client(t)

	skNoErr(t, c.Set(skCtx, "k", "v", 0).Err())
	skEq(t, "GET", c.Get(skCtx, "k").Val(), "v")
	skEq(t, "SETNX existing", c.SetNX(skCtx, "k", "x", 0).Val(), false)
	skEq(t, "SETNX new", c.SetNX(skCtx, "n", "x", 0).Val(), true)
	skEq(t, "SET XX existing", c.SetXX(skCtx, "k", "v2", 0).Val(), true)
	skEq(t, "SET XX missing", c.SetXX(skCtx, "missing", "v", 0).Val(), false)
	skEq(t, "EXISTS missing", c.Exists(skCtx, "missing").Val(), int64(0))
	if err := c.Get(skCtx, "missing").Err(); err != redis.Nil {
		t.Errorf("GET missing: %v", err)
	}

	// SET ... GET returns the old value (nil when there was none).
	old, err := c.SetArgs(skCtx, "k", "v3", redis.SetArgs{Get: true}).Result()
	skNoErr(t, err)
	skEq(t, "SET GET", old, "v2")
	if err := c.SetArgs(skCtx, "fresh", "v", redis.SetArgs{Get: true}).Err(); err != redis.Nil {
		t.Errorf("SET GET on a new key: %v", err)
	}
	skEq(t, "SET NX GET on existing key keeps it", c.SetArgs(skCtx, "k", "zzz", redis.SetArgs{Mode: "NX", Get: true}).Val(), "v3")
	skEq(t, "value kept", c.Get(skCtx, "k").Val(), "v3")

	// Expiry options, exact under the manual clock.
	skNoErr(t, c.SetArgs(skCtx, "e", "v", redis.SetArgs{TTL: 100 * time.Second}).Err())
	skEq(t, "TTL after SET EX", c.TTL(skCtx, "e").Val(), 100*time.Second)
	skNoErr(t, c.SetArgs(skCtx, "p", "v", redis.SetArgs{TTL: 1500 * time.Millisecond}).Err())
	skEq(t, "PTTL after SET PX", c.PTTL(skCtx, "p").Val(), 1500*time.Millisecond)
	at := time.UnixMilli(skT0 + 123_456)
	skNoErr(t, c.SetArgs(skCtx, "a", "v", redis.SetArgs{ExpireAt: at}).Err())
	skEq(t, "PEXPIRETIME after SET PXAT", c.PExpireTime(skCtx, "a").Val(), time.Duration(skT0+123_456)*time.Millisecond)
	skNoErr(t, c.SetArgs(skCtx, "a", "v2", redis.SetArgs{KeepTTL: true}).Err())
	skEq(t, "KEEPTTL keeps the TTL", c.PTTL(skCtx, "a").Val(), 123_456*time.Millisecond)
	skNoErr(t, c.Set(skCtx, "a", "v3", 0).Err())
	skEq(t, "plain SET clears the TTL", c.TTL(skCtx, "a").Val(), time.Duration(-1))

	skErrIs(t, "SET EX 0", c.Do(skCtx, "SET", "k", "v", "EX", "0").Err(), "ERR invalid expire time in 'set' command")
	skErrIs(t, "SET NX XX", c.Do(skCtx, "SET", "k", "v", "NX", "XX").Err(), "ERR syntax error")
	skErrIs(t, "SET EX KEEPTTL", c.Do(skCtx, "SET", "k", "v", "EX", "1", "KEEPTTL").Err(), "ERR syntax error")
	skErrIs(t, "SET EX x", c.Do(skCtx, "SET", "k", "v", "EX", "x").Err(), "ERR value is not an integer or out of range")

	skNoErr(t, c.SetEx(skCtx, "se", "v", 10*time.Second).Err())
	skEq(t, "SETEX TTL", c.TTL(skCtx, "se").Val(), 10*time.Second)
	skNoErr(t, c.Do(skCtx, "PSETEX", "pse", "2500", "v").Err())
	skEq(t, "PSETEX PTTL", c.PTTL(skCtx, "pse").Val(), 2500*time.Millisecond)
	skErrIs(t, "SETEX 0", c.Do(skCtx, "SETEX", "se", "0", "v").Err(), "ERR invalid expire time in 'setex' command")
	skErrIs(t, "PSETEX -1", c.Do(skCtx, "PSETEX", "se", "-1", "v").Err(), "ERR invalid expire time in 'psetex' command")

	// After the clock passes, the keys are gone.
	inst.Clock.Advance(2 * time.Second)
	skEq(t, "SET PX 1500 key expired", c.Exists(skCtx, "p").Val(), int64(0))
	skEq(t, "PSETEX 2500 key alive", c.Exists(skCtx, "pse").Val(), int64(1))
	skEq(t, "PTTL counts down", c.PTTL(skCtx, "pse").Val(), 500*time.Millisecond)
	inst.Clock.Advance(500 * time.Millisecond)
	skEq(t, "PSETEX key expired at its exact time", c.Exists(skCtx, "pse").Val(), int64(0))
	skEq(t, "SETEX key alive", c.Exists(skCtx, "se").Val(), int64(1))
}

func TestStringsGoRedisGetFamily(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(skT0))
	c := inst.Client(t)

	skEq(t, "GETSET new", c.GetSet(skCtx, "k", "a").Err(), error(redis.Nil))
	skEq(t, "GETSET old", c.GetSet(skCtx, "k", "b").Val(), "a")
	skNoErr(t, c.Expire(skCtx, "k", time.Hour).Err())
	skEq(t, "GETSET", c.GetSet(skCtx, "k", "c").Val(), "b")
	skEq(t, "GETSET clears the TTL", c.TTL(skCtx, "k").Val(), time.Duration(-1))

	skEq(t, "GETDEL", c.GetDel(skCtx, "k").Val(), "c")
	skEq(t, "GETDEL deleted", c.Exists(skCtx, "k").Val(), int64(0))
	skEq(t, "GETDEL missing", c.GetDel(skCtx, "k").Err(), error(redis.Nil))

	c.Set(skCtx, "g", "v", 0)
	skEq(t, "GETEX EX", c.GetEx(skCtx, "g", 30*time.Second).Val(), "v")
	skEq(t, "TTL after GETEX EX", c.TTL(skCtx, "g").Val(), 30*time.Second)
	skEq(t, "GETEX PX", c.GetEx(skCtx, "g", 1234*time.Millisecond).Val(), "v")
	skEq(t, "PTTL after GETEX PX", c.PTTL(skCtx, "g").Val(), 1234*time.Millisecond)
	skEq(t, "GETEX PERSIST", c.GetEx(skCtx, "g", 0).Val(), "v")
	skEq(t, "TTL after PERSIST", c.TTL(skCtx, "g").Val(), time.Duration(-1))
	skEq(t, "GETEX EXAT", c.Do(skCtx, "GETEX", "g", "EXAT", strconv.FormatInt(skT0/1000+50, 10)).Val(), any("v"))
	skEq(t, "TTL after EXAT", c.TTL(skCtx, "g").Val(), 50*time.Second)
	skEq(t, "GETEX PXAT past", c.Do(skCtx, "GETEX", "g", "PXAT", strconv.FormatInt(skT0, 10)).Val(), any("v"))
	skEq(t, "deleted by a past PXAT", c.Exists(skCtx, "g").Val(), int64(0))

	skNoErr(t, c.MSet(skCtx, "a", "1", "b", "2").Err())
	skEq(t, "MSETNX blocked", c.MSetNX(skCtx, "b", "x", "c", "3").Val(), false)
	skEq(t, "MSETNX created nothing", c.Exists(skCtx, "c").Val(), int64(0))
	skEq(t, "MSETNX", c.MSetNX(skCtx, "c", "3", "d", "4").Val(), true)
	vals := c.MGet(skCtx, "a", "b", "nokey", "c", "d").Val()
	want := []any{"1", "2", nil, "3", "4"}
	for i := range want {
		if vals[i] != want[i] {
			t.Errorf("MGET[%d] = %v, want %v", i, vals[i], want[i])
		}
	}
	skErrIs(t, "MSET odd", c.Do(skCtx, "MSET", "a", "1", "b").Err(), "ERR wrong number of arguments for 'mset' command")
}

func TestStringsGoRedisEdit(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)

	skEq(t, "APPEND new", c.Append(skCtx, "s", "Hello").Val(), int64(5))
	skEq(t, "APPEND", c.Append(skCtx, "s", " World").Val(), int64(11))
	skEq(t, "STRLEN", c.StrLen(skCtx, "s").Val(), int64(11))
	skEq(t, "STRLEN missing", c.StrLen(skCtx, "nokey").Val(), int64(0))
	skEq(t, "GETRANGE", c.GetRange(skCtx, "s", 0, 4).Val(), "Hello")
	skEq(t, "GETRANGE negative", c.GetRange(skCtx, "s", -5, -1).Val(), "World")
	skEq(t, "GETRANGE out of range", c.GetRange(skCtx, "s", 20, 30).Val(), "")
	skEq(t, "SUBSTR", c.Do(skCtx, "SUBSTR", "s", "6", "8").Val(), any("Wor"))
	skEq(t, "SETRANGE", c.SetRange(skCtx, "s", 6, "Redis").Val(), int64(11))
	skEq(t, "after SETRANGE", c.Get(skCtx, "s").Val(), "Hello Redis")
	skEq(t, "SETRANGE pads", c.SetRange(skCtx, "pad", 3, "x").Val(), int64(4))
	skEq(t, "padding is zeros", c.Get(skCtx, "pad").Val(), "\x00\x00\x00x")
	skErrIs(t, "SETRANGE negative", c.SetRange(skCtx, "s", -1, "x").Err(), "ERR offset is out of range")

	skEq(t, "INCR new", c.Incr(skCtx, "n").Val(), int64(1))
	skEq(t, "INCRBY", c.IncrBy(skCtx, "n", 41).Val(), int64(42))
	skEq(t, "DECR", c.Decr(skCtx, "n").Val(), int64(41))
	skEq(t, "DECRBY", c.DecrBy(skCtx, "n", 50).Val(), int64(-9))
	c.Set(skCtx, "max", "9223372036854775807", 0)
	skErrIs(t, "INCR overflow", c.Incr(skCtx, "max").Err(), "ERR increment or decrement would overflow")
	skErrIs(t, "DECRBY min", c.DecrBy(skCtx, "n", -9223372036854775808).Err(), "ERR decrement would overflow")
	skErrIs(t, "INCR text", c.Incr(skCtx, "s").Err(), "ERR value is not an integer or out of range")
	skEq(t, "INCRBYFLOAT", c.IncrByFloat(skCtx, "f", 10.5).Val(), 10.5)
	skEq(t, "INCRBYFLOAT again", c.IncrByFloat(skCtx, "f", 0.1).Val(), 10.6)
	skEq(t, "INCRBYFLOAT stores text", c.Get(skCtx, "f").Val(), "10.6")
	c.Set(skCtx, "f2", "5.0e3", 0)
	skEq(t, "INCRBYFLOAT exponent", c.IncrByFloat(skCtx, "f2", 2.0e2).Val(), 5200.0)
	skErrIs(t, "INCRBYFLOAT text", c.IncrByFloat(skCtx, "s", 1).Err(), "ERR value is not a valid float")
	skErrIs(t, "INCRBYFLOAT inf", c.Do(skCtx, "INCRBYFLOAT", "f", "inf").Err(), "ERR increment would produce NaN or Infinity")

	c.MSet(skCtx, "key1", "ohmytext", "key2", "mynewtext")
	skEq(t, "LCS", c.LCS(skCtx, &redis.LCSQuery{Key1: "key1", Key2: "key2"}).Val().MatchString, "mytext")
	skEq(t, "LCS LEN", c.LCS(skCtx, &redis.LCSQuery{Key1: "key1", Key2: "key2", Len: true}).Val().Len, int64(6))
	m := c.LCS(skCtx, &redis.LCSQuery{Key1: "key1", Key2: "key2", Idx: true, WithMatchLen: true}).Val()
	skEq(t, "LCS IDX len", m.Len, int64(6))
	if len(m.Matches) != 2 {
		t.Fatalf("LCS IDX matches: %+v", m.Matches)
	}
	first := redis.LCSMatchedPosition{Key1: redis.LCSPosition{Start: 4, End: 7}, Key2: redis.LCSPosition{Start: 5, End: 8}, MatchLen: 4}
	second := redis.LCSMatchedPosition{Key1: redis.LCSPosition{Start: 2, End: 3}, Key2: redis.LCSPosition{Start: 0, End: 1}, MatchLen: 2}
	skEq(t, "LCS first match", m.Matches[0], first)
	skEq(t, "LCS second match", m.Matches[1], second)
	m = c.LCS(skCtx, &redis.LCSQuery{Key1: "key1", Key2: "key2", Idx: true, MinMatchLen: 4}).Val()
	if len(m.Matches) != 1 || m.Matches[0].Key1 != first.Key1 {
		t.Errorf("LCS MINMATCHLEN 4: %+v", m.Matches)
	}
}

func TestStringsGoRedisWrongType(t *testing.T) {
	d, inst := skDiff(t)
	skNonString(t, d, inst, 0, "l")
	c := inst.Client(t)
	const wrong = "WRONGTYPE Operation against a key holding the wrong kind of value"
	for name, err := range map[string]error{
		"GET":         c.Get(skCtx, "l").Err(),
		"SET GET":     c.SetArgs(skCtx, "l", "v", redis.SetArgs{Get: true}).Err(),
		"GETSET":      c.GetSet(skCtx, "l", "v").Err(),
		"GETDEL":      c.GetDel(skCtx, "l").Err(),
		"GETEX":       c.GetEx(skCtx, "l", time.Second).Err(),
		"APPEND":      c.Append(skCtx, "l", "x").Err(),
		"STRLEN":      c.StrLen(skCtx, "l").Err(),
		"GETRANGE":    c.GetRange(skCtx, "l", 0, 1).Err(),
		"SETRANGE":    c.SetRange(skCtx, "l", 0, "x").Err(),
		"INCR":        c.Incr(skCtx, "l").Err(),
		"INCRBYFLOAT": c.IncrByFloat(skCtx, "l", 1).Err(),
	} {
		skErrIs(t, name, err, wrong)
	}
	skErrIs(t, "LCS", c.LCS(skCtx, &redis.LCSQuery{Key1: "l", Key2: "x"}).Err(), "ERR The specified keys must contain string values")
	if v := c.MGet(skCtx, "l").Val(); len(v) != 1 || v[0] != nil {
		t.Errorf("MGET of a list: %v", v)
	}
	skEq(t, "the list survived", c.Type(skCtx, "l").Val(), "list")
	// SET overwrites any type.
	skNoErr(t, c.Set(skCtx, "l", "v", 0).Err())
	skEq(t, "SET replaced the list", c.Type(skCtx, "l").Val(), "string")
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
	skEq(t, "SET", c.Do("SET", "bin\r\n\x00", v), "+OK\r\n")
	skEq(t, "GET", c.Do("GET", "bin\r\n\x00"), "$"+strconv.Itoa(len(v))+"\r\n"+v+"\r\n")
	skEq(t, "STRLEN", c.Do("STRLEN", "bin\r\n\x00"), ":"+strconv.Itoa(len(v))+"\r\n")
	skEq(t, "GETRANGE", c.Do("GETRANGE", "bin\r\n\x00", "10", "14"), "$5\r\n\n\x0b\x0c\r\x0e\r\n")
	skEq(t, "APPEND", c.Do("APPEND", "bin\r\n\x00", "\r\n"), ":"+strconv.Itoa(len(v)+2)+"\r\n")
	skEq(t, "SETRANGE", c.Do("SETRANGE", "bin\r\n\x00", "0", "\r\n"), ":"+strconv.Itoa(len(v)+2)+"\r\n")
	skEq(t, "GETRANGE head", c.Do("GETRANGE", "bin\r\n\x00", "0", "2"), "$3\r\n\r\n\x02\r\n")
	skEq(t, "MGET", c.Do("MGET", "nokey", "bin\r\n\x00", "nokey"), "*3\r\n$-1\r\n$"+strconv.Itoa(len(v)+2)+"\r\n\r\n"+v[2:]+"\r\n\r\n$-1\r\n")
	skEq(t, "empty value", c.Do("SET", "e", ""), "+OK\r\n")
	skEq(t, "GET empty", c.Do("GET", "e"), "$0\r\n\r\n")
	skEq(t, "LCS binary", c.Do("LCS", "bin\r\n\x00", "bin\r\n\x00", "LEN"), ":"+strconv.Itoa(len(v)+2)+"\r\n")
	skEq(t, "HELLO 3", c.Do("HELLO", "3")[:1], "%")
	skEq(t, "RESP3 null", c.Do("GET", "nokey"), "_\r\n")
	skEq(t, "RESP3 MGET", c.Do("MGET", "nokey", "e"), "*2\r\n_\r\n$0\r\n\r\n")
}

// TestStringsRawBig moves multi-megabyte values through every string
// command that touches the whole value.
func TestStringsRawBig(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 256*1024) // 4 MiB
	skEq(t, "SET 4MiB", c.Do("SET", "big", string(big)), "+OK\r\n")
	got := c.Do("GET", "big")
	if want := "$4194304\r\n" + string(big) + "\r\n"; got != want {
		t.Fatalf("GET 4MiB: %d bytes back, differing", len(got))
	}
	skEq(t, "APPEND 4MiB", c.Do("APPEND", "big", string(big)), ":8388608\r\n")
	skEq(t, "STRLEN", c.Do("STRLEN", "big"), ":8388608\r\n")
	skEq(t, "GETRANGE across the seam", c.Do("GETRANGE", "big", "4194300", "4194307"), "$8\r\ncdef0123\r\n")
	skEq(t, "SETRANGE far", c.Do("SETRANGE", "far", "10485760", "end"), ":10485763\r\n")
	skEq(t, "GETRANGE far tail", c.Do("GETRANGE", "far", "-5", "-1"), "$5\r\n\x00\x00end\r\n")
	skEq(t, "OBJECT ENCODING", c.Do("OBJECT", "ENCODING", "far"), "$3\r\nraw\r\n")
	skEq(t, "COPY big", c.Do("COPY", "big", "big2"), ":1\r\n")
	skEq(t, "APPEND to the copy", c.Do("APPEND", "big2", "x"), ":8388609\r\n")
	skEq(t, "the original is untouched", c.Do("STRLEN", "big"), ":8388608\r\n")
	skEq(t, "LCS of a big and a small string", c.Do("LCS", "big", "nokey", "LEN"), ":0\r\n")
}

// TestStringsMaxSize lowers proto-max-bulk-len to test the size cap of
// APPEND and SETRANGE at its exact boundary without gigabytes of memory.
func TestStringsMaxSize(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("proto-max-bulk-len", "1mb"))
	c := inst.Raw(t)
	const tooLong = "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"
	skEq(t, "SETRANGE at the limit", c.Do("SETRANGE", "k", "1048575", "x"), ":1048576\r\n")
	skEq(t, "SETRANGE past the limit", c.Do("SETRANGE", "k", "1048576", "x"), tooLong)
	skEq(t, "SETRANGE new key past the limit", c.Do("SETRANGE", "new", "1048575", "xy"), tooLong)
	skEq(t, "no key created", c.Do("EXISTS", "new"), ":0\r\n")
	skEq(t, "APPEND past the limit", c.Do("APPEND", "k", "x"), tooLong)
	skEq(t, "APPEND nothing at the limit", c.Do("APPEND", "k", ""), ":1048576\r\n")
	skEq(t, "value unchanged", c.Do("STRLEN", "k"), ":1048576\r\n")
	half := strings.Repeat("a", 600*1024)
	skEq(t, "SET", c.Do("SET", "h", half), "+OK\r\n")
	skEq(t, "APPEND over", c.Do("APPEND", "h", half), tooLong)
}

// TestStringsEncoding checks OBJECT ENCODING through the life of a value.
func TestStringsEncoding(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	enc := func(k string) string { return c.ObjectEncoding(skCtx, k).Val() }
	c.Set(skCtx, "k", "12345", 0)
	skEq(t, "integer", enc("k"), "int")
	c.Set(skCtx, "k", strings.Repeat("x", 44), 0)
	skEq(t, "44 bytes", enc("k"), "embstr")
	c.Set(skCtx, "k", strings.Repeat("x", 45), 0)
	skEq(t, "45 bytes", enc("k"), "raw")
	c.Set(skCtx, "k", "abc", 0)
	c.Append(skCtx, "k", "d")
	skEq(t, "after APPEND", enc("k"), "raw")
	c.Set(skCtx, "k", "abc", 0)
	c.SetRange(skCtx, "k", 0, "x")
	skEq(t, "after SETRANGE", enc("k"), "raw")
	c.Incr(skCtx, "k2")
	skEq(t, "after INCR", enc("k2"), "int")
	c.IncrByFloat(skCtx, "k2", 1)
	skEq(t, "after INCRBYFLOAT", enc("k2"), "embstr")
	c.Set(skCtx, "k", "99999999999999999999", 0) // > int64
	skEq(t, "too big for a long", enc("k"), "embstr")
	var e error
	if e = c.ObjectEncoding(skCtx, "nokey").Err(); !errors.Is(e, redis.Nil) {
		t.Errorf("OBJECT ENCODING of a missing key: %v", e)
	}
}
