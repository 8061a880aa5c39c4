package set

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
)

// spreadInts returns n integers spread over several roaring containers and
// both halves of the 64-bit space.
func spreadInts(n int) []string {
	out := make([]string, 0, n)
	for i := range n {
		var v int64
		switch i % 4 {
		case 0:
			v = int64(i) * 70001
		case 1:
			v = -int64(i) * 3
		case 2:
			v = math.MaxInt64 - int64(i)
		default:
			v = int64(i)
		}
		out = append(out, strconv.FormatInt(v, 10))
	}
	return out
}

func uniformityInputs() map[string]*Set {
	return map[string]*Set{
		"intset":    fromStrings(DefaultLimits(), spreadInts(50)...),
		"listpack":  fromStrings(DefaultLimits(), prefixed("m", 50)...),
		"hashtable": fromStrings(Limits{512, 10, 64}, prefixed("m", 50)...),
		"bitmap":    fromStrings(Limits{0, 0, 0}, spreadInts(50)...),
	}
}

// Each draw is checked against its expectation with a wide margin (about 7
// standard deviations); the seeds are fixed, so the test is deterministic.
func checkCounts(t *testing.T, name string, counts map[string]int, members int, expect float64) {
	t.Helper()
	if len(counts) != members {
		t.Fatalf("%s: %d distinct members drawn, want %d", name, len(counts), members)
	}
	margin := 7 * math.Sqrt(expect)
	for m, c := range counts {
		if math.Abs(float64(c)-expect) > margin {
			t.Fatalf("%s: member %q drawn %d times, expected %.0f", name, m, c, expect)
		}
	}
}

func TestRandomMemberIsUniform(t *testing.T) {
	for name, s := range uniformityInputs() {
		rng := rand.New(rand.NewPCG(21, 22))
		counts := map[string]int{}
		const draws = 100000
		for range draws / 2 {
			m, _ := s.RandomMember(rng)
			counts[string(m)]++
		}
		s.RandomMembers(rng, draws/2, func(m []byte) { counts[string(m)]++ })
		checkCounts(t, name, counts, 50, draws/50)
	}
}

func TestRandomDistinctAndPopAreUniform(t *testing.T) {
	for name, proto := range uniformityInputs() {
		rng := rand.New(rand.NewPCG(23, 24))
		const rounds = 10000
		for _, k := range []int{1, 7, 30} {
			counts := map[string]int{}
			for range rounds {
				proto.RandomDistinct(rng, k, func(m []byte) { counts[string(m)]++ })
			}
			checkCounts(t, name+" distinct", counts, 50, float64(rounds*k)/50)
		}
		for _, k := range []int{1, 7, 30} {
			counts := map[string]int{}
			for range rounds / 4 {
				s := proto.Clone()
				s.Pop(rng, k, func(m []byte) { counts[string(m)]++ })
				if s.Len() != 50-k || s.Kind() != proto.Kind() {
					t.Fatalf("%s: pop left %d (%v)", name, s.Len(), s.Kind())
				}
				checkInvariants(t, s)
			}
			checkCounts(t, name+" pop", counts, 50, float64(rounds/4*k)/50)
		}
	}
}

func TestPopEverything(t *testing.T) {
	for name, s := range uniformityInputs() {
		rng := rand.New(rand.NewPCG(1, 1))
		want := members(s)
		var got []string
		if n := s.Pop(rng, 1000, func(m []byte) { got = append(got, string(m)) }); n != 50 {
			t.Fatalf("%s: popped %d", name, n)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) || s.Len() != 0 || s.Kind() != KindIntset {
			t.Fatalf("%s: pop all: %d members left, kind %v", name, s.Len(), s.Kind())
		}
		if s.Pop(rng, 1, func([]byte) { t.Fatal("popped from empty") }) != 0 {
			t.Fatal("pop from empty")
		}
		if _, ok := s.RandomMember(rng); ok {
			t.Fatal("random member of empty set")
		}
	}
}

// TestSamplerSelectsByRank compares the bitmap's rank selection with the
// sorted members, for dense and sparse layouts, as the set changes under it.
func TestSamplerSelectsByRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	lim := Limits{0, 0, 0}
	layouts := map[string]func() int64{
		"dense":  func() int64 { return int64(rng.IntN(200000)) },
		"sparse": func() int64 { return int64(rng.Uint32()) },
		"mixed": func() int64 {
			switch rng.IntN(3) {
			case 0:
				return int64(rng.Uint64())
			case 1:
				return -int64(rng.IntN(1000))
			}
			return int64(rng.IntN(1 << 17))
		},
	}
	for name, gen := range layouts {
		s := New()
		for range 20000 {
			s.AddInt(lim, gen())
		}
		for round := range 30 {
			sorted := s.bm.ints()
			for range 200 {
				r := rng.IntN(len(sorted))
				if got := fromU(s.bm.selectRank(r)); got != sorted[r] {
					t.Fatalf("%s round %d: rank %d = %d, want %d", name, round, r, got, sorted[r])
				}
			}
			// Ranks in one walk agree too.
			ranks := make([]int, 5000)
			for i := range ranks {
				ranks[i] = rng.IntN(len(sorted))
			}
			slices.Sort(ranks)
			for i, u := range s.bm.valuesAtRanks(ranks) {
				if fromU(u) != sorted[ranks[i]] {
					t.Fatalf("%s: walk rank %d", name, ranks[i])
				}
			}
			// Change the set: removals keep the sampler, adds in new
			// chunks drop it.
			for range rng.IntN(500) {
				s.Remove([]byte(strconv.FormatInt(sorted[rng.IntN(len(sorted))], 10)))
			}
			for range rng.IntN(50) {
				s.AddInt(lim, gen())
			}
			checkInvariants(t, s)
		}
	}
}

func TestPickDistinct(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for range 2000 {
		n := 2 + rng.IntN(3000)
		k := 1 + rng.IntN(n-1)
		got := pickDistinct(rng, n, k)
		if len(got) != k || !slices.IsSorted(got) || got[0] < 0 || got[k-1] >= n {
			t.Fatalf("pickDistinct(%d, %d) = %v", n, k, got)
		}
		for i := 1; i < k; i++ {
			if got[i] == got[i-1] {
				t.Fatalf("repeat in pickDistinct(%d, %d)", n, k)
			}
		}
	}
}

// TestConcurrentReads runs the read-only methods from several goroutines on
// shared sets; under -race this checks that lazily built state (the bitmap
// sampler) is published safely.
func TestConcurrentReads(t *testing.T) {
	lim := DefaultLimits()
	sets := []*Set{
		fromStrings(Limits{0, 0, 0}, spreadInts(5000)...),
		fromStrings(lim, prefixed("m", 500)...),
		fromStrings(lim, spreadInts(100)...),
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for range 200 {
				for _, s := range sets {
					if m, ok := s.RandomMember(rng); !ok || !s.Contains(m) {
						t.Error("random member not contained")
						return
					}
					s.RandomMembers(rng, 3, func([]byte) {})
					s.RandomDistinct(rng, 3, func([]byte) {})
					s.Scan(0, 5, func([]byte) {})
				}
				IntersectCard(0, sets[0], sets[2])
			}
		})
	}
	wg.Wait()
}
