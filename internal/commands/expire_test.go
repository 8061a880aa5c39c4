package commands_test

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
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	c := inst.Client(t)
	c.Set(servertest.Ctx, "k", "v", 0)

	servertest.Eq(t, "EXPIRE XX without TTL", c.ExpireXX(servertest.Ctx, "k", time.Minute).Val(), false)
	servertest.Eq(t, "EXPIRE GT without TTL", c.ExpireGT(servertest.Ctx, "k", time.Minute).Val(), false)
	servertest.Eq(t, "EXPIRE NX", c.ExpireNX(servertest.Ctx, "k", time.Minute).Val(), true)
	servertest.Eq(t, "EXPIRE NX with TTL", c.ExpireNX(servertest.Ctx, "k", time.Hour).Val(), false)
	servertest.Eq(t, "TTL", c.TTL(servertest.Ctx, "k").Val(), time.Minute)
	servertest.Eq(t, "EXPIRE GT equal", c.ExpireGT(servertest.Ctx, "k", time.Minute).Val(), false)
	servertest.Eq(t, "EXPIRE GT", c.ExpireGT(servertest.Ctx, "k", 2*time.Minute).Val(), true)
	servertest.Eq(t, "EXPIRE LT equal", c.ExpireLT(servertest.Ctx, "k", 2*time.Minute).Val(), false)
	servertest.Eq(t, "EXPIRE LT", c.ExpireLT(servertest.Ctx, "k", 30*time.Second).Val(), true)
	servertest.Eq(t, "EXPIRE XX", c.ExpireXX(servertest.Ctx, "k", 40*time.Second).Val(), true)
	servertest.Eq(t, "PTTL", c.PTTL(servertest.Ctx, "k").Val(), 40*time.Second)
	servertest.Eq(t, "PEXPIRE", c.PExpire(servertest.Ctx, "k", 1500*time.Millisecond).Val(), true)
	servertest.Eq(t, "TTL rounds", c.TTL(servertest.Ctx, "k").Val(), 2*time.Second)
	servertest.Eq(t, "EXPIRETIME rounds", c.ExpireTime(servertest.Ctx, "k").Val(), time.Duration((servertest.T0+1500+500)/1000)*time.Second)
	servertest.Eq(t, "PEXPIRETIME", c.PExpireTime(servertest.Ctx, "k").Val(), time.Duration(servertest.T0+1500)*time.Millisecond)
	servertest.Eq(t, "EXPIREAT", c.ExpireAt(servertest.Ctx, "k", time.Unix(servertest.T0/1000+100, 0)).Val(), true)
	servertest.Eq(t, "TTL after EXPIREAT", c.TTL(servertest.Ctx, "k").Val(), 100*time.Second)
	servertest.Eq(t, "PEXPIREAT", c.PExpireAt(servertest.Ctx, "k", time.UnixMilli(servertest.T0+2345)).Val(), true)
	servertest.Eq(t, "PTTL after PEXPIREAT", c.PTTL(servertest.Ctx, "k").Val(), 2345*time.Millisecond)
	servertest.Eq(t, "PERSIST", c.Persist(servertest.Ctx, "k").Val(), true)
	servertest.Eq(t, "PERSIST again", c.Persist(servertest.Ctx, "k").Val(), false)
	servertest.Eq(t, "TTL without expiry", c.TTL(servertest.Ctx, "k").Val(), time.Duration(-1))
	servertest.Eq(t, "TTL of a missing key", c.TTL(servertest.Ctx, "nokey").Val(), time.Duration(-2))
	servertest.Eq(t, "EXPIRE missing key", c.Expire(servertest.Ctx, "nokey", time.Minute).Val(), false)
	servertest.ErrIs(t, "NX XX", c.Do(servertest.Ctx, "EXPIRE", "k", "10", "NX", "XX").Err(), "ERR NX and XX, GT or LT options at the same time are not compatible")
	servertest.ErrIs(t, "GT LT", c.Do(servertest.Ctx, "EXPIRE", "k", "10", "GT", "LT").Err(), "ERR GT and LT options at the same time are not compatible")
	servertest.ErrIs(t, "bad option", c.Do(servertest.Ctx, "PEXPIRE", "k", "10", "SOON").Err(), "ERR Unsupported option SOON")
	servertest.ErrIs(t, "overflow", c.Do(servertest.Ctx, "EXPIRE", "k", "9223372036854775807").Err(), "ERR invalid expire time in 'expire' command")
	servertest.ErrIs(t, "overflow", c.Do(servertest.Ctx, "PEXPIRE", "k", "9223372036854775807").Err(), "ERR invalid expire time in 'pexpire' command")

	// A time in the past deletes the key at once: a deletion, not an
	// expiry, in the statistics.
	before := skStats(inst).ExpiredKeys
	servertest.Eq(t, "EXPIRE negative", c.Expire(servertest.Ctx, "k", -time.Second).Val(), true)
	servertest.Eq(t, "key deleted", c.Exists(servertest.Ctx, "k").Val(), int64(0))
	servertest.Eq(t, "not counted as expired", skStats(inst).ExpiredKeys, before)
	c.Set(servertest.Ctx, "k", "v", 0)
	servertest.Eq(t, "EXPIREAT now", c.Do(servertest.Ctx, "PEXPIREAT", "k", strconv.FormatInt(servertest.T0, 10)).Val(), any(int64(1)))
	servertest.Eq(t, "key deleted by PEXPIREAT now", c.Exists(servertest.Ctx, "k").Val(), int64(0))
}

// TestExpireExactBoundary: a key expires when the clock reaches its time,
// not a millisecond later.
func TestExpireExactBoundary(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	c := inst.Client(t)
	c.Set(servertest.Ctx, "k", "v", 1000*time.Millisecond)
	inst.Clock.Advance(999 * time.Millisecond)
	servertest.Eq(t, "PTTL 1ms before", c.PTTL(servertest.Ctx, "k").Val(), time.Millisecond)
	servertest.Eq(t, "TTL rounds 1ms to 0", c.TTL(servertest.Ctx, "k").Val(), time.Duration(0))
	servertest.Eq(t, "still readable", c.Get(servertest.Ctx, "k").Val(), "v")
	inst.Clock.Advance(time.Millisecond)
	if err := c.Get(servertest.Ctx, "k").Err(); err != redis.Nil {
		t.Errorf("GET at the expiry time: %v", err)
	}
	servertest.Eq(t, "TTL of the expired key", c.TTL(servertest.Ctx, "k").Val(), time.Duration(-2))
}

// TestExpireLazy: expired keys are invisible to every command, and each one
// met is reclaimed and counted.
func TestExpireLazy(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	inst.Srv.Env.SetActiveExpire(false)
	c := inst.Client(t)
	keys := []string{"get", "exists", "type", "ttl", "incr", "append", "rename", "expire", "getex", "setnx", "scan1", "scan2", "keys", "random"}
	for _, k := range keys {
		c.Set(servertest.Ctx, k, "10", time.Second)
	}
	c.Set(servertest.Ctx, "live", "x", 0)
	inst.Clock.Advance(time.Second)
	servertest.Eq(t, "DBSIZE counts stale keys", c.DBSize(servertest.Ctx).Val(), int64(len(keys)+1))
	servertest.Eq(t, "KEYS hides stale keys", len(c.Keys(servertest.Ctx, "*").Val()), 1)
	servertest.Eq(t, "KEYS does not reclaim", c.DBSize(servertest.Ctx).Val(), int64(len(keys)+1))
	servertest.Eq(t, "nothing expired yet", skStats(inst).ExpiredKeys, int64(0))

	if err := c.Get(servertest.Ctx, "get").Err(); err != redis.Nil {
		t.Errorf("GET of an expired key: %v", err)
	}
	servertest.Eq(t, "EXISTS", c.Exists(servertest.Ctx, "exists").Val(), int64(0))
	servertest.Eq(t, "TYPE", c.Type(servertest.Ctx, "type").Val(), "none")
	servertest.Eq(t, "TTL", c.TTL(servertest.Ctx, "ttl").Val(), time.Duration(-2))
	servertest.Eq(t, "INCR starts over", c.Incr(servertest.Ctx, "incr").Val(), int64(1))
	servertest.Eq(t, "APPEND starts over", c.Append(servertest.Ctx, "append", "x").Val(), int64(1))
	servertest.ErrIs(t, "RENAME", c.Rename(servertest.Ctx, "rename", "x").Err(), "ERR no such key")
	servertest.Eq(t, "EXPIRE", c.Expire(servertest.Ctx, "expire", time.Hour).Val(), false)
	if err := c.GetEx(servertest.Ctx, "getex", time.Hour).Err(); err != redis.Nil {
		t.Errorf("GETEX of an expired key: %v", err)
	}
	servertest.Eq(t, "SETNX", c.SetNX(servertest.Ctx, "setnx", "new", 0).Val(), true)
	servertest.Eq(t, "stats after lazy expiry", skStats(inst).ExpiredKeys, int64(10))

	// SCAN does not return them and reclaims those it walks over.
	all, cur, err := c.Scan(servertest.Ctx, 0, "", 1000).Result()
	servertest.NoErr(t, err)
	servertest.Eq(t, "SCAN in one call", cur, uint64(0))
	for _, k := range all {
		if k == "scan1" || k == "scan2" || k == "keys" || k == "random" {
			t.Errorf("SCAN returned the expired key %q", k)
		}
	}
	servertest.Eq(t, "SCAN reclaimed the rest", skStats(inst).ExpiredKeys, int64(14))
	servertest.Eq(t, "DBSIZE now", c.DBSize(servertest.Ctx).Val(), int64(4)) // live, incr, append, setnx
}

// TestExpireActiveCycle: keys nobody reads are reclaimed by the server's
// background cycle once the clock passes their time; until then DBSIZE
// counts them, as Redis does.
func TestExpireActiveCycle(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0), servertest.WithConfig("hz", "100"))
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
	servertest.Eq(t, "DBSIZE before the cycle runs", c.Do("DBSIZE"), ":"+strconv.Itoa(volatile+stable)+"\r\n")
	servertest.Eq(t, "nothing reclaimed while active expiry is off", skStats(inst).ExpiredKeys, int64(0))

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
	servertest.Eq(t, "expired_keys counts the reclaimed keys", skStats(inst).ExpiredKeys, int64(151))
	inst.Clock.Advance(time.Hour)
	waitDBSize(stable)
	servertest.Eq(t, "every volatile key reclaimed", skStats(inst).ExpiredKeys, int64(volatile))
	servertest.Eq(t, "the keys without TTL are all there", c.Do("EXISTS", "s:0", "s:49"), ":2\r\n")
}

// TestExpireSetPastTime: SET with an absolute time already past stores a
// key that is invisible at once (Redis lets it expire on first access).
func TestExpireSetPastTime(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	inst.Srv.Env.SetActiveExpire(false)
	c := inst.Raw(t)
	servertest.Eq(t, "SET PXAT past", c.Do("SET", "k", "v", "PXAT", strconv.FormatInt(servertest.T0-1, 10)), "+OK\r\n")
	servertest.Eq(t, "DBSIZE counts it", c.Do("DBSIZE"), ":1\r\n")
	servertest.Eq(t, "GET", c.Do("GET", "k"), "$-1\r\n")
	servertest.Eq(t, "reclaimed by the read", c.Do("DBSIZE"), ":0\r\n")
	servertest.Eq(t, "counted as expired", skStats(inst).ExpiredKeys, int64(1))
	servertest.Eq(t, "SET EXAT now", c.Do("SET", "k", "v", "EXAT", strconv.FormatInt(servertest.T0/1000, 10)), "+OK\r\n")
	servertest.Eq(t, "invisible", c.Do("EXISTS", "k"), ":0\r\n")
}
