package hash

import "encoding/binary"

// Builder assembles a small hash from fields added one at a time, in a
// buffer the caller reuses, and then gives it its block in one allocation
// of the exact size: what loading a file's listpack hashes wants, where
// setting the fields one by one grew each block several times over.
// Fields are added in order and without TTLs, so the block is what Set
// would have built from the same fields.
type Builder struct {
	entries []byte // the block's entries, without its header
	n       int
	maxLen  int // longest field or value
}

// Reset empties b, keeping its buffer.
func (b *Builder) Reset() { b.entries, b.n, b.maxLen = b.entries[:0], 0, 0 }

// Len is the number of fields added.
func (b *Builder) Len() int { return b.n }

// Fits reports whether one more field and value of the given lengths would
// leave the small form within lim, as Set's conversion rule decides it.
func (b *Builder) Fits(fieldLen, valueLen int, lim Limits) bool {
	if b.n+1 > lim.MaxListpackEntries || fieldLen > lim.MaxListpackValue || valueLen > lim.MaxListpackValue {
		return false
	}
	size := uvarintLen(uint64(b.n)<<1) + len(b.entries) +
		uvarintLen(uint64(fieldLen)) + fieldLen + uvarintLen(uint64(valueLen)) + valueLen
	return size <= maxListpackBytes
}

// Add appends field and value; it reports false, adding nothing, when
// field is in b already. The bytes are copied.
func (b *Builder) Add(field, value []byte) bool {
	for p := 0; p < len(b.entries); {
		fl, q := readUvarint(b.entries, p)
		fend := q + int(fl)
		if int(fl) == len(field) && string(b.entries[q:fend]) == string(field) {
			return false
		}
		vl, r := readUvarint(b.entries, fend)
		p = r + int(vl)
	}
	b.entries = binary.AppendUvarint(b.entries, uint64(len(field)))
	b.entries = append(b.entries, field...)
	b.entries = binary.AppendUvarint(b.entries, uint64(len(value)))
	b.entries = append(b.entries, value...)
	b.n++
	b.maxLen = max(b.maxLen, len(field), len(value))
	return true
}

// Build makes h, which must be empty, hold the fields added, in the small
// form whatever their number (a caller adds past Fits only by mistake).
func (b *Builder) Build(h *Hash) {
	if b.n == 0 {
		return
	}
	hdr := uint64(b.n) << 1
	blk := make([]byte, uvarintLen(hdr)+len(b.entries))
	p := binary.PutUvarint(blk, hdr)
	copy(blk[p:], b.entries)
	h.setBlock(blk)
}
