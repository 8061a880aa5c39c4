package commands_test

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/ds/hash"
	"github.com/abacusdb/abacus/internal/servertest"
)

// Tests of hash-field expiration (Redis 7.4 HEXPIRE family, HPERSIST, HTTL
// family; Redis 8.0 HGETEX, HSETEX, HGETDEL) against the replies the Redis
// documentation gives, on a manual clock. redis-server 7.0 lacks these
// commands, so there is no differential test of them.

// hhT0 is the manual clock's start: a time with a millisecond part, so that
// rounding to seconds shows.
const hhT0 = 1_700_000_000_123

func hhStartClock(t *testing.T, opts ...servertest.Option) (*servertest.Instance, *servertest.Conn) {
	t.Helper()
	inst := servertest.Start(t, append([]servertest.Option{servertest.WithManualClock(hhT0)}, opts...)...)
	return inst, inst.Raw(t)
}

// hhTable runs "command => reply" lines on a raw connection; the reply is
// written compactly: ":1" an integer, "*:1 :-2" an array of integers,
// "$v" a bulk string, "$nil" a null, "*$a $nil" an array of bulks and nulls,
// "+OK", "-ERR ..." an error.
func hhTable(t *testing.T, r *servertest.Conn, table string) {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cmd, want, ok := strings.Cut(line, "=>")
		if !ok {
			t.Fatalf("bad table line %q", line)
		}
		got := r.Do(strings.Fields(cmd)...)
		if w := hhReply(strings.TrimSpace(want)); got != w {
			t.Errorf("%s\n got %q\nwant %q", strings.TrimSpace(cmd), got, w)
		}
	}
}

func hhReply(s string) string {
	switch {
	case strings.HasPrefix(s, "*"):
		items := strings.Fields(s[1:])
		out := "*" + strconv.Itoa(len(items)) + "\r\n"
		for _, it := range items {
			out += hhReply(it)
		}
		return out
	case s == "$nil":
		return "$-1\r\n"
	case strings.HasPrefix(s, "$"):
		return "$" + strconv.Itoa(len(s)-1) + "\r\n" + s[1:] + "\r\n"
	}
	return s + "\r\n"
}

func TestHashesTTLReplies(t *testing.T) {
	_, r := hhStartClock(t)
	const in100s = hhT0 + 100_000
	sec := strconv.FormatInt(in100s/1000+1, 10) // HEXPIRETIME rounds up
	ms := strconv.FormatInt(in100s, 10)
	now := strconv.FormatInt(hhT0, 10)
	at10 := strconv.FormatInt(hhT0/1000+10, 10)
	hhTable(t, r, `
HSET h a 1 b 2 c 3 => :3
OBJECT ENCODING h => $listpack
HEXPIRE h 100 FIELDS 2 a zz => *:1 :-2
OBJECT ENCODING h => $listpackex
HTTL h FIELDS 3 a b zz => *:100 :-1 :-2
HPTTL h FIELDS 1 a => *:100000
HEXPIRETIME h FIELDS 1 a => *:`+sec+`
HPEXPIRETIME h FIELDS 2 a b => *:`+ms+` :-1
# Conditions: a field without a TTL counts as one that never expires.
HEXPIRE h 50 NX FIELDS 2 a b => *:0 :1
HEXPIRE h 200 XX FIELDS 3 a b c => *:1 :1 :0
HEXPIRE h 100 GT FIELDS 3 a b c => *:0 :0 :0
HEXPIRE h 300 GT FIELDS 2 a c => *:1 :0
HEXPIRE h 100 LT FIELDS 3 a b c => *:1 :1 :1
HEXPIRE h 100 lt FIELDS 1 a => *:0
HPEXPIRE h 100000 FIELDS 1 a => *:1
HTTL h FIELDS 3 a b c => *:100 :100 :100
# A time that is not in the future deletes the field: reply 2.
HPEXPIRE h 0 FIELDS 1 c => *:2
HEXISTS h c => :0
HPEXPIREAT h `+now+` FIELDS 2 b c => *:2 :-2
HLEN h => :1
HEXPIREAT h `+at10+` FIELDS 1 a => *:1
HPTTL h FIELDS 1 a => *:`+strconv.FormatInt((hhT0/1000+10)*1000-hhT0, 10)+`
HPERSIST h FIELDS 2 a zz => *:1 :-2
HPERSIST h FIELDS 1 a => *:-1
HTTL h FIELDS 1 a => *:-1
# The same field twice: the second sees what the first did.
HEXPIRE h 0 FIELDS 2 a a => *:2 :-2
EXISTS h => :0
HEXPIRE nokey 10 FIELDS 2 a b => *:-2 :-2
HTTL nokey FIELDS 1 a => *:-2
HPEXPIRETIME nokey FIELDS 1 a => *:-2
HPERSIST nokey FIELDS 1 a => *:-2
# A plain listpack: -1 for fields without a TTL.
HSET p a 1 => :1
HTTL p FIELDS 2 a b => *:-1 :-2
HPERSIST p FIELDS 2 a b => *:-1 :-2
OBJECT ENCODING p => $listpack
`)
}

func TestHashesTTLErrors(t *testing.T) {
	_, r := hhStartClock(t)
	hhTable(t, r, `
HSET h a 1 => :1
SET s x => +OK
HEXPIRE h 10 FIELDS 0 a => -ERR Parameter `+"`numFields`"+` should be greater than 0
HEXPIRE h 10 FIELDS -1 a => -ERR Parameter `+"`numFields`"+` should be greater than 0
HEXPIRE h 10 FIELDS x a => -ERR Parameter `+"`numFields`"+` should be greater than 0
HEXPIRE h 10 FIELDS 2 a => -ERR The `+"`numfields`"+` parameter must match the number of arguments
HEXPIRE h 10 FIELDS 1 a b => -ERR The `+"`numfields`"+` parameter must match the number of arguments
HEXPIRE h 10 NX XX FIELDS 1 a => -ERR Mandatory argument FIELDS is missing or not at the right position
HEXPIRE h 10 FOO 1 a => -ERR Mandatory argument FIELDS is missing or not at the right position
HEXPIRE h 10 FIELDS 1 => -ERR wrong number of arguments for 'hexpire' command
HEXPIRE h -1 FIELDS 1 a => -ERR invalid expire time, must be >= 0
HEXPIRE h x FIELDS 1 a => -ERR value is not an integer or out of range
# The limit is 2^46 ms after the epoch; relative times count from now.
HEXPIREAT h 70368744177 FIELDS 1 a => *:1
HEXPIRE h 68668744177 FIELDS 1 a => *:1
HEXPIRE h 68668744178 FIELDS 1 a => -ERR invalid expire time in 'hexpire' command
HEXPIRE h 70368744178 FIELDS 1 a => -ERR invalid expire time in 'hexpire' command
HEXPIREAT h 70368744178 FIELDS 1 a => -ERR invalid expire time in 'hexpireat' command
HPEXPIREAT h 70368744177663 FIELDS 1 a => *:1
HPEXPIREAT h 70368744177664 FIELDS 1 a => -ERR invalid expire time in 'hpexpireat' command
HPEXPIRE h 70368744177663 FIELDS 1 a => -ERR invalid expire time in 'hpexpire' command
HPEXPIRE h 9223372036854775807 FIELDS 1 a => -ERR invalid expire time in 'hpexpire' command
HEXPIRE s 10 FIELDS 1 a => -WRONGTYPE Operation against a key holding the wrong kind of value
HEXPIRE s x FIELDS 0 a => -WRONGTYPE Operation against a key holding the wrong kind of value
HTTL s FIELDS 1 a => -WRONGTYPE Operation against a key holding the wrong kind of value
HPERSIST s FIELDS 1 a => -WRONGTYPE Operation against a key holding the wrong kind of value
HGETEX s FIELDS 1 a => -WRONGTYPE Operation against a key holding the wrong kind of value
HSETEX s FIELDS 1 a 1 => -WRONGTYPE Operation against a key holding the wrong kind of value
HGETDEL s FIELDS 1 a => -WRONGTYPE Operation against a key holding the wrong kind of value
HTTL h FIELDS 0 a => -ERR Number of fields must be a positive integer
HTTL h FIELDS 2 a => -ERR The `+"`numfields`"+` parameter must match the number of arguments
HTTL h FOO 1 a => -ERR Mandatory argument FIELDS is missing or not at the right position
HTTL h FIELDS 1 => -ERR wrong number of arguments for 'httl' command
HPERSIST h FIELDS x a => -ERR Number of fields must be a positive integer
HPERSIST h FIELD 1 a => -ERR Mandatory argument FIELDS is missing or not at the right position
HGETEX h EX 10 FIELDS 0 a => -ERR Number of fields must be a positive integer
HGETEX h EX -1 FIELDS 1 a => -ERR invalid expire time, must be >= 0
HGETEX h EX x FIELDS 1 a => -ERR value is not an integer or out of range
HGETEX h PX 10 FIELD 1 a => -ERR Mandatory argument FIELDS is missing or not at the right position
HGETEX h FOO FIELDS 1 a => -ERR Mandatory argument FIELDS is missing or not at the right position
HGETEX h EX 10 FIELDS => -ERR wrong number of arguments for 'hgetex' command
HGETEX h PERSIST FIELDS 2 a => -ERR The `+"`numfields`"+` parameter must match the number of arguments
HGETEX h EXAT 70368744178 FIELDS 1 a => -ERR invalid expire time in 'hgetex' command
HGETDEL h FIELDS 0 a => -ERR Number of fields must be a positive integer
HGETDEL h FIELDS 2 a => -ERR The `+"`numfields`"+` parameter must match the number of arguments
HGETDEL h FOO 1 a => -ERR Mandatory argument FIELDS is missing or not at the right position
HSETEX h FIELDS 1 a => -ERR wrong number of arguments for 'hsetex' command
HSETEX h FIELDS 2 a 1 => -ERR wrong number of arguments for 'hsetex' command
HSETEX h FIELDS 1 a 1 b => -ERR wrong number of arguments for 'hsetex' command
HSETEX h FIELDS 0 a 1 => -ERR invalid number of fields
HSETEX h FIELDS x a 1 => -ERR invalid number of fields
HSETEX h FIELDS 2147483648 a 1 => -ERR invalid number of fields
HSETEX h EX 10 PX 10 FIELDS 1 a 1 => -ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified
HSETEX h KEEPTTL EX 10 FIELDS 1 a 1 => -ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified
HSETEX h EX 10 EX 10 FIELDS 1 a 1 => -ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified
HSETEX h FNX FXX FIELDS 1 a 1 => -ERR Only one of FXX or FNX arguments can be specified
HSETEX h FNX FNX FIELDS 1 a 1 => -ERR Only one of FXX or FNX arguments can be specified
HSETEX h FOO FIELDS 1 a 1 => -ERR unknown argument: FOO
HSETEX h EX -1 FIELDS 1 a 1 => -ERR invalid expire time, must be >= 0
HSETEX h PX 70368744177664 FIELDS 1 a 1 => -ERR invalid expire time in 'hsetex' command
HSETEX h FNX FIELDS 1 a 1 EX => -ERR wrong number of arguments for 'hsetex' command
HSETEX h FNX KEEPTTL a 1 b => -ERR unknown argument: a
HGET h a => $1
`)
	// The options are parsed before the key is looked up.
	hhTable(t, r, `
HSETEX s FOO FIELDS 1 a 1 => -ERR unknown argument: FOO
HSETEX s FXX FIELDS 1 a 1 => -WRONGTYPE Operation against a key holding the wrong kind of value
`)
}

// TestHashesTTLBoundaries walks the clock across expiry times: a field with
// expiry time T is there at T-1 ms and gone at T, for every command.
func TestHashesTTLBoundaries(t *testing.T) {
	inst, r := hhStartClock(t)
	inst.Srv.Env.SetActiveExpire(false) // only lookups reclaim here
	hhTable(t, r, `
HSET h a 1 b 2 c 3 => :3
HPEXPIRE h 1000 FIELDS 1 a => *:1
HPEXPIRE h 1500 FIELDS 1 b => *:1
HTTL h FIELDS 2 a b => *:1 :2
`)
	inst.Clock.Advance(999 * time.Millisecond)
	hhTable(t, r, `
HPTTL h FIELDS 2 a b => *:1 :501
HTTL h FIELDS 2 a b => *:1 :1
HGET h a => $1
HLEN h => :3
`)
	inst.Clock.Advance(time.Millisecond)
	hhTable(t, r, `
HGET h a => $nil
HEXISTS h a => :0
HSTRLEN h a => :0
HTTL h FIELDS 2 a b => *:-2 :1
HPERSIST h FIELDS 1 a => *:-2
HEXPIRE h 10 FIELDS 1 a => *:-2
HLEN h => :2
HKEYS h => *$b $c
HMGET h a b c => *$nil $2 $3
`)
	if got, want := r.Do("HSCAN", "h", "0"), "*2\r\n$1\r\n0\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"; got != want {
		t.Errorf("HSCAN after the expiry: %q", got)
	}
	hhTable(t, r, `
HRANDFIELD h 10 => *$b $c
HINCRBY h a 5 => :5
HTTL h FIELDS 1 a => *:-1
HPEXPIRE h 500 FIELDS 2 a c => *:1 :1
`)
	inst.Clock.Advance(500 * time.Millisecond)
	// Every field has now expired: the key is gone for every command,
	// before any cycle runs.
	hhTable(t, r, `
TYPE h => +none
EXISTS h => :0
HLEN h => :0
HGETALL h => *
DEL h => :0
`)
	// The same through DEL, HGETALL and HSET on fresh keys.
	hhTable(t, r, `
HSET g a 1 => :1
HPEXPIRE g 10 FIELDS 1 a => *:1
HSET k a 1 => :1
HPEXPIRE k 10 FIELDS 1 a => *:1
HSET m a 1 => :1
HPEXPIRE m 10 FIELDS 1 a => *:1
`)
	inst.Clock.Advance(10 * time.Millisecond)
	hhTable(t, r, `
DEL g => :0
HGETALL k => *
HSET m b 2 => :1
HGETALL m => *$b $2
DBSIZE => :1
`)
}

// TestHashesTTLGoRedis drives the field-expiry commands through go-redis.
func TestHashesTTLGoRedis(t *testing.T) {
	inst, _ := hhStartClock(t)
	c := inst.Client(t)
	ctx := context.Background()
	c.HSet(ctx, "h", "a", "1", "b", "2", "c", "3")

	res, err := c.HExpire(ctx, "h", 10*time.Second, "a", "zz").Result()
	hhNoErr(t, "HEXPIRE", err)
	hhEq(t, "HEXPIRE", strings.Trim(strings.Join(strings.Fields(strconvInts(res)), " "), " "), "1 -2")
	res, _ = c.HExpireWithArgs(ctx, "h", 20*time.Second, redis.HExpireArgs{GT: true}, "a", "b").Result()
	hhEq(t, "HEXPIRE GT", strconvInts(res), "1 0")
	res, _ = c.HPExpireWithArgs(ctx, "h", 5000*time.Millisecond, redis.HExpireArgs{NX: true}, "a", "b").Result()
	hhEq(t, "HPEXPIRE NX", strconvInts(res), "0 1")
	res, _ = c.HExpireAtWithArgs(ctx, "h", time.UnixMilli(hhT0).Add(time.Hour), redis.HExpireArgs{XX: true}, "b", "c").Result()
	hhEq(t, "HEXPIREAT XX", strconvInts(res), "1 0")
	res, _ = c.HPExpireAtWithArgs(ctx, "h", time.UnixMilli(hhT0+1000), redis.HExpireArgs{LT: true}, "a", "b", "c").Result()
	hhEq(t, "HPEXPIREAT LT", strconvInts(res), "1 1 1")
	res, _ = c.HTTL(ctx, "h", "a", "b", "zz").Result()
	hhEq(t, "HTTL", strconvInts(res), "1 1 -2")
	res, _ = c.HPTTL(ctx, "h", "a").Result()
	hhEq(t, "HPTTL", strconvInts(res), "1000")
	res, _ = c.HExpireTime(ctx, "h", "a").Result()
	hhEq(t, "HEXPIRETIME", strconvInts(res), strconv.FormatInt((hhT0+1000+999)/1000, 10))
	res, _ = c.HPExpireTime(ctx, "h", "a").Result()
	hhEq(t, "HPEXPIRETIME", strconvInts(res), strconv.FormatInt(hhT0+1000, 10))
	res, _ = c.HPersist(ctx, "h", "a", "zz").Result()
	hhEq(t, "HPERSIST", strconvInts(res), "1 -2")

	// HGETEX: values, then the new expiry for the fields found.
	vals, err := c.HGetEXWithArgs(ctx, "h", &redis.HGetEXOptions{ExpirationType: redis.HGetEXExpirationEX, ExpirationVal: 30}, "a", "zz").Result()
	hhNoErr(t, "HGETEX EX", err)
	hhEq(t, "HGETEX EX", strings.Join(vals, ","), "1,")
	res, _ = c.HTTL(ctx, "h", "a").Result()
	hhEq(t, "TTL after HGETEX EX", strconvInts(res), "30")
	vals, _ = c.HGetEXWithArgs(ctx, "h", &redis.HGetEXOptions{ExpirationType: redis.HGetEXExpirationPERSIST}, "a").Result()
	hhEq(t, "HGETEX PERSIST", strings.Join(vals, ","), "1")
	res, _ = c.HTTL(ctx, "h", "a").Result()
	hhEq(t, "TTL after HGETEX PERSIST", strconvInts(res), "-1")
	vals, _ = c.HGetEX(ctx, "h", "b").Result()
	hhEq(t, "HGETEX without an option", strings.Join(vals, ","), "2")
	vals, _ = c.HGetEXWithArgs(ctx, "h", &redis.HGetEXOptions{ExpirationType: redis.HGetEXExpirationPX, ExpirationVal: 0}, "c").Result()
	hhEq(t, "HGETEX PX 0 still replies", strings.Join(vals, ","), "3")
	ex, _ := c.HExists(ctx, "h", "c").Result()
	hhEq(t, "HGETEX PX 0 deletes", ex, false)
	vals, _ = c.HGetEXWithArgs(ctx, "h", &redis.HGetEXOptions{ExpirationType: redis.HGetEXExpirationPXAT, ExpirationVal: hhT0 + 2000}, "b").Result()
	hhEq(t, "HGETEX PXAT", strings.Join(vals, ","), "2")
	res, _ = c.HPExpireTime(ctx, "h", "b").Result()
	hhEq(t, "after HGETEX PXAT", strconvInts(res), strconv.FormatInt(hhT0+2000, 10))
	vals, _ = c.HGetEXWithArgs(ctx, "h", &redis.HGetEXOptions{ExpirationType: redis.HGetEXExpirationEXAT, ExpirationVal: hhT0/1000 + 100}, "b").Result()
	hhEq(t, "HGETEX EXAT", strings.Join(vals, ","), "2")
	res, _ = c.HPExpireTime(ctx, "h", "b").Result()
	hhEq(t, "after HGETEX EXAT", strconvInts(res), strconv.FormatInt((hhT0/1000+100)*1000, 10))

	// HSETEX: FNX/FXX all or nothing, the TTL options, reply 1 or 0.
	n, err := c.HSetEXWithArgs(ctx, "s", &redis.HSetEXOptions{Condition: redis.HSetEXFXX}, "a", "1").Result()
	hhNoErr(t, "HSETEX FXX on a missing key", err)
	hhEq(t, "HSETEX FXX on a missing key", n, int64(0))
	hhEq(t, "no key made", c.Exists(ctx, "s").Val(), int64(0))
	n, _ = c.HSetEXWithArgs(ctx, "s", &redis.HSetEXOptions{Condition: redis.HSetEXFNX, ExpirationType: redis.HSetEXExpirationEX, ExpirationVal: 100}, "a", "1", "b", "2").Result()
	hhEq(t, "HSETEX FNX EX", n, int64(1))
	res, _ = c.HTTL(ctx, "s", "a", "b").Result()
	hhEq(t, "TTLs after HSETEX EX", strconvInts(res), "100 100")
	n, _ = c.HSetEXWithArgs(ctx, "s", &redis.HSetEXOptions{Condition: redis.HSetEXFNX}, "c", "3", "a", "9").Result()
	hhEq(t, "HSETEX FNX with one existing", n, int64(0))
	hhEq(t, "nothing set", c.HExists(ctx, "s", "c").Val(), false)
	n, _ = c.HSetEXWithArgs(ctx, "s", &redis.HSetEXOptions{Condition: redis.HSetEXFXX, ExpirationType: redis.HSetEXExpirationKEEPTTL}, "a", "10").Result()
	hhEq(t, "HSETEX FXX KEEPTTL", n, int64(1))
	res, _ = c.HTTL(ctx, "s", "a").Result()
	hhEq(t, "KEEPTTL kept", strconvInts(res), "100")
	n, _ = c.HSetEXWithArgs(ctx, "s", &redis.HSetEXOptions{Condition: redis.HSetEXFXX}, "a", "11", "zz", "1").Result()
	hhEq(t, "HSETEX FXX with one missing", n, int64(0))
	n, _ = c.HSetEX(ctx, "s", "a", "12").Result()
	hhEq(t, "HSETEX plain", n, int64(1))
	res, _ = c.HTTL(ctx, "s", "a", "b").Result()
	hhEq(t, "a plain HSETEX clears the TTL", strconvInts(res), "-1 100")
	n, _ = c.HSetEXWithArgs(ctx, "s", &redis.HSetEXOptions{ExpirationType: redis.HSetEXExpirationPX, ExpirationVal: 2500}, "a", "13").Result()
	hhEq(t, "HSETEX PX", n, int64(1))
	res, _ = c.HPTTL(ctx, "s", "a").Result()
	hhEq(t, "after HSETEX PX", strconvInts(res), "2500")
	n, _ = c.HSetEXWithArgs(ctx, "s", &redis.HSetEXOptions{ExpirationType: redis.HSetEXExpirationPXAT, ExpirationVal: hhT0 + 7}, "a", "14").Result()
	hhEq(t, "HSETEX PXAT", n, int64(1))
	res, _ = c.HPExpireTime(ctx, "s", "a").Result()
	hhEq(t, "after HSETEX PXAT", strconvInts(res), strconv.FormatInt(hhT0+7, 10))
	n, _ = c.HSetEXWithArgs(ctx, "s", &redis.HSetEXOptions{ExpirationType: redis.HSetEXExpirationEXAT, ExpirationVal: 1}, "a", "15", "b", "16").Result()
	hhEq(t, "HSETEX EXAT in the past", n, int64(1))
	hhEq(t, "the fields set in the past are gone, and the key with them", c.Exists(ctx, "s").Val(), int64(0))

	// HGETDEL.
	c.HSet(ctx, "d", "a", "1", "b", "2")
	vals, err = c.HGetDel(ctx, "d", "a", "zz", "a").Result()
	hhNoErr(t, "HGETDEL", err)
	hhEq(t, "HGETDEL", strings.Join(vals, ","), "1,,")
	vals, _ = c.HGetDel(ctx, "d", "b").Result()
	hhEq(t, "HGETDEL last", strings.Join(vals, ","), "2")
	hhEq(t, "HGETDEL of the last field deletes the key", c.Exists(ctx, "d").Val(), int64(0))
	vals, _ = c.HGetDel(ctx, "nokey", "a").Result()
	hhEq(t, "HGETDEL missing key", strings.Join(vals, ","), "")
}

// strconvInts renders integers space-separated.
func strconvInts(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, " ")
}

// TestHashesTTLKeptOrCleared checks which writes keep a field's TTL: the
// ones that change its value only (HINCRBY, HINCRBYFLOAT, HSETEX KEEPTTL)
// keep it; the ones that replace the field (HSET, HMSET, HSETEX without a
// TTL option, HDEL then HSET) clear it. COPY, RENAME and MOVE carry TTLs.
func TestHashesTTLKeptOrCleared(t *testing.T) {
	_, r := hhStartClock(t)
	hhTable(t, r, `
HSET h a 1 b 2 c 3 d 4 e 5 f x => :6
HEXPIRE h 100 FIELDS 6 a b c d e f => *:1 :1 :1 :1 :1 :1
HINCRBY h a 1 => :2
HINCRBYFLOAT h b 1.5 => $3.5
HSETEX h KEEPTTL FIELDS 1 c 30 => :1
HSET h d 40 => :0
HMSET h e 50 => +OK
HSETNX h f y => :0
HTTL h FIELDS 6 a b c d e f => *:100 :100 :100 :-1 :-1 :100
HDEL h a => :1
HSET h a 1 => :1
HTTL h FIELDS 1 a => *:-1
HSETEX h FIELDS 1 b 9 => :1
HTTL h FIELDS 2 b c => *:-1 :100
COPY h h2 => :1
HTTL h2 FIELDS 2 b c => *:-1 :100
HPEXPIRE h2 1 FIELDS 1 c => *:1
HPTTL h FIELDS 1 c => *:100000
RENAME h2 h3 => +OK
HPTTL h3 FIELDS 1 c => *:1
MOVE h3 1 => :1
SELECT 1 => +OK
HPTTL h3 FIELDS 2 c zz => *:1 :-2
`)
}

// TestHashesTTLActiveReclaim checks that the active expiry cycle reclaims
// expired fields, and deletes hashes left empty, with no command touching
// the keys: the clock moves, and the test watches DBSIZE and the server's
// counter of reclaimed fields until they show it, for a bounded time.
func TestHashesTTLActiveReclaim(t *testing.T) {
	inst, r := hhStartClock(t, servertest.WithConfig("hz", "100"))
	// 50 hashes whose fields all expire at +1 s, one big hashtable with
	// half its fields expiring, and one hash with no TTL.
	for i := 0; i < 50; i++ {
		k := "gone" + strconv.Itoa(i)
		r.Do("HSET", k, "a", "1", "b", "2")
		r.Do("HPEXPIRE", k, strconv.Itoa(1000+i), "FIELDS", "2", "a", "b")
	}
	args := []string{"HSET", "big"}
	for i := 0; i < 1000; i++ {
		args = append(args, "f"+strconv.Itoa(i), "v")
	}
	r.Do(args...)
	exp := []string{"HPEXPIRE", "big", "1500", "FIELDS", "500"}
	for i := 0; i < 500; i++ {
		exp = append(exp, "f"+strconv.Itoa(2*i))
	}
	if got := r.Do(exp...); !strings.HasPrefix(got, "*500\r\n:1\r\n") {
		t.Fatalf("HPEXPIRE big: %.40q", got)
	}
	r.Do("HSET", "keep", "a", "1")
	hhEq(t, "DBSIZE before", r.Do("DBSIZE"), ":52\r\n")

	stats := func() (fields int64, bigLen int) {
		inst.Srv.Lock()
		defer inst.Srv.Unlock()
		ks := inst.Srv.Env.KS
		// The physical field count: Len at the smallest time counts
		// expired fields not reclaimed yet.
		return ks.Stats.ExpiredFields, ks.DBs[0].Peek("big").Val().(*hash.Hash).Len(math.MinInt64)
	}
	inst.Clock.Advance(999 * time.Millisecond)
	time.Sleep(50 * time.Millisecond) // a few cycles (hz 100) that must do nothing
	if f, n := stats(); f != 0 || n != 1000 || r.Do("DBSIZE") != ":52\r\n" {
		t.Fatalf("before any expiry: %d fields reclaimed, big holds %d, DBSIZE %q", f, n, r.Do("DBSIZE"))
	}
	inst.Clock.Advance(600 * time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for {
		f, n := stats()
		if f == 600 && n == 500 && r.Do("DBSIZE") == ":2\r\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %d fields reclaimed (want 600), big holds %d (want 500), DBSIZE %q", f, n, r.Do("DBSIZE"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	hhTable(t, r, `
HLEN big => :500
HGET big f0 => $nil
HGET big f1 => $v
HGET keep a => $1
`)
	inst.Srv.Lock()
	indexed := inst.Srv.Env.KS.DBs[0].FieldExpiresLen()
	inst.Srv.Unlock()
	hhEq(t, "hashes left in the field-expiry index", indexed, 0)
}
