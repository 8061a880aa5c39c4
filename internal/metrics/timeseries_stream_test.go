package metrics_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// TestTSRandomStream sends a few thousand random TS.ADD / TS.DEL / TS.RANGE
// commands (out-of-order samples, duplicates under each policy, deletes,
// aggregated and reversed ranges) and checks every reply against a map
// model of the series.
func TestTSRandomStream(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := servertest.Ctx
	r := rand.New(rand.NewPCG(61, 62))
	keys := []string{"s0", "s1", "s2"}
	models := map[string]map[int64]int64{}
	for i, k := range keys {
		c.Do(ctx, "TS.CREATE", k, "CHUNK_SIZE", 48+8*i*10, "ENCODING", []string{"COMPRESSED", "UNCOMPRESSED"}[i%2])
		models[k] = map[int64]int64{}
	}
	sorted := func(m map[int64]int64, from, to int64) []int64 {
		var ts []int64
		for t := range m {
			if t >= from && t <= to {
				ts = append(ts, t)
			}
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		return ts
	}
	for op := 0; op < 3000; op++ {
		k := keys[r.IntN(len(keys))]
		m := models[k]
		switch x := r.IntN(10); {
		case x < 6:
			ts := int64(r.IntN(2000))
			v := int64(r.IntN(100) - 50)
			pol := []string{"LAST", "FIRST", "MIN", "MAX", "SUM", "BLOCK"}[r.IntN(6)]
			got, err := c.Do(ctx, "TS.ADD", k, ts, v, "ON_DUPLICATE", pol).Result()
			old, exists := m[ts]
			if exists && pol == "BLOCK" {
				if err == nil {
					t.Fatalf("op %d: BLOCK duplicate accepted", op)
				}
				continue
			}
			if err != nil || got != ts {
				t.Fatalf("op %d: TS.ADD %s %d %d %s: %v %v", op, k, ts, v, pol, got, err)
			}
			switch {
			case !exists || pol == "LAST":
				m[ts] = v
			case pol == "MIN":
				m[ts] = min(old, v)
			case pol == "MAX":
				m[ts] = max(old, v)
			case pol == "SUM":
				m[ts] = old + v
			}
		case x < 7:
			a := int64(r.IntN(2000))
			b := a + int64(r.IntN(100))
			want := int64(len(sorted(m, a, b)))
			if got := c.Do(ctx, "TS.DEL", k, a, b).Val(); got != want {
				t.Fatalf("op %d: TS.DEL %d..%d = %v, want %d", op, a, b, got, want)
			}
			for _, ts := range sorted(m, a, b) {
				delete(m, ts)
			}
		default:
			a := int64(r.IntN(2000))
			b := a + int64(r.IntN(1000))
			rev := r.IntN(2) == 0
			cmd := "TS.RANGE"
			if rev {
				cmd = "TS.REVRANGE"
			}
			args := []any{cmd, k, a, b}
			var want []any
			if r.IntN(2) == 0 {
				agg := []string{"sum", "min", "max", "count", "first", "last"}[r.IntN(6)]
				bucket := int64(1 + r.IntN(200))
				args = append(args, "AGGREGATION", agg, bucket)
				buckets := map[int64][]int64{}
				var starts []int64
				for _, ts := range sorted(m, a, b) {
					st := ts - ts%bucket
					if _, ok := buckets[st]; !ok {
						starts = append(starts, st)
					}
					buckets[st] = append(buckets[st], m[ts])
				}
				for _, st := range starts {
					vs := buckets[st]
					var v int64
					switch agg {
					case "sum":
						for _, x := range vs {
							v += x
						}
					case "min":
						v = vs[0]
						for _, x := range vs {
							v = min(v, x)
						}
					case "max":
						v = vs[0]
						for _, x := range vs {
							v = max(v, x)
						}
					case "count":
						v = int64(len(vs))
					case "first":
						v = vs[0]
					case "last":
						v = vs[len(vs)-1]
					}
					want = append(want, []any{st, strconv.FormatInt(v, 10)})
				}
			} else {
				for _, ts := range sorted(m, a, b) {
					want = append(want, []any{ts, strconv.FormatInt(m[ts], 10)})
				}
			}
			if rev {
				for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
					want[i], want[j] = want[j], want[i]
				}
			}
			if r.IntN(3) == 0 {
				n := 1 + r.IntN(10)
				args = append(args, "COUNT", n)
				if len(want) > n {
					want = want[:n]
				}
			}
			if want == nil {
				want = []any{}
			}
			got, err := c.Do(ctx, args...).Result()
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("op %d: %v\ngot  %v %v\nwant %v", op, args, got, err, want)
			}
		}
	}
	for _, k := range keys {
		info := c.Do(ctx, "TS.INFO", k).Val().([]any)
		if fmt.Sprint(info[1]) != strconv.Itoa(len(models[k])) {
			t.Errorf("%s: totalSamples %v, want %d", k, info[1], len(models[k]))
		}
	}
}
