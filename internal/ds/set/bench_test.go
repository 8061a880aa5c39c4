package set

import (
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
