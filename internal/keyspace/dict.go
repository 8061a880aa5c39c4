package keyspace

import (
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
)

// dict is the key table of one database: a chained hash table whose chains
// run through the Objects themselves (no separate entry allocation), with
// power-of-two bucket arrays and Redis's incremental rehashing, so growing a
// table of millions of keys never stalls a command.
//
// It exists instead of a Go map because SCAN must return every key that is
// present for the whole scan at least once, across inserts, deletes and
// resizes, and RANDOMKEY must pick a key in O(1): both need access to the
// bucket layout. SCAN uses Redis's reverse-binary cursor, which visits the
// buckets of a small table and of a large one in an order that is compatible
// for both.
type dict struct {
	t         [2][]*Object // t[1] is non-nil only while rehashing
	used      [2]int
	rehashIdx int // next bucket of t[0] to move; -1 when not rehashing
	seed      maphash.Seed
	sink      uint64     // what prefetch read (prefetch.go)
	frozen    bool       // a snapshot reads it: no resize or rehash (snapshot.go)
	slots     *slotIndex // its objects by hash slot, in cluster mode only (slots.go)
}

const dictInitSize = 4

func newDict() *dict {
	return &dict{rehashIdx: -1, seed: maphash.MakeSeed()}
}

func (d *dict) hash(key string) uint64 { return maphash.String(d.seed, key) }

// tagOf is the byte of a hash that Object.htag keeps: its top bits, which
// the bucket index (the low bits) does not use, so that a chain walk tells
// most other keys apart without reading their bytes (one cache miss each).
func tagOf(h uint64) uint8 { return uint8(h >> 56) }

func (d *dict) Len() int { return d.used[0] + d.used[1] }

func (d *dict) rehashing() bool { return d.rehashIdx >= 0 }

// rehashStep moves up to n buckets from the old table to the new one,
// visiting at most 10*n empty buckets, as Redis's dictRehash does. The
// lookups check rehashIdx before calling it: the call alone showed in
// profiles of GET.
func (d *dict) rehashStep(n int) {
	if !d.rehashing() || d.frozen {
		return
	}
	empty := n * 10
	old := d.t[0]
	for ; n > 0 && d.used[0] > 0; n-- {
		for old[d.rehashIdx] == nil {
			d.rehashIdx++
			if empty--; empty == 0 {
				return
			}
		}
		o := old[d.rehashIdx]
		mask := uint64(len(d.t[1]) - 1)
		for o != nil {
			next := o.next
			i := d.hash(o.Key) & mask
			o.next = d.t[1][i]
			d.t[1][i] = o
			d.used[0]--
			d.used[1]++
			o = next
		}
		old[d.rehashIdx] = nil
		d.rehashIdx++
	}
	if d.used[0] == 0 {
		d.t[0], d.t[1] = d.t[1], nil
		d.used[0], d.used[1] = d.used[1], 0
		d.rehashIdx = -1
	}
}

// resize starts moving to a table of size buckets (a power of two).
func (d *dict) resize(size int) {
	if d.rehashing() || size == len(d.t[0]) {
		return
	}
	if d.t[0] == nil {
		d.t[0] = make([]*Object, size)
		return
	}
	d.t[1] = make([]*Object, size)
	d.rehashIdx = 0
}

func nextPow2(n int) int {
	if n <= dictInitSize {
		return dictInitSize
	}
	return 1 << bits.Len(uint(n-1))
}

// expandIfNeeded grows at load factor 1, like Redis.
func (d *dict) expandIfNeeded() {
	if d.rehashing() || d.frozen && d.t[0] != nil {
		return
	}
	if d.t[0] == nil {
		d.resize(dictInitSize)
		return
	}
	if d.used[0] >= len(d.t[0]) {
		d.resize(nextPow2(d.used[0] + 1))
	}
}

// shrinkIfNeeded halves memory when the table is under 1/8 full.
func (d *dict) shrinkIfNeeded() {
	if d.rehashing() || d.frozen || len(d.t[0]) <= dictInitSize {
		return
	}
	if d.used[0]*8 < len(d.t[0]) {
		d.resize(nextPow2(d.used[0]))
	}
}

// Get returns the object stored under key, or nil.
func (d *dict) Get(key string) *Object {
	if d.Len() == 0 {
		return nil
	}
	if d.rehashIdx >= 0 {
		d.rehashStep(1)
	}
	h := d.hash(key)
	tag := tagOf(h)
	for t := 0; t < 2; t++ {
		tab := d.t[t]
		if tab == nil {
			break
		}
		for o := tab[h&uint64(len(tab)-1)]; o != nil; o = o.next {
			if o.htag == tag && o.Key == key {
				return o
			}
		}
		if !d.rehashing() {
			break
		}
	}
	return nil
}

// Put stores o under o.Key, replacing and returning any object there.
func (d *dict) Put(o *Object) *Object {
	if d.rehashIdx >= 0 {
		d.rehashStep(1)
	}
	d.expandIfNeeded()
	h := d.hash(o.Key)
	tag := tagOf(h)
	for t := 0; t < 2; t++ {
		tab := d.t[t]
		if tab == nil {
			break
		}
		p := &tab[h&uint64(len(tab)-1)]
		for *p != nil {
			if *p == o {
				return o
			}
			if (*p).htag == tag && (*p).Key == o.Key {
				old := *p
				o.htag = tag
				o.next = old.next
				old.next = nil
				*p = o
				if d.slots != nil {
					d.slots.replace(old, o)
				}
				return old
			}
			p = &(*p).next
		}
		if !d.rehashing() {
			break
		}
	}
	t := 0
	if d.rehashing() && !(d.frozen && int(h&uint64(len(d.t[0])-1)) >= d.rehashIdx) {
		// While frozen, a new key goes where an old one of its hash
		// would be, so that a key's bucket never changes (snapshot.go).
		t = 1
	}
	tab := d.t[t]
	i := h & uint64(len(tab)-1)
	o.htag = tag
	o.next = tab[i]
	tab[i] = o
	d.used[t]++
	if d.slots != nil {
		d.slots.add(o)
	}
	return nil
}

// Delete removes key and returns its object, or nil.
func (d *dict) Delete(key string) *Object {
	if d.Len() == 0 {
		return nil
	}
	if d.rehashIdx >= 0 {
		d.rehashStep(1)
	}
	h := d.hash(key)
	tag := tagOf(h)
	for t := 0; t < 2; t++ {
		tab := d.t[t]
		if tab == nil {
			break
		}
		p := &tab[h&uint64(len(tab)-1)]
		for *p != nil {
			if (*p).htag == tag && (*p).Key == key {
				o := *p
				*p = o.next
				o.next = nil
				d.used[t]--
				if d.slots != nil {
					d.slots.remove(o)
				}
				d.shrinkIfNeeded()
				return o
			}
			p = &(*p).next
		}
		if !d.rehashing() {
			break
		}
	}
	return nil
}

// Clear drops every key.
func (d *dict) Clear() {
	d.t = [2][]*Object{}
	d.used = [2]int{}
	d.rehashIdx = -1
	if d.slots != nil {
		d.slots = newSlotIndex()
	}
}

// Random returns a random object, or nil when empty.
func (d *dict) Random(r *rand.Rand) *Object {
	var o [1]*Object
	d.randomN(r, o[:])
	return o[0]
}

// randomN fills out with random objects (see DB.SampleN); it returns
// false, filling nothing, when d is empty.
func (d *dict) randomN(r *rand.Rand, out []*Object) bool {
	if d.Len() == 0 {
		return false
	}
	if d.rehashIdx >= 0 {
		d.rehashStep(1)
	}
	// Level 1: a non-empty bucket for each draw.
	for i := range out {
		var head *Object
		for head == nil {
			if d.rehashing() {
				n0, n1 := len(d.t[0])-d.rehashIdx, len(d.t[1])
				if j := r.IntN(n0 + n1); j < n0 {
					head = d.t[0][d.rehashIdx+j]
				} else {
					head = d.t[1][j-n0]
				}
			} else {
				head = d.t[0][r.IntN(len(d.t[0]))]
			}
		}
		out[i] = head
	}
	// Level 2: a uniform pick in each chain.
	for i, head := range out {
		if head.next == nil {
			continue
		}
		n := 0
		for o := head; o != nil; o = o.next {
			n++
		}
		o := head
		for k := r.IntN(n); k > 0; k-- {
			o = o.next
		}
		out[i] = o
	}
	return true
}

// Scan calls fn for the objects of the buckets at cursor and returns the
// next cursor (0 when the scan is complete). Redis's dictScan algorithm: the
// cursor's bits are incremented from the high end, so a scan that started on
// a table of one size stays correct when the table grows or shrinks.
func (d *dict) Scan(cursor uint64, fn func(*Object)) uint64 {
	if d.Len() == 0 {
		return 0
	}
	emit := func(o *Object) {
		for ; o != nil; o = o.next {
			fn(o)
		}
	}
	if !d.rehashing() {
		m := uint64(len(d.t[0]) - 1)
		emit(d.t[0][cursor&m])
		cursor |= ^m
		cursor = bits.Reverse64(cursor)
		cursor++
		return bits.Reverse64(cursor)
	}
	small, large := d.t[0], d.t[1]
	if len(small) > len(large) {
		small, large = large, small
	}
	m0, m1 := uint64(len(small)-1), uint64(len(large)-1)
	emit(small[cursor&m0])
	// Visit every bucket of the large table that expands this small bucket.
	for {
		emit(large[cursor&m1])
		cursor |= ^m1
		cursor = bits.Reverse64(cursor)
		cursor++
		cursor = bits.Reverse64(cursor)
		if cursor&(m0^m1) == 0 {
			break
		}
	}
	return cursor
}
