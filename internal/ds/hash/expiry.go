package hash

import "encoding/binary"

// Cond is the condition of an expiry change (HEXPIRE's NX, XX, GT, LT). A
// field without a TTL counts as one that never expires: GT never holds for
// it, LT always does.
type Cond uint8

const (
	CondNone Cond = iota
	CondNX        // only if the field has no TTL
	CondXX        // only if the field has a TTL
	CondGT        // only if the new expiry is later than the current one
	CondLT        // only if the new expiry is earlier than the current one
)

// ExpireResult is the outcome of SetExpiry for one field. The values are
// those HEXPIRE replies with.
type ExpireResult int8

const (
	ExpireNoField ExpireResult = -2 // the field does not exist (or has expired)
	ExpireNotSet  ExpireResult = 0  // the condition did not hold
	ExpireSet     ExpireResult = 1  // the expiry was set
	ExpireDeleted ExpireResult = 2  // at <= now: the field was deleted
)

// PersistResult is the outcome of Persist for one field, with HPERSIST's
// reply values.
type PersistResult int8

const (
	PersistNoField PersistResult = -2 // the field does not exist (or has expired)
	PersistNoTTL   PersistResult = -1 // the field had no TTL
	Persisted      PersistResult = 1  // the TTL was removed
)

// Expiry returns field's expiry time in unix ms, 0 if it has none. exists is
// false when the field is absent or expired.
func (h *Hash) Expiry(now int64, field []byte) (at int64, exists bool) {
	if h.tab() != nil {
		_, r, ok := h.tab().find(now, field)
		if !ok {
			return 0, false
		}
		return h.tab().ttlOf(r), true
	}
	e, found := lpFind(h.block(), field)
	if !found || e.expiredAt(now) {
		return 0, false
	}
	return e.ttl, true
}

// SetExpiry sets field's expiry time to at (unix ms) if cond holds. An
// at <= now deletes the field (after the condition is checked). As in Redis,
// a small hash takes the listpackex form on the first call, whatever the
// outcome.
func (h *Hash) SetExpiry(now int64, field []byte, at int64, cond Cond) ExpireResult {
	if h.tab() == nil && !lpIsEx(h.block()) && len(h.block()) > 0 {
		h.setBlock(lpToEx(h.block()))
	}
	old, exists := h.Expiry(now, field)
	if !exists {
		return ExpireNoField
	}
	if old == 0 {
		if cond == CondXX || cond == CondGT {
			return ExpireNotSet
		}
	} else if cond == CondNX || cond == CondGT && old >= at || cond == CondLT && old <= at {
		return ExpireNotSet
	}
	if at <= now {
		h.Delete(now, field)
		return ExpireDeleted
	}
	if at == old {
		return ExpireSet
	}
	if h.tab() != nil {
		i, r, _ := h.tab().find(now, field)
		h.tab().relocate(i, r, h.tab().value(r), at)
		return ExpireSet
	}
	h.lpMove(field, at)
	return ExpireSet
}

// lpMove gives a live field of the (ex form) small hash a new expiry, moving
// it to its place in the expiry order.
func (h *Hash) lpMove(field []byte, ttl int64) {
	e, _ := lpFind(h.block(), field)
	// The field and value are copied out first: removal moves the bytes.
	var buf [128]byte
	fv := append(buf[:0], h.block()[e.fOff:e.fOff+e.fLen]...)
	fv = append(fv, h.block()[e.vOff:e.vOff+e.vLen]...)
	b := lpRemove(h.block(), e)
	h.setBlock(lpInsert(b, lpInsertPos(b, ttl), fv[:e.fLen], fv[e.fLen:], ttl))
}

// Persist removes field's TTL (HPERSIST). In the small form the field moves
// to the end, as in Redis.
func (h *Hash) Persist(now int64, field []byte) PersistResult {
	old, exists := h.Expiry(now, field)
	switch {
	case !exists:
		return PersistNoField
	case old == 0:
		return PersistNoTTL
	}
	if t := h.tab(); t != nil {
		_, r, _ := t.find(now, field)
		binary.LittleEndian.PutUint64(t.arena[r.ttlOff:], 0)
		t.nttl--
		t.fixTop()
		t.maintain()
		return Persisted
	}
	h.lpMove(field, 0)
	return Persisted
}

// NextExpiry returns the earliest expiry time among the fields, which may be
// <= now for fields not reclaimed yet; ok is false when no field has a TTL.
// The keyspace can index hashes by it and call ExpireFields when it passes.
func (h *Hash) NextExpiry() (at int64, ok bool) {
	if t := h.tab(); t != nil {
		if len(t.heap) == 0 {
			return 0, false
		}
		return t.heap[0].at, true
	}
	_, ex, p := lpHeader(h.block())
	if !ex || p == len(h.block()) {
		return 0, false
	}
	e := lpEntryAt(h.block(), p, true)
	return e.ttl, e.ttl != 0
}

// ExpireFields physically removes up to max fields whose expiry time is
// <= now, soonest first, and returns how many it removed. fn, if not nil, is
// called with each field's name before its removal (for HDEL propagation
// and keyspace notifications); the slice is valid only during the call and
// fn must not modify the hash. The hash may be left empty: the caller
// deletes the key.
func (h *Hash) ExpireFields(now int64, max int, fn func(field []byte)) (removed int) {
	if t := h.tab(); t != nil {
		for removed < max && len(t.heap) > 0 && t.heap[0].at <= now {
			r := t.rec(int(t.heap[0].off))
			f := t.field(r)
			if fn != nil {
				fn(f)
			}
			i, _ := t.lookup(f, hashOf(f))
			t.removeAt(i, r)
			removed++
		}
		return removed
	}
	b := h.block()
	n, ex, p := lpHeader(b)
	if !ex {
		return 0
	}
	start := p
	for removed < max && p < len(b) {
		e := lpEntryAt(b, p, true)
		if !e.expiredAt(now) {
			break
		}
		if fn != nil {
			fn(b[e.fOff : e.fOff+e.fLen])
		}
		p = e.end
		removed++
	}
	if removed > 0 {
		b = resize(b, start, p, 0)
		h.setBlock(lpSetHeader(b, n-removed, true))
	}
	return removed
}

// --- the large form's expiry heap ---

// valid reports whether heap entry e still describes a live record's expiry.
func (t *table) valid(e expEnt) bool {
	off := int(e.off)
	if t.arena[off]&(recDead|recTTL) != recTTL {
		return false
	}
	return t.ttlOf(t.rec(off)) == e.at
}

// fixTop drops invalid entries from the top of the heap.
func (t *table) fixTop() {
	for len(t.heap) > 0 && !t.valid(t.heap[0]) {
		t.heapPop()
	}
}

// countExpired counts the indexed fields with expiry <= now by visiting
// only the heap entries <= now (and their children).
func (t *table) countExpired(now int64) int {
	if len(t.heap) == 0 || t.heap[0].at > now {
		return 0
	}
	return t.countFrom(0, now)
}

func (t *table) countFrom(i int, now int64) int {
	if i >= len(t.heap) || t.heap[i].at > now {
		return 0
	}
	n := t.countFrom(2*i+1, now) + t.countFrom(2*i+2, now)
	if t.valid(t.heap[i]) {
		n++
	}
	return n
}

func (t *table) rebuildHeap() {
	t.heap = t.heap[:0]
	for p := 0; p < len(t.arena); {
		r := t.rec(p)
		p = r.end
		if r.flags&recDead != 0 {
			continue
		}
		if ttl := t.ttlOf(r); ttl != 0 {
			t.heap = append(t.heap, expEnt{ttl, int64(r.off)})
		}
	}
	if cap(t.heap) > 2*len(t.heap)+64 {
		t.heap = append([]expEnt(nil), t.heap...)
	}
	t.heapify()
}

func (t *table) heapPush(e expEnt) {
	t.heap = append(t.heap, e)
	t.siftUp(len(t.heap) - 1)
}

func (t *table) heapPop() {
	n := len(t.heap) - 1
	t.heap[0] = t.heap[n]
	t.heap = t.heap[:n]
	if n > 0 {
		t.siftDown(0)
	}
}

func (t *table) heapify() {
	for i := len(t.heap)/2 - 1; i >= 0; i-- {
		t.siftDown(i)
	}
}

func (t *table) siftUp(i int) {
	h := t.heap
	e := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if h[p].at <= e.at {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

func (t *table) siftDown(i int) {
	h := t.heap
	n := len(h)
	e := h[i]
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].at < h[c].at {
			c++
		}
		if e.at <= h[c].at {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = e
}
