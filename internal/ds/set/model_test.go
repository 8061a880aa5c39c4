package set

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

var testLimits = []Limits{
	DefaultLimits(),
	{MaxIntsetEntries: 4, MaxListpackEntries: 3, MaxListpackValue: 5},
	{MaxIntsetEntries: 0, MaxListpackEntries: 0, MaxListpackValue: 0},
	{MaxIntsetEntries: 16, MaxListpackEntries: 8, MaxListpackValue: 10},
	{MaxIntsetEntries: 64, MaxListpackEntries: 200, MaxListpackValue: 100},
}

// memberGen draws members from a mix of pools chosen per run, so that some
// runs stay integer-only (intset and bitmap) and others mix in strings.
type memberGen struct {
	rng     *rand.Rand
	weights [8]int
}

func newMemberGen(rng *rand.Rand) *memberGen {
	g := &memberGen{rng: rng}
	for i := range g.weights {
		if rng.IntN(2) == 0 {
			g.weights[i] = rng.IntN(10) + 1
		}
	}
	g.weights[rng.IntN(3)] += 5 // always some integers
	if rng.IntN(3) == 0 {       // a third of the runs are integer-only
		for i := 3; i < len(g.weights); i++ {
			g.weights[i] = 0
		}
	}
	return g
}

func (g *memberGen) next() string {
	total := 0
	for _, w := range g.weights {
		total += w
	}
	r := g.rng.IntN(total)
	pool := 0
	for ; r >= g.weights[pool]; pool++ {
		r -= g.weights[pool]
	}
	rng := g.rng
	switch pool {
	case 0: // small integers, many repeats
		return strconv.Itoa(rng.IntN(101) - 50)
	case 1: // ids spread over several roaring containers
		return strconv.Itoa(rng.IntN(300000))
	case 2: // the extremes and scattered 64-bit values
		switch rng.IntN(3) {
		case 0:
			return strconv.FormatInt(math.MinInt64+int64(rng.IntN(20)), 10)
		case 1:
			return strconv.FormatInt(math.MaxInt64-int64(rng.IntN(20)), 10)
		}
		return strconv.FormatInt(int64(rng.Uint64()>>rng.IntN(64))*int64(1-2*rng.IntN(2)), 10)
	case 3: // integer look-alikes that are strings
		return []string{"-0", "007", "+3", " 1", "1 ", "00", "-", "1e3", "0x1"}[rng.IntN(9)]
	case 4: // short strings
		return "s" + strconv.Itoa(rng.IntN(200))
	case 5: // binary
		b := make([]byte, rng.IntN(6))
		for i := range b {
			b[i] = byte(rng.IntN(4)) * 85
		}
		return string(b)
	case 6: // around set-max-listpack-value
		return strings.Repeat("L", 58+rng.IntN(10)) + strconv.Itoa(rng.IntN(5))
	}
	return "m" + strconv.Itoa(rng.IntN(5000))
}

// expectKind is Redis's conversion rule for adding member to a set of kind k
// holding m (before the add).
func expectKind(lim Limits, k Kind, m model, member string) Kind {
	if _, dup := m[member]; dup {
		return k
	}
	_, isInt := ParseInt([]byte(member))
	switch k {
	case KindIntset:
		if isInt {
			if len(m)+1 > lim.maxIntset() {
				return KindBitmap
			}
			return KindIntset
		}
		longest := 0
		for x := range m {
			longest = max(longest, len(x))
		}
		if len(m) < lim.MaxListpackEntries && len(member) <= lim.MaxListpackValue && longest <= lim.MaxListpackValue {
			return KindListpack
		}
		return KindHashtable
	case KindListpack:
		if len(m) < lim.MaxListpackEntries && len(member) <= lim.MaxListpackValue {
			return KindListpack
		}
		return KindHashtable
	case KindBitmap:
		if isInt {
			return KindBitmap
		}
		return KindHashtable
	}
	return KindHashtable
}

// pick returns some member. Go starts every map iteration at a random
// place, which is random enough for choosing what to remove in a test and
// keeps the choice O(1); rng only skips a few entries for variety.
func (m model) pick(rng *rand.Rand) string {
	k := rng.IntN(min(len(m), 4))
	for x := range m {
		if k == 0 {
			return x
		}
		k--
	}
	panic("unreachable")
}

func TestRandomOpsAgainstModel(t *testing.T) {
	const runs, ops = 12, 3000
	for li, lim := range testLimits {
		for run := range runs {
			t.Run(fmt.Sprintf("limits%d/run%d", li, run), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(li), uint64(run)))
				randomOps(t, rng, lim, ops)
			})
		}
	}
}

func randomOps(t *testing.T, rng *rand.Rand, lim Limits, ops int) {
	gen := newMemberGen(rng)
	s, m := New(), model{}
	kind := KindIntset
	// Runs lean towards growth or churn so that sets both get large and
	// get emptied.
	addBias := 40 + rng.IntN(40)
	for op := range ops {
		var desc string
		switch r := rng.IntN(100); {
		case r < addBias:
			x := gen.next()
			if rng.IntN(8) == 0 {
				if v, ok := ParseInt([]byte(x)); ok {
					desc = "AddInt " + x
					kind = expectKind(lim, kind, m, x)
					_, had := m[x]
					if s.AddInt(lim, v) == had {
						t.Fatalf("op %d: AddInt(%s) result wrong", op, x)
					}
					m[x] = struct{}{}
					break
				}
			}
			desc = fmt.Sprintf("Add %q", x)
			kind = expectKind(lim, kind, m, x)
			_, had := m[x]
			if s.Add(lim, []byte(x)) == had {
				t.Fatalf("op %d: Add(%q) returned %v with member present=%v", op, x, !had, had)
			}
			m[x] = struct{}{}
		case r < addBias+15:
			x := gen.next()
			if len(m) > 0 && rng.IntN(2) == 0 {
				x = m.pick(rng)
			}
			desc = fmt.Sprintf("Remove %q", x)
			_, had := m[x]
			if s.Remove([]byte(x)) != had {
				t.Fatalf("op %d: Remove(%q) != %v", op, x, had)
			}
			delete(m, x)
		case r < addBias+25:
			x := gen.next()
			if len(m) > 0 && rng.IntN(2) == 0 {
				x = m.pick(rng)
			}
			_, had := m[x]
			if s.Contains([]byte(x)) != had {
				t.Fatalf("op %d: Contains(%q) != %v (%v)", op, x, had, s.Kind())
			}
			continue
		case r < addBias+30:
			count := 1 + rng.IntN(4)
			if rng.IntN(10) == 0 {
				count = rng.IntN(len(m) + 2)
			}
			desc = fmt.Sprintf("Pop %d", count)
			seen := map[string]bool{}
			n := s.Pop(rng, count, func(b []byte) {
				x := string(b)
				if _, ok := m[x]; !ok || seen[x] {
					t.Fatalf("op %d: popped %q: in model %v, repeated %v", op, x, ok, seen[x])
				}
				seen[x] = true
			})
			if n != min(max(count, 0), len(m)) || len(seen) != n {
				t.Fatalf("op %d: Pop(%d) = %d with %d members, %d yielded", op, count, n, len(m), len(seen))
			}
			for x := range seen {
				delete(m, x)
			}
		case r < addBias+38:
			randomReads(t, rng, s, m, op)
			continue
		default:
			// Scan to completion without modification: exactly the model.
			got := model{}
			cur := uint64(0)
			for calls := 0; ; calls++ {
				cur = s.Scan(cur, 1+rng.IntN(20), func(b []byte) { got[string(b)] = struct{}{} })
				if cur == 0 {
					break
				}
				if calls > len(m)+10 {
					t.Fatalf("op %d: scan does not terminate", op)
				}
			}
			if len(got) != len(m) {
				t.Fatalf("op %d: scan found %d of %d", op, len(got), len(m))
			}
			continue
		}
		if len(m) == 0 {
			kind = KindIntset
		}
		if s.Kind() != kind {
			t.Fatalf("op %d (%s): kind %v, want %v (len %d)", op, desc, s.Kind(), kind, len(m))
		}
		if op%25 == 0 || len(m) < 4 {
			equalModel(t, s, m)
		}
	}
	equalModel(t, s, m)
	c := s.Clone()
	equalModel(t, c, m)
}

func randomReads(t *testing.T, rng *rand.Rand, s *Set, m model, op int) {
	if b, ok := s.RandomMember(rng); ok != (len(m) > 0) {
		t.Fatalf("op %d: RandomMember ok=%v with %d members", op, ok, len(m))
	} else if _, in := m[string(b)]; ok && !in {
		t.Fatalf("op %d: RandomMember %q not a member", op, b)
	}
	count := rng.IntN(8)
	if rng.IntN(5) == 0 {
		count = rng.IntN(2*len(m) + 2)
	}
	n := 0
	s.RandomMembers(rng, count, func(b []byte) {
		n++
		if _, in := m[string(b)]; !in {
			t.Fatalf("op %d: RandomMembers gave %q", op, b)
		}
	})
	if len(m) > 0 && n != count || len(m) == 0 && n != 0 {
		t.Fatalf("op %d: RandomMembers(%d) gave %d", op, count, n)
	}
	seen := map[string]bool{}
	s.RandomDistinct(rng, count, func(b []byte) {
		if _, in := m[string(b)]; !in || seen[string(b)] {
			t.Fatalf("op %d: RandomDistinct gave %q (member %v, repeat %v)", op, b, in, seen[string(b)])
		}
		seen[string(b)] = true
	})
	if len(seen) != min(count, len(m)) {
		t.Fatalf("op %d: RandomDistinct(%d) gave %d of %d", op, count, len(seen), len(m))
	}
}
