package set

import (
	"math/rand/v2"
	"slices"
)

// Random selection and popping. Every encoding can reach a uniformly random
// member quickly: intsets and hash tables by index (the table's entries are
// dense), listpacks by walking at most set-max-listpack-entries records, and
// bitmaps through the sampler's rank index.
//
// Callbacks receive slices that are only valid during the call; the set must
// not be modified from inside them.

// RandomMember returns a uniformly random member, or false if the set is
// empty. The slice is valid until the set is next modified.
func (s *Set) RandomMember(rng *rand.Rand) ([]byte, bool) {
	n := s.Len()
	if n == 0 {
		return nil, false
	}
	i := rng.IntN(n)
	switch s.kind {
	case KindIntset:
		return appendInt(nil, s.ints[i]), true
	case KindListpack:
		return s.lp.at(i), true
	case KindHashtable:
		return s.ht.member(i), true
	}
	return appendInt(nil, fromU(s.bm.selectRank(i))), true
}

// RandomMembers calls fn count times with a uniformly random member each
// time, repetitions allowed (SRANDMEMBER with a negative count). It does
// nothing on an empty set.
func (s *Set) RandomMembers(rng *rand.Rand, count int, fn func(m []byte)) {
	n := s.Len()
	if n == 0 || count <= 0 {
		return
	}
	var buf [maxIntLen]byte
	switch s.kind {
	case KindIntset:
		for range count {
			fn(appendInt(buf[:0], s.ints[rng.IntN(n)]))
		}
	case KindListpack:
		offs := s.lp.offsets()
		for range count {
			m, _ := s.lp.next(offs[rng.IntN(n)])
			fn(m)
		}
	case KindHashtable:
		for range count {
			fn(s.ht.member(rng.IntN(n)))
		}
	case KindBitmap:
		ranks := make([]int, count)
		for i := range ranks {
			ranks[i] = rng.IntN(n)
		}
		slices.Sort(ranks)
		vals := s.bm.valuesAtRanks(ranks)
		rng.Shuffle(len(vals), func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
		for _, u := range vals {
			fn(appendInt(buf[:0], fromU(u)))
		}
	}
}

// RandomDistinct calls fn with min(count, Len()) distinct members chosen
// uniformly at random (SRANDMEMBER with a positive count). When count covers
// the whole set every member is returned, in iteration order.
func (s *Set) RandomDistinct(rng *rand.Rand, count int, fn func(m []byte)) {
	n := s.Len()
	if count <= 0 || n == 0 {
		return
	}
	if count >= n {
		for m := range s.All() {
			fn(m)
		}
		return
	}
	idx := pickDistinct(rng, n, count)
	var buf [maxIntLen]byte
	switch s.kind {
	case KindBitmap:
		vals := s.bm.valuesAtRanks(idx)
		rng.Shuffle(len(vals), func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
		for _, u := range vals {
			fn(appendInt(buf[:0], fromU(u)))
		}
		return
	case KindListpack:
		offs := s.lp.offsets()
		for i, k := range idx {
			idx[i] = offs[k]
		}
	}
	rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	for _, k := range idx {
		switch s.kind {
		case KindIntset:
			fn(appendInt(buf[:0], s.ints[k]))
		case KindListpack:
			m, _ := s.lp.next(k)
			fn(m)
		case KindHashtable:
			fn(s.ht.member(k))
		}
	}
}

// Pop removes min(count, Len()) members chosen uniformly at random, calling
// fn with each before it is removed (SPOP), and returns how many it removed.
// Popping every member leaves an empty set that has released its memory.
func (s *Set) Pop(rng *rand.Rand, count int, fn func(m []byte)) int {
	n := s.Len()
	if count <= 0 || n == 0 {
		return 0
	}
	if count >= n {
		for m := range s.All() {
			fn(m)
		}
		*s = Set{}
		return n
	}
	var buf [maxIntLen]byte
	switch s.kind {
	case KindHashtable:
		// Entries are dense: each pop is a uniform pick among those left.
		for range count {
			i := rng.IntN(s.ht.len())
			fn(s.ht.member(i))
			s.ht.removeIndex(i)
		}
	case KindBitmap:
		vals := s.bm.valuesAtRanks(pickDistinct(rng, n, count))
		rng.Shuffle(len(vals), func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
		for _, u := range vals {
			fn(appendInt(buf[:0], fromU(u)))
			s.bm.remove(u)
		}
	case KindIntset:
		idx := pickDistinct(rng, n, count)
		order := slices.Clone(idx)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, k := range order {
			fn(appendInt(buf[:0], s.ints[k]))
		}
		// One compaction pass instead of count deletions.
		out, j := s.ints[:0], 0
		for k, v := range s.ints {
			if j < len(idx) && idx[j] == k {
				j++
				continue
			}
			out = append(out, v)
		}
		s.ints = out
	case KindListpack:
		idx := pickDistinct(rng, n, count)
		offs := s.lp.offsets()
		for i, k := range idx {
			idx[i] = offs[k]
		}
		order := slices.Clone(idx)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, off := range order {
			m, _ := s.lp.next(off)
			fn(m)
		}
		s.lp.removeOffsets(idx)
	}
	return count
}

// pickDistinct returns k distinct integers from [0, n), ascending, each
// k-subset equally likely. 0 < k < n.
func pickDistinct(rng *rand.Rand, n, k int) []int {
	out := make([]int, 0, k)
	if k*20 >= n {
		// Selection sampling (Knuth's algorithm S): one pass over [0, n).
		for i := 0; len(out) < k; i++ {
			if rng.IntN(n-i) < k-len(out) {
				out = append(out, i)
			}
		}
		return out
	}
	// Floyd's algorithm: k draws, no pass over n.
	seen := make(map[int]struct{}, k)
	for j := n - k; j < n; j++ {
		t := rng.IntN(j + 1)
		if _, dup := seen[t]; dup {
			t = j
		}
		seen[t] = struct{}{}
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}
