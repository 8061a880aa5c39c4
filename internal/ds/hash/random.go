package hash

// RandomField returns a uniformly chosen live field and its value
// (HRANDFIELD without a count).
func (h *Hash) RandomField(now int64, r Rand) (field, value []byte, ok bool) {
	if t := h.tab(); t != nil {
		off, ok := t.randomLive(now, r)
		if !ok {
			return nil, nil, false
		}
		rc := t.rec(off)
		return t.field(rc), t.value(rc), true
	}
	n := lpLen(h.block(), now)
	if n == 0 {
		return nil, nil, false
	}
	k := intN(r, n)
	_, p := lpExpiredPrefix(h.block(), now)
	ex := lpIsEx(h.block())
	for {
		e := lpEntryAt(h.block(), p, ex)
		if k == 0 {
			return h.block()[e.fOff : e.fOff+e.fLen], h.block()[e.vOff : e.vOff+e.vLen], true
		}
		k--
		p = e.end
	}
}

// RandomFields calls fn for count randomly chosen live fields (HRANDFIELD
// with a count). With repeat the picks are independent and may repeat; the
// caller passes the absolute value of a negative count. Without repeat the
// fields are distinct and, when count >= Len, every live field is given
// once, in Range order. fn must not modify the hash.
func (h *Hash) RandomFields(now int64, count int, repeat bool, r Rand, fn func(field, value []byte)) {
	if count <= 0 {
		return
	}
	n := h.Len(now)
	if n == 0 {
		return
	}
	if !repeat && count >= n {
		h.Range(now, func(f, v []byte) bool { fn(f, v); return true })
		return
	}
	if t := h.tab(); t != nil && (repeat || count*3 <= n) {
		// Pick slots at random; for distinct picks remember what was given.
		var seen map[int]struct{}
		if !repeat {
			seen = make(map[int]struct{}, count)
		}
		for given := 0; given < count; {
			off, _ := t.randomLive(now, r)
			if seen != nil {
				if _, dup := seen[off]; dup {
					continue
				}
				seen[off] = struct{}{}
			}
			rc := t.rec(off)
			fn(t.field(rc), t.value(rc))
			given++
		}
		return
	}
	// Gather the live entries (the small form, or most of a large one) and
	// pick from the list: with repetition independently, without by a
	// partial Fisher-Yates shuffle.
	offs := h.liveOffsets(now, n)
	emit := func(off int) {
		if h.tab() != nil {
			rc := h.tab().rec(off)
			fn(h.tab().field(rc), h.tab().value(rc))
			return
		}
		e := lpEntryAt(h.block(), off, lpIsEx(h.block()))
		fn(h.block()[e.fOff:e.fOff+e.fLen], h.block()[e.vOff:e.vOff+e.vLen])
	}
	if repeat {
		for range count {
			emit(offs[intN(r, len(offs))])
		}
		return
	}
	for i := range count {
		j := i + intN(r, len(offs)-i)
		offs[i], offs[j] = offs[j], offs[i]
		emit(offs[i])
	}
}

// liveOffsets returns the offsets of the live entries (small form) or
// records (large form).
func (h *Hash) liveOffsets(now int64, n int) []int {
	offs := make([]int, 0, n)
	if t := h.tab(); t != nil {
		for p := 0; p < len(t.arena); {
			rc := t.rec(p)
			p = rc.end
			if rc.flags&recDead != 0 {
				continue
			}
			if ttl := t.ttlOf(rc); ttl != 0 && ttl <= now {
				continue
			}
			offs = append(offs, rc.off)
		}
		return offs
	}
	_, p := lpExpiredPrefix(h.block(), now)
	ex := lpIsEx(h.block())
	for p < len(h.block()) {
		e := lpEntryAt(h.block(), p, ex)
		offs = append(offs, p)
		p = e.end
	}
	return offs
}

// randomLive picks a live record uniformly: a random occupied slot, retried
// while empty or expired, which is uniform over the live records. The index
// is kept at least 1/8 full, so retries are few unless most fields have
// expired without being reclaimed; then it falls back to a list.
func (t *table) randomLive(now int64, r Rand) (off int, ok bool) {
	for range 64 {
		s := t.slots[intN(r, len(t.slots))]
		if s == 0 {
			continue
		}
		rc := t.rec(slotOff(s))
		if ttl := t.ttlOf(rc); ttl == 0 || ttl > now {
			return rc.off, true
		}
	}
	var offs []int
	for _, s := range t.slots {
		if s == 0 {
			continue
		}
		rc := t.rec(slotOff(s))
		if ttl := t.ttlOf(rc); ttl == 0 || ttl > now {
			offs = append(offs, rc.off)
		}
	}
	if len(offs) == 0 {
		return 0, false
	}
	return offs[intN(r, len(offs))], true
}
