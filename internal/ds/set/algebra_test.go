package set

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// randomInput builds a set of a random size and encoding from a pool shared
// between the inputs of one trial, so that results are neither always empty
// nor always everything.
func randomInput(rng *rand.Rand, intOnly bool, universe int) (*Set, model) {
	lim := testLimits[rng.IntN(len(testLimits))]
	s, m := New(), model{}
	n := rng.IntN(600)
	if rng.IntN(5) == 0 {
		n = rng.IntN(4000)
	}
	if rng.IntN(8) == 0 {
		n = 0
	}
	for range n {
		var x string
		switch r := rng.IntN(20); {
		case r == 0:
			x = strconv.FormatInt(math.MinInt64+int64(rng.IntN(5)), 10)
		case r == 1:
			x = strconv.FormatInt(math.MaxInt64-int64(rng.IntN(5)), 10)
		case r == 2:
			x = strconv.Itoa(-rng.IntN(universe))
		case r < 6 && !intOnly:
			x = "s" + strconv.Itoa(rng.IntN(universe))
		default:
			x = strconv.Itoa(rng.IntN(universe))
		}
		s.Add(lim, []byte(x))
		m[x] = struct{}{}
	}
	// Sometimes shrink it: bitmaps and tables that are now small, intsets
	// larger than bitmaps.
	if len(m) > 0 && rng.IntN(3) == 0 {
		for range rng.IntN(len(m)) {
			x := m.pick(rng)
			s.Remove([]byte(x))
			delete(m, x)
		}
	}
	return s, m
}

func TestAlgebraAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	kinds := map[string]int{}
	for trial := range 800 {
		intOnly := rng.IntN(2) == 0
		universe := []int{50, 1000, 200000}[rng.IntN(3)]
		k := 1 + rng.IntN(4)
		sets := make([]*Set, k)
		models := make([]model, k)
		before := make([][]string, k)
		var kindNames []string
		for i := range sets {
			if rng.IntN(15) == 0 {
				models[i] = model{} // a missing key
				kindNames = append(kindNames, "nil")
				continue
			}
			sets[i], models[i] = randomInput(rng, intOnly || rng.IntN(2) == 0, universe)
			before[i] = members(sets[i])
			kindNames = append(kindNames, sets[i].Kind().String())
		}
		if k > 1 && rng.IntN(10) == 0 { // the same set twice
			sets[1], models[1], before[1] = sets[0], models[0], before[0]
		}
		kinds[fmt.Sprint(kindNames)]++
		lim := testLimits[rng.IntN(len(testLimits))]
		name := fmt.Sprintf("trial %d %v", trial, kindNames)

		inter := model{}
		if models[0] != nil {
		outer:
			for x := range models[0] {
				for _, o := range models[1:] {
					if _, ok := o[x]; !ok {
						continue outer
					}
				}
				inter[x] = struct{}{}
			}
		}
		union := model{}
		for _, o := range models {
			for x := range o {
				union[x] = struct{}{}
			}
		}
		diff := model{}
	outerDiff:
		for x := range models[0] {
			for _, o := range models[1:] {
				if _, ok := o[x]; ok {
					continue outerDiff
				}
			}
			diff[x] = struct{}{}
		}

		check := func(op string, got *Set, want model) {
			t.Helper()
			if got.Kind() != contentKind(lim, want) {
				t.Fatalf("%s %s: kind %v, content wants %v", name, op, got.Kind(), contentKind(lim, want))
			}
			equalModel(t, got, want)
		}
		check("Intersect", Intersect(lim, sets...), inter)
		check("Union", Union(lim, sets...), union)
		check("Diff", Diff(lim, sets...), diff)
		if got := IntersectCard(0, sets...); got != len(inter) {
			t.Fatalf("%s: IntersectCard = %d, want %d", name, got, len(inter))
		}
		for _, limit := range []int{1, 2, len(inter), len(inter) + 1, rng.IntN(len(inter) + 2)} {
			if got := IntersectCard(limit, sets...); got != min(limit, len(inter)) && limit > 0 {
				t.Fatalf("%s: IntersectCard(limit %d) = %d, want %d", name, limit, got, min(limit, len(inter)))
			}
		}
		for i, s := range sets {
			if s != nil && !slices.Equal(members(s), before[i]) {
				t.Fatalf("%s: input %d modified", name, i)
			}
		}
	}
	// Make sure the interesting combinations were exercised.
	for _, want := range []string{"[bitmap bitmap]", "[intset bitmap]", "[bitmap intset]", "[intset intset]",
		"[hashtable bitmap]", "[listpack intset]", "[bitmap hashtable]"} {
		if kinds[want] == 0 {
			t.Errorf("no trial with inputs %s", want)
		}
	}
}

func TestAlgebraEdgeCases(t *testing.T) {
	lim := DefaultLimits()
	a := fromStrings(lim, "1", "2", "3")
	if Intersect(lim).Len() != 0 || Union(lim).Len() != 0 || Diff(lim).Len() != 0 || IntersectCard(0) != 0 {
		t.Fatal("no inputs")
	}
	if Intersect(lim, a, nil).Len() != 0 || IntersectCard(0, nil, a) != 0 {
		t.Fatal("nil input must empty an intersection")
	}
	if Diff(lim, nil, a).Len() != 0 || Diff(lim, a, a).Len() != 0 {
		t.Fatal("diff with missing first or with itself")
	}
	if got := members(Union(lim, nil, a, nil)); !slices.Equal(got, []string{"1", "2", "3"}) {
		t.Fatalf("union with nils: %q", got)
	}
	if got := members(Diff(lim, a, nil)); !slices.Equal(got, []string{"1", "2", "3"}) {
		t.Fatalf("diff with nil: %q", got)
	}
	// A result is a new set: changing it leaves the inputs alone.
	r := Intersect(lim, a)
	r.Add(lim, []byte("4"))
	if a.Contains([]byte("4")) {
		t.Fatal("single-input intersection aliases its input")
	}
}

func TestAlgebraResultEncodings(t *testing.T) {
	lim := DefaultLimits()
	big1 := fromStrings(lim, rangeStrings(0, 10000)...)
	big2 := fromStrings(lim, rangeStrings(9800, 20000)...)
	if big1.Kind() != KindBitmap || big2.Kind() != KindBitmap {
		t.Fatal("inputs should be bitmaps")
	}
	if r := Intersect(lim, big1, big2); r.Kind() != KindIntset || r.Len() != 200 {
		t.Fatalf("small intersection of bitmaps: %v %d", r.Kind(), r.Len())
	}
	if r := Union(lim, big1, big2); r.Kind() != KindBitmap || r.Len() != 20000 {
		t.Fatalf("union: %v %d", r.Kind(), r.Len())
	}
	// A hash table holding only integers yields integer encodings.
	mixed := fromStrings(lim, append(rangeStrings(0, 600), "x")...)
	mixed.Remove([]byte("x"))
	if mixed.Kind() != KindHashtable {
		t.Fatal("want a hash table of integers")
	}
	if r := Intersect(lim, mixed, mixed); r.Kind() != KindBitmap || r.Len() != 600 {
		t.Fatalf("integer-only table intersected: %v", r.Kind())
	}
	if r := Diff(lim, mixed, big2); r.Kind() != KindBitmap || r.Len() != 600 {
		t.Fatalf("diff: %v %d", r.Kind(), r.Len())
	}
	strs := fromStrings(lim, prefixed("k", 300)...)
	if r := Diff(lim, strs, fromStrings(lim, prefixed("k", 250)...)); r.Kind() != KindListpack || r.Len() != 50 {
		t.Fatalf("small string diff: %v %d", r.Kind(), r.Len())
	}
}

func TestIntProbeGallops(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for range 200 {
		var a []int64
		for v := int64(rng.IntN(10)); len(a) < rng.IntN(300); v += 1 + int64(rng.IntN(5)) {
			a = append(a, v)
		}
		p := intProbe{ints: a}
		for q := int64(-2); q < 1700; q += 1 + int64(rng.IntN(4)) {
			_, want := slices.BinarySearch(a, q)
			if p.has(q) != want {
				t.Fatalf("has(%d) on %v", q, a)
			}
		}
	}
}

// TestDiffCopyAndRemove covers Redis's second diff algorithm, chosen when the
// first set is large and the others are many and small.
func TestDiffCopyAndRemove(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	for trial := range 100 {
		lim := testLimits[rng.IntN(len(testLimits))]
		first, fm := New(), model{}
		for range 500 + rng.IntN(2000) {
			x := strconv.Itoa(rng.IntN(3000))
			if rng.IntN(4) == 0 {
				x = "s" + x
			}
			first.Add(DefaultLimits(), []byte(x))
			fm[x] = struct{}{}
		}
		if rng.IntN(3) == 0 {
			// Only integers left in a hash table or listpack.
			for x := range fm {
				if x[0] == 's' {
					first.Remove([]byte(x))
					delete(fm, x)
				}
			}
		}
		sets := []*Set{first}
		want := model{}
		for x := range fm {
			want[x] = struct{}{}
		}
		for range 3 + rng.IntN(4) {
			o, om := randomInput(rng, rng.IntN(2) == 0, 3000)
			for o.Len() > 50 {
				x, _ := o.RandomMember(rng)
				delete(om, string(x))
				o.Remove(x)
			}
			sets = append(sets, o)
			for x := range om {
				delete(want, x)
			}
		}
		if trial%10 == 0 {
			// Remove everything: the result is empty.
			all := New()
			for x := range fm {
				all.Add(DefaultLimits(), []byte(x))
			}
			sets = append(sets[:1], all, all, all)
			want = model{}
		}
		got := Diff(lim, sets...)
		if got.Kind() != contentKind(lim, want) {
			t.Fatalf("trial %d: kind %v, want %v", trial, got.Kind(), contentKind(lim, want))
		}
		equalModel(t, got, want)
		equalModel(t, first, fm)
	}
}
