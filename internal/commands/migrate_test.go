package commands_test

import (
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// MIGRATE between two in-process servers and both ways with redis-server
// 7.0: replies, errors, what is deleted, TTLs, AUTH.

func hostPort(t *testing.T, addr string) (string, string) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return h, p
}

func doReply(c *redis.Client, args ...any) string {
	v, err := c.Do(servertest.Ctx, args...).Result()
	if err != nil {
		return "ERR:" + err.Error()
	}
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return "?"
}

// migrateBetween runs the same script from src to dst, whatever each is.
func migrateBetween(t *testing.T, src, dst *redis.Client, dstAddr string) {
	t.Helper()
	host, port := hostPort(t, dstAddr)
	ctx := servertest.Ctx
	must := func(want string, args ...any) {
		t.Helper()
		if got := doReply(src, args...); got != want {
			t.Errorf("%v: got %q, want %q", args, got, want)
		}
	}
	src.Set(ctx, "a", "1", 0)
	src.RPush(ctx, "l", "x", "y", "z")
	src.Do(ctx, "pexpire", "l", 500000)
	src.HSet(ctx, "h", "f", "v")
	src.ZAdd(ctx, "z", redis.Z{Score: 1.5, Member: "m"})
	must("NOKEY", "migrate", host, port, "nope", 0, 1000)
	must("OK", "migrate", host, port, "a", 0, 1000)
	if src.Exists(ctx, "a").Val() != 0 || dst.Get(ctx, "a").Val() != "1" {
		t.Errorf("a not moved")
	}
	// into db 2, keeping the TTL, with COPY
	must("OK", "migrate", host, port, "l", 2, 1000, "copy")
	d2 := dst.Conn()
	defer d2.Close()
	d2.Select(ctx, 2)
	if got := d2.LRange(ctx, "l", 0, -1).Val(); !reflect.DeepEqual(got, []string{"x", "y", "z"}) {
		t.Errorf("l in db 2: %v", got)
	}
	if ttl := d2.PTTL(ctx, "l").Val().Milliseconds(); ttl <= 0 || ttl > 500000 {
		t.Errorf("l ttl %d", ttl)
	}
	if src.Exists(ctx, "l").Val() != 1 {
		t.Errorf("COPY deleted l")
	}
	// the target has it: BUSYKEY, nothing deleted; REPLACE overwrites
	must("ERR:ERR Target instance replied with error: BUSYKEY Target key name already exists.", "migrate", host, port, "l", 2, 1000)
	if src.Exists(ctx, "l").Val() != 1 {
		t.Errorf("a refused MIGRATE deleted l")
	}
	src.RPush(ctx, "l", "w")
	must("OK", "migrate", host, port, "l", 2, 1000, "replace")
	if got := d2.LLen(ctx, "l").Val(); got != 4 || src.Exists(ctx, "l").Val() != 0 {
		t.Errorf("replace: len %d", got)
	}
	// KEYS: missing ones are skipped, one busy key fails the command but
	// the accepted ones are moved
	dst.Set(ctx, "z", "busy", 0)
	must("ERR:ERR Target instance replied with error: BUSYKEY Target key name already exists.", "migrate", host, port, "", 0, 1000, "keys", "h", "missing", "z")
	if src.Exists(ctx, "h").Val() != 0 || src.Exists(ctx, "z").Val() != 1 || dst.HGet(ctx, "h", "f").Val() != "v" {
		t.Errorf("keys: h moved %v, z kept %v", src.Exists(ctx, "h").Val(), src.Exists(ctx, "z").Val())
	}
	must("NOKEY", "migrate", host, port, "", 0, 1000, "keys", "missing")
	// a database the target does not have
	must("ERR:ERR Target instance replied with error: ERR DB index is out of range", "migrate", host, port, "z", 99, 1000)
	// AUTH against a target without a password
	got := doReply(src, "migrate", host, port, "z", 0, 1000, "auth", "pw")
	if !strings.HasPrefix(got, "ERR:ERR Target instance replied with error: ERR AUTH <password> called without any password configured") {
		t.Errorf("auth: %q", got)
	}
}

func TestMigrateAbacusToAbacus(t *testing.T) {
	a, b := servertest.Start(t), servertest.Start(t)
	migrateBetween(t, a.Client(t), b.Client(t), b.Addr)
}

func TestMigrateAbacusToRedis(t *testing.T) {
	r := servertest.Redis(t)
	a := servertest.Start(t)
	migrateBetween(t, a.Client(t), servertest.NewClient(t, r.Addr), r.Addr)
}

func TestMigrateRedisToAbacus(t *testing.T) {
	r := servertest.Redis(t)
	a := servertest.Start(t)
	migrateBetween(t, servertest.NewClient(t, r.Addr), a.Client(t), a.Addr)
}

// Errors that never reach the network, byte-compared with redis-server.
func TestMigrateErrorsDiff(t *testing.T) {
	d := servertest.NewDiff(t, servertest.Start(t))
	d.Do("set", "k", "v")
	for _, cmd := range [][]string{
		{"migrate", "127.0.0.1", "1", "nokey", "0", "10"},
		{"migrate", "127.0.0.1", "1", "k", "0", "10", "bogus"},
		{"migrate", "127.0.0.1", "1", "k", "0", "10", "auth"},
		{"migrate", "127.0.0.1", "1", "k", "0", "10", "auth2", "u"},
		{"migrate", "127.0.0.1", "1", "k", "0", "10", "keys", "k"},
		{"migrate", "127.0.0.1", "1", "", "0", "10", "keys"},
		{"migrate", "127.0.0.1", "1", "", "0", "10", "keys", "x", "y"},
		{"migrate", "127.0.0.1", "1", "k", "zero", "10"},
		{"migrate", "127.0.0.1", "1", "k", "0", "ten"},
		{"migrate", "127.0.0.1", "1", "k", "0"},
		{"migrate", "127.0.0.1", "1", "nokey", "x", "y"},
		{"migrate", "127.0.0.1", "1", "", "0", "10", "copy", "replace", "keys", "nokey"},
	} {
		d.Do(cmd...)
	}
}

// A port nobody listens on: IOERR, the key stays.
func TestMigrateConnectError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := servertest.Start(t).Client(t)
	c.Set(servertest.Ctx, "k", "v", 0)
	host, port := hostPort(t, addr)
	if got := doReply(c, "migrate", host, port, "k", 0, 1000); got != "ERR:IOERR error or timeout connecting to the client" {
		t.Errorf("got %q", got)
	}
	if c.Exists(servertest.Ctx, "k").Val() != 1 {
		t.Error("key lost")
	}
}

// AUTH and AUTH2 against a target with a password; a time series with its
// compaction moves between Abacus servers and keeps compacting.
func TestMigrateAuthAndSeries(t *testing.T) {
	a := servertest.Start(t).Client(t)
	bi := servertest.Start(t, servertest.WithConfig("requirepass", "pw"))
	host, port := hostPort(t, bi.Addr)
	ctx := servertest.Ctx
	b := redis.NewClient(&redis.Options{Addr: bi.Addr, Password: "pw", DisableIdentity: true, Protocol: 2})
	t.Cleanup(func() { b.Close() })
	a.Set(ctx, "k", "v", 0)
	if got := doReply(a, "migrate", host, port, "k", 0, 1000, "copy"); !strings.HasPrefix(got, "ERR:ERR Target instance replied with error: NOAUTH") {
		t.Errorf("no auth: %q", got)
	}
	if got := doReply(a, "migrate", host, port, "k", 0, 1000, "copy", "auth", "bad"); !strings.HasPrefix(got, "ERR:ERR Target instance replied with error: WRONGPASS") {
		t.Errorf("bad auth: %q", got)
	}
	if got := doReply(a, "migrate", host, port, "k", 0, 1000, "auth2", "default", "pw"); got != "OK" || b.Get(ctx, "k").Val() != "v" {
		t.Errorf("auth2: %q", got)
	}
	for _, cmd := range [][]any{
		{"ts.create", "src", "labels", "m", "1"}, {"ts.create", "dst"},
		{"ts.createrule", "src", "dst", "aggregation", "sum", 10},
		{"ts.add", "src", 1, 1}, {"ts.add", "src", 5, 2}, {"ts.add", "src", 12, 4},
	} {
		if err := a.Do(ctx, cmd...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if got := doReply(a, "migrate", host, port, "", 0, 1000, "auth", "pw", "keys", "src", "dst"); got != "OK" {
		t.Fatalf("series: %q", got)
	}
	if err := b.Do(ctx, "ts.add", "src", 25, 8).Err(); err != nil {
		t.Fatal(err)
	}
	got, err := b.Do(ctx, "ts.range", "dst", "-", "+").Result()
	want := []any{[]any{int64(0), "3"}, []any{int64(10), "4"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("dst after migration: %v %v", got, err)
	}
	if got, _ := b.Do(ctx, "ts.queryindex", "m=1").Result(); !reflect.DeepEqual(got, []any{"src"}) {
		t.Errorf("queryindex: %v", got)
	}
}

// MIGRATE to the server itself: the command holds the server while it
// waits for the target, as Redis's single thread does, so the target side
// cannot answer before the timeout: IOERR, and the key stays.
func TestMigrateToItself(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	c.Set(servertest.Ctx, "k", "v", 0)
	host, port := hostPort(t, inst.Addr)
	if got := doReply(c, "migrate", host, port, "k", 0, 50); got != "ERR:IOERR error or timeout reading to target instance" {
		t.Errorf("got %q", got)
	}
	if c.Get(servertest.Ctx, "k").Val() != "v" {
		t.Error("key lost")
	}
}

// Every DUMP fixture (all types and encodings) moves by MIGRATE both ways
// between Abacus and redis-server, into database 1, value and encoding
// kept.
func TestMigrateFixturesBothWays(t *testing.T) {
	rs := servertest.Redis(t)
	inst := servertest.Start(t)
	a, r := inst.Client(t), servertest.NewClient(t, rs.Addr)
	db1 := func(addr string) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: addr, DB: 1, MaxRetries: -1, DisableIdentity: true, Protocol: 2})
		t.Cleanup(func() { c.Close() })
		return c
	}
	a1, r1 := db1(inst.Addr), db1(rs.Addr)
	ah, ap := hostPort(t, inst.Addr)
	rh, rp := hostPort(t, rs.Addr)
	for _, f := range dumpFixtures() {
		for _, c := range []*redis.Client{a, r} {
			c.FlushAll(servertest.Ctx)
			for _, cmd := range f.cmds {
				if err := c.Do(servertest.Ctx, cmd...).Err(); err != nil {
					t.Fatal(err)
				}
			}
		}
		want := dumpSnapshot(t, r, "k")
		encA, encR := objEncoding(t, a, "k"), objEncoding(t, r, "k")
		if got := doReply(a, "migrate", rh, rp, "k", 1, 5000); got != "OK" {
			t.Fatalf("%s: abacus -> redis: %s", f.name, got)
		}
		if got := dumpSnapshot(t, r1, "k"); got != want || objEncoding(t, r1, "k") != encR {
			t.Errorf("%s: abacus -> redis:\ngot  %s\nwant %s", f.name, got, want)
		}
		if got := doReply(r, "migrate", ah, ap, "k", 1, 5000); got != "OK" {
			t.Fatalf("%s: redis -> abacus: %s", f.name, got)
		}
		if got := dumpSnapshot(t, a1, "k"); got != want || objEncoding(t, a1, "k") != encA {
			t.Errorf("%s: redis -> abacus:\ngot  %s\nwant %s", f.name, got, want)
		}
		if a.Exists(servertest.Ctx, "k").Val()+r.Exists(servertest.Ctx, "k").Val() != 0 {
			t.Errorf("%s: a source kept its key", f.name)
		}
	}
}
