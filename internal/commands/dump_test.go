package commands_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// DUMP and RESTORE across Abacus and redis-server 7.0: every type and
// encoding built by commands on both, dumped by one and restored into the
// other, compared by value and OBJECT ENCODING.

type dumpFixture struct {
	name string
	cmds [][]any
}

func dumpFixtures() []dumpFixture {
	rng := rand.New(rand.NewPCG(5, 5))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return string(b)
	}
	many := func(cmd string, n int, f func(i int) []any) [][]any {
		var out [][]any
		for i := 0; i < n; i++ {
			out = append(out, append([]any{cmd, "k"}, f(i)...))
		}
		return out
	}
	fs := []dumpFixture{
		{"int small", [][]any{{"set", "k", "12"}}},
		{"int negative", [][]any{{"set", "k", "-40000"}}},
		{"int 32 bit", [][]any{{"set", "k", "2147483647"}}},
		{"int 64 bit", [][]any{{"set", "k", "-9223372036854775808"}}},
		{"int not canonical", [][]any{{"set", "k", "007"}}},
		{"empty string", [][]any{{"set", "k", ""}}},
		{"embstr", [][]any{{"set", "k", "hello world"}}},
		{"raw compressible", [][]any{{"set", "k", strings.Repeat("abcdefgh", 300)}}},
		{"raw random", [][]any{{"set", "k", word(3000)}}},
		{"binary", [][]any{{"set", "k", "\x00\xff\r\n\x80"}}},
		{"list small", [][]any{{"rpush", "k", "a", "1", "-5", "300", "70000", "4294967296", strings.Repeat("x", 100)}}},
		{"list ints", many("rpush", 300, func(i int) []any { return []any{strconv.Itoa(i*i - 5000)} })},
		{"list large", many("rpush", 2000, func(i int) []any { return []any{word(1 + rng.IntN(40))} })},
		{"list big element", [][]any{{"rpush", "k", "a", strings.Repeat("y", 20000), "b"}}},
		{"set intset", [][]any{{"sadd", "k", "1", "-2", "70000", "-5000000000"}}},
		{"set intset large", many("sadd", 600, func(i int) []any { return []any{strconv.Itoa(i * 3)} })},
		{"set strings small", [][]any{{"sadd", "k", "a", "b", "1", "ccc"}}},
		{"set strings large", many("sadd", 300, func(i int) []any { return []any{word(8)} })},
		{"zset small", [][]any{{"zadd", "k", "1", "a", "2.5", "b", "-3", "c", "1e300", "d", "inf", "e", "-inf", "f", "0.1", "g", "100", "7"}}},
		{"zset long member", [][]any{{"zadd", "k", "1", strings.Repeat("m", 100), "2", "b"}}},
		{"zset large", many("zadd", 300, func(i int) []any { return []any{strconv.FormatFloat(rng.NormFloat64()*1e6, 'g', -1, 64), word(10)} })},
		{"hash small", [][]any{{"hset", "k", "f", "v", "n", "12", "neg", "-7", "1", "one", "empty", ""}}},
		{"hash long value", [][]any{{"hset", "k", "f", strings.Repeat("v", 100), "g", "w"}}},
		{"hash large", many("hset", 300, func(i int) []any { return []any{word(6) + strconv.Itoa(i), word(20)} })},
	}
	return fs
}

// dumpSnapshot renders key k's value in a form that compares across
// servers: its type and its elements (sorted where order does not count).
func dumpSnapshot(t *testing.T, c *redis.Client, k string) string {
	t.Helper()
	typ, err := c.Type(servertest.Ctx, k).Result()
	if err != nil {
		t.Fatal(err)
	}
	var v any
	switch typ {
	case "string":
		v, err = c.Get(servertest.Ctx, k).Result()
	case "list":
		v, err = c.LRange(servertest.Ctx, k, 0, -1).Result()
	case "set":
		var m []string
		m, err = c.SMembers(servertest.Ctx, k).Result()
		slices.Sort(m)
		v = m
	case "zset":
		v, err = c.Do(servertest.Ctx, "zrange", k, 0, -1, "withscores").Result()
	case "hash":
		var m map[string]string
		m, err = c.HGetAll(servertest.Ctx, k).Result()
		v = fmt.Sprint(m)
	case "none":
	default:
		t.Fatalf("unexpected type %s", typ)
	}
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s %q", typ, v)
}

func objEncoding(t *testing.T, c *redis.Client, k string) string {
	t.Helper()
	enc, err := c.ObjectEncoding(servertest.Ctx, k).Result()
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

func TestDumpRestoreAcrossRedis(t *testing.T) {
	rs := servertest.Redis(t)
	inst := servertest.Start(t)
	a := inst.Client(t)
	r := servertest.NewClient(t, rs.Addr)
	for _, f := range dumpFixtures() {
		t.Run(f.name, func(t *testing.T) {
			for _, c := range []*redis.Client{a, r} {
				c.FlushAll(servertest.Ctx)
				for _, cmd := range f.cmds {
					if err := c.Do(servertest.Ctx, cmd...).Err(); err != nil {
						t.Fatal(err)
					}
				}
			}
			want := dumpSnapshot(t, r, "k")
			if got := dumpSnapshot(t, a, "k"); got != want {
				t.Fatalf("fixture differs before DUMP:\nabacus %s\nredis  %s", got, want)
			}
			encA, encR := objEncoding(t, a, "k"), objEncoding(t, r, "k")

			// redis-server -> Abacus
			p, err := r.Dump(servertest.Ctx, "k").Result()
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Restore(servertest.Ctx, "fromredis", 0, p).Err(); err != nil {
				t.Fatalf("RESTORE of redis-server's payload %q: %v", p, err)
			}
			if got := dumpSnapshot(t, a, "fromredis"); got != want {
				t.Fatalf("redis -> abacus:\ngot  %s\nwant %s", got, want)
			}
			if got := objEncoding(t, a, "fromredis"); got != encA {
				t.Errorf("redis -> abacus: encoding %s, abacus builds %s", got, encA)
			}

			// Abacus -> redis-server
			p, err = a.Dump(servertest.Ctx, "k").Result()
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Restore(servertest.Ctx, "fromabacus", 0, p).Err(); err != nil {
				t.Fatalf("redis-server refuses Abacus's payload %q: %v", p, err)
			}
			if got := dumpSnapshot(t, r, "fromabacus"); got != want {
				t.Fatalf("abacus -> redis:\ngot  %s\nwant %s", got, want)
			}
			if got := objEncoding(t, r, "fromabacus"); got != encR {
				t.Errorf("abacus -> redis: encoding %s, redis builds %s", got, encR)
			}
			// And Abacus reads its own payload back.
			if err := a.Restore(servertest.Ctx, "self", 0, p).Err(); err != nil {
				t.Fatal(err)
			}
			if got := dumpSnapshot(t, a, "self"); got != want {
				t.Fatalf("abacus -> abacus:\ngot  %s\nwant %s", got, want)
			}
		})
	}
}

// Hashes whose fields carry TTLs round-trip through Abacus with Redis 7.4's
// types (version 12); redis-server 7.0 refuses such a payload by version.
func TestDumpRestoreFieldTTL(t *testing.T) {
	const t0 = 1_800_000_000_000
	inst := servertest.Start(t, servertest.WithManualClock(t0))
	c := inst.Raw(t)
	c.Do("hset", "small", "a", "1", "b", "2", "c", "3")
	c.Do("hpexpireat", "small", strconv.FormatInt(t0+5000, 10), "fields", "2", "a", "c")
	c.Do("hpexpireat", "small", strconv.FormatInt(t0+3000, 10), "fields", "1", "c")
	c.Do("hset", "big", "x", strings.Repeat("v", 100), "y", "2")
	c.Do("hpexpireat", "big", strconv.FormatInt(t0+9000, 10), "fields", "1", "y")
	for _, k := range []struct {
		key, typ string
	}{{"small", "\x19"}, {"big", "\x18"}} {
		p := c.Do("dump", k.key)
		body := p[strings.Index(p, "\r\n")+2 : len(p)-2]
		if body[:1] != k.typ || body[len(body)-10:len(body)-8] != "\x0c\x00" {
			t.Fatalf("DUMP %s: type %q version %q", k.key, body[:1], body[len(body)-10:len(body)-8])
		}
		if got := c.Do("restore", k.key+"2", "0", body); got != "+OK\r\n" {
			t.Fatalf("RESTORE %s: %q", k.key, got)
		}
		want := c.Do("hpexpiretime", k.key, "fields", "5", "a", "b", "c", "x", "y")
		if got := c.Do("hpexpiretime", k.key+"2", "fields", "5", "a", "b", "c", "x", "y"); got != want {
			t.Errorf("%s: field expiry times %q, want %q", k.key, got, want)
		}
		want = c.Do("hgetall", k.key)
		if got := c.Do("hgetall", k.key+"2"); got != want {
			t.Errorf("%s: HGETALL %q, want %q", k.key, got, want)
		}
		if got, want := c.Do("object", "encoding", k.key+"2"), c.Do("object", "encoding", k.key); got != want {
			t.Errorf("%s: encoding %q, want %q", k.key, got, want)
		}
		if rs := redisIfAny(t); rs != nil {
			if got := rs.Do("restore", k.key, "0", body); got != "-ERR DUMP payload version or checksum are wrong\r\n" {
				t.Errorf("redis-server 7.0 on a field-TTL payload: %q", got)
			}
		}
	}
	// Fields whose TTL passes before RESTORE are left out; when all are
	// gone nothing is stored.
	p := c.Do("dump", "small")
	body := p[strings.Index(p, "\r\n")+2 : len(p)-2]
	inst.Clock.Set(t0 + 4000)
	c.Do("restore", "later", "0", body)
	if got := c.Do("hkeys", "later"); got != "*2\r\n$1\r\na\r\n$1\r\nb\r\n" {
		t.Errorf("HKEYS after 4 s: %q", got)
	}
	c.Do("hpexpireat", "small", strconv.FormatInt(t0+4500, 10), "fields", "1", "b")
	p = c.Do("dump", "small")
	body = p[strings.Index(p, "\r\n")+2 : len(p)-2]
	inst.Clock.Set(t0 + 5100)
	if got := c.Do("restore", "gone", "0", body); got != "+OK\r\n" {
		t.Fatalf("RESTORE of a hash whose fields all expired: %q", got)
	}
	if got := c.Do("exists", "gone"); got != ":0\r\n" {
		t.Errorf("EXISTS gone: %q", got)
	}
}

// redisIfAny is a raw connection to the shared redis-server, or nil when
// there is none (see testenv.Have).
func redisIfAny(t *testing.T) *servertest.Conn {
	t.Helper()
	if testenv.Have(t, "redis-server") == "" {
		return nil
	}
	return servertest.Dial(t, servertest.Redis(t).Addr)
}

// A randomized stream (fixed seed): keys of every type built by the same
// commands on both servers, sizes and element lengths around the
// encoding thresholds, then every key crossed both ways.
func TestDumpRestoreRandomCross(t *testing.T) {
	rs := servertest.Redis(t)
	inst := servertest.Start(t)
	a := inst.Client(t)
	r := servertest.NewClient(t, rs.Addr)
	rng := rand.New(rand.NewPCG(2026, 11))
	elem := func() string {
		switch rng.IntN(4) {
		case 0:
			return strconv.FormatInt(rng.Int64N(1<<40)-1<<39, 10)
		case 1:
			return strconv.Itoa(rng.IntN(1000))
		}
		n := rng.IntN(70)
		if rng.IntN(30) == 0 {
			n = 200 + rng.IntN(3000)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(' ' + rng.IntN(95))
		}
		return string(b)
	}
	size := func() int {
		return []int{1 + rng.IntN(5), 125 + rng.IntN(8), 508 + rng.IntN(8), 1 + rng.IntN(700)}[rng.IntN(4)]
	}
	var keys []string
	for i := 0; i < 120; i++ {
		k := "key" + strconv.Itoa(i)
		keys = append(keys, k)
		var cmd []any
		switch rng.IntN(5) {
		case 0:
			cmd = []any{"set", k, elem()}
		case 1:
			cmd = []any{"rpush", k}
			for n := size(); n > 0; n-- {
				cmd = append(cmd, elem())
			}
		case 2:
			cmd = []any{"sadd", k}
			ints := rng.IntN(2) == 0
			for n := size(); n > 0; n-- {
				if ints {
					cmd = append(cmd, strconv.FormatInt(rng.Int64N(1<<34)-1<<33, 10))
				} else {
					cmd = append(cmd, elem())
				}
			}
		case 3:
			cmd = []any{"zadd", k}
			for n := size(); n > 0; n-- {
				cmd = append(cmd, strconv.FormatFloat([]float64{float64(rng.IntN(100)), rng.NormFloat64() * 1e9, math.Inf(1)}[rng.IntN(3)], 'g', -1, 64), elem())
			}
		default:
			cmd = []any{"hset", k}
			for n := size(); n > 0; n-- {
				cmd = append(cmd, elem(), elem())
			}
		}
		for _, c := range []*redis.Client{a, r} {
			if err := c.Do(servertest.Ctx, cmd...).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, k := range keys {
		want := dumpSnapshot(t, r, k)
		if got := dumpSnapshot(t, a, k); got != want {
			t.Fatalf("%s differs before DUMP", k)
		}
		p := r.Dump(servertest.Ctx, k).Val()
		if err := a.Restore(servertest.Ctx, k+":r", 0, p).Err(); err != nil {
			t.Fatalf("%s: RESTORE of redis-server's payload: %v", k, err)
		}
		if got := dumpSnapshot(t, a, k+":r"); got != want {
			t.Fatalf("%s: redis -> abacus differs", k)
		}
		if got, want := objEncoding(t, a, k+":r"), objEncoding(t, a, k); got != want {
			t.Errorf("%s: redis -> abacus: encoding %s, abacus builds %s", k, got, want)
		}
		p = a.Dump(servertest.Ctx, k).Val()
		if err := r.Restore(servertest.Ctx, k+":a", 0, p).Err(); err != nil {
			t.Fatalf("%s: redis-server refuses Abacus's payload: %v", k, err)
		}
		if got := dumpSnapshot(t, r, k+":a"); got != want {
			t.Fatalf("%s: abacus -> redis differs", k)
		}
		if got, want := objEncoding(t, r, k+":a"), objEncoding(t, r, k); got != want {
			t.Errorf("%s: abacus -> redis: encoding %s, redis builds %s", k, got, want)
		}
	}
}
