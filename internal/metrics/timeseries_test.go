package metrics_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/redis/go-redis/v9"
)

// Client-level tests of the TS.* family through go-redis (RESP2) and raw
// RESP3, against the replies RedisTimeSeries documents.

func tsDo(t *testing.T, c *redis.Client, want any, args ...any) {
	t.Helper()
	got, err := c.Do(servertest.Ctx, args...).Result()
	if err != nil {
		got = "ERR:" + err.Error()
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%v: got %#v, want %#v", args, got, want)
	}
}

func tsErr(t *testing.T, c *redis.Client, want string, args ...any) {
	t.Helper()
	err := c.Do(servertest.Ctx, args...).Err()
	if err == nil || err.Error() != want {
		t.Errorf("%v: error %v, want %q", args, err, want)
	}
}

// samples builds the RESP2 reply of a range: [[ts, "value"], ...].
func samples(kv ...any) []any {
	var out []any
	for i := 0; i < len(kv); i += 2 {
		out = append(out, []any{int64(kv[i].(int)), kv[i+1].(string)})
	}
	if out == nil {
		return []any{}
	}
	return out
}

func TestTSCreateAddGet(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(1_700_000_000_123))
	c := inst.Client(t)
	ctx := servertest.Ctx

	tsDo(t, c, "OK", "TS.CREATE", "temp", "RETENTION", 60000, "DUPLICATE_POLICY", "MAX", "LABELS", "sensor_id", "2", "area_id", "32")
	tsDo(t, c, "TSDB-TYPE", "TYPE", "temp")
	tsErr(t, c, "ERR TSDB: key already exists", "TS.CREATE", "temp")
	tsDo(t, c, []any{}, "TS.GET", "temp")
	tsDo(t, c, int64(1000), "TS.ADD", "temp", 1000, 26)
	tsDo(t, c, int64(1000), "TS.ADD", "temp", 1000, 20) // MAX keeps 26
	tsDo(t, c, []any{int64(1000), "26"}, "TS.GET", "temp")
	tsDo(t, c, int64(1000), "TS.ADD", "temp", 1000, 30.5)
	tsDo(t, c, []any{int64(1000), "30.5"}, "TS.GET", "temp")
	tsDo(t, c, int64(1000), "TS.ADD", "temp", 1000, 1, "ON_DUPLICATE", "SUM")
	tsDo(t, c, []any{int64(1000), "31.5"}, "TS.GET", "temp")
	tsDo(t, c, int64(1_700_000_000_123), "TS.ADD", "temp", "*", 1)

	// auto-creation with options; BLOCK is the default policy
	tsDo(t, c, int64(5), "TS.ADD", "auto", 5, 1.25, "RETENTION", 100, "ENCODING", "UNCOMPRESSED", "CHUNK_SIZE", 128, "LABELS", "a", "b")
	tsErr(t, c, "ERR TSDB: Error at upsert, update is not supported when DUPLICATE_POLICY is set to BLOCK mode", "TS.ADD", "auto", 5, 2)
	tsDo(t, c, int64(5), "TS.ADD", "auto", 5, 2, "ON_DUPLICATE", "LAST")
	tsDo(t, c, int64(4), "TS.ADD", "auto", 4, 7) // out of order
	tsDo(t, c, samples(4, "7", 5, "2"), "TS.RANGE", "auto", "-", "+")
	tsDo(t, c, int64(300), "TS.ADD", "auto", 300, 1)
	tsErr(t, c, "ERR TSDB: Timestamp is older than retention", "TS.ADD", "auto", 199, 1)
	tsDo(t, c, samples(300, "1"), "TS.RANGE", "auto", "-", "+")

	info := c.Do(ctx, "TS.INFO", "auto").Val().([]any)
	m := map[string]any{}
	for i := 0; i < len(info); i += 2 {
		m[info[i].(string)] = info[i+1]
	}
	for k, v := range map[string]any{"retentionTime": int64(100), "chunkSize": int64(128), "chunkType": "uncompressed",
		"lastTimestamp": int64(300), "labels": []any{[]any{"a", "b"}}, "sourceKey": nil, "rules": []any{}, "duplicatePolicy": nil} {
		if !reflect.DeepEqual(m[k], v) {
			t.Errorf("TS.INFO %s = %#v, want %#v", k, m[k], v)
		}
	}

	// argument errors
	tsErr(t, c, "ERR TSDB: invalid timestamp, must be a nonnegative integer", "TS.ADD", "x", -1, 1)
	tsErr(t, c, "ERR TSDB: invalid timestamp", "TS.ADD", "x", "abc", 1)
	tsErr(t, c, "ERR TSDB: invalid value", "TS.ADD", "x", 1, "abc")
	tsErr(t, c, "ERR TSDB: invalid value", "TS.ADD", "x", 1, "nan")
	tsErr(t, c, "ERR TSDB: CHUNK_SIZE value must be a multiple of 8 in the range [48 .. 1048576]", "TS.CREATE", "x", "CHUNK_SIZE", 50)
	tsErr(t, c, "ERR TSDB: CHUNK_SIZE value must be a multiple of 8 in the range [48 .. 1048576]", "TS.CREATE", "x", "CHUNK_SIZE", 40)
	tsErr(t, c, "ERR TSDB: Couldn't parse RETENTION", "TS.CREATE", "x", "RETENTION", -1)
	tsErr(t, c, "ERR TSDB: Unknown DUPLICATE_POLICY", "TS.CREATE", "x", "DUPLICATE_POLICY", "NEWEST")
	tsErr(t, c, "ERR TSDB: unknown ENCODING parameter", "TS.CREATE", "x", "ENCODING", "ZIP")
	tsErr(t, c, "ERR TSDB: Couldn't parse LABELS", "TS.CREATE", "x", "LABELS", "a")
	tsErr(t, c, "ERR TSDB: Couldn't parse LABELS", "TS.CREATE", "x", "LABELS", "a", "(b)")
	tsErr(t, c, "ERR TSDB: the key does not exist", "TS.GET", "nokey")
	tsErr(t, c, "ERR TSDB: the key does not exist", "TS.RANGE", "nokey", "-", "+")
	c.Set(ctx, "str", "v", 0)
	tsErr(t, c, "WRONGTYPE Operation against a key holding the wrong kind of value", "TS.ADD", "str", 1, 1)
	tsErr(t, c, "WRONGTYPE Operation against a key holding the wrong kind of value", "TS.GET", "str")
	if c.Exists(ctx, "x").Val() != 0 {
		t.Error("a failed TS.CREATE created the key")
	}
}

func TestTSIgnoreAndAlter(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	tsDo(t, c, "OK", "TS.CREATE", "g", "DUPLICATE_POLICY", "LAST", "IGNORE", 10, 0.5)
	tsDo(t, c, int64(100), "TS.ADD", "g", 100, 1)
	tsDo(t, c, int64(100), "TS.ADD", "g", 105, 1.25) // ignored: the reply is the latest timestamp
	tsDo(t, c, int64(120), "TS.ADD", "g", 120, 1.25)
	tsDo(t, c, samples(100, "1", 120, "1.25"), "TS.RANGE", "g", "-", "+")
	tsDo(t, c, "OK", "TS.ALTER", "g", "IGNORE", 0, 0, "RETENTION", 10, "LABELS", "k", "v")
	tsDo(t, c, int64(125), "TS.ADD", "g", 125, 1.25) // no longer ignored
	tsDo(t, c, samples(120, "1.25", 125, "1.25"), "TS.RANGE", "g", "-", "+")
	tsDo(t, c, []any{"g"}, "TS.QUERYINDEX", "k=v")
	tsErr(t, c, "ERR TSDB: the key does not exist", "TS.ALTER", "nokey", "RETENTION", 1)
}

func TestTSDocumentedRanges(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	// TS.RANGE's documentation: filters
	tsDo(t, c, "OK", "TS.CREATE", "temp:TLV", "LABELS", "type", "temp", "location", "TLV")
	tsDo(t, c, []any{int64(1000), int64(1010), int64(1020), int64(1030)}, "TS.MADD", "temp:TLV", 1000, 30, "temp:TLV", 1010, 35, "temp:TLV", 1020, 9999, "temp:TLV", 1030, 40)
	tsDo(t, c, samples(1000, "30", 1010, "35", 1030, "40"), "TS.RANGE", "temp:TLV", "-", "+", "FILTER_BY_VALUE", -100, 100)
	tsDo(t, c, samples(1000, "35"), "TS.RANGE", "temp:TLV", "-", "+", "FILTER_BY_VALUE", -100, 100, "AGGREGATION", "avg", 1000)
	tsDo(t, c, samples(1010, "35", 1030, "40"), "TS.RANGE", "temp:TLV", "-", "+", "FILTER_BY_TS", 1030, 1010, 1015)
	tsDo(t, c, samples(1030, "40", 1020, "9999"), "TS.REVRANGE", "temp:TLV", "-", "+", "COUNT", 2)
	tsDo(t, c, samples(1000, "30"), "TS.RANGE", "temp:TLV", 0, 1005)

	// alignment
	tsDo(t, c, "OK", "TS.CREATE", "stock:A", "LABELS", "type", "stock", "name", "A")
	for _, b := range []int{1000, 2000, 3000} {
		c.Do(servertest.Ctx, "TS.MADD", "stock:A", b, b/10, "stock:A", b+10, b/10+10, "stock:A", b+20, b/10+20)
	}
	tsDo(t, c, samples(990, "100", 1010, "110", 1990, "200", 2010, "210", 2990, "300", 3010, "310"), "TS.RANGE", "stock:A", "-", "+", "ALIGN", 10, "AGGREGATION", "min", 20)
	tsDo(t, c, samples(985, "100", 1005, "110", 1985, "200", 2005, "210", 2985, "300", 3005, "310"), "TS.RANGE", "stock:A", 5, "+", "ALIGN", "-", "AGGREGATION", "min", 20)
	tsDo(t, c, samples(1000, "330", 2000, "630", 3000, "930"), "TS.RANGE", "stock:A", "-", "+", "AGGREGATION", "sum", 1000)
	tsDo(t, c, samples(3000, "930", 2000, "630"), "TS.REVRANGE", "stock:A", "-", "+", "AGGREGATION", "sum", 1000, "COUNT", 2)
	tsDo(t, c, samples(1500, "330", 2500, "630", 3500, "930"), "TS.RANGE", "stock:A", "-", "+", "AGGREGATION", "sum", 1000, "BUCKETTIMESTAMP", "~")
	tsDo(t, c, samples(1000, "3", 2000, "3", 3000, "3"), "TS.RANGE", "stock:A", "-", "+", "AGGREGATION", "count", 1000)
	tsDo(t, c, samples(1000, "100", 1500, "nan", 2000, "200"), "TS.RANGE", "stock:A", 0, 2500, "AGGREGATION", "first", 500, "EMPTY")
	tsDo(t, c, samples(1000, "330", 1500, "0", 2000, "630"), "TS.RANGE", "stock:A", 0, 2500, "AGGREGATION", "sum", 500, "EMPTY")
	tsDo(t, c, samples(1000, "20", 2000, "20", 3000, "20"), "TS.RANGE", "stock:A", "-", "+", "AGGREGATION", "range", 1000)
	tsDo(t, c, samples(1000, "10", 2000, "10", 3000, "10"), "TS.RANGE", "stock:A", "-", "+", "AGGREGATION", "std.s", 1000)
	tsDo(t, c, samples(1000, "100", 2000, "100", 3000, "100"), "TS.RANGE", "stock:A", "-", "+", "AGGREGATION", "var.s", 1000)

	// twa, from the example kvrocks checked against RedisTimeSeries
	c.Do(servertest.Ctx, "TS.CREATE", "tw")
	c.Do(servertest.Ctx, "TS.MADD", "tw", 12, 12, "tw", 15, 15, "tw", 19, 19, "tw", 22, 22)
	tsDo(t, c, samples(10, "16", 20, "21"), "TS.RANGE", "tw", "-", "+", "AGGREGATION", "twa", 10)

	// range errors
	tsErr(t, c, "ERR TSDB: wrong fromTimestamp", "TS.RANGE", "stock:A", "x", "+")
	tsErr(t, c, "ERR TSDB: wrong toTimestamp", "TS.RANGE", "stock:A", "-", "x")
	tsErr(t, c, "ERR TSDB: Unknown aggregation type", "TS.RANGE", "stock:A", "-", "+", "AGGREGATION", "median", 10)
	tsErr(t, c, "ERR TSDB: bucketDuration must be greater than zero", "TS.RANGE", "stock:A", "-", "+", "AGGREGATION", "avg", 0)
	tsErr(t, c, "ERR TSDB: Couldn't parse AGGREGATION", "TS.RANGE", "stock:A", "-", "+", "AGGREGATION", "avg")
	tsErr(t, c, "ERR TSDB: ALIGN parameter can only be used with AGGREGATION", "TS.RANGE", "stock:A", "-", "+", "ALIGN", 10)
	tsErr(t, c, "ERR TSDB: start alignment can only be used with explicit start timestamp", "TS.RANGE", "stock:A", "-", "+", "ALIGN", "start", "AGGREGATION", "avg", 10)
	tsErr(t, c, "ERR TSDB: end alignment can only be used with explicit end timestamp", "TS.RANGE", "stock:A", "-", "+", "ALIGN", "+", "AGGREGATION", "avg", 10)
	tsErr(t, c, "ERR TSDB: Couldn't parse COUNT", "TS.RANGE", "stock:A", "-", "+", "COUNT", "x")
	tsErr(t, c, "ERR TSDB: FILTER_BY_TS one or more arguments are missing", "TS.RANGE", "stock:A", "-", "+", "FILTER_BY_TS")
	tsErr(t, c, "ERR TSDB: Couldn't parse MIN", "TS.RANGE", "stock:A", "-", "+", "FILTER_BY_VALUE", "x", 1)
	tsErr(t, c, "ERR TSDB: unknown BUCKETTIMESTAMP parameter", "TS.RANGE", "stock:A", "-", "+", "AGGREGATION", "avg", 10, "BUCKETTIMESTAMP", "x")
}

func TestTSIncrDecrDel(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(50_000))
	c := inst.Client(t)
	tsDo(t, c, int64(1000), "TS.INCRBY", "cnt", 5, "TIMESTAMP", 1000, "LABELS", "kind", "counter")
	tsDo(t, c, int64(1000), "TS.INCRBY", "cnt", 2.5, "TIMESTAMP", 1000)
	tsDo(t, c, []any{int64(1000), "7.5"}, "TS.GET", "cnt")
	tsDo(t, c, int64(2000), "TS.DECRBY", "cnt", 10, "TIMESTAMP", 2000)
	tsDo(t, c, []any{int64(2000), "-2.5"}, "TS.GET", "cnt")
	tsDo(t, c, int64(50_000), "TS.INCRBY", "cnt", 1)
	tsErr(t, c, "ERR TSDB: timestamp must be equal to or higher than the maximum existing timestamp", "TS.INCRBY", "cnt", 1, "TIMESTAMP", 10)
	tsErr(t, c, "ERR TSDB: invalid increase/decrease value", "TS.INCRBY", "cnt", "x")
	tsDo(t, c, []any{"cnt"}, "TS.QUERYINDEX", "kind=counter")

	tsDo(t, c, int64(2), "TS.DEL", "cnt", 0, 2000)
	tsDo(t, c, int64(0), "TS.DEL", "cnt", 0, 2000)
	tsDo(t, c, samples(50_000, "-1.5"), "TS.RANGE", "cnt", "-", "+")
	tsErr(t, c, "ERR TSDB: the key does not exist", "TS.DEL", "nokey", 0, 1)
}

func TestTSCompaction(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	c.Do(servertest.Ctx, "TS.CREATE", "src")
	c.Do(servertest.Ctx, "TS.ADD", "src", 1, 100) // before the rule: never compacted
	c.Do(servertest.Ctx, "TS.CREATE", "avg")
	c.Do(servertest.Ctx, "TS.CREATE", "sum")
	tsDo(t, c, "OK", "TS.CREATERULE", "src", "avg", "AGGREGATION", "avg", 10)
	tsDo(t, c, "OK", "TS.CREATERULE", "src", "sum", "AGGREGATION", "SUM", 10, 5)
	for _, s := range [][2]int{{12, 1}, {14, 3}, {21, 10}, {26, 20}, {40, 5}} {
		c.Do(servertest.Ctx, "TS.ADD", "src", s[0], s[1])
	}
	tsDo(t, c, samples(10, "2", 20, "15"), "TS.RANGE", "avg", "-", "+")
	tsDo(t, c, samples(5, "4", 15, "10", 25, "20"), "TS.RANGE", "sum", "-", "+")
	tsDo(t, c, samples(10, "2", 20, "15", 40, "5"), "TS.RANGE", "avg", "-", "+", "LATEST")
	tsDo(t, c, []any{int64(40), "5"}, "TS.GET", "avg", "LATEST")
	tsDo(t, c, []any{int64(20), "15"}, "TS.GET", "avg")
	// an update in a closed bucket recomputes it
	c.Do(servertest.Ctx, "TS.ADD", "src", 14, 5, "ON_DUPLICATE", "LAST")
	tsDo(t, c, samples(10, "3", 20, "15"), "TS.RANGE", "avg", "-", "+")
	tsDo(t, c, samples(5, "6", 15, "10", 25, "20"), "TS.RANGE", "sum", "-", "+")

	info := c.Do(servertest.Ctx, "TS.INFO", "src").Val().([]any)
	for i := 0; i < len(info); i += 2 {
		if info[i] == "rules" {
			want := []any{[]any{"avg", int64(10), "AVG", int64(0)}, []any{"sum", int64(10), "SUM", int64(5)}}
			if !reflect.DeepEqual(info[i+1], want) {
				t.Errorf("rules %#v", info[i+1])
			}
		}
	}
	tsErr(t, c, "ERR TSDB: the source key and destination key should be different", "TS.CREATERULE", "src", "src", "AGGREGATION", "avg", 10)
	tsErr(t, c, "ERR TSDB: the destination key already has a src rule", "TS.CREATERULE", "src", "avg", "AGGREGATION", "avg", 10)
	tsErr(t, c, "ERR TSDB: the source key already has a source rule", "TS.CREATERULE", "avg", "sum", "AGGREGATION", "avg", 10)
	tsErr(t, c, "ERR TSDB: the key does not exist", "TS.CREATERULE", "src", "nokey", "AGGREGATION", "avg", 10)
	tsErr(t, c, "ERR TSDB: Unknown aggregation type", "TS.CREATERULE", "src", "x", "AGGREGATION", "mean", 10)
	tsDo(t, c, "OK", "TS.DELETERULE", "src", "sum")
	tsErr(t, c, "ERR TSDB: compaction rule does not exist", "TS.DELETERULE", "src", "sum")
	c.Do(servertest.Ctx, "TS.ADD", "src", 60, 1)
	tsDo(t, c, samples(5, "6", 15, "10", 25, "20"), "TS.RANGE", "sum", "-", "+")

	// RENAME keeps the links; DEL of the destination drops the rule
	tsDo(t, c, "OK", "RENAME", "avg", "avg2")
	c.Do(servertest.Ctx, "TS.ADD", "src", 75, 1)
	tsDo(t, c, samples(10, "3", 20, "15", 40, "5", 60, "1"), "TS.RANGE", "avg2", "-", "+")
	tsDo(t, c, "OK", "RENAME", "src", "src2")
	c.Do(servertest.Ctx, "TS.ADD", "src2", 85, 1)
	tsDo(t, c, samples(10, "3", 20, "15", 40, "5", 60, "1", 70, "1"), "TS.RANGE", "avg2", "-", "+")
	c.Del(servertest.Ctx, "avg2")
	c.Do(servertest.Ctx, "TS.CREATE", "avg2")
	c.Do(servertest.Ctx, "TS.ADD", "src2", 95, 1)
	tsDo(t, c, samples(), "TS.RANGE", "avg2", "-", "+")
	info = c.Do(servertest.Ctx, "TS.INFO", "src2").Val().([]any)
	for i := 0; i < len(info); i += 2 {
		if info[i] == "rules" && len(info[i+1].([]any)) != 0 {
			t.Errorf("rules after the destination was deleted: %#v", info[i+1])
		}
	}
}

func TestTSMultiQueries(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := servertest.Ctx
	c.Do(ctx, "TS.CREATE", "cpu:1", "LABELS", "metric", "cpu", "host", "a", "dc", "east")
	c.Do(ctx, "TS.CREATE", "cpu:2", "LABELS", "metric", "cpu", "host", "b", "dc", "west")
	c.Do(ctx, "TS.CREATE", "cpu:3", "LABELS", "metric", "cpu", "host", "c", "dc", "east")
	c.Do(ctx, "TS.CREATE", "mem:1", "LABELS", "metric", "mem", "host", "a")
	c.Do(ctx, "TS.MADD", "cpu:1", 10, 1, "cpu:2", 10, 2, "cpu:3", 10, 3, "cpu:1", 20, 4, "cpu:3", 20, 6, "mem:1", 10, 100)

	tsDo(t, c, []any{"cpu:1", "cpu:2", "cpu:3"}, "TS.QUERYINDEX", "metric=cpu")
	tsDo(t, c, []any{"cpu:1", "cpu:3"}, "TS.QUERYINDEX", "metric=cpu", "dc!=west")
	tsDo(t, c, []any{"cpu:1", "cpu:2", "mem:1"}, "TS.QUERYINDEX", "host=(a,b)")
	tsDo(t, c, []any{"mem:1"}, "TS.QUERYINDEX", "host=(a,b)", "dc=")
	tsDo(t, c, []any{"cpu:1", "cpu:2"}, "TS.QUERYINDEX", "host=(a,b)", "dc!=")
	tsDo(t, c, []any{"cpu:3"}, "TS.QUERYINDEX", "metric=cpu", "host!=(a,b)")
	tsErr(t, c, "ERR TSDB: please provide at least one matcher", "TS.QUERYINDEX", "dc!=west")
	tsErr(t, c, "ERR TSDB: please provide at least one matcher", "TS.QUERYINDEX", "dc=")
	tsErr(t, c, "ERR TSDB: failed parsing labels", "TS.QUERYINDEX", "bad")

	tsDo(t, c, []any{
		[]any{"cpu:1", []any{}, []any{int64(20), "4"}},
		[]any{"cpu:3", []any{}, []any{int64(20), "6"}},
	}, "TS.MGET", "FILTER", "metric=cpu", "dc=east")
	tsDo(t, c, []any{
		[]any{"cpu:2", []any{[]any{"metric", "cpu"}, []any{"host", "b"}, []any{"dc", "west"}}, []any{int64(10), "2"}},
	}, "TS.MGET", "WITHLABELS", "FILTER", "dc=west")
	tsDo(t, c, []any{
		[]any{"cpu:1", []any{[]any{"host", "a"}, []any{"nope", nil}}, []any{int64(20), "4"}},
	}, "TS.MGET", "SELECTED_LABELS", "host", "nope", "FILTER", "host=a", "metric=cpu")

	tsDo(t, c, []any{
		[]any{"cpu:1", []any{}, samples(10, "1", 20, "4")},
		[]any{"cpu:2", []any{}, samples(10, "2")},
	}, "TS.MRANGE", "-", "+", "FILTER", "host=(a,b)", "metric=cpu")
	tsDo(t, c, []any{
		[]any{"cpu:1", []any{[]any{"dc", "east"}}, samples(20, "4")},
		[]any{"cpu:3", []any{[]any{"dc", "east"}}, samples(20, "6")},
	}, "TS.MREVRANGE", "-", "+", "COUNT", 1, "SELECTED_LABELS", "dc", "FILTER", "dc=east")
	tsDo(t, c, []any{
		[]any{"dc=east", []any{}, samples(10, "4", 20, "10")},
		[]any{"dc=west", []any{}, samples(10, "2")},
	}, "TS.MRANGE", "-", "+", "FILTER", "metric=cpu", "GROUPBY", "dc", "REDUCE", "sum")
	tsDo(t, c, []any{
		[]any{"dc=east", []any{[]any{"dc", "east"}, []any{"__reducer__", "max"}, []any{"__source__", "cpu:1,cpu:3"}}, samples(20, "6", 10, "3")},
	}, "TS.MREVRANGE", "-", "+", "WITHLABELS", "FILTER", "dc=east", "GROUPBY", "dc", "REDUCE", "max")
	tsDo(t, c, []any{
		[]any{"cpu:1", []any{}, samples(0, "2.5")},
	}, "TS.MRANGE", "-", "+", "AGGREGATION", "avg", 100, "FILTER", "host=a", "metric=cpu")
	tsErr(t, c, "ERR TSDB: missing FILTER argument", "TS.MRANGE", "-", "+", "COUNT", 1)
	tsErr(t, c, "ERR TSDB: Invalid reducer type", "TS.MRANGE", "-", "+", "FILTER", "metric=cpu", "GROUPBY", "dc", "REDUCE", "first")
	tsErr(t, c, "ERR TSDB: cannot accept WITHLABELS and SELECT_LABELS together", "TS.MGET", "WITHLABELS", "SELECTED_LABELS", "a", "FILTER", "metric=cpu")
}

func TestTSKeyLifecycle(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := servertest.Ctx
	c.Do(ctx, "TS.CREATE", "a", "LABELS", "l", "v")
	c.Do(ctx, "TS.ADD", "a", 1, 1)
	tsDo(t, c, "raw", "OBJECT", "ENCODING", "a")
	if n := c.MemoryUsage(ctx, "a").Val(); n < 100 {
		t.Errorf("MEMORY USAGE %d", n)
	}
	tsDo(t, c, "OK", "RENAME", "a", "b")
	tsDo(t, c, []any{"b"}, "TS.QUERYINDEX", "l=v")
	tsDo(t, c, int64(1), "COPY", "b", "c")
	c.Do(ctx, "TS.ADD", "c", 2, 2)
	tsDo(t, c, samples(1, "1"), "TS.RANGE", "b", "-", "+")
	tsDo(t, c, samples(1, "1", 2, "2"), "TS.RANGE", "c", "-", "+")
	tsDo(t, c, []any{"b", "c"}, "TS.QUERYINDEX", "l=v")
	c.Do(ctx, "TS.ALTER", "c", "LABELS", "l", "w")
	tsDo(t, c, []any{"b"}, "TS.QUERYINDEX", "l=v")
	tsDo(t, c, []any{"c"}, "TS.QUERYINDEX", "l=w")
	c.Del(ctx, "b")
	tsDo(t, c, []any{}, "TS.QUERYINDEX", "l=v")
	c.FlushDB(ctx)
	tsDo(t, c, []any{}, "TS.QUERYINDEX", "l=w")
	c.Do(ctx, "TS.CREATE", "c", "LABELS", "l", "x")
	tsDo(t, c, []any{"c"}, "TS.QUERYINDEX", "l=x")
	tsDo(t, c, []any{}, "TS.QUERYINDEX", "l=w")
	// another database has its own index
	c2 := redis.NewClient(&redis.Options{Addr: inst.Addr, DB: 1, Protocol: 2})
	defer c2.Close()
	tsDo(t, c2, []any{}, "TS.QUERYINDEX", "l=x")
}

func TestTSResp3(t *testing.T) {
	inst := servertest.Start(t)
	r := inst.Raw(t)
	r.Do("HELLO", "3")
	r.Do("TS.CREATE", "k", "LABELS", "a", "1")
	r.Do("TS.MADD", "k", "1", "1.5", "k", "2", "-3")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"TS.GET", "k"}, "*2\r\n:2\r\n,-3\r\n"},
		{[]string{"TS.RANGE", "k", "-", "+"}, "*2\r\n*2\r\n:1\r\n,1.5\r\n*2\r\n:2\r\n,-3\r\n"},
		{[]string{"TS.MGET", "WITHLABELS", "FILTER", "a=1"}, "%1\r\n$1\r\nk\r\n*2\r\n%1\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n:2\r\n,-3\r\n"},
		{[]string{"TS.MRANGE", "-", "+", "FILTER", "a=1"}, "%1\r\n$1\r\nk\r\n*3\r\n%0\r\n%1\r\n$11\r\naggregators\r\n*0\r\n*2\r\n*2\r\n:1\r\n,1.5\r\n*2\r\n:2\r\n,-3\r\n"},
		{[]string{"TS.QUERYINDEX", "a=1"}, "~1\r\n$1\r\nk\r\n"},
		{[]string{"TS.MRANGE", "-", "+", "FILTER", "a=1", "GROUPBY", "a", "REDUCE", "max"}, "%1\r\n$3\r\na=1\r\n*4\r\n%0\r\n%1\r\n$8\r\nreducers\r\n*1\r\n$3\r\nmax\r\n%1\r\n$7\r\nsources\r\n*1\r\n$1\r\nk\r\n*2\r\n*2\r\n:1\r\n,1.5\r\n*2\r\n:2\r\n,-3\r\n"},
	} {
		if got := r.Do(c.args...); got != c.want {
			t.Errorf("%v: got %q want %q", c.args, got, c.want)
		}
	}
	info := r.Do("TS.INFO", "k")
	for _, part := range []string{"%14\r\n$12\r\ntotalSamples\r\n:2\r\n", "$15\r\nduplicatePolicy\r\n_\r\n",
		"$6\r\nlabels\r\n%1\r\n$1\r\na\r\n$1\r\n1\r\n", "$9\r\nsourceKey\r\n_\r\n$5\r\nrules\r\n%0\r\n", "$16\r\nignoreMaxValDiff\r\n,0\r\n"} {
		if !strings.Contains(info, part) {
			t.Errorf("RESP3 TS.INFO %q lacks %q", info, part)
		}
	}
	r2 := inst.Raw(t)
	if got := r2.Do("TS.GET", "k"); got != "*2\r\n:2\r\n+-3\r\n" {
		t.Errorf("RESP2 TS.GET: %q", got)
	}
}

// TestTSGoRedisAPI drives the typed go-redis API a RedisTimeSeries user has.
func TestTSGoRedisAPI(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := servertest.Ctx
	if err := c.TSCreateWithArgs(ctx, "t1", &redis.TSOptions{Retention: 1000, Labels: map[string]string{"room": "kitchen"}}).Err(); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 10; i++ {
		if got := c.TSAdd(ctx, "t1", i*100, float64(i)/2).Val(); got != int64(i*100) {
			t.Fatalf("TSAdd: %d", got)
		}
	}
	got, err := c.TSRangeWithArgs(ctx, "t1", 0, 1000, &redis.TSRangeOptions{Aggregator: redis.Max, BucketDuration: 500}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint([]redis.TSTimestampValue{{Timestamp: 0, Value: 2}, {Timestamp: 500, Value: 4.5}, {Timestamp: 1000, Value: 5}}) {
		t.Errorf("TSRange: %v", got)
	}
	last, err := c.TSGet(ctx, "t1").Result()
	if err != nil || last.Timestamp != 1000 || last.Value != 5 {
		t.Errorf("TSGet: %v %v", last, err)
	}
	info, err := c.TSInfo(ctx, "t1").Result()
	if err != nil || info["totalSamples"] != int64(10) || info["retentionTime"] != int64(1000) {
		t.Errorf("TSInfo: %v %v", info, err)
	}
	keys, err := c.TSQueryIndex(ctx, []string{"room=kitchen"}).Result()
	if err != nil || fmt.Sprint(keys) != "[t1]" {
		t.Errorf("TSQueryIndex: %v %v", keys, err)
	}
	if n := c.TSDel(ctx, "t1", 0, 450).Val(); n != 4 {
		t.Errorf("TSDel: %d", n)
	}
	if typ := c.Type(ctx, "t1").Val(); !strings.EqualFold(typ, "TSDB-TYPE") {
		t.Errorf("TYPE %q", typ)
	}
}

// TestTSCopyAndRollback: a COPY of a compacted series takes part in no
// rule, the original keeps its links; an all-or-nothing script that fails
// after writing samples and deleting a destination leaves series, rules and
// the label index as they were.
func TestTSCopyAndRollback(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := servertest.Ctx
	c.Do(ctx, "TS.CREATE", "src", "LABELS", "kind", "raw")
	c.Do(ctx, "TS.CREATE", "dst", "LABELS", "kind", "agg")
	tsDo(t, c, "OK", "TS.CREATERULE", "src", "dst", "AGGREGATION", "sum", 10)
	c.Do(ctx, "TS.MADD", "src", 1, 1, "src", 2, 2, "src", 11, 5)
	tsDo(t, c, int64(1), "COPY", "src", "src2")
	tsDo(t, c, int64(1), "COPY", "dst", "dst2")
	rules := func(key string) any {
		info := c.Do(ctx, "TS.INFO", key).Val().([]any)
		for i := 0; i < len(info); i += 2 {
			if info[i] == "rules" {
				return info[i+1]
			}
		}
		return nil
	}
	source := func(key string) any {
		info := c.Do(ctx, "TS.INFO", key).Val().([]any)
		for i := 0; i < len(info); i += 2 {
			if info[i] == "sourceKey" {
				return info[i+1]
			}
		}
		return "none"
	}
	if got := rules("src2"); !reflect.DeepEqual(got, []any{}) {
		t.Errorf("copy's rules %#v", got)
	}
	if got := source("dst2"); got != nil {
		t.Errorf("copy's source %#v", got)
	}
	if got := rules("src"); !reflect.DeepEqual(got, []any{[]any{"dst", int64(10), "SUM", int64(0)}}) {
		t.Errorf("original's rules %#v", got)
	}
	c.Do(ctx, "TS.ADD", "src", 21, 1)
	tsDo(t, c, samples(0, "3", 10, "5"), "TS.RANGE", "dst", "-", "+")
	tsDo(t, c, samples(0, "3"), "TS.RANGE", "dst2", "-", "+")

	script := "#!lua flags=transactional\n" +
		"redis.call('TS.ADD', 'src', 35, 7)\n" +
		"redis.call('TS.ALTER', 'src', 'LABELS', 'kind', 'other')\n" +
		"redis.call('DEL', 'dst')\n" +
		"return redis.call('TS.ADD', 'src', 1, 1)\n" // BLOCK: fails
	if err := c.Eval(ctx, script, []string{"src", "dst"}).Err(); err == nil {
		t.Fatal("script did not fail")
	}
	tsDo(t, c, samples(1, "1", 2, "2", 11, "5", 21, "1"), "TS.RANGE", "src", "-", "+")
	tsDo(t, c, []any{"src", "src2"}, "TS.QUERYINDEX", "kind=raw")
	if got := rules("src"); !reflect.DeepEqual(got, []any{[]any{"dst", int64(10), "SUM", int64(0)}}) {
		t.Errorf("rules after rollback %#v", got)
	}
	c.Do(ctx, "TS.ADD", "src", 45, 1)
	tsDo(t, c, samples(0, "3", 10, "5", 20, "1"), "TS.RANGE", "dst", "-", "+")
}

// TestTSGoRedisResp3 reads the multi-series replies with go-redis over
// RESP3, where their shapes are maps.
func TestTSGoRedisResp3(t *testing.T) {
	inst := servertest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: inst.Addr, Protocol: 3, UnstableResp3: true, DisableIdentity: true})
	defer c.Close()
	ctx := servertest.Ctx
	c.Do(ctx, "TS.CREATE", "a", "LABELS", "team", "ny", "Test", "This")
	c.Do(ctx, "TS.CREATE", "b", "LABELS", "team", "sf", "Test", "This")
	for i := 0; i < 4; i++ {
		c.TSAdd(ctx, "a", i, float64(i))
		c.TSAdd(ctx, "b", i, float64(i))
	}
	res, err := c.TSMRangeWithArgs(ctx, 0, 3, []string{"Test=This"}, &redis.TSMRangeOptions{WithLabels: true}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if got := res["a"][0]; !reflect.DeepEqual(got, map[any]any{"team": "ny", "Test": "This"}) {
		t.Errorf("labels %#v", got)
	}
	if got := res["b"][2]; !reflect.DeepEqual(got, []any{[]any{int64(0), 0.0}, []any{int64(1), 1.0}, []any{int64(2), 2.0}, []any{int64(3), 3.0}}) {
		t.Errorf("samples %#v", got)
	}
	res, err = c.TSMRangeWithArgs(ctx, 0, 3, []string{"Test=This"}, &redis.TSMRangeOptions{GroupByLabel: "Test", Reducer: "sum"}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if got := res["Test=This"][3]; !reflect.DeepEqual(got, []any{[]any{int64(0), 0.0}, []any{int64(1), 2.0}, []any{int64(2), 4.0}, []any{int64(3), 6.0}}) {
		t.Errorf("grouped samples %#v", got)
	}
	mget, err := c.TSMGetWithArgs(ctx, []string{"team=sf"}, &redis.TSMGetOptions{WithLabels: true}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(mget["b"]); got != "[map[Test:This team:sf] [3 3]]" {
		t.Errorf("TS.MGET %s", got)
	}
	info, err := c.TSInfo(ctx, "a").Result()
	if err != nil || info["totalSamples"] != int64(4) || !reflect.DeepEqual(info["rules"], map[any]any{}) {
		t.Errorf("TS.INFO %v %v", info, err)
	}
}
