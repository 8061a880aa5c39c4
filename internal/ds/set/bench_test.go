package set

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// The project's target workload: two sets of 5,000,000 and 7,500,000 integer
// ids sharing 2,000,000, built with Add in random order, then SINTERCARD
// (IntersectCard) and SINTERSTORE (Intersect).
//
// Two id layouts:
//   - dense:  the 10.5M distinct ids are a random permutation of 1..10.5M,
//     like auto-increment user ids.
//   - sparse: the ids are spread uniformly over [0, 2^32), which leaves
//     about 100 ids per roaring container: compression is at its weakest
//     short of scattering ids over all 64 bits.
//
// Run with -benchtime 3x or so: one op of the build benchmark is 12.5M Adds.
// For the side-by-side with redis-server, load the same ids (same generator
// and seed) with SADD batches through redis-cli --pipe, read used_memory from
// INFO memory, and time SINTERCARD 2 a b and SINTERSTORE d a b with
// SLOWLOG (slowlog-log-slower-than 0), alternating with runs of these
// benchmarks since the two compete for the same machine.
const (
	benchSizeA  = 5_000_000
	benchSizeB  = 7_500_000
	benchShared = 2_000_000
)

// benchIDs returns the insertion orders of both sets.
func benchIDs(layout string) (a, b []int64) {
	const distinct = benchSizeA + benchSizeB - benchShared
	rng := rand.New(rand.NewPCG(2024, 1))
	ids := make([]int64, distinct)
	for i := range ids {
		switch layout {
		case "dense":
			ids[i] = int64(i + 1)
		case "sparse":
			ids[i] = int64(spread32(uint32(i)))
		}
	}
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	// ids[:shared] in both, then A's own, then B's own.
	a = append([]int64(nil), ids[:benchSizeA]...)
	b = append(append([]int64(nil), ids[:benchShared]...), ids[benchSizeA:]...)
	rng.Shuffle(len(a), func(i, j int) { a[i], a[j] = a[j], a[i] })
	rng.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
	return a, b
}

// spread32 is a bijection on uint32 that scatters consecutive inputs.
func spread32(x uint32) uint32 {
	x ^= x >> 16
	x *= 0x7feb352d
	x ^= x >> 15
	x *= 0x846ca68b
	x ^= x >> 16
	return x
}

// buildFromIDs adds the ids the way SADD would: as decimal bytes.
func buildFromIDs(ids []int64) *Set {
	lim := DefaultLimits()
	s := New()
	var buf [maxIntLen]byte
	for _, id := range ids {
		s.Add(lim, strconv.AppendInt(buf[:0], id, 10))
	}
	return s
}

var benchSets = map[string]*struct {
	once sync.Once
	a, b *Set
}{"dense": {}, "sparse": {}}

func cachedSets(layout string) (*Set, *Set) {
	c := benchSets[layout]
	c.once.Do(func() {
		ia, ib := benchIDs(layout)
		c.a, c.b = buildFromIDs(ia), buildFromIDs(ib)
	})
	return c.a, c.b
}

func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkBuildIntersectionSets builds both sets (12.5M Adds) per op and
// reports the heap they hold, measured with runtime.ReadMemStats after GC.
func BenchmarkBuildIntersectionSets(b *testing.B) {
	for _, layout := range []string{"dense", "sparse"} {
		b.Run(layout, func(b *testing.B) {
			ia, ib := benchIDs(layout)
			var held uint64
			var estimate int
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				before := heapInUse()
				b.StartTimer()
				sa, sb := buildFromIDs(ia), buildFromIDs(ib)
				b.StopTimer()
				held = heapInUse() - before
				estimate = sa.MemoryUsage() + sb.MemoryUsage()
				if sa.Len() != benchSizeA || sb.Len() != benchSizeB || sa.Kind() != KindBitmap {
					b.Fatalf("built %d (%v) and %d", sa.Len(), sa.Kind(), sb.Len())
				}
				runtime.KeepAlive(sa)
				runtime.KeepAlive(sb)
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(benchSizeA+benchSizeB), "ns/add")
			b.ReportMetric(float64(held), "heap-bytes")
			b.ReportMetric(float64(estimate), "MemoryUsage-bytes")
		})
	}
}

func BenchmarkIntersectCard(b *testing.B) {
	for _, layout := range []string{"dense", "sparse"} {
		b.Run(layout, func(b *testing.B) {
			sa, sb := cachedSets(layout)
			b.ResetTimer()
			for range b.N {
				if n := IntersectCard(0, sa, sb); n != benchShared {
					b.Fatalf("card %d", n)
				}
			}
		})
	}
}

func BenchmarkIntersect(b *testing.B) {
	for _, layout := range []string{"dense", "sparse"} {
		b.Run(layout, func(b *testing.B) {
			sa, sb := cachedSets(layout)
			lim := DefaultLimits()
			b.ResetTimer()
			for range b.N {
				if r := Intersect(lim, sa, sb); r.Len() != benchShared {
					b.Fatalf("len %d", r.Len())
				}
			}
		})
	}
}

// Random access on the large sets: the sampler keeps SRANDMEMBER and SPOP
// logarithmic where roaring's Select walks every container.
func BenchmarkRandomMemberBitmap(b *testing.B) {
	for _, layout := range []string{"dense", "sparse"} {
		b.Run(layout, func(b *testing.B) {
			sa, _ := cachedSets(layout)
			rng := rand.New(rand.NewPCG(1, 2))
			sa.RandomMember(rng) // build the sampler outside the timing
			b.ResetTimer()
			for range b.N {
				sa.RandomMember(rng)
			}
		})
	}
}

func BenchmarkPopBitmap(b *testing.B) {
	for _, layout := range []string{"dense", "sparse"} {
		b.Run(layout, func(b *testing.B) {
			sa, _ := cachedSets(layout)
			s := sa.Clone()
			rng := rand.New(rand.NewPCG(1, 2))
			b.ResetTimer()
			for range b.N {
				if s.Len() == 0 {
					b.StopTimer()
					s = sa.Clone()
					b.StartTimer()
				}
				s.Pop(rng, 1, func([]byte) {})
			}
		})
	}
}

func BenchmarkTable(b *testing.B) {
	const n = 1 << 20
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte("user:" + strconv.Itoa(i*7919))
	}
	lim := DefaultLimits()
	b.Run("Add", func(b *testing.B) {
		s := New()
		for i := range b.N {
			if i%n == 0 {
				s = New()
			}
			s.Add(lim, keys[i%n])
		}
	})
	s := New()
	for _, k := range keys {
		s.Add(lim, k)
	}
	b.Run("Contains", func(b *testing.B) {
		for i := range b.N {
			s.Contains(keys[i%n])
		}
	})
	b.Run("IntersectCard", func(b *testing.B) {
		o := New()
		for _, k := range keys[:n/2] {
			o.Add(lim, k)
		}
		b.ResetTimer()
		for range b.N {
			IntersectCard(0, s, o)
		}
	})
}

// BenchmarkLargeStringSet times hits and misses on a 100,000-member
// hashtable set of members like "element:000000012345", visited in random
// order so that every lookup pays the table's cache misses (the set's
// slots, entries and arena far exceed L2). This is the shape of
// redis-benchmark's SADD row.
func BenchmarkLargeStringSet(b *testing.B) {
	const n = 100_000
	lim := DefaultLimits()
	member := func(i int) []byte { return fmt.Appendf(nil, "element:%012d", i) }
	rng := rand.New(rand.NewPCG(7, 8))
	have := make([][]byte, n)
	fresh := make([][]byte, n)
	for i := range n {
		have[i] = member(i)
		fresh[i] = member(n + i)
	}
	rng.Shuffle(n, func(i, j int) { have[i], have[j] = have[j], have[i] })
	rng.Shuffle(n, func(i, j int) { fresh[i], fresh[j] = fresh[j], fresh[i] })
	base := New()
	for _, m := range have {
		base.Add(lim, m)
	}
	rng.Shuffle(n, func(i, j int) { have[i], have[j] = have[j], have[i] })
	if base.Kind() != KindHashtable {
		b.Fatalf("kind %v", base.Kind())
	}
	b.Run("ContainsHit", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			if !base.Contains(have[i%n]) {
				b.Fatal("missing")
			}
		}
	})
	b.Run("AddExisting", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			if base.Add(lim, have[i%n]) {
				b.Fatal("added")
			}
		}
	})
	b.Run("AddNew", func(b *testing.B) {
		b.ReportAllocs()
		s := base.Clone()
		for i := range b.N {
			if i%n == 0 && i > 0 {
				b.StopTimer()
				s = base.Clone()
				b.StartTimer()
			}
			if !s.Add(lim, fresh[i%n]) {
				b.Fatal("not added")
			}
		}
	})
	b.Run("RemoveAdd", func(b *testing.B) {
		b.ReportAllocs()
		s := base.Clone()
		for i := range b.N {
			m := have[i%n]
			if !s.Remove(m) || !s.Add(lim, m) {
				b.Fatal("remove/add")
			}
		}
	})
	b.ReportMetric(float64(base.MemoryUsage())/n, "bytes/member")
}
