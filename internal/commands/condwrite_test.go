package commands_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

func TestDigestGoRedis(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	c := inst.Client(t)
	servertest.NoErr(t, c.Set(servertest.Ctx, "key1", "Hello world", 0).Err())
	d, err := c.Digest(servertest.Ctx, "key1").Result()
	servertest.NoErr(t, err)
	servertest.Eq(t, "DIGEST documented", d, uint64(0xb6acb9d84a38ff74))
	r := inst.Raw(t)
	servertest.Eq(t, "DIGEST raw", r.Do("DIGEST", "key1"), "$16\r\nb6acb9d84a38ff74\r\n")
	// An integer-encoded value digests its decimal text; leading zeros are
	// printed.
	r.Do("SET", "n", "123")
	r.Do("SET", "empty", "")
	servertest.Eq(t, "DIGEST int", r.Do("DIGEST", "n"), "$16\r\n"+digestOf(t, inst, "s123")+"\r\n")
	servertest.Eq(t, "DIGEST empty", r.Do("DIGEST", "empty"), "$16\r\n2d06800538d394c2\r\n")
	servertest.Eq(t, "DIGEST missing", r.Do("DIGEST", "nope"), "$-1\r\n")
	r.Do("LPUSH", "l", "a")
	servertest.Eq(t, "DIGEST list", r.Do("DIGEST", "l"), "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n")
	servertest.Eq(t, "DIGEST arity", r.Do("DIGEST", "a", "b"), "-ERR wrong number of arguments for 'digest' command\r\n")
}

// digestOf stores v (minus its first byte, a tag) as a raw string under a
// scratch key and returns its DIGEST.
func digestOf(t *testing.T, inst *servertest.Instance, v string) string {
	t.Helper()
	c := inst.Client(t)
	c.Set(servertest.Ctx, "digest:scratch", v[1:], 0)
	out := c.Do(servertest.Ctx, "DIGEST", "digest:scratch").Val().(string)
	c.Del(servertest.Ctx, "digest:scratch")
	return out
}

func TestSetConditionsGoRedis(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	c := inst.Client(t)
	// IFEQ never creates a key.
	if err := c.SetIFEQ(servertest.Ctx, "lock", "b", "a", 0).Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("IFEQ on a missing key: %v", err)
	}
	servertest.Eq(t, "not created", c.Exists(servertest.Ctx, "lock").Val(), int64(0))
	// IFNE creates it.
	servertest.Eq(t, "IFNE missing", c.SetIFNE(servertest.Ctx, "lock", "a", "x", 10*time.Second).Val(), "OK")
	servertest.Eq(t, "GET", c.Get(servertest.Ctx, "lock").Val(), "a")
	servertest.Eq(t, "TTL", c.PTTL(servertest.Ctx, "lock").Val(), 10*time.Second)
	servertest.Eq(t, "IFEQ match", c.SetIFEQ(servertest.Ctx, "lock", "b", "a", 20*time.Second).Val(), "OK")
	servertest.Eq(t, "IFEQ TTL", c.PTTL(servertest.Ctx, "lock").Val(), 20*time.Second)
	if err := c.SetIFEQ(servertest.Ctx, "lock", "c", "a", 0).Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("IFEQ mismatch: %v", err)
	}
	servertest.Eq(t, "unchanged", c.Get(servertest.Ctx, "lock").Val(), "b")
	servertest.Eq(t, "IFEQ GET", c.SetIFEQGet(servertest.Ctx, "lock", "c", "b", 0).Val(), "b")
	servertest.Eq(t, "IFEQ GET mismatch returns old", c.SetIFEQGet(servertest.Ctx, "lock", "d", "zz", 0).Val(), "c")
	servertest.Eq(t, "still c", c.Get(servertest.Ctx, "lock").Val(), "c")
	if err := c.SetIFNE(servertest.Ctx, "lock", "e", "c", 0).Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("IFNE equal: %v", err)
	}
	// Digest conditions, with the digest DIGEST gives.
	d := c.Digest(servertest.Ctx, "lock").Val()
	servertest.Eq(t, "IFDEQ match", c.SetIFDEQ(servertest.Ctx, "lock", "f", d, 0).Val(), "OK")
	if err := c.SetIFDEQ(servertest.Ctx, "lock", "g", d, 0).Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("IFDEQ stale digest: %v", err)
	}
	servertest.Eq(t, "IFDNE stale digest", c.SetIFDNE(servertest.Ctx, "lock", "g", d, 0).Val(), "OK")
	servertest.Eq(t, "IFDNE creates", c.SetIFDNE(servertest.Ctx, "fresh", "v", d, 0).Val(), "OK")
	if err := c.SetIFDEQ(servertest.Ctx, "missing", "v", d, 0).Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("IFDEQ missing: %v", err)
	}
	servertest.Eq(t, "IFDEQ did not create", c.Exists(servertest.Ctx, "missing").Val(), int64(0))
	// Integer-encoded values compare as their text.
	c.Set(servertest.Ctx, "num", 42, 0)
	servertest.Eq(t, "IFEQ int", c.SetIFEQ(servertest.Ctx, "num", 43, "42", 0).Val(), "OK")
	servertest.Eq(t, "num", c.Get(servertest.Ctx, "num").Val(), "43")
	// KEEPTTL with a condition keeps the TTL.
	c.Set(servertest.Ctx, "k", "v", 30*time.Second)
	servertest.Eq(t, "IFEQ KEEPTTL", c.SetArgs(servertest.Ctx, "k", "w", redis.SetArgs{Mode: "IFEQ", MatchValue: "v", KeepTTL: true}).Val(), "OK")
	servertest.Eq(t, "TTL kept", c.PTTL(servertest.Ctx, "k").Val(), 30*time.Second)
	servertest.Eq(t, "IFEQ no TTL", c.SetArgs(servertest.Ctx, "k", "x", redis.SetArgs{Mode: "IFEQ", MatchValue: "w"}).Val(), "OK")
	servertest.Eq(t, "TTL cleared", c.PTTL(servertest.Ctx, "k").Val(), time.Duration(-1))
}

func TestSetConditionsRaw(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
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
		servertest.Eq(t, tc.cmd, r.Do(strings.Fields(tc.cmd)...), tc.want)
	}
	// A digest is a number: case and leading zeros do not matter.
	r.Do("SET", "h", "Hello world")
	servertest.Eq(t, "IFDEQ upper case", r.Do("SET", "h", "v2", "IFDEQ", "B6ACB9D84A38FF74"), "+OK\r\n")
	r.Do("SET", "e", "")
	servertest.Eq(t, "IFDEQ", r.Do("SET", "e", "v", "IFDEQ", "2d06800538d394c2"), "+OK\r\n")
}

func TestDelexDelifeq(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	c := inst.Client(t)
	c.Set(servertest.Ctx, "k", "v", 0)
	servertest.Eq(t, "DELEX IFEQ mismatch", c.DelExArgs(servertest.Ctx, "k", redis.DelExArgs{Mode: "IFEQ", MatchValue: "x"}).Val(), int64(0))
	servertest.Eq(t, "DELEX IFNE equal", c.DelExArgs(servertest.Ctx, "k", redis.DelExArgs{Mode: "IFNE", MatchValue: "v"}).Val(), int64(0))
	d := c.Digest(servertest.Ctx, "k").Val()
	servertest.Eq(t, "DELEX IFDNE same", c.DelExArgs(servertest.Ctx, "k", redis.DelExArgs{Mode: "IFDNE", MatchDigest: d}).Val(), int64(0))
	servertest.Eq(t, "DELEX IFDEQ", c.DelExArgs(servertest.Ctx, "k", redis.DelExArgs{Mode: "IFDEQ", MatchDigest: d}).Val(), int64(1))
	servertest.Eq(t, "gone", c.Exists(servertest.Ctx, "k").Val(), int64(0))
	servertest.Eq(t, "DELEX missing", c.DelExArgs(servertest.Ctx, "k", redis.DelExArgs{Mode: "IFNE", MatchValue: "v"}).Val(), int64(0))
	c.Set(servertest.Ctx, "k", "v", 0)
	servertest.Eq(t, "DELEX IFEQ", c.DelExArgs(servertest.Ctx, "k", redis.DelExArgs{Mode: "IFEQ", MatchValue: "v"}).Val(), int64(1))
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
		servertest.Eq(t, tc.cmd, r.Do(strings.Fields(tc.cmd)...), tc.want)
	}
}

func TestMsetex(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
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
		servertest.Eq(t, tc.cmd, r.Do(strings.Fields(tc.cmd)...), tc.want)
	}
	// go-redis's MSetEX.
	n, err := c.MSetEX(servertest.Ctx, redis.MSetEXArgs{Condition: redis.NX}, "x", "1", "y", "2").Result()
	servertest.NoErr(t, err)
	servertest.Eq(t, "go-redis MSETEX NX", n, int64(1))
	servertest.Eq(t, "x", c.Get(servertest.Ctx, "x").Val(), "1")
	// A list among the keys is overwritten, as MSET does.
	r.Do("LPUSH", "l", "a")
	servertest.Eq(t, "over a list", r.Do("MSETEX", "1", "l", "v"), ":1\r\n")
	servertest.Eq(t, "TYPE", r.Do("TYPE", "l"), "+string\r\n")
}

func TestIncrex(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
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
		servertest.Eq(t, tc.cmd, r.Do(strings.Fields(tc.cmd)...), tc.want)
	}
	// BYFLOAT replies doubles over RESP3.
	r.Do("HELLO", "3")
	servertest.Eq(t, "RESP3", r.Do("INCREX", "f", "BYFLOAT", "0.5"), "*2\r\n,5.5\r\n,0.5\r\n")
	servertest.Eq(t, "RESP3 int", r.Do("INCREX", "c"), "*2\r\n:3\r\n:1\r\n")
	// go-redis sees the integer pair.
	v, err := inst.Client(t).Do(servertest.Ctx, "INCREX", "gr", "BYINT", "3").Int64Slice()
	servertest.NoErr(t, err)
	servertest.Eq(t, "go-redis", len(v) == 2 && v[0] == 3 && v[1] == 3, true)
}
