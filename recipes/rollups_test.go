package recipes

import (
	"math/rand"
	"testing"
	"time"
)

// TestRollups writes requests per service and region into three shards
// over two days and checks the minute and hour rollups, grouped by
// service, by region and in total, against a model.
func TestRollups(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		rollups := []Rollup{{time.Minute, 24 * time.Hour}, {time.Hour, 30 * 24 * time.Hour}}
		shards := e.shards(t, 3)
		r := NewRollups(shards, "requests", rollups, e.opts)
		for i := range shards {
			m, err := r.Mode(ctx, i)
			e.checkMode(t, m, err)
		}
		if err := r.Add(ctx, map[string]string{"a=b": "c"}, 1); err == nil {
			t.Fatal("a label with = accepted")
		}
		services, regions := []string{"api", "web", "worker"}, []string{"eu", "us"}
		type w struct {
			ms       int64
			svc, reg string
			v        int64
		}
		var writes []w
		used := map[int]bool{}
		rng := rand.New(rand.NewSource(8))
		for i := 0; i < 500; i++ {
			switch r := rng.Intn(10); {
			case r < 5:
				e.advance(time.Duration(rng.Intn(20)) * time.Second)
			case r < 9:
				e.advance(time.Duration(rng.Intn(10)) * time.Minute)
			default:
				e.advance(time.Duration(rng.Intn(5)) * time.Hour)
			}
			x := w{e.opts.Now().UnixMilli(), services[rng.Intn(3)], regions[rng.Intn(2)], int64(1 + rng.Intn(5))}
			must(t, r.Add(ctx, map[string]string{"service": x.svc, "region": x.reg}, x.v))
			id, _ := r.seriesID(map[string]string{"service": x.svc, "region": x.reg})
			used[r.ring.get(id)] = true
			writes = append(writes, x)
			if i%50 != 49 {
				continue
			}
			now := x.ms
			for _, ru := range rollups {
				st := ru.Step.Milliseconds()
				// Within retention: buckets no older than Keep before the
				// current one.
				from := now - now%st - ru.Keep.Milliseconds() + st
				for _, by := range []string{"service", "region", ""} {
					filter := map[string]string{}
					if by == "region" {
						filter["service"] = "api"
					}
					want := map[string]map[int64]float64{}
					for _, x := range writes {
						b := x.ms - x.ms%st
						if b < from || filter["service"] != "" && x.svc != filter["service"] {
							continue
						}
						g := ""
						switch by {
						case "service":
							g = "service=" + x.svc
						case "region":
							g = "region=" + x.reg
						}
						if want[g] == nil {
							want[g] = map[int64]float64{}
						}
						want[g][b] += float64(x.v)
					}
					got, err := r.Query(ctx, ru.Step, time.UnixMilli(from), time.UnixMilli(now), filter, by)
					must(t, err)
					for g, pts := range got {
						if len(pts) != len(want[g]) {
							t.Fatalf("write %d, %v by %q, group %s: %d buckets, want %d", i, ru.Step, by, g, len(pts), len(want[g]))
						}
						for _, p := range pts {
							if want[g][p.T.UnixMilli()] != p.V {
								t.Fatalf("write %d, %v by %q, group %s, bucket %v: %v, want %v", i, ru.Step, by, g, p.T.UTC(), p.V, want[g][p.T.UnixMilli()])
							}
						}
					}
					for g, b := range want {
						if len(b) > 0 && len(got[g]) == 0 {
							t.Fatalf("write %d, %v by %q: group %s missing", i, ru.Step, by, g)
						}
					}
				}
			}
		}
		if len(used) < 2 {
			t.Fatalf("the series used %d shards of 3", len(used))
		}
	})
}
