package command_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/servertest"
)

func skStats(inst *servertest.Instance) keyspace.Stats {
	inst.Srv.Lock()
	defer inst.Srv.Unlock()
	return inst.Srv.Env.KS.Stats
}

func TestExpireGoRedis(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(skT0))
	c := inst.Client(t)
	c.Set(skCtx, "k", "v", 0)

	skEq(t, "EXPIRE XX without TTL", c.ExpireXX(skCtx, "k", time.Minute).Val(), false)
	skEq(t, "EXPIRE GT without TTL", c.ExpireGT(skCtx, "k", time.Minute).Val(), false)
	skEq(t, "EXPIRE NX", c.ExpireNX(skCtx, "k", time.Minute).Val(), true)
	skEq(t, "EXPIRE NX with TTL", c.ExpireNX(skCtx, "k", time.Hour).Val(), false)
	skEq(t, "TTL", c.TTL(skCtx, "k").Val(), time.Minute)
	skEq(t, "EXPIRE GT equal", c.ExpireGT(skCtx, "k", time.Minute).Val(), false)
	skEq(t, "EXPIRE GT", c.ExpireGT(skCtx, "k", 2*time.Minute).Val(), true)
	skEq(t, "EXPIRE LT equal", c.ExpireLT(skCtx, "k", 2*time.Minute).Val(), false)
	skEq(t, "EXPIRE LT", c.ExpireLT(skCtx, "k", 30*time.Second).Val(), true)
	skEq(t, "EXPIRE XX", c.ExpireXX(skCtx, "k", 40*time.Second).Val(), true)
	skEq(t, "PTTL", c.PTTL(skCtx, "k").Val(), 40*time.Second)
	skEq(t, "PEXPIRE", c.PExpire(skCtx, "k", 1500*time.Millisecond).Val(), true)
	skEq(t, "TTL rounds", c.TTL(skCtx, "k").Val(), 2*time.Second)
	skEq(t, "EXPIRETIME rounds", c.ExpireTime(skCtx, "k").Val(), time.Duration((skT0+1500+500)/1000)*time.Second)
	skEq(t, "PEXPIRETIME", c.PExpireTime(skCtx, "k").Val(), time.Duration(skT0+1500)*time.Millisecond)
	skEq(t, "EXPIREAT", c.ExpireAt(skCtx, "k", time.Unix(skT0/1000+100, 0)).Val(), true)
	skEq(t, "TTL after EXPIREAT", c.TTL(skCtx, "k").Val(), 100*time.Second)
	skEq(t, "PEXPIREAT", c.PExpireAt(skCtx, "k", time.UnixMilli(skT0+2345)).Val(), true)
	skEq(t, "PTTL after PEXPIREAT", c.PTTL(skCtx, "k").Val(), 2345*time.Millisecond)
	skEq(t, "PERSIST", c.Persist(skCtx, "k").Val(), true)
	skEq(t, "PERSIST again", c.Persist(skCtx, "k").Val(), false)
	skEq(t, "TTL without expiry", c.TTL(skCtx, "k").Val(), time.Duration(-1))
	skEq(t, "TTL of a missing key", c.TTL(skCtx, "nokey").Val(), time.Duration(-2))
	skEq(t, "EXPIRE missing key", c.Expire(skCtx, "nokey", time.Minute).Val(), false)
	skErrIs(t, "NX XX", c.Do(skCtx, "EXPIRE", "k", "10", "NX", "XX").Err(), "ERR NX and XX, GT or LT options at the same time are not compatible")
	skErrIs(t, "GT LT", c.Do(skCtx, "EXPIRE", "k", "10", "GT", "LT").Err(), "ERR GT and LT options at the same time are not compatible")
	skErrIs(t, "bad option", c.Do(skCtx, "PEXPIRE", "k", "10", "SOON").Err(), "ERR Unsupported option SOON")
	skErrIs(t, "overflow", c.Do(skCtx, "EXPIRE", "k", "9223372036854775807").Err(), "ERR invalid expire time in 'expire' command")
	skErrIs(t, "overflow", c.Do(skCtx, "PEXPIRE", "k", "9223372036854775807").Err(), "ERR invalid expire time in 'pexpire' command")

	// A time in the past deletes the key at once: a deletion, not an
	// expiry, in the statistics.
	before := skStats(inst).ExpiredKeys
	skEq(t, "EXPIRE negative", c.Expire(skCtx, "k", -time.Second).Val(), true)
	skEq(t, "key deleted", c.Exists(skCtx, "k").Val(), int64(0))
	skEq(t, "not counted as expired", skStats(inst).ExpiredKeys, before)
	c.Set(skCtx, "k", "v", 0)
	skEq(t, "EXPIREAT now", c.Do(skCtx, "PEXPIREAT", "k", strconv.FormatInt(skT0, 10)).Val(), any(int64(1)))
	skEq(t, "key deleted by PEXPIREAT now", c.Exists(skCtx, "k").Val(), int64(0))
}

// TestExpireExactBoundary: a key expires when the clock reaches its time,
// not a millisecond later.
func TestExpireExactBoundary(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(skT0))
	c := inst.Client(t)
	c.Set(skCtx, "k", "v", 1000*time.Millisecond)
	inst.Clock.Advance(999 * time.Millisecond)
	skEq(t, "PTTL 1ms before", c.PTTL(skCtx, "k").Val(), time.Millisecond)
	skEq(t, "TTL rounds 1ms to 0", c.TTL(skCtx, "k").Val(), time.Duration(0))
	skEq(t, "still readable", c.Get(skCtx, "k").Val(), "v")
	inst.Clock.Advance(time.Millisecond)
	if err := c.Get(skCtx, "k").Err(); err != redis.Nil {
		t.Errorf("GET at the expiry time: %v", err)
	}
	skEq(t, "TTL of the expired key", c.TTL(skCtx, "k").Val(), time.Duration(-2))
}

// TestExpireLazy: expired keys are invisible to every command, and each one
// met is reclaimed and counted.
func TestExpireLazy(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(skT0))
	inst.Srv.Env.SetActiveExpire(false)
	c := inst.Client(t)
	keys := []string{"get", "exists", "type", "ttl", "incr", "append", "rename", "expire", "getex", "setnx", "scan1", "scan2", "keys", "random"}
	for _, k := range keys {
		c.Set(skCtx, k, "10", time.Second)
	}
	c.Set(skCtx, "live", "x", 0)
	inst.Clock.Advance(time.Second)
	skEq(t, "DBSIZE counts stale keys", c.DBSize(skCtx).Val(), int64(len(keys)+1))
	skEq(t, "KEYS hides stale keys", len(c.Keys(skCtx, "*").Val()), 1)
	skEq(t, "KEYS does not reclaim", c.DBSize(skCtx).Val(), int64(len(keys)+1))
	skEq(t, "nothing expired yet", skStats(inst).ExpiredKeys, int64(0))

	if err := c.Get(skCtx, "get").Err(); err != redis.Nil {
		t.Errorf("GET of an expired key: %v", err)
	}
	skEq(t, "EXISTS", c.Exists(skCtx, "exists").Val(), int64(0))
	skEq(t, "TYPE", c.Type(skCtx, "type").Val(), "none")
	skEq(t, "TTL", c.TTL(skCtx, "ttl").Val(), time.Duration(-2))
	skEq(t, "INCR starts over", c.Incr(skCtx, "incr").Val(), int64(1))
	skEq(t, "APPEND starts over", c.Append(skCtx, "append", "x").Val(), int64(1))
	skErrIs(t, "RENAME", c.Rename(skCtx, "rename", "x").Err(), "ERR no such key")
	skEq(t, "EXPIRE", c.Expire(skCtx, "expire", time.Hour).Val(), false)
	if err := c.GetEx(skCtx, "getex", time.Hour).Err(); err != redis.Nil {
		t.Errorf("GETEX of an expired key: %v", err)
	}
	skEq(t, "SETNX", c.SetNX(skCtx, "setnx", "new", 0).Val(), true)
	skEq(t, "stats after lazy expiry", skStats(inst).ExpiredKeys, int64(10))

	// SCAN does not return them and reclaims those it walks over.
	all, cur, err := c.Scan(skCtx, 0, "", 1000).Result()
	skNoErr(t, err)
	skEq(t, "SCAN in one call", cur, uint64(0))
	for _, k := range all {
		if k == "scan1" || k == "scan2" || k == "keys" || k == "random" {
			t.Errorf("SCAN returned the expired key %q", k)
		}
	}
	skEq(t, "SCAN reclaimed the rest", skStats(inst).ExpiredKeys, int64(14))
	skEq(t, "DBSIZE now", c.DBSize(skCtx).Val(), int64(4)) // live, incr, append, setnx
}

// TestExpireActiveCycle: keys nobody reads are reclaimed by the server's
// background cycle once the clock passes their time; until then DBSIZE
// counts them, as Redis does.
func TestExpireActiveCycle(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(skT0), servertest.WithConfig("hz", "100"))
	inst.Srv.Env.SetActiveExpire(false)
	c := inst.Raw(t)
	const volatile, stable = 300, 50
	for i := 0; i < volatile; i++ {
		c.Do("SET", "v:"+strconv.Itoa(i), "x", "PX", strconv.Itoa(1000+i))
	}
	for i := 0; i < stable; i++ {
		c.Do("SET", "s:"+strconv.Itoa(i), "x")
	}
	inst.Clock.Advance(time.Second + 150*time.Millisecond) // half of them are due
	skEq(t, "DBSIZE before the cycle runs", c.Do("DBSIZE"), ":"+strconv.Itoa(volatile+stable)+"\r\n")
	skEq(t, "nothing reclaimed while active expiry is off", skStats(inst).ExpiredKeys, int64(0))

	inst.Srv.Env.SetActiveExpire(true)
	waitDBSize := func(want int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			got := c.Do("DBSIZE")
			if got == ":"+strconv.Itoa(want)+"\r\n" {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("DBSIZE is %q, want %d: the active cycle did not reclaim the expired keys", got, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitDBSize(volatile + stable - 151) // v:0 .. v:150 were due
	skEq(t, "expired_keys counts the reclaimed keys", skStats(inst).ExpiredKeys, int64(151))
	inst.Clock.Advance(time.Hour)
	waitDBSize(stable)
	skEq(t, "every volatile key reclaimed", skStats(inst).ExpiredKeys, int64(volatile))
	skEq(t, "the keys without TTL are all there", c.Do("EXISTS", "s:0", "s:49"), ":2\r\n")
}

// TestExpireSetPastTime: SET with an absolute time already past stores a
// key that is invisible at once (Redis lets it expire on first access).
func TestExpireSetPastTime(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(skT0))
	inst.Srv.Env.SetActiveExpire(false)
	c := inst.Raw(t)
	skEq(t, "SET PXAT past", c.Do("SET", "k", "v", "PXAT", strconv.FormatInt(skT0-1, 10)), "+OK\r\n")
	skEq(t, "DBSIZE counts it", c.Do("DBSIZE"), ":1\r\n")
	skEq(t, "GET", c.Do("GET", "k"), "$-1\r\n")
	skEq(t, "reclaimed by the read", c.Do("DBSIZE"), ":0\r\n")
	skEq(t, "counted as expired", skStats(inst).ExpiredKeys, int64(1))
	skEq(t, "SET EXAT now", c.Do("SET", "k", "v", "EXAT", strconv.FormatInt(skT0/1000, 10)), "+OK\r\n")
	skEq(t, "invisible", c.Do("EXISTS", "k"), ":0\r\n")
}
