package hash

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
)

// The large form keeps the fields and values in one append-only byte arena
// and finds them through an open-addressing index of uint64 slots; neither
// holds Go pointers, so the collector sees three objects however many fields
// there are.
//
// A record in the arena is
//
//	uvarint(len(field)<<2 | flags) field uvarint(len(value)) value [expiry: 8 bytes LE]
//
// with flags recDead (a deleted or relocated record, waiting for compaction)
// and recTTL (the 8-byte expiry is present; 0 there means no TTL). Both
// flags live in the low bits of the first byte, so they can be changed in
// place. A value update of the same length and a TTL removal are done in
// place; anything else appends a new record and marks the old one dead. When
// dead bytes pass a third of the arena it is compacted, keeping order.
//
// A slot is 0 (empty) or tag<<offBits | (offset+1), where tag is the top
// tagBits of the field's 64-bit hash. The home slot of a field is the top
// bits of its hash (so, with tables up to 2^tagBits slots, computable from
// the tag without rehashing the field). Collisions probe linearly, and
// deletion shifts the following entries back, so there are no tombstones,
// and every entry sits at or after its home with no empty slot in between:
// the invariant HSCAN's cursor relies on.
//
// Fields with a TTL are also in a binary min-heap of (expiry, offset). An
// entry is valid while the record at that offset is alive and still holds
// that expiry. The record of a given offset never gets a new nonzero expiry
// (changing an expiry relocates the record), so at most one valid entry
// exists per record; invalid entries are dropped when they reach the top,
// and the heap is rebuilt when they outnumber the valid ones. The top is
// always valid, which makes NextExpiry exact.

const (
	offBits  = 36 // arena offsets: 64 GiB per hash
	offMask  = 1<<offBits - 1
	tagBits  = 64 - offBits
	maxArena = offMask - 1

	recDead = 1
	recTTL  = 2

	minSlotBits = 4
)

var seed = maphash.MakeSeed()

func hashOf(b []byte) uint64 { return maphash.Bytes(seed, b) }

type expEnt struct {
	at  int64
	off int64
}

type table struct {
	arena   []byte
	slots   []uint64 // len is 1<<bits
	bits    uint
	count   int // records in the index, expired-but-unreclaimed included
	garbage int // bytes of dead records in the arena
	nttl    int // indexed records with a nonzero expiry
	heap    []expEnt
}

// rec locates one record in the arena.
type rec struct {
	off, end   int
	flags      byte
	fOff, fLen int
	vOff, vLen int
	ttlOff     int // -1 when the record has no expiry field
}

func (t *table) rec(off int) rec {
	b := t.arena
	r := rec{off: off, ttlOff: -1}
	h, p := readUvarint(b, off)
	r.flags = byte(h & 3)
	r.fOff, r.fLen = p, int(h>>2)
	vl, p := readUvarint(b, p+r.fLen)
	r.vOff, r.vLen = p, int(vl)
	p += r.vLen
	if r.flags&recTTL != 0 {
		r.ttlOff = p
		p += 8
	}
	r.end = p
	return r
}

func (t *table) ttlOf(r rec) int64 {
	if r.ttlOff < 0 {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(t.arena[r.ttlOff:]))
}

func (t *table) field(r rec) []byte { return t.arena[r.fOff : r.fOff+r.fLen] }
func (t *table) value(r rec) []byte { return t.arena[r.vOff : r.vOff+r.vLen] }

func slotOff(s uint64) int { return int(s&offMask) - 1 }

// newTable returns a table sized for n fields and an arena of arenaHint bytes.
func newTable(n, arenaHint int) *table {
	t := &table{arena: make([]byte, 0, arenaHint)}
	t.bits = slotBitsFor(n)
	t.slots = make([]uint64, 1<<t.bits)
	return t
}

// slotBitsFor returns the smallest table size keeping n entries at a load of
// at most 3/4.
func slotBitsFor(n int) uint {
	b := uint(bits.Len(uint(n*4/3 + 1)))
	return max(b, minSlotBits)
}

// appendRec appends a record and returns its offset.
func (t *table) appendRec(field, value []byte, ttl int64) int {
	off := len(t.arena)
	h := uint64(len(field)) << 2
	size := uvarintLen(h) + len(field) + uvarintLen(uint64(len(value))) + len(value)
	if ttl != 0 {
		h |= recTTL
		size += 8
	}
	if off+size > maxArena {
		panic("hash: arena over 64 GiB")
	}
	a := binary.AppendUvarint(t.arena, h)
	a = append(a, field...)
	a = binary.AppendUvarint(a, uint64(len(value)))
	a = append(a, value...)
	if ttl != 0 {
		a = binary.LittleEndian.AppendUint64(a, uint64(ttl))
	}
	t.arena = a
	return off
}

// home returns the home slot of the entry in slot value s for a table of
// 1<<b slots.
func (t *table) home(s uint64, b uint) int {
	if b <= tagBits {
		return int((s >> offBits) >> (tagBits - b))
	}
	r := t.rec(slotOff(s))
	return int(hashOf(t.field(r)) >> (64 - b))
}

// lookup finds field. If found, i is its slot; otherwise i is the empty slot
// where it would go.
func (t *table) lookup(field []byte, hv uint64) (i int, found bool) {
	mask := len(t.slots) - 1
	tag := hv >> offBits
	i = int(hv >> (64 - t.bits))
	for {
		s := t.slots[i]
		if s == 0 {
			return i, false
		}
		if s>>offBits == tag {
			b := t.arena
			off := slotOff(s)
			fl, p := readUvarint(b, off)
			if int(fl>>2) == len(field) && string(b[p:p+len(field)]) == string(field) {
				return i, true
			}
		}
		i = (i + 1) & mask
	}
}

// insertSlot puts slot value s (for a field with hash hv) in the first empty
// slot from its home.
func (t *table) insertSlot(s, hv uint64) {
	mask := len(t.slots) - 1
	i := int(hv >> (64 - t.bits))
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = s
}

// removeSlot empties slot i and shifts the following entries of its cluster
// back where their home allows.
func (t *table) removeSlot(i int) {
	mask := len(t.slots) - 1
	j := i
	for {
		j = (j + 1) & mask
		s := t.slots[j]
		if s == 0 {
			break
		}
		h := t.home(s, t.bits)
		if (j-h)&mask >= (j-i)&mask {
			t.slots[i] = s
			i = j
		}
	}
	t.slots[i] = 0
}

// resizeSlots rebuilds the index with 1<<b slots.
func (t *table) resizeSlots(b uint) {
	old := t.slots
	t.slots = make([]uint64, 1<<b)
	t.bits = b
	mask := len(t.slots) - 1
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := t.home(s, b)
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// appendNew adds a field known to be absent (conversion from the small form).
func (t *table) appendNew(field, value []byte, ttl int64) {
	if (t.count+1)*4 > len(t.slots)*3 {
		t.resizeSlots(t.bits + 1)
	}
	hv := hashOf(field)
	off := t.appendRec(field, value, ttl)
	t.insertSlot(hv>>offBits<<offBits|uint64(off+1), hv)
	t.count++
	if ttl != 0 {
		t.nttl++
		t.heapPush(expEnt{ttl, int64(off)})
	}
}

func (t *table) get(now int64, field []byte) ([]byte, bool) {
	i, found := t.lookup(field, hashOf(field))
	if !found {
		return nil, false
	}
	r := t.rec(slotOff(t.slots[i]))
	if ttl := t.ttlOf(r); ttl != 0 && ttl <= now {
		return nil, false
	}
	return t.value(r), true
}

// find returns the slot and record of a live field.
func (t *table) find(now int64, field []byte) (i int, r rec, ok bool) {
	i, found := t.lookup(field, hashOf(field))
	if !found {
		return 0, rec{}, false
	}
	r = t.rec(slotOff(t.slots[i]))
	if ttl := t.ttlOf(r); ttl != 0 && ttl <= now {
		return 0, rec{}, false
	}
	return i, r, true
}

func (t *table) put(now int64, field, value []byte, mode int, at int64) (created bool) {
	hv := hashOf(field)
	i, found := t.lookup(field, hv)
	if !found {
		if (t.count+1)*4 > len(t.slots)*3 {
			t.resizeSlots(t.bits + 1)
		}
		ttl := int64(0)
		if mode == ttlSet {
			ttl = at
		}
		off := t.appendRec(field, value, ttl)
		t.insertSlot(hv>>offBits<<offBits|uint64(off+1), hv)
		t.count++
		if ttl != 0 {
			t.nttl++
			t.heapPush(expEnt{ttl, int64(off)})
		}
		return true
	}
	r := t.rec(slotOff(t.slots[i]))
	old := t.ttlOf(r)
	expired := old != 0 && old <= now
	ttl := old
	switch {
	case mode == ttlClear, mode == ttlKeep && expired:
		ttl = 0
	case mode == ttlSet:
		ttl = at
	}
	if r.vLen == len(value) && (ttl == old || ttl == 0) {
		copy(t.arena[r.vOff:], value)
		if ttl != old {
			binary.LittleEndian.PutUint64(t.arena[r.ttlOff:], 0)
			t.nttl--
			t.fixTop()
			t.maintain()
		}
		return expired
	}
	t.relocate(i, r, value, ttl)
	return expired
}

// relocate rewrites the record r of slot i at the end of the arena with a
// new value and expiry.
func (t *table) relocate(i int, r rec, value []byte, ttl int64) {
	old := t.ttlOf(r)
	off := t.appendRec(t.arena[r.fOff:r.fOff+r.fLen], value, ttl)
	t.arena[r.off] |= recDead
	t.garbage += r.end - r.off
	s := t.slots[i]
	t.slots[i] = s>>offBits<<offBits | uint64(off+1)
	if old != 0 {
		t.nttl--
	}
	if ttl != 0 {
		t.nttl++
		t.heapPush(expEnt{ttl, int64(off)})
	}
	t.fixTop()
	t.maintain()
}

func (t *table) delete(now int64, field []byte) bool {
	i, found := t.lookup(field, hashOf(field))
	if !found {
		return false
	}
	r := t.rec(slotOff(t.slots[i]))
	ttl := t.ttlOf(r)
	t.removeAt(i, r)
	return ttl == 0 || ttl > now
}

// removeAt deletes record r, indexed at slot i.
func (t *table) removeAt(i int, r rec) {
	if t.ttlOf(r) != 0 {
		t.nttl--
	}
	t.arena[r.off] |= recDead
	t.garbage += r.end - r.off
	t.removeSlot(i)
	t.count--
	t.fixTop()
	t.maintain()
}

// maintain compacts the arena when a third of it is dead, shrinks a mostly
// empty index, and rebuilds a heap full of stale entries.
func (t *table) maintain() {
	switch {
	case t.garbage > 256 && t.garbage*3 > len(t.arena):
		t.compact()
	case t.bits > minSlotBits && t.count*8 < len(t.slots):
		t.resizeSlots(slotBitsFor(t.count))
	}
	if len(t.heap) > 2*t.nttl+64 {
		t.rebuildHeap()
	}
}

// compact rewrites the arena without dead records (and without the expiry
// field of records whose TTL was removed), in the same order, then rebuilds
// the index and the heap.
func (t *table) compact() {
	live := len(t.arena) - t.garbage
	na := make([]byte, 0, live+live/8)
	old := t.arena
	t.bits = slotBitsFor(t.count)
	t.slots = make([]uint64, 1<<t.bits)
	t.heap = t.heap[:0]
	for p := 0; p < len(old); {
		r := t.rec(p)
		p = r.end
		if r.flags&recDead != 0 {
			continue
		}
		ttl := t.ttlOf(r)
		off := len(na)
		if ttl == 0 && r.ttlOff >= 0 {
			na = binary.AppendUvarint(na, uint64(r.fLen)<<2)
			na = append(na, old[r.fOff:r.vOff+r.vLen]...)
		} else {
			na = append(na, old[r.off:r.end]...)
		}
		f := old[r.fOff : r.fOff+r.fLen]
		hv := hashOf(f)
		t.insertSlot(hv>>offBits<<offBits|uint64(off+1), hv)
		if ttl != 0 {
			t.heap = append(t.heap, expEnt{ttl, int64(off)})
		}
	}
	t.arena = na
	t.garbage = 0
	t.heapify()
}

// rangeLive walks the live records in arena order.
func (t *table) rangeLive(now int64, fn func(field, value []byte, at int64) bool) {
	for p := 0; p < len(t.arena); {
		r := t.rec(p)
		p = r.end
		if r.flags&recDead != 0 {
			continue
		}
		ttl := t.ttlOf(r)
		if ttl != 0 && ttl <= now {
			continue
		}
		if !fn(t.field(r), t.value(r), ttl) {
			return
		}
	}
}

func (t *table) memoryUsage() int {
	const tableSize = 112 // the struct's size class
	return tableSize + cap(t.arena) + 8*cap(t.slots) + 16*cap(t.heap)
}
