package command_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

func TestDigestGoRedis(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(skT0))
	c := inst.Client(t)
	skNoErr(t, c.Set(skCtx, "key1", "Hello world", 0).Err())
	d, err := c.Digest(skCtx, "key1").Result()
	skNoErr(t, err)
	skEq(t, "DIGEST documented", d, uint64(0xb6acb9d84a38ff74))
	r := inst.Raw(t)
	skEq(t, "DIGEST raw", r.Do("DIGEST", "key1"), "$16\r\nb6acb9d84a38ff74\r\n")
	// An integer-encoded value digests its decimal text; leading zeros are
	// printed.
	r.Do("SET", "n", "123")
	r.Do("SET", "empty", "")
	skEq(t, "DIGEST int", r.Do("DIGEST", "n"), "$16\r\n"+digestOf(t, inst, "s123")+"\r\n")
	skEq(t, "DIGEST empty", r.Do("DIGEST", "empty"), "$16\r\n2d06800538d394c2\r\n")
	skEq(t, "DIGEST missing", r.Do("DIGEST", "nope"), "$-1\r\n")
	r.Do("LPUSH", "l", "a")
	skEq(t, "DIGEST list", r.Do("DIGEST", "l"), "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n")
	skEq(t, "DIGEST arity", r.Do("DIGEST", "a", "b"), "-ERR wrong number of arguments for 'digest' command\r\n")
}

// digestOf stores v (minus its first byte, a tag) as a raw string under a
// scratch key and returns its DIGEST.
func digestOf(t *testing.T, inst *servertest.Instance, v string) string {
	t.Helper()
	c := inst.Client(t)
	c.Set(skCtx, "digest:scratch", v[1:], 0)
	out := c.Do(skCtx, "DIGEST", "digest:scratch").Val().(string)
	c.Del(skCtx, "digest:scratch")
	return out
}

func TestSetConditionsGoRedis(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(skT0))
	c := inst.Client(t)
	// IFEQ never creates a key.
	if err := c.SetIFEQ(skCtx, "lock", "b", "a", 0).Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("IFEQ on a missing key: %v", err)
	}
	skEq(t, "not created", c.Exists(skCtx, "lock").Val(), int64(0))
	// IFNE creates it.
	skEq(t, "IFNE missing", c.SetIFNE(skCtx, "lock", "a", "x", 10*time.Second).Val(), "OK")
	skEq(t, "GET", c.Get(skCtx, "lock").Val(), "a")
	skEq(t, "TTL", c.PTTL(skCtx, "lock").Val(), 10*time.Second)
	skEq(t, "IFEQ match", c.SetIFEQ(skCtx, "lock", "b", "a", 20*time.Second).Val(), "OK")
	skEq(t, "IFEQ TTL", c.PTTL(skCtx, "lock").Val(), 20*time.Second)
	if err := c.SetIFEQ(skCtx, "lock", "c", "a", 0).Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("IFEQ mismatch: %v", err)
	}
	skEq(t, "unchanged", c.Get(skCtx, "lock").Val(), "b")
	skEq(t, "IFEQ GET", c.SetIFEQGet(skCtx, "lock", "c", "b", 0).Val(), "b")
	skEq(t, "IFEQ GET mismatch returns old", c.SetIFEQGet(skCtx, "lock", "d", "zz", 0).Val(), "c")
	skEq(t, "still c", c.Get(skCtx, "lock").Val(), "c")
	if err := c.SetIFNE(skCtx, "lock", "e", "c", 0).Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("IFNE equal: %v", err)
	}
	// Digest conditions, with the digest DIGEST gives.
	d := c.Digest(skCtx, "lock").Val()
	skEq(t, "IFDEQ match", c.SetIFDEQ(skCtx, "lock", "f", d, 0).Val(), "OK")
	if err := c.SetIFDEQ(skCtx, "lock", "g", d, 0).Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("IFDEQ stale digest: %v", err)
	}
	skEq(t, "IFDNE stale digest", c.SetIFDNE(skCtx, "lock", "g", d, 0).Val(), "OK")
	skEq(t, "IFDNE creates", c.SetIFDNE(skCtx, "fresh", "v", d, 0).Val(), "OK")
	if err := c.SetIFDEQ(skCtx, "missing", "v", d, 0).Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("IFDEQ missing: %v", err)
	}
	skEq(t, "IFDEQ did not create", c.Exists(skCtx, "missing").Val(), int64(0))
	// Integer-encoded values compare as their text.
	c.Set(skCtx, "num", 42, 0)
	skEq(t, "IFEQ int", c.SetIFEQ(skCtx, "num", 43, "42", 0).Val(), "OK")
	skEq(t, "num", c.Get(skCtx, "num").Val(), "43")
	// KEEPTTL with a condition keeps the TTL.
	c.Set(skCtx, "k", "v", 30*time.Second)
	skEq(t, "IFEQ KEEPTTL", c.SetArgs(skCtx, "k", "w", redis.SetArgs{Mode: "IFEQ", MatchValue: "v", KeepTTL: true}).Val(), "OK")
	skEq(t, "TTL kept", c.PTTL(skCtx, "k").Val(), 30*time.Second)
	skEq(t, "IFEQ no TTL", c.SetArgs(skCtx, "k", "x", redis.SetArgs{Mode: "IFEQ", MatchValue: "w"}).Val(), "OK")
	skEq(t, "TTL cleared", c.PTTL(skCtx, "k").Val(), time.Duration(-1))
}

func TestSetConditionsRaw(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(skT0))
	r := inst.Raw(t)
	r.Do("SET", "k", "old")
	cases := []struct{ cmd, want string }{
		{"SET k new IFEQ old GET EX 100", "$3\r\nold\r\n"},
		{"TTL k", ":100\r\n"},
		{"SET k x ifeq nope", "$-1\r\n"},
		{"SET k x NX IFEQ new", "-ERR syntax error\r\n"},
		{"SET k x IFEQ new XX", "-ERR syntax error\r\n"},
		{"SET k x IFEQ new IFNE a", "-ERR syntax error\r\n"},
		{"SET k x IFEQ", "-ERR syntax error\r\n"},
		{"SET k x IFEQ new EX 0", "-ERR invalid expire time in 'set' command\r\n"},
		{"SET k x EX IFEQ", "-ERR value is not an integer or out of range\r\n"},
		{"SET k x IFDEQ xyz", "-ERR digest must be a hexadecimal number of 1 to 16 digits\r\n"},
		{"SET k x IFDEQ 0123456789abcdef0", "-ERR digest must be a hexadecimal number of 1 to 16 digits\r\n"},
		{"SET k x IFDNE -1", "-ERR digest must be a hexadecimal number of 1 to 16 digits\r\n"},
		{"GET k", "$3\r\nnew\r\n"},
		{"SET missing v IFEQ v GET", "$-1\r\n"},
		{"EXISTS missing", ":0\r\n"},
		{"LPUSH list a", ":1\r\n"},
		{"SET list v IFEQ a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"SET list v IFNE a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		// Without a condition SET still overwrites any type.
		{"SET list v", "+OK\r\n"},
	}
	for _, tc := range cases {
		skEq(t, tc.cmd, r.Do(strings.Fields(tc.cmd)...), tc.want)
	}
	// A digest is a number: case and leading zeros do not matter.
	r.Do("SET", "h", "Hello world")
	skEq(t, "IFDEQ upper case", r.Do("SET", "h", "v2", "IFDEQ", "B6ACB9D84A38FF74"), "+OK\r\n")
	r.Do("SET", "e", "")
	skEq(t, "IFDEQ", r.Do("SET", "e", "v", "IFDEQ", "2d06800538d394c2"), "+OK\r\n")
}

func TestDelexDelifeq(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(skT0))
	c := inst.Client(t)
	c.Set(skCtx, "k", "v", 0)
	skEq(t, "DELEX IFEQ mismatch", c.DelExArgs(skCtx, "k", redis.DelExArgs{Mode: "IFEQ", MatchValue: "x"}).Val(), int64(0))
	skEq(t, "DELEX IFNE equal", c.DelExArgs(skCtx, "k", redis.DelExArgs{Mode: "IFNE", MatchValue: "v"}).Val(), int64(0))
	d := c.Digest(skCtx, "k").Val()
	skEq(t, "DELEX IFDNE same", c.DelExArgs(skCtx, "k", redis.DelExArgs{Mode: "IFDNE", MatchDigest: d}).Val(), int64(0))
	skEq(t, "DELEX IFDEQ", c.DelExArgs(skCtx, "k", redis.DelExArgs{Mode: "IFDEQ", MatchDigest: d}).Val(), int64(1))
	skEq(t, "gone", c.Exists(skCtx, "k").Val(), int64(0))
	skEq(t, "DELEX missing", c.DelExArgs(skCtx, "k", redis.DelExArgs{Mode: "IFNE", MatchValue: "v"}).Val(), int64(0))
	c.Set(skCtx, "k", "v", 0)
	skEq(t, "DELEX IFEQ", c.DelExArgs(skCtx, "k", redis.DelExArgs{Mode: "IFEQ", MatchValue: "v"}).Val(), int64(1))
	r := inst.Raw(t)
	r.Do("SADD", "s", "a")
	r.Do("SET", "k", "v")
	cases := []struct{ cmd, want string }{
		{"DELEX s IFEQ a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"DELEX s", ":1\r\n"}, // no condition: any type
		{"DELEX s", ":0\r\n"},
		{"DELEX k IFEQ", "-ERR syntax error\r\n"},
		{"DELEX k IFEQ v extra", "-ERR syntax error\r\n"},
		{"DELEX k IFXX v", "-ERR syntax error\r\n"},
		{"DELEX k IFDEQ zz", "-ERR digest must be a hexadecimal number of 1 to 16 digits\r\n"},
		{"DELEX k ifne w", ":1\r\n"},
		{"SET k v", "+OK\r\n"},
		{"DELIFEQ k w", ":0\r\n"},
		{"DELIFEQ k v", ":1\r\n"},
		{"DELIFEQ k v", ":0\r\n"},
		{"LPUSH l a", ":1\r\n"},
		{"DELIFEQ l a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"DELIFEQ k", "-ERR wrong number of arguments for 'delifeq' command\r\n"},
	}
	for _, tc := range cases {
		skEq(t, tc.cmd, r.Do(strings.Fields(tc.cmd)...), tc.want)
	}
}

func TestMsetex(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(skT0))
	c := inst.Client(t)
	r := inst.Raw(t)
	cases := []struct{ cmd, want string }{
		{"MSETEX 2 a 1 b 2 EX 100", ":1\r\n"},
		{"PTTL a", ":100000\r\n"},
		{"PTTL b", ":100000\r\n"},
		{"MSETEX 2 a 3 c 4 NX", ":0\r\n"}, // a exists
		{"EXISTS c", ":0\r\n"},
		{"MSETEX 2 a 3 c 4 XX PX 5000", ":0\r\n"}, // c does not
		{"MSETEX 2 a 5 b 6 PX 5000 XX", ":1\r\n"},
		{"MGET a b", "*2\r\n$1\r\n5\r\n$1\r\n6\r\n"},
		{"PTTL b", ":5000\r\n"},
		{"MSETEX 1 a 7 KEEPTTL", ":1\r\n"},
		{"PTTL a", ":5000\r\n"},
		{"MSETEX 1 a 8", ":1\r\n"},
		{"PTTL a", ":-1\r\n"},
		{"MSETEX 1 d 1 EXAT 1700000100", ":1\r\n"},
		{"PTTL d", ":100000\r\n"},
		{"MSETEX 1 d 1 PXAT 1700000000500 NX", ":0\r\n"},
		{"MSETEX 0 a 1", "-ERR numkeys should be greater than 0\r\n"},
		{"MSETEX x a 1", "-ERR value is not an integer or out of range\r\n"},
		{"MSETEX 2 a 1 b", "-ERR wrong number of arguments for 'msetex' command\r\n"},
		{"MSETEX 1 a 1 NX XX", "-ERR syntax error\r\n"},
		{"MSETEX 1 a 1 EX 1 PX 1", "-ERR syntax error\r\n"},
		{"MSETEX 1 a 1 EX 1 KEEPTTL", "-ERR syntax error\r\n"},
		{"MSETEX 1 a 1 EX 0", "-ERR invalid expire time in 'msetex' command\r\n"},
		{"MSETEX 1 a 1 EX", "-ERR syntax error\r\n"},
		{"MSETEX 1 a 1 GET", "-ERR syntax error\r\n"},
		{"COMMAND GETKEYS MSETEX 2 a 1 b 2 EX 1", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
	}
	for _, tc := range cases {
		skEq(t, tc.cmd, r.Do(strings.Fields(tc.cmd)...), tc.want)
	}
	// go-redis's MSetEX.
	n, err := c.MSetEX(skCtx, redis.MSetEXArgs{Condition: redis.NX}, "x", "1", "y", "2").Result()
	skNoErr(t, err)
	skEq(t, "go-redis MSETEX NX", n, int64(1))
	skEq(t, "x", c.Get(skCtx, "x").Val(), "1")
	// A list among the keys is overwritten, as MSET does.
	r.Do("LPUSH", "l", "a")
	skEq(t, "over a list", r.Do("MSETEX", "1", "l", "v"), ":1\r\n")
	skEq(t, "TYPE", r.Do("TYPE", "l"), "+string\r\n")
}

func TestIncrex(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(skT0))
	r := inst.Raw(t)
	const wrong = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
	pair := func(a, b string) string { return "*2\r\n:" + a + "\r\n:" + b + "\r\n" }
	cases := []struct{ cmd, want string }{
		{"INCREX c", pair("1", "1")},
		{"INCREX c", pair("2", "1")},
		{"SET mykey 100", "+OK\r\n"},
		{"INCREX mykey BYINT 5", pair("105", "5")},
		{"INCREX mykey BYINT -10", pair("95", "-10")},
		// Bounds: skipped by default, saturated on request.
		{"SET mykey 99", "+OK\r\n"},
		{"INCREX mykey BYINT 5 UBOUND 100", pair("99", "0")},
		{"INCREX mykey BYINT 5 UBOUND 100 SATURATE", pair("100", "1")},
		{"INCREX mykey BYINT -500 LBOUND 0", pair("100", "0")},
		{"INCREX mykey BYINT -500 LBOUND 0 SATURATE", pair("0", "-100")},
		// Type limits are bounds too.
		{"SET big 9223372036854775800", "+OK\r\n"},
		{"INCREX big BYINT 100", pair("9223372036854775800", "0")},
		{"INCREX big BYINT 100 SATURATE", pair("9223372036854775807", "7")},
		{"SET neg -9223372036854775808", "+OK\r\n"},
		{"INCREX neg BYINT 1 LBOUND 0 SATURATE", pair("0", "-9223372036854775808")[:0] + "-ERR increment or decrement would overflow\r\n"},
		// Expiration: kept without an option, set by EX, kept by ENX when
		// there is one, dropped by PERSIST.
		{"SET t 10 EX 500", "+OK\r\n"},
		{"INCREX t", pair("11", "1")},
		{"TTL t", ":500\r\n"},
		{"INCREX t BYINT 1 EX 10 ENX", pair("12", "1")},
		{"TTL t", ":500\r\n"},
		{"INCREX t BYINT 1 EX 10", pair("13", "1")},
		{"TTL t", ":10\r\n"},
		{"INCREX t PERSIST", pair("14", "1")},
		{"TTL t", ":-1\r\n"},
		{"INCREX t BYINT 1 PX 2500 ENX", pair("15", "1")},
		{"PTTL t", ":2500\r\n"},
		{"INCREX w BYINT 1 UBOUND 0 EX 100", pair("0", "0")},
		{"EXISTS w", ":0\r\n"},
		{"INCREX t BYINT 1 EXAT 1700000100", pair("16", "1")},
		{"TTL t", ":100\r\n"},
		// Floats.
		{"SET f 1.5", "+OK\r\n"},
		{"INCREX f BYFLOAT 0.25", "*2\r\n$4\r\n1.75\r\n$4\r\n0.25\r\n"},
		{"INCREX f BYFLOAT 10 UBOUND 5", "*2\r\n$4\r\n1.75\r\n$1\r\n0\r\n"},
		{"INCREX f BYFLOAT 10 UBOUND 5 SATURATE", "*2\r\n$1\r\n5\r\n$4\r\n3.25\r\n"},
		{"SET g 1.75", "+OK\r\n"},
		{"INCREX g BYINT 1", "-ERR value is not an integer or out of range\r\n"},
		{"INCREX g", "-ERR value is not an integer or out of range\r\n"},
		{"INCREX f BYFLOAT abc", "-ERR value is not a valid float\r\n"},
		// (past LDBL_MAX: TestIncrexFloatTypeLimits)
		// Errors.
		{"LPUSH l a", ":1\r\n"},
		{"INCREX l", wrong},
		{"INCREX c BYINT 1 BYFLOAT 1", "-ERR syntax error\r\n"},
		{"INCREX c ENX", "-ERR syntax error\r\n"},
		{"INCREX c EX 10 PERSIST", "-ERR syntax error\r\n"},
		{"INCREX c PERSIST EX 10", "-ERR syntax error\r\n"},
		{"INCREX c EX 10 PX 10", "-ERR syntax error\r\n"},
		{"INCREX c BYINT", "-ERR syntax error\r\n"},
		{"INCREX c BYINT x", "-ERR value is not an integer or out of range\r\n"},
		{"INCREX c LBOUND 5 UBOUND 1", "-ERR LBOUND must be less than or equal to UBOUND\r\n"},
		{"INCREX c EX -1", "-ERR invalid expire time in 'increx' command\r\n"},
		{"INCREX c FOO", "-ERR syntax error\r\n"},
		{"GET c", "$1\r\n2\r\n"},
	}
	for _, tc := range cases {
		skEq(t, tc.cmd, r.Do(strings.Fields(tc.cmd)...), tc.want)
	}
	// BYFLOAT replies doubles over RESP3.
	r.Do("HELLO", "3")
	skEq(t, "RESP3", r.Do("INCREX", "f", "BYFLOAT", "0.5"), "*2\r\n,5.5\r\n,0.5\r\n")
	skEq(t, "RESP3 int", r.Do("INCREX", "c"), "*2\r\n:3\r\n:1\r\n")
	// go-redis sees the integer pair.
	v, err := inst.Client(t).Do(skCtx, "INCREX", "gr", "BYINT", "3").Int64Slice()
	skNoErr(t, err)
	skEq(t, "go-redis", len(v) == 2 && v[0] == 3 && v[1] == 3, true)
}
