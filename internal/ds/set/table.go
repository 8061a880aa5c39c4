package set

import (
	"bytes"
	"hash/maphash"
	"unsafe"
)

// table is the "hashtable" encoding: an open-addressing hash table whose
// members live back to back in one byte arena.
//
// Layout, chosen to keep the garbage collector out of the picture: a large
// set is three pointer-free slices whatever its size, where a Go map of
// strings would hold one pointer (and one heap object) per member.
//
//   - ents is dense: ents[0:len] are exactly the members, in no particular
//     order. Deleting swaps the last entry into the hole, so a uniformly
//     random member is ents[rand(len)], and a cursor scan that walks ents
//     from the top down never misses a member (see Scan).
//   - slots is the index, linear probing over a power-of-two array. A slot
//     holds the upper 32 bits of the member's hash (a tag, so most mismatches
//     are rejected without touching the arena) and entry index + 1; zero is
//     an empty slot. Deletion uses backward shifting, so there are no
//     tombstones.
//   - arena holds member bytes. Deleted members leave dead bytes behind; the
//     arena is compacted when more than half of it is dead.
type table struct {
	slots []uint64
	ents  []entry
	arena []byte
	dead  int // arena bytes not referenced by any entry
}

// entry locates one member in the arena. hlo is the low 32 bits of its hash,
// from which the home slot is derived, so growing or shrinking the index
// never rehashes member bytes.
type entry struct {
	off uint64
	n   uint32
	hlo uint32
}

const minSlots = 8

var hashSeed = maphash.MakeSeed()

func hashOf(b []byte) uint64 { return maphash.Bytes(hashSeed, b) }

// newTable returns a table sized for about hint members of avgLen bytes.
func newTable(hint, avgLen int) *table {
	t := &table{}
	t.slots = make([]uint64, slotsFor(hint))
	t.ents = make([]entry, 0, hint)
	t.arena = make([]byte, 0, hint*avgLen)
	return t
}

// slotsFor returns the power-of-two slot count that keeps n members at or
// below the 3/4 load factor.
func slotsFor(n int) int {
	s := minSlots
	for s*3 < n*4 {
		s <<= 1
	}
	return s
}

func (t *table) len() int { return len(t.ents) }

func (t *table) member(i int) []byte {
	e := t.ents[i]
	return t.arena[e.off : e.off+uint64(e.n) : e.off+uint64(e.n)]
}

// find returns the slot position holding m, or -1.
func (t *table) find(m []byte, h uint64) int {
	mask := uint64(len(t.slots) - 1)
	tag := h >> 32
	for p := h & mask; ; p = (p + 1) & mask {
		s := t.slots[p]
		if s == 0 {
			return -1
		}
		if s>>32 == tag {
			e := t.ents[uint32(s)-1]
			if int(e.n) == len(m) && bytes.Equal(t.arena[e.off:e.off+uint64(e.n)], m) {
				return int(p)
			}
		}
	}
}

func (t *table) contains(m []byte) bool {
	if len(t.ents) == 0 {
		return false
	}
	return t.find(m, hashOf(m)) >= 0
}

// add inserts m and reports whether it was absent.
func (t *table) add(m []byte) bool {
	h := hashOf(m)
	if len(t.slots) == 0 {
		t.slots = make([]uint64, minSlots)
	} else if t.find(m, h) >= 0 {
		return false
	}
	if (len(t.ents)+1)*4 > len(t.slots)*3 {
		t.resize(len(t.slots) * 2)
	}
	t.insertNew(m, h)
	return true
}

// insertNew appends m, known to be absent, and indexes it.
func (t *table) insertNew(m []byte, h uint64) {
	idx := len(t.ents)
	if uint64(idx) >= 1<<32-1 {
		panic("set: too many members")
	}
	t.ents = append(t.ents, entry{off: uint64(len(t.arena)), n: uint32(len(m)), hlo: uint32(h)})
	t.arena = append(t.arena, m...)
	mask := uint64(len(t.slots) - 1)
	p := h & mask
	for t.slots[p] != 0 {
		p = (p + 1) & mask
	}
	t.slots[p] = h>>32<<32 | uint64(idx+1)
}

// remove deletes m and reports whether it was present.
func (t *table) remove(m []byte) bool {
	if len(t.ents) == 0 {
		return false
	}
	p := t.find(m, hashOf(m))
	if p < 0 {
		return false
	}
	t.removeAt(int(uint32(t.slots[p])-1), p)
	return true
}

// removeIndex deletes the member at entry index i.
func (t *table) removeIndex(i int) {
	t.removeAt(i, t.slotOf(i))
}

// slotOf returns the slot position that points at entry index i.
func (t *table) slotOf(i int) int {
	mask := uint64(len(t.slots) - 1)
	want := uint64(i + 1)
	for p := uint64(t.ents[i].hlo) & mask; ; p = (p + 1) & mask {
		if uint64(uint32(t.slots[p])) == want {
			return int(p)
		}
	}
}

// removeAt deletes entry i whose slot is at position p.
func (t *table) removeAt(i, p int) {
	t.unlinkSlot(p)
	t.dead += int(t.ents[i].n)
	last := len(t.ents) - 1
	if i != last {
		// Keep ents dense: move the last entry into the hole and repoint
		// its slot. Scan depends on members only ever moving downwards.
		q := t.slotOf(last)
		t.slots[q] = t.slots[q]>>32<<32 | uint64(i+1)
		t.ents[i] = t.ents[last]
	}
	t.ents = t.ents[:last]
	t.maybeShrink()
}

// unlinkSlot empties slot p, shifting later members of the probe run back
// so that every member stays reachable from its home slot without
// tombstones (Knuth's algorithm R).
func (t *table) unlinkSlot(p int) {
	mask := len(t.slots) - 1
	hole := p
	for j := (p + 1) & mask; ; j = (j + 1) & mask {
		s := t.slots[j]
		if s == 0 {
			break
		}
		home := int(t.ents[uint32(s)-1].hlo) & mask
		// The member at j may move into the hole only if its home is not
		// cyclically within (hole, j].
		if (j-home)&mask >= (j-hole)&mask {
			t.slots[hole] = s
			hole = j
		}
	}
	t.slots[hole] = 0
}

// maybeShrink gives memory back after many deletions.
func (t *table) maybeShrink() {
	n := len(t.ents)
	if n == 0 {
		*t = table{}
		return
	}
	if len(t.slots) > minSlots && n*8 < len(t.slots) {
		t.resize(slotsFor(n * 2))
	}
	if cap(t.ents) > 64 && n*4 < cap(t.ents) {
		t.ents = append(make([]entry, 0, n*2), t.ents...)
	}
	if t.dead > 1024 && t.dead*2 > len(t.arena) {
		t.compact()
	}
}

// resize rebuilds the index with size slots. Slots keep their tags and the
// home slot comes from the entry, so no member is rehashed.
func (t *table) resize(size int) {
	old := t.slots
	t.slots = make([]uint64, size)
	mask := uint64(size - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		p := uint64(t.ents[uint32(s)-1].hlo) & mask
		for t.slots[p] != 0 {
			p = (p + 1) & mask
		}
		t.slots[p] = s
	}
}

// compact rewrites the arena without dead bytes, in entry order.
func (t *table) compact() {
	live := len(t.arena) - t.dead
	arena := make([]byte, 0, live+live/4)
	for i := range t.ents {
		e := &t.ents[i]
		off := uint64(len(arena))
		arena = append(arena, t.arena[e.off:e.off+uint64(e.n)]...)
		e.off = off
	}
	t.arena = arena
	t.dead = 0
}

func (t *table) clone() *table {
	c := &table{
		slots: append([]uint64(nil), t.slots...),
		ents:  make([]entry, 0, len(t.ents)),
		arena: make([]byte, 0, len(t.arena)-t.dead),
	}
	for i := range t.ents {
		e := t.ents[i]
		c.ents = append(c.ents, entry{off: uint64(len(c.arena)), n: e.n, hlo: e.hlo})
		c.arena = append(c.arena, t.arena[e.off:e.off+uint64(e.n)]...)
	}
	return c
}

func (t *table) memoryUsage() int {
	return int(unsafe.Sizeof(*t)) + cap(t.slots)*8 + cap(t.ents)*int(unsafe.Sizeof(entry{})) + cap(t.arena)
}
