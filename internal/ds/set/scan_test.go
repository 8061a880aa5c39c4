package set

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestScanGuaranteeUnderMutation checks SSCAN's promise: every member present
// from the start to the end of a full scan is returned at least once, while
// other members are added and removed between calls, and while the set
// changes encoding (a bitmap receiving a non-integer becomes a hash table).
func TestScanGuaranteeUnderMutation(t *testing.T) {
	lim := Limits{MaxIntsetEntries: 32, MaxListpackEntries: 16, MaxListpackValue: 20}
	for trial := range 300 {
		rng := rand.New(rand.NewPCG(11, uint64(trial)))
		intOnly := trial%2 == 0
		newMember := func() string {
			if !intOnly && rng.IntN(3) == 0 {
				return "s" + strconv.Itoa(rng.IntN(100000))
			}
			switch rng.IntN(10) {
			case 0:
				return strconv.FormatInt(math.MinInt64+int64(rng.IntN(1000)), 10)
			case 1:
				return strconv.FormatInt(int64(rng.Uint64()), 10)
			}
			return strconv.Itoa(rng.IntN(400000))
		}
		s, m := New(), model{}
		for range rng.IntN(3000) {
			x := newMember()
			s.Add(lim, []byte(x))
			m[x] = struct{}{}
		}
		stable := model{}
		for x := range m {
			if rng.IntN(2) == 0 {
				stable[x] = struct{}{}
			}
		}
		startKind := s.Kind()
		seen := model{}
		cur, calls := uint64(0), 0
		convertAt := -1
		if intOnly && rng.IntN(3) == 0 {
			convertAt = rng.IntN(20)
		}
		for {
			cur = s.Scan(cur, 1+rng.IntN(50), func(b []byte) { seen[string(b)] = struct{}{} })
			if cur == 0 {
				break
			}
			calls++
			if calls > 100000 {
				t.Fatalf("trial %d: scan does not end", trial)
			}
			// Churn: remove volatile members, add new ones.
			for range rng.IntN(30) {
				if len(m) > len(stable) && rng.IntN(2) == 0 {
					x := m.pick(rng)
					if _, keep := stable[x]; !keep {
						s.Remove([]byte(x))
						delete(m, x)
					}
				} else {
					x := newMember()
					s.Add(lim, []byte(x))
					m[x] = struct{}{}
				}
			}
			if calls == convertAt {
				s.Add(lim, []byte("not-an-integer"))
				m["not-an-integer"] = struct{}{}
			}
		}
		for x := range stable {
			if _, ok := seen[x]; !ok {
				t.Fatalf("trial %d (%v -> %v): stable member %q not returned", trial, startKind, s.Kind(), x)
			}
		}
		for x := range seen {
			if _, ok := m[x]; !ok {
				// Returned members must have been members at some point;
				// cheap proxy: they look like something we generated.
				if _, err := strconv.ParseInt(x, 10, 64); err != nil && x[0] != 's' && x != "not-an-integer" {
					t.Fatalf("trial %d: scan returned junk %q", trial, x)
				}
			}
		}
		checkInvariants(t, s)
	}
}

func TestScanCursors(t *testing.T) {
	lim := DefaultLimits()
	small := fromStrings(lim, "1", "2", "a")
	n := 0
	if cur := small.Scan(0, 1, func([]byte) { n++ }); cur != 0 || n != 3 {
		t.Fatalf("small sets return everything at once: cursor %d, %d members", cur, n)
	}
	// The members with the smallest mapped values (MinInt64, MinInt64+1)
	// must not produce cursor 0 mid-scan.
	b := fromStrings(Limits{0, 0, 0}, ints(math.MinInt64, math.MinInt64+1, math.MinInt64+2, 5)...)
	got := model{}
	cur := uint64(0)
	for {
		cur = b.Scan(cur, 1, func(m []byte) { got[string(m)] = struct{}{} })
		if cur == 0 {
			break
		}
		if cur&tableCursor != 0 {
			t.Fatal("bitmap cursor uses the table tag")
		}
	}
	if len(got) != 4 {
		t.Fatalf("bitmap scan found %d", len(got))
	}
	// A cursor from another encoding restarts rather than skipping.
	h := fromStrings(lim, prefixed("k", 500)...)
	got = model{}
	cur = h.Scan(12345, 1000, func(m []byte) { got[string(m)] = struct{}{} })
	if cur != 0 || len(got) != 500 {
		t.Fatalf("foreign cursor: %d members, cursor %d", len(got), cur)
	}
	got = model{}
	cur = b.Scan(tableCursor|3, 100, func(m []byte) { got[string(m)] = struct{}{} })
	if cur != 0 || len(got) != 4 {
		t.Fatalf("table cursor on a bitmap: %d members", len(got))
	}
}

func ExampleSet_Scan() {
	lim := DefaultLimits()
	s := New()
	for i := range 1000 {
		s.Add(lim, []byte("member:"+strconv.Itoa(i)))
	}
	n := 0
	for cur := s.Scan(0, 100, func([]byte) { n++ }); cur != 0; cur = s.Scan(cur, 100, func([]byte) { n++ }) {
	}
	fmt.Println(s.Encoding(), n)
	// Output: hashtable 1000
}
