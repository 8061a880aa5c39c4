package ts

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// applyWrites applies compaction writes to a map standing for the
// destination series.
func applyWrites(dest model, ws []Write) {
	for _, w := range ws {
		if w.Delete {
			for t := range dest {
				if t >= w.T && t <= w.To {
					delete(dest, t)
				}
			}
			continue
		}
		dest[w.T] = w.V
	}
}

func sameModel(t *testing.T, ctx string, got, want model) {
	t.Helper()
	g, w := got.sorted(math.MinInt64, math.MaxInt64), want.sorted(math.MinInt64, math.MaxInt64)
	sameApprox(t, ctx, g, w)
}

func TestCompactionAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for round := 0; round < 300; round++ {
		s := New()
		s.ChunkSize = 64 + 8*r.IntN(30)
		m := model{}
		ts := int64(r.IntN(100))
		// samples from before the rule existed
		for i := 0; i < r.IntN(50); i++ {
			ts += int64(1 + r.IntN(30))
			s.Add(ts, float64(r.IntN(100)), PolicyLast)
			m[ts] = s.lastV
		}
		agg := Agg(r.IntN(int(AggTwa) + 1))
		bucket := int64(1 + r.IntN(200))
		align := int64(0)
		if r.IntN(2) == 0 {
			align = int64(r.IntN(1000))
		}
		s.AddRule("dst", agg, bucket, align)
		// the rule starts with the first bucket after the last old sample
		ts = BucketStartOf(ts, bucket, align) + bucket + int64(r.IntN(int(bucket)))
		origin := BucketStartOf(ts, bucket, align)
		dest := model{}
		for i := 0; i < 1+r.IntN(500); i++ {
			v := float64(r.IntN(1000))/4 - 50
			_, ws, err := s.Add(ts, v, PolicyLast)
			if err != nil {
				t.Fatal(err)
			}
			m[ts] = v
			applyWrites(dest, ws)
			ts += int64(1 + r.IntN(40))
			if r.IntN(30) == 0 {
				ts += int64(r.IntN(1000))
			}
		}
		check := func(ctx string) {
			lastT, _ := s.Last()
			open := BucketStartOf(lastT.T, bucket, align)
			want := model{}
			if open > origin {
				o := &RangeOpts{From: origin, To: open - 1, Count: -1, Agg: &Aggregation{Type: agg, Bucket: bucket, Align: align}}
				for _, sm := range naiveRange(m, o) {
					want[sm.T] = sm.V
				}
			}
			sameModel(t, ctx+" "+agg.String(), dest, want)
			if agg == AggTwa {
				return
			}
			// the open bucket (LATEST)
			var in []Sample
			for _, sm := range m.sorted(open, math.MaxInt64) {
				in = append(in, sm)
			}
			got, ok := s.Rule("dst").Latest()
			if !ok || got.T != max(open, 0) || !closeEnough(got.V, naiveAgg(agg, in, open, open+bucket, nil, nil)) {
				t.Fatalf("%s: latest %v %v, want bucket %d over %v", ctx, got, ok, open, in)
			}
		}
		check("appends")
		if agg == AggTwa {
			continue // an edit moves twa's neighbours in other buckets: not recomputed
		}
		// edits in the past: upserts, inserts, deletes
		for i := 0; i < 30; i++ {
			keys := make([]int64, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
			at := keys[r.IntN(len(keys))]
			if at < origin {
				continue
			}
			if r.IntN(3) == 0 {
				to := at + int64(r.IntN(int(bucket)*2))
				if to >= keys[len(keys)-1] {
					continue // keep the latest sample
				}
				_, ws := s.DeleteRange(at, to)
				applyWrites(dest, ws)
				for k := range m {
					if k >= at && k <= to {
						delete(m, k)
					}
				}
				continue
			}
			if r.IntN(2) == 0 {
				at++
				if _, ok := m[at]; ok || at >= keys[len(keys)-1] {
					continue
				}
			}
			v := float64(r.IntN(100))
			_, ws, err := s.Add(at, v, PolicyLast)
			if err != nil {
				t.Fatal(err)
			}
			applyWrites(dest, ws)
			m[at] = v
		}
		check("edits")
	}
}

func TestRuleWritesOnClose(t *testing.T) {
	s := New()
	s.Add(1, 100, PolicyLast) // before the rule: never compacted
	s.AddRule("d", AggSum, 10, 0)
	var got []Write
	for _, sm := range []Sample{{12, 1}, {15, 2}, {19, 3}, {20, 4}, {45, 5}} {
		_, ws, _ := s.Add(sm.T, sm.V, PolicyLast)
		got = append(got, ws...)
	}
	want := []Write{{Dest: "d", T: 10, V: 6}, {Dest: "d", T: 20, V: 4}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("writes %v", got)
	}
	if !s.DeleteRule("d") || s.DeleteRule("d") || len(s.Rules) != 0 {
		t.Fatal("DeleteRule")
	}
}
