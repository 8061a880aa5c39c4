package set

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestEncodingTransitions(t *testing.T) {
	def := DefaultLimits()
	long := strings.Repeat("x", 65)
	tests := []struct {
		name     string
		lim      Limits
		members  []string
		kind     Kind
		encoding string
	}{
		{"empty", def, nil, KindIntset, "intset"},
		{"one int", def, ints(7), KindIntset, "intset"},
		{"extreme ints", def, ints(math.MinInt64, math.MaxInt64, 0), KindIntset, "intset"},
		{"512 ints", def, rangeStrings(0, 512), KindIntset, "intset"},
		{"513 ints become a bitmap", def, rangeStrings(0, 513), KindBitmap, "hashtable"},
		{"intset limit 0", Limits{0, 128, 64}, ints(1), KindBitmap, "hashtable"},
		{"string", def, []string{"a"}, KindListpack, "listpack"},
		{"empty string", def, []string{""}, KindListpack, "listpack"},
		{"non-canonical ints are strings", def, []string{"-0", "01", "+1", " 1"}, KindListpack, "listpack"},
		{"ints then string", def, append(rangeStrings(0, 127), "a"), KindListpack, "listpack"},
		{"128 ints then string", def, append(rangeStrings(0, 128), "a"), KindHashtable, "hashtable"},
		{"string then ints", def, append([]string{"a"}, rangeStrings(0, 127)...), KindListpack, "listpack"},
		{"128 strings", def, prefixed("m", 128), KindListpack, "listpack"},
		{"129 strings", def, prefixed("m", 129), KindHashtable, "hashtable"},
		{"64-byte member", def, []string{strings.Repeat("x", 64)}, KindListpack, "listpack"},
		{"65-byte member", def, []string{long}, KindHashtable, "hashtable"},
		{"intset then long member", def, []string{"1", long}, KindHashtable, "hashtable"},
		{"long int in intset blocks listpack", Limits{512, 128, 3}, []string{"1000", "a"}, KindHashtable, "hashtable"},
		{"short ints allow listpack", Limits{512, 128, 3}, []string{"-99", "999", "a"}, KindListpack, "listpack"},
		{"negative int length counts the sign", Limits{512, 128, 3}, []string{"-100", "a"}, KindHashtable, "hashtable"},
		{"bitmap then string", def, append(rangeStrings(0, 600), "a"), KindHashtable, "hashtable"},
		{"listpack entries 0", Limits{512, 0, 64}, []string{"a"}, KindHashtable, "hashtable"},
		{"listpack stays listpack with ints", def, append([]string{"a"}, rangeStrings(0, 100)...), KindListpack, "listpack"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := fromStrings(tc.lim, tc.members...)
			if s.Kind() != tc.kind || s.Encoding() != tc.encoding {
				t.Fatalf("kind %v encoding %q; want %v %q", s.Kind(), s.Encoding(), tc.kind, tc.encoding)
			}
			m := model{}
			for _, x := range tc.members {
				m[x] = struct{}{}
			}
			equalModel(t, s, m)
			for _, x := range tc.members {
				if !s.Contains([]byte(x)) {
					t.Fatalf("missing %q", x)
				}
			}
		})
	}
}

func prefixed(p string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = p + strconv.Itoa(i)
	}
	return out
}

func TestAddRemoveContains(t *testing.T) {
	lim := DefaultLimits()
	for _, start := range []struct {
		name string
		init []string
		kind Kind
	}{
		{"intset", ints(1, 2, 3), KindIntset},
		{"listpack", []string{"a", "1"}, KindListpack},
		{"hashtable", prefixed("k", 200), KindHashtable},
		{"bitmap", rangeStrings(-300, 300), KindBitmap},
	} {
		t.Run(start.name, func(t *testing.T) {
			s := fromStrings(lim, start.init...)
			if s.Kind() != start.kind {
				t.Fatalf("kind %v", s.Kind())
			}
			n := s.Len()
			if s.Add(lim, []byte(start.init[0])) {
				t.Fatal("re-adding reported added")
			}
			for _, probe := range []string{"-0", "01", "+1", "1 ", "zz", "", "\x00"} {
				if s.Contains([]byte(probe)) {
					t.Fatalf("contains %q", probe)
				}
				if s.Remove([]byte(probe)) {
					t.Fatalf("removed %q", probe)
				}
			}
			if !s.Remove([]byte(start.init[0])) || s.Remove([]byte(start.init[0])) {
				t.Fatal("remove did not report correctly")
			}
			if s.Contains([]byte(start.init[0])) || s.Len() != n-1 {
				t.Fatal("member still there")
			}
			if s.Kind() != start.kind {
				t.Fatalf("remove converted to %v", s.Kind())
			}
			for _, m := range start.init[1:] {
				s.Remove([]byte(m))
			}
			if s.Len() != 0 || s.Kind() != KindIntset || s.MemoryUsage() > 200 {
				t.Fatalf("emptied set: len %d kind %v mem %d", s.Len(), s.Kind(), s.MemoryUsage())
			}
			if !s.Add(lim, []byte("5")) || s.Kind() != KindIntset {
				t.Fatal("emptied set not reusable")
			}
		})
	}
}

func TestBinarySafeMembers(t *testing.T) {
	lim := Limits{512, 4, 64}
	ms := []string{"", "\x00", "\x00\x00", "\xff\xfe", "a\x00b", "1\x00", "é", strings.Repeat("\x00", 100)}
	s := fromStrings(lim, ms...)
	m := model{}
	for _, x := range ms {
		m[x] = struct{}{}
	}
	equalModel(t, s, m)
	if s.Contains([]byte("1")) || s.Contains([]byte("a")) {
		t.Fatal("prefix collision")
	}
}

func TestAddIntMatchesAdd(t *testing.T) {
	lim := Limits{4, 3, 8}
	a, b := New(), New()
	for _, v := range []int64{5, -5, math.MinInt64, math.MaxInt64, 0, 5, 12345678901} {
		ga := a.AddInt(lim, v)
		gb := b.Add(lim, []byte(strconv.FormatInt(v, 10)))
		if ga != gb || a.Kind() != b.Kind() || !slices.Equal(members(a), members(b)) {
			t.Fatalf("AddInt(%d) diverged: %v/%v %v/%v", v, ga, gb, a.Kind(), b.Kind())
		}
	}
	a.Add(lim, []byte("x"))
	if !a.AddInt(lim, 77) || !a.Contains([]byte("77")) || a.AddInt(lim, 77) {
		t.Fatal("AddInt on a hash table")
	}
}

func TestIntsetIteratesInNumericOrder(t *testing.T) {
	s := fromStrings(DefaultLimits(), "10", "-3", "2", "9223372036854775807", "-9223372036854775808")
	var got []string
	for m := range s.All() {
		got = append(got, string(m))
	}
	want := []string{"-9223372036854775808", "-3", "2", "10", "9223372036854775807"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q", got)
	}
	b := fromStrings(Limits{2, 128, 64}, "10", "-3", "2", "9223372036854775807", "-9223372036854775808")
	got = got[:0]
	for m := range b.All() {
		got = append(got, string(m))
	}
	if b.Kind() != KindBitmap || !slices.Equal(got, want) {
		t.Fatalf("bitmap order %q (%v)", got, b.Kind())
	}
}

func TestCloneIsIndependent(t *testing.T) {
	lim := DefaultLimits()
	for _, init := range [][]string{ints(1, 2), {"a", "b"}, prefixed("k", 300), rangeStrings(0, 1000)} {
		s := fromStrings(lim, init...)
		c := s.Clone()
		if c.Kind() != s.Kind() || !slices.Equal(members(c), members(s)) {
			t.Fatal("clone differs")
		}
		c.Add(lim, []byte("new"))
		c.Remove([]byte(init[0]))
		if s.Contains([]byte("new")) || !s.Contains([]byte(init[0])) {
			t.Fatal("clone shares state")
		}
		checkInvariants(t, s)
		checkInvariants(t, c)
	}
}

func TestMemoryUsageGrowsWithContent(t *testing.T) {
	lim := DefaultLimits()
	for _, pair := range [][2][]string{
		{ints(1), rangeStrings(0, 100)},
		{prefixed("k", 2), prefixed("k", 100)},
		{prefixed("k", 200), prefixed("key:", 10000)},
		{rangeStrings(0, 1000), rangeStrings(0, 200000)},
	} {
		small, big := fromStrings(lim, pair[0]...), fromStrings(lim, pair[1]...)
		if small.Kind() != big.Kind() || small.MemoryUsage() <= New().MemoryUsage() || big.MemoryUsage() <= small.MemoryUsage() {
			t.Fatalf("%v: %d members %d bytes, %d members %d bytes", big.Kind(),
				small.Len(), small.MemoryUsage(), big.Len(), big.MemoryUsage())
		}
	}
	// A dense bitmap of a million ids costs well under a byte per member.
	b := New()
	for i := range int64(1 << 20) {
		b.AddInt(lim, i)
	}
	if b.Kind() != KindBitmap || b.MemoryUsage() > 1<<18 {
		t.Fatalf("dense bitmap: %v %d bytes", b.Kind(), b.MemoryUsage())
	}
}

// TestMemoryUsageMatchesHeap compares the estimate with what the Go heap
// actually holds for a few large sets, within a generous tolerance.
func TestMemoryUsageMatchesHeap(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocates large sets; the race detector distorts heap sizes")
	}
	lim := DefaultLimits()
	rng := rand.New(rand.NewPCG(61, 62))
	layouts := map[string]func(*Set){
		"dense bitmap": func(s *Set) {
			for _, v := range rng.Perm(1 << 21)[:1<<20] {
				s.AddInt(lim, int64(v))
			}
		},
		"sparse bitmap": func(s *Set) {
			for range 1 << 20 {
				s.AddInt(lim, int64(rng.Uint32()))
			}
		},
		"hashtable": func(s *Set) {
			for i := range 1 << 18 {
				s.Add(lim, []byte("user:"+strconv.Itoa(i)))
			}
		},
	}
	for name, fill := range layouts {
		before := heapInUse()
		s := New()
		fill(s)
		held := float64(heapInUse() - before)
		est := float64(s.MemoryUsage())
		if est < held*0.7 || est > held*1.4 {
			t.Errorf("%s: MemoryUsage %.0f, heap holds %.0f", name, est, held)
		}
		t.Logf("%s: %d members, MemoryUsage %.0f, heap %.0f", name, s.Len(), est, held)
		runtime.KeepAlive(s)
	}
}
