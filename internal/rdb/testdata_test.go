package rdb_test

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/ds/hash"
	"github.com/abacusdb/abacus/internal/ds/list"
	"github.com/abacusdb/abacus/internal/ds/set"
	"github.com/abacusdb/abacus/internal/ds/zset"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/rdb"
	"github.com/abacusdb/abacus/internal/servertest"
)

// testdata/<origin>/<name>.dump are DUMP payloads; <name>.want is the value
// each must decode to (content, see content). redis70/ was captured from
// redis-server 7.0 and handmade/ built byte by byte per the older formats
// (ziplist, zipmap, plain types) and Redis 7.2/7.4's newer types, for want
// of old and new redis-server binaries. `go test -run TestTestdata -update`
// regenerates both.

var update = flag.Bool("update", false, "regenerate testdata (needs redis-server for redis70/)")

// testNow is the time decoding runs at: field TTLs in the payloads lie
// after it.
const testNow = 1_700_000_000_000

// content renders a decoded value type-first, one element per line, in an
// order that does not depend on encodings.
func content(o *keyspace.Object) string {
	var lines []string
	sorted := true
	switch o.Type {
	case keyspace.TypeString:
		lines = []string{strconv.Quote(string(o.Bytes(nil)))}
	case keyspace.TypeList:
		for _, v := range o.Val().(*list.List).All() {
			lines = append(lines, strconv.Quote(string(v)))
		}
		sorted = false
	case keyspace.TypeSet:
		for m := range o.Val().(*set.Set).All() {
			lines = append(lines, strconv.Quote(string(m)))
		}
	case keyspace.TypeZSet:
		for m, f := range o.Val().(*zset.Set).All() {
			lines = append(lines, strconv.Quote(m)+" "+strconv.FormatFloat(f, 'g', -1, 64))
		}
		sorted = false
	case keyspace.TypeHash:
		o.Val().(*hash.Hash).RangeWithExpiry(testNow, func(f, v []byte, at int64) bool {
			lines = append(lines, strconv.Quote(string(f))+" "+strconv.Quote(string(v))+" "+strconv.FormatInt(at, 10))
			return true
		})
	}
	if sorted {
		slices.Sort(lines)
	}
	return o.Type.String() + "\n" + strings.Join(lines, "\n") + "\n"
}

func TestTestdata(t *testing.T) {
	if *update {
		rdb.WriteHandmade(t)
		captureRedis(t)
	}
	files, _ := filepath.Glob("testdata/*/*.dump")
	if len(files) < 20 {
		t.Fatalf("only %d payloads in testdata", len(files))
	}
	opt := rdb.DefaultOptions()
	opt.Now = testNow
	for _, f := range files {
		p, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(strings.TrimSuffix(f, ".dump") + ".want")
		if err != nil {
			t.Fatal(err)
		}
		o, err := rdb.Restore(p, opt)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if got := content(o); got != string(want) {
			t.Errorf("%s:\ngot  %.300s\nwant %.300s", f, got, want)
		}
		// Abacus's own payload of the value decodes to the same.
		q, err := rdb.Dump(o, rdb.EncodeOptions{Compress: true, Now: testNow})
		if err != nil {
			t.Fatal(err)
		}
		if o2, err := rdb.Restore(q, opt); err != nil || content(o2) != string(want) {
			t.Errorf("%s: re-dump does not round-trip: %v", f, err)
		}
	}
}

func writeFixture(t *testing.T, dir, name string, payload []byte, want string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, name)
	if err := os.WriteFile(base+".dump", payload, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".want", []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
}

// captureRedis DUMPs values built by commands on redis-server 7.0 and
// records what redis-server reads back for each.
func captureRedis(t *testing.T) {
	rs, err := servertest.StartRedis()
	if err != nil {
		t.Logf("redis70/ not regenerated: %v", err)
		return
	}
	defer rs.Stop()
	c := servertest.NewClient(t, rs.Addr)
	ctx := servertest.Ctx
	seq := func(n int, f func(i int) string) []any {
		var out []any
		for i := 0; i < n; i++ {
			out = append(out, f(i))
		}
		return out
	}
	fixtures := []struct {
		name string
		cmd  []any
	}{
		{"string-int8", []any{"set", "k", "-100"}},
		{"string-int16", []any{"set", "k", "30000"}},
		{"string-int32", []any{"set", "k", "-2000000000"}},
		{"string-int64", []any{"set", "k", "9223372036854775807"}},
		{"string-raw", []any{"set", "k", "hello\x00world"}},
		{"string-lzf", []any{"set", "k", strings.Repeat("0123456789", 50)}},
		{"list-quicklist2", append([]any{"rpush", "k", "a", "-1", "5000", "70000", "-3000000000", ""}, seq(50, func(i int) string { return strings.Repeat("e", i) })...)},
		{"list-multinode", append([]any{"rpush", "k"}, seq(1500, func(i int) string { return "element-" + strconv.Itoa(i) })...)},
		{"set-intset", []any{"sadd", "k", "5", "-5", "100000", "-10000000000"}},
		{"set-hashtable", append([]any{"sadd", "k", "a", "b"}, seq(200, func(i int) string { return "m" + strconv.Itoa(i) })...)},
		{"zset-listpack", []any{"zadd", "k", "1", "a", "-2.5", "b", "inf", "c", "-inf", "d", "0.1", "e", "1e20", "f"}},
		{"zset-skiplist", append([]any{"zadd", "k"}, seq(300, func(i int) string {
			if i%2 == 0 {
				return strconv.FormatFloat(float64(i)*1.25-100, 'g', -1, 64)
			}
			return "member" + strconv.Itoa(i)
		})...)},
		{"hash-listpack", []any{"hset", "k", "f", "v", "n", "42", "big", "-9000000000", "e", ""}},
		{"hash-hashtable", append([]any{"hset", "k"}, seq(400, func(i int) string { return "x" + strconv.Itoa(i) })...)},
	}
	for _, f := range fixtures {
		c.FlushAll(ctx)
		if err := c.Do(ctx, f.cmd...).Err(); err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		p, err := c.Dump(ctx, "k").Result()
		if err != nil {
			t.Fatal(err)
		}
		writeFixture(t, "testdata/redis70", f.name, []byte(p), redisContent(t, c))
	}
}

// redisContent renders key "k" of redis-server as content does.
func redisContent(t *testing.T, c *redis.Client) string { return keyContent(t, c, "k", false) }

// keyContent renders key k of a server as content does; fieldTTLs asks
// for hash field TTLs (HPEXPIRETIME, which redis-server 7.0 lacks).
func keyContent(t *testing.T, c *redis.Client, k string, fieldTTLs bool) string {
	t.Helper()
	ctx := servertest.Ctx
	typ := c.Type(ctx, k).Val()
	var lines []string
	sorted := true
	switch typ {
	case "string":
		lines = []string{strconv.Quote(c.Get(ctx, k).Val())}
	case "list":
		for _, v := range c.LRange(ctx, k, 0, -1).Val() {
			lines = append(lines, strconv.Quote(v))
		}
		sorted = false
	case "set":
		for _, v := range c.SMembers(ctx, k).Val() {
			lines = append(lines, strconv.Quote(v))
		}
	case "zset":
		for _, z := range c.ZRangeWithScores(ctx, k, 0, -1).Val() {
			lines = append(lines, strconv.Quote(z.Member.(string))+" "+strconv.FormatFloat(z.Score, 'g', -1, 64))
		}
		sorted = false
	case "hash":
		ttls := map[string]int64{}
		if fields := c.HKeys(ctx, k).Val(); fieldTTLs && len(fields) > 0 {
			ats, _ := c.Do(ctx, append([]any{"hpexpiretime", k, "fields", len(fields)}, anys(fields)...)...).Int64Slice()
			for i, f := range fields {
				if i < len(ats) && ats[i] > 0 {
					ttls[f] = ats[i]
				}
			}
		}
		for f, v := range c.HGetAll(ctx, k).Val() {
			lines = append(lines, strconv.Quote(f)+" "+strconv.Quote(v)+" "+strconv.FormatInt(ttls[f], 10))
		}
	default:
		t.Fatalf("type %s", typ)
	}
	if sorted {
		slices.Sort(lines)
	}
	return typ + "\n" + strings.Join(lines, "\n") + "\n"
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
