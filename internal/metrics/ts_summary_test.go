package metrics_test

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// TS.RANGE with aggregation buckets longer than chunks takes whole chunks
// from their summaries (internal/ds/ts/summary.go). FILTER_BY_VALUE over
// every value makes the same query walk the samples one by one: the two
// replies must be the same, on a series written by TS.ADD (duplicates
// summed), TS.MADD, TS.DEL and a compaction rule, and on their copies
// through DUMP/RESTORE and through a snapshot reload (DEBUG RELOAD).
func TestTSRangeSummariesMatchWalk(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("dir", t.TempDir(), "enable-debug-command", "yes"))
	c := redis.NewClient(&redis.Options{Addr: inst.Addr, Protocol: 2}) // NaN as text, comparable
	defer c.Close()
	do := func(args ...any) any {
		t.Helper()
		r, err := c.Do(servertest.Ctx, args...).Result()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return r
	}
	rng := rand.New(rand.NewSource(3))
	do("TS.CREATE", "src", "DUPLICATE_POLICY", "SUM", "CHUNK_SIZE", 64)
	do("TS.CREATE", "dst", "CHUNK_SIZE", 48)
	do("TS.CREATERULE", "src", "dst", "AGGREGATION", "sum", 50)
	tm := int64(1_000)
	for i := 0; i < 6000; i++ {
		switch r := rng.Intn(100); {
		case r < 80:
			tm += rng.Int63n(20)
			do("TS.ADD", "src", tm, rng.Intn(5)-1)
		case r < 95:
			do("TS.MADD", "src", tm-rng.Int63n(500), rng.Intn(3), "src", tm, 1)
		default:
			from := max(tm-rng.Int63n(2000), 0)
			do("TS.DEL", "src", from, from+rng.Int63n(40))
		}
	}
	do("TS.CREATE", "flt", "CHUNK_SIZE", 48)
	for i := 0; i < 500; i++ {
		do("TS.ADD", "flt", 1+i*3, rng.NormFloat64())
	}
	for _, k := range []string{"src", "dst", "flt"} {
		p, err := c.Dump(servertest.Ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.RestoreReplace(servertest.Ctx, k+":copy", 0, p).Err(); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		for _, k := range []string{"src", "dst", "flt", "src:copy", "dst:copy", "flt:copy"} {
			for q := 0; q < 150; q++ {
				from := rng.Int63n(tm + 100)
				to := from + rng.Int63n(tm-from+100)
				agg := []string{"sum", "count", "avg", "min", "max", "range"}[rng.Intn(6)]
				d := []int64{1 + rng.Int63n(100), 1 + rng.Int63n(tm), tm}[rng.Intn(3)]
				args := []any{"TS.RANGE", k, from, to}
				tail := []any{"AGGREGATION", agg, d}
				if rng.Intn(2) == 0 {
					tail = append(tail, "ALIGN", "-")
				}
				if rng.Intn(4) == 0 {
					tail = append(tail, "EMPTY")
				}
				fast := do(append(args, tail...)...)
				walk := do(append(append(args, "FILTER_BY_VALUE", "-inf", "+inf"), tail...)...)
				if !reflect.DeepEqual(fast, walk) {
					t.Fatalf("%s: %v %v: summaries %v\nwalk %v", when, args, tail, fast, walk)
				}
			}
		}
	}
	check("written")
	do("DEBUG", "RELOAD")
	check("reloaded")
	if n := fmt.Sprint(do("TS.RANGE", "src", "-", "+", "AGGREGATION", "count", tm+1)); n == "[]" {
		t.Fatal("src is empty")
	}
}
