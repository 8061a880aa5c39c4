package zset

import "hash/maphash"

// index maps members to arena ids. It is an extendible hash: a directory,
// indexed by the top bits of a member's 32-bit hash, points to small
// open-addressing tables (linear probing, backward-shift deletion). A full
// table grows by doubling until tableMax slots, then splits in two, so no
// operation ever rehashes more than tableMax entries: no pauses proportional
// to the set's size (Go's own maps work the same way).
//
// A slot is a uint64: the member's hash in the high half, id+1 in the low
// half, 0 when empty. Comparing stored hashes first means a probe touches
// the arena (and the member's bytes) only on a likely match. At 8 bytes a
// slot and 40-80% load, the index costs 10-20 bytes a member, against
// 40-56 for a map[string]float64.
type index struct {
	dir   []*htable // len(dir) == 1 << depth
	depth uint      // global depth
	slots int       // total slots over all tables, for MemoryUsage
	n     int       // number of tables
}

type htable struct {
	slots []uint64
	used  int
	depth uint // local depth: every hash in the table shares this many top bits
}

const (
	tableMin = 8
	tableMax = 1024 // slots; 8 KiB
)

var hashSeed = maphash.MakeSeed()

func hash32(member string) uint32 {
	h := maphash.String(hashSeed, member)
	return uint32(h>>32) ^ uint32(h)
}

func (x *index) init(sizeHint int) {
	n := tableMin
	for n < tableMax && n*13/16 < sizeHint {
		n *= 2
	}
	*x = index{dir: []*htable{{slots: make([]uint64, n)}}, slots: n, n: 1}
}

func (x *index) table(h uint32) *htable {
	return x.dir[uint64(h)>>(32-x.depth)]
}

// find returns the id of member, whose hash is h.
func (x *index) find(h uint32, member string, a *arena) (uint32, bool) {
	t := x.table(h)
	mask := uint32(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return 0, false
		}
		if uint32(s>>32) == h {
			if id := uint32(s) - 1; a.member(id) == member {
				return id, true
			}
		}
	}
}

// insert adds id for a member with hash h that is not in the index.
func (x *index) insert(h uint32, id uint32) {
	t := x.table(h)
	for (t.used+1)*16 > len(t.slots)*13 {
		// Past 24 bits of depth the hashes must be colliding on purpose:
		// stop splitting and let the table grow instead.
		if len(t.slots) < tableMax || t.depth >= 24 {
			x.resize(t, 2*len(t.slots))
		} else {
			x.split(t, h)
		}
		t = x.table(h)
	}
	t.put(uint64(h)<<32 | uint64(id+1))
}

func (t *htable) put(s uint64) {
	mask := uint32(len(t.slots) - 1)
	i := uint32(s>>32) & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = s
	t.used++
}

func (x *index) resize(t *htable, n int) {
	old := t.slots
	t.slots, t.used = make([]uint64, n), 0
	x.slots += n - len(old)
	for _, s := range old {
		if s != 0 {
			t.put(s)
		}
	}
}

// split replaces a full table by two, told apart by the next hash bit.
// h is the hash of any member in t.
func (x *index) split(t *htable, h uint32) {
	if t.depth == x.depth {
		dir := make([]*htable, 2*len(x.dir))
		for i, p := range x.dir {
			dir[2*i], dir[2*i+1] = p, p
		}
		x.dir = dir
		x.depth++
	}
	lo := &htable{slots: make([]uint64, len(t.slots)), depth: t.depth + 1}
	hi := &htable{slots: make([]uint64, len(t.slots)), depth: t.depth + 1}
	bit := 31 - t.depth
	for _, s := range t.slots {
		if s == 0 {
			continue
		}
		if uint32(s>>32)>>bit&1 == 0 {
			lo.put(s)
		} else {
			hi.put(s)
		}
	}
	// t covers a run of 1 << (x.depth - t.depth) directory entries; the
	// first half goes to lo, the second to hi.
	first := uint64(h) >> (32 - t.depth) << (x.depth - t.depth)
	run := uint64(1) << (x.depth - t.depth)
	for i := first; i < first+run; i++ {
		if i < first+run/2 {
			x.dir[i] = lo
		} else {
			x.dir[i] = hi
		}
	}
	x.slots += len(t.slots)
	x.n++
}

// remove deletes the entry for id, whose member has hash h.
func (x *index) remove(h uint32, id uint32) {
	t := x.table(h)
	mask := uint32(len(t.slots) - 1)
	want := uint64(h)<<32 | uint64(id+1)
	i := h & mask
	for t.slots[i] != want {
		if t.slots[i] == 0 {
			panic("zset: index entry missing")
		}
		i = (i + 1) & mask
	}
	// Backward-shift deletion: pull later entries of the probe run into
	// the hole when their home slot is not after it, so lookups never need
	// tombstones.
	for j := i; ; {
		j = (j + 1) & mask
		s := t.slots[j]
		if s == 0 {
			break
		}
		home := uint32(s>>32) & mask
		if (j-home)&mask >= (j-i)&mask {
			t.slots[i] = s
			i = j
		}
	}
	t.slots[i] = 0
	t.used--
}
