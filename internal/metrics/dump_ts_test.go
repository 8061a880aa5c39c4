package metrics_test

import (
	"reflect"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Time series through DUMP and RESTORE: samples, settings, labels and
// compaction rules (with the open bucket) survive, and redis-server 7.0
// refuses the payload cleanly.

func tsSnapshot(t *testing.T, c *redis.Client, key string) []any {
	t.Helper()
	rng, err := c.Do(servertest.Ctx, "ts.range", key, "-", "+").Result()
	if err != nil {
		t.Fatalf("ts.range %s: %v", key, err)
	}
	info, err := c.Do(servertest.Ctx, "ts.info", key).Result()
	if err != nil {
		t.Fatalf("ts.info %s: %v", key, err)
	}
	return []any{rng, info}
}

func dumpRestore(t *testing.T, from, to *redis.Client, key, newKey string) {
	t.Helper()
	p, err := from.Dump(servertest.Ctx, key).Result()
	if err != nil {
		t.Fatalf("dump %s: %v", key, err)
	}
	if err := to.RestoreReplace(servertest.Ctx, newKey, 0, p).Err(); err != nil {
		t.Fatalf("restore %s: %v", newKey, err)
	}
}

func TestDumpRestoreTimeSeries(t *testing.T) {
	a := servertest.Start(t).Client(t)
	b := servertest.Start(t).Client(t)
	cmds := [][]any{
		{"ts.create", "src", "retention", "100000", "chunk_size", "64", "duplicate_policy", "sum", "ignore", "5", "0.5", "labels", "kind", "temp", "room", "a b"},
		{"ts.create", "avg", "labels", "kind", "agg"},
		{"ts.create", "raw", "encoding", "uncompressed", "chunk_size", "48", "labels", "kind", "raw"},
		{"ts.createrule", "src", "avg", "aggregation", "avg", "100"},
		{"ts.create", "empty"},
	}
	for i := 0; i < 300; i++ {
		cmds = append(cmds, []any{"ts.add", "src", 1000 + i*7, float64(i%17) * 1.25},
			[]any{"ts.add", "raw", i * 3, -float64(i) / 3})
	}
	cmds = append(cmds, []any{"ts.add", "src", 1000, 3}) // an update under SUM
	for _, cmd := range cmds {
		if err := a.Do(servertest.Ctx, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	// all keys restored before any is read: reading a source whose
	// destination is missing drops the rule, as it would on a TS.DEL of it
	keys := []string{"src", "avg", "raw", "empty"}
	for _, k := range keys {
		dumpRestore(t, a, b, k, k)
	}
	for _, k := range keys {
		if got, want := tsSnapshot(t, b, k), tsSnapshot(t, a, k); !reflect.DeepEqual(got, want) {
			t.Errorf("%s after restore:\ngot  %.2000v\nwant %.2000v", k, got, want)
		}
	}
	// labels are indexed: the restored series are found
	for _, c := range []*redis.Client{a, b} {
		got, err := c.Do(servertest.Ctx, "ts.queryindex", "kind=(temp,raw)").Result()
		if err != nil || !reflect.DeepEqual(got, []any{"raw", "src"}) {
			t.Errorf("queryindex: %v %v", got, err)
		}
		got, err = c.Do(servertest.Ctx, "ts.queryindex", "room=a b").Result()
		if err != nil || !reflect.DeepEqual(got, []any{"src"}) {
			t.Errorf("queryindex room: %v %v", got, err)
		}
	}
	// the restored source goes on compacting into the restored destination
	// from its open bucket, exactly as the original does
	for _, c := range []*redis.Client{a, b} {
		for i := 0; i < 40; i++ {
			if err := c.Do(servertest.Ctx, "ts.add", "src", 3200+i*11, i).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, k := range []string{"src", "avg"} {
		if got, want := tsSnapshot(t, b, k), tsSnapshot(t, a, k); !reflect.DeepEqual(got, want) {
			t.Errorf("%s after more samples:\ngot  %v\nwant %v", k, got, want)
		}
	}
	// a series restored under another name while the original stays is
	// not linked to anything
	dumpRestore(t, a, a, "src", "copy")
	info, err := a.Do(servertest.Ctx, "ts.info", "copy").Result()
	if err != nil {
		t.Fatal(err)
	}
	if r := tsInfoField(info, "rules"); !reflect.DeepEqual(r, []any{}) {
		t.Errorf("a copy keeps rules: %#v", r)
	}
	if r := tsInfoField(info, "sourceKey"); r != nil {
		t.Errorf("a copy keeps its source: %#v", r)
	}
	// corrupted payloads are refused
	p, _ := a.Dump(servertest.Ctx, "src").Result()
	bad := []byte(p)
	bad[20] ^= 0xff
	if err := b.Restore(servertest.Ctx, "x", 0, string(bad)).Err(); err == nil || err.Error() != "ERR DUMP payload version or checksum are wrong" {
		t.Errorf("corrupt payload: %v", err)
	}
}

func tsInfoField(info any, name string) any {
	l, _ := info.([]any)
	for i := 0; i+1 < len(l); i += 2 {
		if l[i] == name {
			return l[i+1]
		}
	}
	return "missing"
}

// redis-server 7.0 has no module type ABACUS-TS: RESTORE answers Bad data
// format and stores nothing.
func TestDumpTimeSeriesIntoRedis(t *testing.T) {
	r := servertest.Redis(t)
	a := servertest.Start(t).Client(t)
	if err := a.Do(servertest.Ctx, "ts.add", "s", 1, 2, "labels", "x", "y").Err(); err != nil {
		t.Fatal(err)
	}
	p, err := a.Dump(servertest.Ctx, "s").Result()
	if err != nil {
		t.Fatal(err)
	}
	rc := servertest.NewClient(t, r.Addr)
	if err := rc.Restore(servertest.Ctx, "s", 0, p).Err(); err == nil || err.Error() != "ERR Bad data format" {
		t.Errorf("redis-server RESTORE: %v", err)
	}
	if n := rc.Exists(servertest.Ctx, "s").Val(); n != 0 {
		t.Errorf("redis-server kept the key")
	}
}
