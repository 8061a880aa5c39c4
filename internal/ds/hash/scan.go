package hash

// Scan is one step of a cursor iteration (HSCAN). It calls fn for the live
// fields of one part of the hash and returns the cursor for the next step,
// 0 when the iteration is complete; the first step passes cursor 0. count is
// a hint of how many fields to return (10 if <= 0).
//
// Guarantee, as Redis's: a field present from the first step to the last is
// returned at least once, however the hash grows or shrinks between steps; a
// field added or removed meanwhile may or may not be returned. A small hash
// is returned whole in one step.
//
// How: in the large form a field's home slot is the top bits of its 64-bit
// hash, so slot order is hash order at any table size. The cursor is a hash
// value: every field whose hash is below it has been returned. A step takes
// a run of home slots ending at an empty slot; linear probing with backward
// shift deletion keeps every field between its home and the next empty
// slot, so the run holds all the fields whose home is in it.
func (h *Hash) Scan(now int64, cursor uint64, count int, fn func(field, value []byte)) (next uint64) {
	if h.tab() == nil {
		h.Range(now, func(f, v []byte) bool { fn(f, v); return true })
		return 0
	}
	if count <= 0 {
		count = 10
	}
	t := h.tab()
	size := len(t.slots)
	shift := 64 - t.bits
	lo := int(cursor >> shift)
	// Extend the run [lo, hi) over about count entries, then to an empty slot.
	hi, seen := lo, 0
	for hi < size && (seen < count || t.slots[hi] != 0) {
		if t.slots[hi] != 0 {
			seen++
		}
		hi++
	}
	emit := func(s uint64) {
		rc := t.rec(slotOff(s))
		if ttl := t.ttlOf(rc); ttl != 0 && ttl <= now {
			return
		}
		fn(t.field(rc), t.value(rc))
	}
	for i := lo; i < hi; i++ {
		if s := t.slots[i]; s != 0 {
			if home := t.home(s, t.bits); home >= lo && home < hi {
				emit(s)
			}
		}
	}
	if hi < size {
		return uint64(hi) << shift
	}
	// The last run: fields whose home is near the end may have wrapped
	// around to the first slots.
	if lo > 0 {
		for i := 0; i < size && t.slots[i] != 0; i++ {
			if home := t.home(t.slots[i], t.bits); home >= lo {
				emit(t.slots[i])
			}
		}
	}
	return 0
}
