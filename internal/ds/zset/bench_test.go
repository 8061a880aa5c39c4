package zset

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

const benchN = 1_000_000

func benchMember(i int) string { return "member:" + strconv.Itoa(i) }

// benchEntries are 1,000,000 members with random scores, built once.
var benchEntries = sync.OnceValue(func() []Entry {
	r := rand.New(rand.NewPCG(42, 42))
	es := make([]Entry, benchN)
	for i := range es {
		es[i] = Entry{benchMember(i), r.Float64() * 1e6}
	}
	return es
})

// benchSet is a large set of benchEntries, built by inserting one at a
// time (so leaves are as full as random inserts leave them). Benchmarks
// that modify it put it back.
var benchSet = sync.OnceValue(func() *Set {
	s := New(DefaultLimits())
	for _, e := range benchEntries() {
		s.Add(e.Member, e.Score)
	}
	return s
})

func BenchmarkAdd1M(b *testing.B) {
	s := benchSet()
	r := rand.New(rand.NewPCG(1, 1))
	members := make([]string, b.N)
	for i := range members {
		members[i] = benchMember(benchN + i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		s.Add(members[i], r.Float64()*1e6)
	}
	b.StopTimer()
	for _, m := range members {
		s.Delete(m)
	}
}

func BenchmarkDelete1M(b *testing.B) {
	s := benchSet()
	es := benchEntries()
	perm := rand.New(rand.NewPCG(2, 2)).Perm(benchN)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i > 0 && i%benchN == 0 {
			b.StopTimer()
			for _, e := range es {
				s.Add(e.Member, e.Score)
			}
			b.StartTimer()
		}
		s.Delete(es[perm[i%benchN]].Member)
	}
	b.StopTimer()
	for _, j := range perm[:min(b.N, benchN)] {
		s.Add(es[j].Member, es[j].Score)
	}
}

// BenchmarkUpdate1M changes the score of an existing member (ZINCRBY).
func BenchmarkUpdate1M(b *testing.B) {
	s := benchSet()
	es := benchEntries()
	r := rand.New(rand.NewPCG(3, 3))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.Add(es[r.IntN(benchN)].Member, r.Float64()*1e6)
	}
	b.StopTimer()
	for _, e := range es {
		s.Add(e.Member, e.Score)
	}
}

func BenchmarkScore1M(b *testing.B) {
	s := benchSet()
	es := benchEntries()
	r := rand.New(rand.NewPCG(4, 4))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.Score(es[r.IntN(benchN)].Member)
	}
}

// BenchmarkBaselineMapLookup1M is a yardstick for the numbers around it:
// a Go map[string]float64 lookup among 1,000,000 members.
func BenchmarkBaselineMapLookup1M(b *testing.B) {
	es := benchEntries()
	m := make(map[string]float64, len(es))
	for _, e := range es {
		m[e.Member] = e.Score
	}
	r := rand.New(rand.NewPCG(4, 4))
	b.ResetTimer()
	for range b.N {
		_ = m[es[r.IntN(benchN)].Member]
	}
}

func BenchmarkRank1M(b *testing.B) {
	s := benchSet()
	es := benchEntries()
	r := rand.New(rand.NewPCG(5, 5))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.Rank(es[r.IntN(benchN)].Member, false)
	}
}

// BenchmarkRangeByScore100of1M is ZRANGEBYSCORE min +inf LIMIT 0 100.
func BenchmarkRangeByScore100of1M(b *testing.B) {
	s := benchSet()
	r := rand.New(rand.NewPCG(6, 6))
	n := 0
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		sr := ScoreRange{Min: r.Float64() * 0.9e6, Max: 1e6}
		for range s.RangeByScore(sr, false, 0, 100) {
			n++
		}
	}
	b.StopTimer()
	if n != 100*b.N {
		b.Fatalf("got %d entries, want %d", n, 100*b.N)
	}
}

// BenchmarkRangeByScoreOffset is ZREVRANGEBYSCORE +inf -inf LIMIT 500000 100:
// the offset is skipped by rank, not walked.
func BenchmarkRangeByScoreOffset1M(b *testing.B) {
	s := benchSet()
	all := ScoreRange{Min: negInf, Max: inf}
	b.ReportAllocs()
	for range b.N {
		for range s.RangeByScore(all, true, 500_000, 100) {
		}
	}
}

func BenchmarkCountByScore1M(b *testing.B) {
	s := benchSet()
	r := rand.New(rand.NewPCG(7, 7))
	b.ReportAllocs()
	for range b.N {
		lo := r.Float64() * 1e6
		s.CountByScore(ScoreRange{Min: lo, Max: lo + 1000})
	}
}

func BenchmarkRangeByRank100of1M(b *testing.B) {
	s := benchSet()
	r := rand.New(rand.NewPCG(8, 8))
	b.ReportAllocs()
	for range b.N {
		start := r.IntN(benchN - 100)
		for range s.RangeByRank(start, start+99, false) {
		}
	}
}

// Compact encoding at its default maximum of 128 entries.
func BenchmarkCompact128(b *testing.B) {
	s := New(DefaultLimits())
	for i := range 127 {
		s.Add(benchMember(i), float64(i))
	}
	b.Run("AddDelete", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			s.Add("new", float64(i%128))
			s.Delete("new")
		}
	})
	b.Run("Score", func(b *testing.B) {
		for i := range b.N {
			s.Score(benchMember(i % 127))
		}
	})
	b.Run("Rank", func(b *testing.B) {
		for i := range b.N {
			s.Rank(benchMember(i%127), false)
		}
	})
}

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// measureBytesPerMember builds a set of n members named member:<i> with
// scores from score(i) and returns the live heap bytes per member it holds
// (member strings included) and its own MemoryUsage estimate per member.
func measureBytesPerMember(n int, score func(i int) float64) (heap, estimate float64) {
	before := heapInUse()
	s := New(DefaultLimits())
	for i := range n {
		s.Add(benchMember(i), score(i))
	}
	after := heapInUse()
	runtime.KeepAlive(s)
	return float64(after-before) / float64(n), float64(s.MemoryUsage()) / float64(n)
}

// BenchmarkMemoryPerMember reports heap bytes per member of a 1,000,000-
// member set (run with -benchtime=1x). redis-server 7.x needs about 100
// bytes per member for the same data.
func BenchmarkMemoryPerMember(b *testing.B) {
	cases := []struct {
		name  string
		score func(i int) float64
	}{
		{"random-scores", func(i int) float64 { return float64(rand.Uint32()) }},
		{"ascending-scores", func(i int) float64 { return float64(i) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var heap, est float64
			for range b.N {
				heap, est = measureBytesPerMember(benchN, c.score)
			}
			b.ReportMetric(heap, "heap-bytes/member")
			b.ReportMetric(est, "estimated-bytes/member")
		})
	}
}
