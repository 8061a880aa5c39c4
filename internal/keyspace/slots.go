package keyspace

import (
	"bytes"
	"unsafe"
)

// Cluster hash slots: a key's slot (Redis's keyHashSlot) and, in cluster
// mode only, an index of each database's keys by slot, which CLUSTER
// COUNTKEYSINSLOT / GETKEYSINSLOT and the removal of a lost slot's keys
// read (Redis 7.0's slots_to_keys).
//
// The index lives in the dict, beside the table it mirrors, so that every
// path that swaps, flushes or restores a database's table (SWAPDB, FLUSHALL
// under a snapshot, a script's rollback, a loaded file's adoption) carries
// the right index with it. With cluster mode off the dict's index pointer is
// nil and the whole cost is that nil check on Put, Delete and Clear.

// NumSlots is the number of hash slots of Redis Cluster.
const NumSlots = 16384

// crc16tab is CRC-16/XMODEM (polynomial 0x1021, initial value 0, no
// reflection, no final xor): the CRC Redis Cluster hashes keys with.
var crc16tab = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// crc16tab2[a] is two steps of the table at once: the CRC of byte a
// followed by a zero byte. Since the CRC is linear, two input bytes then
// cost two independent lookups (crc16), instead of two dependent ones.
var crc16tab2 = func() (t [256]uint16) {
	for i := range t {
		x := crc16tab[i]
		t[i] = x<<8 ^ crc16tab[x>>8]
	}
	return t
}()

func crc16(b []byte) uint16 {
	var c uint16
	for ; len(b) >= 2; b = b[2:] {
		c = crc16tab2[byte(c>>8)^b[0]] ^ crc16tab[byte(c)^b[1]]
	}
	if len(b) == 1 {
		c = c<<8 ^ crc16tab[byte(c>>8)^b[0]]
	}
	return c
}

// HashSlot is the cluster hash slot (0..16383) of key, as Redis's
// keyHashSlot computes it: when the key holds a '{' followed later by a
// '}' with at least one byte between them, only the bytes between the
// first '{' and the first '}' after it are hashed (a hash tag), so keys
// sharing a tag share a slot; otherwise the whole key is hashed.
func HashSlot(key []byte) int {
	if s := bytes.IndexByte(key, '{'); s >= 0 {
		if e := bytes.IndexByte(key[s+1:], '}'); e > 0 {
			return int(crc16(key[s+1:s+1+e]) & (NumSlots - 1))
		}
	}
	return int(crc16(key) & (NumSlots - 1))
}

// HashSlotString is HashSlot for a key held as a string.
func HashSlotString(key string) int {
	return HashSlot(unsafe.Slice(unsafe.StringData(key), len(key)))
}

// slotIndex lists a dict's objects by hash slot.
type slotIndex struct {
	slots [NumSlots]*slotKeys // nil while a slot has never held a key
}

// slotKeys is one slot's objects in the order they were added, with holes
// where objects were removed (compacted once they are half the slice), and
// each object's position, so that removal is O(1) and the listing order
// is Redis's: newest first, a key keeping its place while it is
// overwritten.
type slotKeys struct {
	objs  []*Object
	pos   map[*Object]int32
	holes int
}

func newSlotIndex() *slotIndex { return new(slotIndex) }

func (x *slotIndex) add(o *Object) {
	s := HashSlotString(o.Key)
	sk := x.slots[s]
	if sk == nil {
		sk = &slotKeys{pos: map[*Object]int32{}}
		x.slots[s] = sk
	}
	sk.pos[o] = int32(len(sk.objs))
	sk.objs = append(sk.objs, o)
}

// replace puts o, which stores the same key, in old's place.
func (x *slotIndex) replace(old, o *Object) {
	sk := x.slots[HashSlotString(o.Key)]
	i, ok := sk.pos[old]
	if !ok {
		x.add(o)
		return
	}
	delete(sk.pos, old)
	sk.pos[o] = i
	sk.objs[i] = o
}

func (x *slotIndex) remove(o *Object) {
	sk := x.slots[HashSlotString(o.Key)]
	if sk == nil {
		return
	}
	i, ok := sk.pos[o]
	if !ok {
		return
	}
	delete(sk.pos, o)
	sk.objs[i] = nil
	sk.holes++
	switch {
	case len(sk.pos) == 0:
		sk.objs, sk.holes = sk.objs[:0], 0
	case sk.holes >= 16 && sk.holes*2 >= len(sk.objs):
		sk.compact()
	}
}

func (sk *slotKeys) compact() {
	n := 0
	for _, o := range sk.objs {
		if o != nil {
			sk.objs[n] = o
			sk.pos[o] = int32(n)
			n++
		}
	}
	clear(sk.objs[n:])
	sk.objs, sk.holes = sk.objs[:n], 0
}

func (x *slotIndex) count(slot int) int {
	if sk := x.slots[slot]; sk != nil {
		return len(sk.pos)
	}
	return 0
}

// each calls fn for up to max of slot's objects, newest first, until fn
// returns false; max < 0 means all.
func (x *slotIndex) each(slot, max int, fn func(*Object) bool) {
	sk := x.slots[slot]
	if sk == nil {
		return
	}
	for i := len(sk.objs) - 1; i >= 0 && max != 0; i-- {
		if o := sk.objs[i]; o != nil {
			max--
			if !fn(o) {
				return
			}
		}
	}
}

// IndexSlots turns cluster mode's per-slot key index on for every database
// (indexing the keys already stored) and for every table made from now on.
// Call it under the server lock; it cannot be turned off.
func (ks *Keyspace) IndexSlots() {
	ks.slotsOn = true
	for _, db := range ks.DBs {
		ks.indexDict(db.dict)
	}
	if ks.snap != nil {
		for _, d := range ks.snap.srcs {
			if d != nil {
				ks.indexDict(d)
			}
		}
	}
}

// SlotsIndexed reports whether the per-slot key index is on.
func (ks *Keyspace) SlotsIndexed() bool { return ks.slotsOn }

// indexDict gives d an index of its keys by slot if cluster mode wants
// one and it has none (a table made before IndexSlots, or loaded apart).
func (ks *Keyspace) indexDict(d *dict) {
	if !ks.slotsOn || d.slots != nil {
		return
	}
	d.slots = newSlotIndex()
	var c uint64
	for {
		c = d.Scan(c, d.slots.add)
		if c == 0 {
			return
		}
	}
}

// emptyDict is a new, empty table, indexed by slot in cluster mode.
func (ks *Keyspace) emptyDict() *dict {
	d := newDict()
	if ks.slotsOn {
		d.slots = newSlotIndex()
	}
	return d
}

// CountKeysInSlot is the number of keys stored in slot (0..16383), counting
// keys that have expired but were not reclaimed yet, as Redis's CLUSTER
// COUNTKEYSINSLOT does. It is 0 when the slot index is off.
func (db *DB) CountKeysInSlot(slot int) int {
	if db.dict.slots == nil || slot < 0 || slot >= NumSlots {
		return 0
	}
	return db.dict.slots.count(slot)
}

// KeysInSlot returns up to count keys of slot, newest first, as Redis's
// CLUSTER GETKEYSINSLOT lists them (expired keys not yet reclaimed
// included). The keys are copies. It is empty when the slot index is off.
func (db *DB) KeysInSlot(slot, count int) [][]byte {
	if db.dict.slots == nil || slot < 0 || slot >= NumSlots || count <= 0 {
		return nil
	}
	keys := make([][]byte, 0, min(count, db.dict.slots.count(slot)))
	db.dict.slots.each(slot, count, func(o *Object) bool {
		keys = append(keys, []byte(o.Key))
		return true
	})
	return keys
}

// DelKeysInSlot deletes every key of slot, expired or not, signalling each
// write as Delete does, and calls deleted (when not nil) with each key after
// it is gone, for the caller to propagate a DEL as Redis's delKeysInSlot
// does. It returns how many keys it deleted.
func (db *DB) DelKeysInSlot(slot int, deleted func(key string)) int {
	if db.dict.slots == nil || slot < 0 || slot >= NumSlots {
		return 0
	}
	var keys []string
	db.dict.slots.each(slot, -1, func(o *Object) bool {
		keys = append(keys, o.Key)
		return true
	})
	n := 0
	for _, key := range keys {
		if db.ks.snap != nil {
			db.snapTouch(key)
		}
		if db.ks.undo.on {
			db.journal(key)
		}
		if db.remove(key) == nil {
			continue
		}
		n++
		db.touched(key)
		if deleted != nil {
			deleted(key)
		}
	}
	return n
}
