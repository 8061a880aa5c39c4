package set

import (
	"encoding/binary"
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
//   - arena holds one record per member: a 12-byte header (the record's
//     index in ents, the low 32 bits of the member's hash, the member's
//     length; little-endian uint32s) and then the member's bytes. A
//     member's position is the arena offset of its bytes, just past the
//     header, so a position is never zero. Deleted members leave dead
//     records behind; the arena is compacted when more than half of it is
//     dead.
//   - slots is the index, linear probing over a power-of-two array. A slot
//     holds a 24-bit tag of the member's hash (so most mismatches are
//     rejected without touching the arena) and the member's position in the
//     low 40 bits; zero is an empty slot. A lookup that hits costs two
//     dependent cache misses, the slot and the record, where an index into
//     a separate entry array would cost three (slot, entry, bytes).
//     Deletion uses backward shifting, so there are no tombstones.
//   - ents is dense: ents[0:len] are exactly the members' positions, in no
//     particular order. Deleting swaps the last entry into the hole (and
//     rewrites the moved record's index), so a uniformly random member is
//     ents[rand(len)], and a cursor scan that walks ents from the top down
//     never misses a member (see Scan). Slots point into the arena, not
//     into ents, so a swap never touches the index.
//
// Invariants (checked by tableError in tests): every live record's index
// names the ents entry holding its position, and its hash field is the low
// half of the member's hash (hlo). Both the home slot (hlo's low bits) and
// the tag (tagOf) derive from hlo, so the index can be rebuilt from ents
// and the records alone, walking both in order (see fill): growing,
// shrinking or compacting never rehashes member bytes nor visits the old
// slots.
type table struct {
	slots []uint64
	ents  []uint64
	arena []byte
	dead  int // arena bytes (headers included) not belonging to a member
}

const (
	minSlots = 8

	hdrLen  = 12 // record header: index, hash low half, length
	posBits = 40 // arena positions in a slot; the tag takes the rest
	posMask = 1<<posBits - 1
)

var hashSeed = maphash.MakeSeed()

func hashOf(b []byte) uint64 { return maphash.Bytes(hashSeed, b) }

// tagOf returns the slot tag for a member whose hash has low half hlo,
// already shifted into place. The multiply spreads all 32 bits into the
// tag's 24, so members sharing a home slot (equal low bits) still differ
// in tag unless their whole hlo is equal.
func tagOf(hlo uint64) uint64 { return uint64(uint32(hlo)*0x9e3779b1) >> 8 << posBits }

// Record header fields of the member at position pos.
func (t *table) idxAt(pos uint64) int     { return int(binary.LittleEndian.Uint32(t.arena[pos-12:])) }
func (t *table) hloAt(pos uint64) uint64  { return uint64(binary.LittleEndian.Uint32(t.arena[pos-8:])) }
func (t *table) lenAt(pos uint64) uint64  { return uint64(binary.LittleEndian.Uint32(t.arena[pos-4:])) }
func (t *table) setIdx(pos uint64, i int) { binary.LittleEndian.PutUint32(t.arena[pos-12:], uint32(i)) }

// newTable returns a table sized for about hint members of avgLen bytes.
func newTable(hint, avgLen int) *table {
	t := &table{}
	t.slots = make([]uint64, slotsFor(hint))
	t.ents = make([]uint64, 0, hint)
	t.arena = make([]byte, 0, hint*(avgLen+hdrLen))
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

// memberBytes is the total length of the members, headers excluded.
func (t *table) memberBytes() int { return len(t.arena) - t.dead - len(t.ents)*hdrLen }

func (t *table) member(i int) []byte {
	pos := t.ents[i]
	end := pos + t.lenAt(pos)
	return t.arena[pos:end:end]
}

// find returns the slot position holding m, or -1.
func (t *table) find(m []byte, h uint64) int {
	mask := uint64(len(t.slots) - 1)
	tag := tagOf(h)
	for p := h & mask; ; p = (p + 1) & mask {
		s := t.slots[p]
		if s == 0 {
			return -1
		}
		if s&^posMask == tag {
			pos := s & posMask
			n := t.lenAt(pos)
			if n == uint64(len(m)) && string(t.arena[pos:pos+n]) == string(m) {
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
	if uint64(idx) >= 1<<32-1 || uint64(len(m)) > 1<<32-1 {
		panic("set: too many members")
	}
	pos := uint64(len(t.arena)) + hdrLen
	if pos+uint64(len(m)) > posMask {
		panic("set: members exceed the arena's 1 TiB")
	}
	var hdr [hdrLen]byte
	le := binary.LittleEndian
	le.PutUint32(hdr[0:], uint32(idx))
	le.PutUint32(hdr[4:], uint32(h))
	le.PutUint32(hdr[8:], uint32(len(m)))
	t.arena = append(append(t.arena, hdr[:]...), m...)
	t.ents = append(t.ents, pos)
	t.link(t.slots, uint64(uint32(h)), pos)
}

// link indexes the member at pos, whose hash has low half hlo, in slots.
func (t *table) link(slots []uint64, hlo, pos uint64) {
	mask := uint64(len(slots) - 1)
	p := hlo & mask
	for slots[p] != 0 {
		p = (p + 1) & mask
	}
	slots[p] = tagOf(hlo) | pos
}

// fill indexes every member in slots, which must be empty. It walks ents
// and the records in order, which is also (mostly) arena order.
func (t *table) fill(slots []uint64) {
	for _, pos := range t.ents {
		t.link(slots, t.hloAt(pos), pos)
	}
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
	t.removeAt(t.idxAt(t.slots[p]&posMask), p)
	return true
}

// removeIndex deletes the member at entry index i.
func (t *table) removeIndex(i int) {
	t.removeAt(i, t.slotOf(t.ents[i]))
}

// slotOf returns the slot position that points at arena position pos.
func (t *table) slotOf(pos uint64) int {
	mask := uint64(len(t.slots) - 1)
	for p := t.hloAt(pos) & mask; ; p = (p + 1) & mask {
		if t.slots[p]&posMask == pos {
			return int(p)
		}
	}
}

// removeAt deletes entry i whose slot is at position p.
func (t *table) removeAt(i, p int) {
	t.unlinkSlot(p)
	t.dead += hdrLen + int(t.lenAt(t.ents[i]))
	last := len(t.ents) - 1
	if i != last {
		// Keep ents dense: move the last entry into the hole and tell its
		// record. Scan depends on members only ever moving downwards.
		pos := t.ents[last]
		t.ents[i] = pos
		t.setIdx(pos, i)
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
		home := int(t.hloAt(s&posMask)) & mask
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
		t.ents = append(make([]uint64, 0, n*2), t.ents...)
	}
	if t.dead > 1024 && t.dead*2 > len(t.arena) {
		t.compact()
	}
}

// resize rebuilds the index with size slots from the records (see fill),
// so no member is rehashed.
func (t *table) resize(size int) {
	t.slots = make([]uint64, size)
	t.fill(t.slots)
}

// repack copies the live records, in entry order, into arena (empty, with
// room) and stores their new positions in ents, which may be t.ents.
func (t *table) repack(arena []byte, ents []uint64) []byte {
	for i, pos := range t.ents {
		ents[i] = uint64(len(arena)) + hdrLen
		arena = append(arena, t.arena[pos-hdrLen:pos+t.lenAt(pos)]...)
	}
	return arena
}

// compact rewrites the arena without dead records, in entry order, and
// reindexes the moved records.
func (t *table) compact() {
	live := len(t.arena) - t.dead
	t.arena = t.repack(make([]byte, 0, live+live/4), t.ents)
	t.dead = 0
	clear(t.slots)
	t.fill(t.slots)
}

func (t *table) clone() *table {
	c := &table{
		slots: make([]uint64, len(t.slots)),
		ents:  make([]uint64, len(t.ents)),
	}
	c.arena = t.repack(make([]byte, 0, len(t.arena)-t.dead), c.ents)
	c.fill(c.slots)
	return c
}

func (t *table) memoryUsage() int {
	return int(unsafe.Sizeof(*t)) + cap(t.slots)*8 + cap(t.ents)*8 + cap(t.arena)
}
