package hash

import "encoding/binary"

// The small form is one []byte:
//
//	header:  uvarint(count<<1 | ex)
//	entry:   uvarint(len(field)) field uvarint(len(value)) value [uvarint(expiry)]
//
// The expiry varint is present only when the ex bit is set ("listpackex");
// 0 means no TTL. In the ex form the entries are ordered as Redis orders its
// listpackex: fields with a TTL first by ascending expiry time, then the
// fields without one in insertion order. So the next field to expire is the
// first entry, the expired fields are always a prefix, and reclaiming them
// is one memmove.
//
// For 5 fields and 5 values of 10 bytes the block is 1 + 5*22 = 111 bytes:
// one heap object of the 112-byte size class.

// lpEntry locates one entry inside the block.
type lpEntry struct {
	start, end int // the entry is b[start:end]
	fOff, fLen int // field
	vHdr       int // start of the value's length varint
	vOff, vLen int // value
	ttl        int64
}

func (e *lpEntry) expiredAt(now int64) bool { return e.ttl != 0 && e.ttl <= now }

// readUvarint decodes the varint at b[p:], returning it and the offset after
// it. The block is trusted: it was written by this package.
func readUvarint(b []byte, p int) (uint64, int) {
	if c := b[p]; c < 0x80 {
		return uint64(c), p + 1
	}
	var x uint64
	var s uint
	for {
		c := b[p]
		p++
		if c < 0x80 {
			return x | uint64(c)<<s, p
		}
		x |= uint64(c&0x7f) << s
		s += 7
	}
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// lpHeader returns the entry count, the ex bit and the offset of the first
// entry.
func lpHeader(b []byte) (n int, ex bool, p int) {
	if len(b) == 0 {
		return 0, false, 0
	}
	v, p := readUvarint(b, 0)
	return int(v >> 1), v&1 == 1, p
}

func lpIsEx(b []byte) bool { return len(b) > 0 && b[0]&1 == 1 }

func lpEntryAt(b []byte, p int, ex bool) lpEntry {
	var e lpEntry
	e.start = p
	fl, p := readUvarint(b, p)
	e.fOff, e.fLen = p, int(fl)
	e.vHdr = p + int(fl)
	vl, p := readUvarint(b, e.vHdr)
	e.vOff, e.vLen = p, int(vl)
	p += int(vl)
	if ex {
		var t uint64
		t, p = readUvarint(b, p)
		e.ttl = int64(t)
	}
	e.end = p
	return e
}

// lpFind looks field up by a linear walk, as Redis does in a listpack.
func lpFind(b []byte, field []byte) (lpEntry, bool) {
	p, ex, ok := lpFindPos(b, field)
	if !ok {
		return lpEntry{}, false
	}
	return lpEntryAt(b, p, ex), true
}

// lpFindPos returns the offset of field's entry.
func lpFindPos(b []byte, field []byte) (p int, ex, ok bool) {
	_, ex, p = lpHeader(b)
	for p < len(b) {
		fl, q := readUvarint(b, p)
		fend := q + int(fl)
		if int(fl) == len(field) && string(b[q:fend]) == string(field) {
			return p, ex, true
		}
		vl, r := readUvarint(b, fend)
		p = r + int(vl)
		if ex {
			_, p = readUvarint(b, p)
		}
	}
	return 0, ex, false
}

// lpGet is lpFind for reads: the value and expiry only.
func lpGet(b []byte, field []byte) (value []byte, ttl int64, ok bool) {
	p, ex, ok := lpFindPos(b, field)
	if !ok {
		return nil, 0, false
	}
	fl, p := readUvarint(b, p)
	vl, p := readUvarint(b, p+int(fl))
	value = b[p : p+int(vl)]
	if ex {
		t, _ := readUvarint(b, p+int(vl))
		ttl = int64(t)
	}
	return value, ttl, true
}

// lpExpiredPrefix counts the expired entries, which in the ex form are a
// prefix, and returns the offset where the live entries start.
func lpExpiredPrefix(b []byte, now int64) (k int, liveStart int) {
	_, ex, p := lpHeader(b)
	if !ex {
		return 0, p
	}
	for p < len(b) {
		e := lpEntryAt(b, p, true)
		if !e.expiredAt(now) {
			break
		}
		k++
		p = e.end
	}
	return k, p
}

func lpLen(b []byte, now int64) int {
	n, ex, _ := lpHeader(b)
	if !ex || n == 0 {
		return n
	}
	k, _ := lpExpiredPrefix(b, now)
	return n - k
}

func lpEntrySize(field, value []byte, ex bool, ttl int64) int {
	n := uvarintLen(uint64(len(field))) + len(field) + uvarintLen(uint64(len(value))) + len(value)
	if ex {
		n += uvarintLen(uint64(ttl))
	}
	return n
}

func lpEncodeEntry(dst []byte, field, value []byte, ex bool, ttl int64) {
	p := binary.PutUvarint(dst, uint64(len(field)))
	p += copy(dst[p:], field)
	p += binary.PutUvarint(dst[p:], uint64(len(value)))
	p += copy(dst[p:], value)
	if ex {
		binary.PutUvarint(dst[p:], uint64(ttl))
	}
}

// resize replaces b[start:end] with newLen bytes of undefined content, moving
// the tail, and returns the block. Growth reallocates to the larger of the
// size needed and 5/4 of the current capacity (small blocks: the size needed),
// rounded up to the allocator's size class. Exact growth, as Redis's
// listpacks do it, moved a 100-field block some 35 times on its way to
// 2.3 KB and left ten times its size as garbage; growing by a quarter, the
// spacing of jemalloc's size classes, bounds the copying to a few times the
// final size at the cost of up to a quarter of slack. A command that adds
// many fields at once sizes the block once (ReservePairs).
func resize(b []byte, start, end, newLen int) []byte {
	delta := newLen - (end - start)
	if delta == 0 {
		return b
	}
	total := len(b) + delta
	if total > cap(b) {
		want := total
		if c := cap(b); c >= 256 && c+c/4 > want {
			want = c + c/4
		}
		nb := append([]byte(nil), make([]byte, want)...)[:total]
		copy(nb, b[:start])
		copy(nb[start+newLen:], b[end:])
		return nb
	}
	if delta > 0 {
		old := len(b)
		b = b[:total]
		copy(b[end+delta:], b[end:old])
		return b
	}
	copy(b[start+newLen:], b[end:])
	b = b[:total]
	if slack := cap(b) - total; slack >= 64 && slack > total/2 {
		b = append([]byte(nil), b...)
	}
	return b
}

// lpSetHeader rewrites the header for count n.
func lpSetHeader(b []byte, n int, ex bool) []byte {
	v := uint64(n) << 1
	if ex {
		v |= 1
	}
	_, _, old := lpHeader(b)
	b = resize(b, 0, old, uvarintLen(v))
	binary.PutUvarint(b, v)
	return b
}

// lpRemove deletes entry e. A plain block left empty is released.
func lpRemove(b []byte, e lpEntry) []byte {
	n, ex, _ := lpHeader(b)
	if n == 1 && !ex {
		return nil
	}
	b = resize(b, e.start, e.end, 0)
	return lpSetHeader(b, n-1, ex)
}

// lpInsertPos returns where an entry with expiry ttl goes: at the end, or in
// the ex form before the first entry that has no TTL or a later-or-equal one.
func lpInsertPos(b []byte, ttl int64) int {
	_, ex, p := lpHeader(b)
	if !ex || ttl == 0 {
		return len(b)
	}
	for p < len(b) {
		e := lpEntryAt(b, p, true)
		if e.ttl == 0 || e.ttl >= ttl {
			return p
		}
		p = e.end
	}
	return p
}

// lpInsert inserts an entry at byte offset pos.
func lpInsert(b []byte, pos int, field, value []byte, ttl int64) []byte {
	if len(b) == 0 {
		b = append(b, 0) // header: no entries, plain
		pos = 1
	}
	n, ex, _ := lpHeader(b)
	size := lpEntrySize(field, value, ex, ttl)
	b = resize(b, pos, pos, size)
	lpEncodeEntry(b[pos:pos+size], field, value, ex, ttl)
	return lpSetHeader(b, n+1, ex)
}

// lpReplaceValue overwrites e's value in place, moving the tail only when
// the length changes.
func lpReplaceValue(b []byte, e lpEntry, value []byte) []byte {
	if len(value) == e.vLen {
		copy(b[e.vOff:], value)
		return b
	}
	size := uvarintLen(uint64(len(value))) + len(value)
	b = resize(b, e.vHdr, e.vOff+e.vLen, size)
	p := e.vHdr + binary.PutUvarint(b[e.vHdr:], uint64(len(value)))
	copy(b[p:], value)
	return b
}

// lpToEx rewrites a plain block in the ex form: every entry gains a zero
// expiry; the order does not change.
func lpToEx(b []byte) []byte {
	n, ex, p := lpHeader(b)
	if ex {
		return b
	}
	hdr := uint64(n)<<1 | 1
	nb := make([]byte, 0, uvarintLen(hdr)+len(b)-p+n)
	nb = binary.AppendUvarint(nb, hdr)
	for p < len(b) {
		e := lpEntryAt(b, p, false)
		nb = append(nb, b[e.start:e.end]...)
		nb = append(nb, 0)
		p = e.end
	}
	return nb
}

// lpPut is put for the small form. done is false when the hash must convert
// first; then nothing has been written except, possibly, the removal of the
// expired field of the same name, which is harmless.
func (h *Hash) lpPut(now int64, field, value []byte, mode int, at int64, lim Limits) (created, done bool) {
	b := h.block()
	if mode == ttlSet && !lpIsEx(b) {
		b = lpToEx(b)
		h.setBlock(b)
	}
	n, ex, _ := lpHeader(b)
	if e, found := lpFind(b, field); found {
		if e.expiredAt(now) {
			b = lpRemove(b, e)
			h.setBlock(b)
			n--
		} else {
			ttl := e.ttl
			switch mode {
			case ttlClear:
				ttl = 0
			case ttlSet:
				ttl = at
			}
			if len(b)-e.vLen+len(value) > maxListpackBytes {
				return false, false
			}
			if ttl == e.ttl {
				h.setBlock(lpReplaceValue(b, e, value))
				return false, true
			}
			// The expiry changes: the entry moves to its place in the
			// expiry order (to the end when the TTL is cleared).
			b = lpRemove(b, e)
			h.setBlock(lpInsert(b, lpInsertPos(b, ttl), field, value, ttl))
			return false, true
		}
	}
	ttl := int64(0)
	if mode == ttlSet {
		ttl = at
	}
	if n+1 > lim.MaxListpackEntries || len(b)+lpEntrySize(field, value, ex, ttl) > maxListpackBytes {
		return false, false
	}
	h.setBlock(lpInsert(b, lpInsertPos(b, ttl), field, value, ttl))
	return true, true
}

// ReservePairs makes room in a small hash for the fields and values of pairs
// (field, value, field, value...) as new entries, so that setting them one
// by one reallocates the block once at most (HSET of many fields). It does
// nothing when the pairs would not all fit in the small form: the hash will
// convert instead.
func (h *Hash) ReservePairs(pairs [][]byte, lim Limits) {
	if h.tab() != nil || len(pairs) < 4 {
		return
	}
	b := h.block()
	n, ex, hdr := lpHeader(b)
	if n+len(pairs)/2 > lim.MaxListpackEntries {
		return
	}
	size := 0
	for i := 0; i+1 < len(pairs); i += 2 {
		f, v := pairs[i], pairs[i+1]
		if len(f) > lim.MaxListpackValue || len(v) > lim.MaxListpackValue {
			return
		}
		size += lpEntrySize(f, v, ex, 0)
	}
	need := len(b) - hdr + uvarintLen(uint64(n+len(pairs)/2)<<1|1) + size
	if need <= cap(b) || need > maxListpackBytes {
		return
	}
	nb := append(make([]byte, 0, need), b...)
	h.setBlock(nb)
}
