package command_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
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
