package set

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"testing"
)

// model is the naive reference: a map of members.
type model map[string]struct{}

func (m model) sorted() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func members(s *Set) []string {
	var out []string
	for m := range s.All() {
		out = append(out, string(m))
	}
	sort.Strings(out)
	return out
}

func fromStrings(lim Limits, ms ...string) *Set {
	s := New()
	for _, m := range ms {
		s.Add(lim, []byte(m))
	}
	return s
}

func ints(vs ...int64) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = strconv.FormatInt(v, 10)
	}
	return out
}

func rangeStrings(lo, hi int) []string {
	var out []string
	for i := lo; i < hi; i++ {
		out = append(out, strconv.Itoa(i))
	}
	return out
}

// contentKind is the encoding a freshly built set with these members takes.
func contentKind(lim Limits, ms model) Kind {
	allInt, longest := true, 0
	for m := range ms {
		if _, ok := ParseInt([]byte(m)); !ok {
			allInt = false
		}
		longest = max(longest, len(m))
	}
	switch {
	case allInt && len(ms) <= lim.maxIntset():
		return KindIntset
	case allInt:
		return KindBitmap
	case len(ms) <= lim.MaxListpackEntries && longest <= lim.MaxListpackValue:
		return KindListpack
	}
	return KindHashtable
}

// equalModel fails the test unless s holds exactly the model's members and
// its internal structures are consistent.
func equalModel(t testing.TB, s *Set, m model) {
	t.Helper()
	checkInvariants(t, s)
	if s.Len() != len(m) {
		t.Fatalf("Len = %d, model has %d", s.Len(), len(m))
	}
	got := members(s)
	want := m.sorted()
	if !slices.Equal(got, want) {
		t.Fatalf("members differ:\n got %.300q\nwant %.300q", got, want)
	}
}

// checkInvariants verifies the internal structure of s.
func checkInvariants(t testing.TB, s *Set) {
	t.Helper()
	if err := invariantError(s); err != nil {
		t.Fatalf("%s set: %v", s.kind, err)
	}
}

func invariantError(s *Set) error {
	if s.kind != KindIntset && s.Len() == 0 {
		return fmt.Errorf("empty set not reset")
	}
	switch s.kind {
	case KindIntset:
		for i := 1; i < len(s.ints); i++ {
			if s.ints[i-1] >= s.ints[i] {
				return fmt.Errorf("intset not strictly ascending at %d", i)
			}
		}
	case KindListpack:
		n := 0
		seen := map[string]bool{}
		for off := 0; off < len(s.lp.data); n++ {
			m, e := s.lp.next(off)
			if seen[string(m)] {
				return fmt.Errorf("listpack duplicate %q", m)
			}
			seen[string(m)] = true
			off = e
		}
		if n != s.lp.n {
			return fmt.Errorf("listpack count %d, records %d", s.lp.n, n)
		}
	case KindHashtable:
		return tableError(s.ht)
	case KindBitmap:
		b := s.bm
		n := 0
		for i, bm := range b.bms {
			if bm.IsEmpty() {
				return fmt.Errorf("empty roaring bitmap kept for key %d", b.keys[i])
			}
			if i > 0 && b.keys[i-1] >= b.keys[i] {
				return fmt.Errorf("bitmap keys not ascending")
			}
			n += int(bm.GetCardinality())
		}
		if n != b.n {
			return fmt.Errorf("bitmap count %d, cardinality %d", b.n, n)
		}
		if smp := b.smp.Load(); smp != nil {
			fresh := newSampler(b)
			total := 0
			for i, c := range smp.chunks {
				cnt := smp.prefix(i+1) - smp.prefix(i)
				total += cnt
				j, ok := slices.BinarySearch(fresh.chunks, c)
				want := 0
				if ok {
					want = fresh.prefix(j+1) - fresh.prefix(j)
				}
				if cnt != want {
					return fmt.Errorf("sampler chunk %x counts %d, want %d", c, cnt, want)
				}
			}
			if total != b.n {
				return fmt.Errorf("sampler total %d, want %d", total, b.n)
			}
		}
	}
	return nil
}

// prefix returns the sum of the first i chunk counts (test helper).
func (s *sampler) prefix(i int) int {
	sum := 0
	for ; i > 0; i -= i & -i {
		sum += s.tree[i]
	}
	return sum
}

func tableError(t *table) error {
	if len(t.slots)&(len(t.slots)-1) != 0 || len(t.slots) < minSlots {
		return fmt.Errorf("slot count %d", len(t.slots))
	}
	if len(t.ents)*4 > len(t.slots)*3 {
		return fmt.Errorf("load %d/%d", len(t.ents), len(t.slots))
	}
	// Every entry's record names it, and records lie inside the arena.
	posOf := make(map[uint64]int, len(t.ents))
	for i, pos := range t.ents {
		if pos < hdrLen || pos > uint64(len(t.arena)) || pos+t.lenAt(pos) > uint64(len(t.arena)) {
			return fmt.Errorf("entry %d at bad position %d (arena %d)", i, pos, len(t.arena))
		}
		if got := t.idxAt(pos); got != i {
			return fmt.Errorf("record at %d says index %d, ents has it at %d", pos, got, i)
		}
		posOf[pos] = i
	}
	mask := len(t.slots) - 1
	used := 0
	seenIdx := make([]bool, len(t.ents))
	for p, s := range t.slots {
		if s == 0 {
			continue
		}
		used++
		i, ok := posOf[s&posMask]
		if !ok || seenIdx[i] {
			return fmt.Errorf("slot %d points at a dead or repeated record %d", p, s&posMask)
		}
		seenIdx[i] = true
		m := t.member(i)
		h := hashOf(m)
		if uint64(uint32(h)) != t.hloAt(t.ents[i]) || tagOf(h) != s&^posMask {
			return fmt.Errorf("entry %d hash mismatch", i)
		}
		// Every slot between home and p must be occupied.
		for q := int(uint32(h)) & mask; q != p; q = (q + 1) & mask {
			if t.slots[q] == 0 {
				return fmt.Errorf("entry %d unreachable from home", i)
			}
		}
	}
	if used != len(t.ents) {
		return fmt.Errorf("%d slots used, %d entries", used, len(t.ents))
	}
	live := 0
	seen := map[string]bool{}
	for i := range t.ents {
		m := t.member(i)
		if seen[string(m)] {
			return fmt.Errorf("duplicate member %q", m)
		}
		seen[string(m)] = true
		live += hdrLen + len(m)
	}
	if live+t.dead != len(t.arena) {
		return fmt.Errorf("arena %d bytes, live %d + dead %d", len(t.arena), live, t.dead)
	}
	// Records must not overlap.
	type span struct{ off, end uint64 }
	spans := make([]span, 0, len(t.ents))
	for _, pos := range t.ents {
		spans = append(spans, span{pos - hdrLen, pos + t.lenAt(pos)})
	}
	slices.SortFunc(spans, func(a, b span) int { return int(a.off) - int(b.off) })
	for i := 1; i < len(spans); i++ {
		if spans[i].off < spans[i-1].end {
			return fmt.Errorf("records overlap in arena")
		}
	}
	return nil
}
