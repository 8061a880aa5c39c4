package ts

// bitWriter appends bits, most significant first, to a slice of 64-bit
// words. A word-sized buffer keeps writes to a shift and an or or two.
type bitWriter struct {
	w []uint64
	n uint32 // bits written
}

// write appends the low nbits of v (nbits in 1..64).
func (b *bitWriter) write(v uint64, nbits uint) {
	if nbits < 64 {
		v &= 1<<nbits - 1
	}
	used := uint(b.n & 63)
	if used == 0 {
		b.w = append(b.w, v<<(64-nbits))
	} else {
		free := 64 - used
		last := len(b.w) - 1
		if nbits <= free {
			b.w[last] |= v << (free - nbits)
		} else {
			b.w[last] |= v >> (nbits - free)
			b.w = append(b.w, v<<(64-(nbits-free)))
		}
	}
	b.n += uint32(nbits)
}

// bytes is the size of the written stream rounded up to whole bytes: what
// a chunk's data occupies.
func (b *bitWriter) bytes() int { return int(b.n+7) / 8 }

// bitReader reads what a bitWriter wrote.
type bitReader struct {
	w   []uint64
	pos uint32
}

// read returns the next nbits (1..64) bits.
func (r *bitReader) read(nbits uint) uint64 {
	i, off := r.pos>>6, uint(r.pos&63)
	r.pos += uint32(nbits)
	v := r.w[i] << off
	if off+nbits > 64 {
		v |= r.w[i+1] >> (64 - off)
	}
	return v >> (64 - nbits)
}

// bit returns the next bit.
func (r *bitReader) bit() bool {
	i, off := r.pos>>6, r.pos&63
	r.pos++
	return r.w[i]&(1<<(63-off)) != 0
}
