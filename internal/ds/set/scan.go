package set

// Scan cursors. SSCAN must return every member that is present from the
// start to the end of a full iteration at least once; duplicates are allowed.
//
// Intsets and listpacks are small, so like Redis they return everything in
// one call and cursor 0.
//
// Hash tables scan their dense entry array from the top down. Deletion moves
// only the last entry into the hole, and the last entry is always in the part
// already scanned or the hole is in the part not yet scanned, so no member
// that stays put is skipped; members added meanwhile land on top and may be
// missed, which is allowed. The cursor is the count of entries left to scan,
// tagged with the top bit.
//
// Bitmaps scan in ascending value order; the cursor is the next value to
// visit (mapped with toU) shifted right by one, so it fits in 63 bits and
// never collides with the hash-table tag. Resuming at an even value may
// return one member twice. A cursor of the wrong family (the set changed
// encoding mid-scan, e.g. a bitmap that received a non-integer member)
// restarts the scan, which repeats members but never loses one.
const tableCursor = 1 << 63

// Scan calls fn with about count members starting at cursor (0 to begin)
// and returns the cursor to continue from, 0 when the iteration is
// complete. fn's slice is only valid during the call and fn must not modify
// the set.
func (s *Set) Scan(cursor uint64, count int, fn func(m []byte)) uint64 {
	count = max(count, 1)
	switch s.kind {
	case KindHashtable:
		left := s.ht.len()
		if cursor&tableCursor != 0 {
			left = min(left, int(cursor&^tableCursor))
		}
		for ; count > 0 && left > 0; count-- {
			left--
			fn(s.ht.member(left))
		}
		if left == 0 {
			return 0
		}
		return tableCursor | uint64(left)
	case KindBitmap:
		start := uint64(0)
		if cursor&tableCursor == 0 {
			start = cursor << 1
		}
		var next uint64
		var buf [maxIntLen]byte
		s.bm.eachFrom(start, func(u uint64) bool {
			// Stop only where the cursor can be non-zero (u >= 2).
			if count <= 0 && u >= 2 {
				next = u >> 1
				return false
			}
			fn(appendInt(buf[:0], fromU(u)))
			count--
			return true
		})
		return next
	}
	for m := range s.All() {
		fn(m)
	}
	return 0
}
