package hll

import "sort"

// Sparse encoding opcodes (see the package comment).
const (
	opXZeroBit  = 0x40
	opValBit    = 0x80
	valMaxValue = 32 // largest value a VAL opcode holds
	valMaxLen   = 4  // longest run of a VAL opcode
	zeroMaxLen  = 64 // longest run of a ZERO opcode
)

func isZero(op byte) bool  { return op&0xc0 == 0 }
func isXZero(op byte) bool { return op&0xc0 == opXZeroBit }
func isVal(op byte) bool   { return op&opValBit != 0 }

func zeroLen(op byte) int  { return int(op&0x3f) + 1 }
func valValue(op byte) int { return int(op>>2&0x1f) + 1 }
func valLen(op byte) int   { return int(op&3) + 1 }
func valOp(v, n int) byte  { return byte((v-1)<<2|(n-1)) | opValBit }

// xzeroLen is the run length of the XZERO opcode at s[p]. An XZERO cut off by
// the end of the value takes past as its second byte: Redis reads the byte
// after the string there, normally the NUL that ends every sds string (but see
// cursor.past).
func xzeroLen(s []byte, p int, past byte) int {
	lo := past
	if p+1 < len(s) {
		lo = s[p+1]
	}
	return (int(s[p]&0x3f)<<8 | int(lo)) + 1
}

// putXZero writes an XZERO opcode for n (1..16384) zero registers.
func putXZero(dst []byte, n int) {
	dst[0] = byte((n-1)>>8) | opXZeroBit
	dst[1] = byte(n - 1)
}

// putZeros writes the opcode Redis uses for a run of n zero registers when it
// splits a run: ZERO up to 64, XZERO above. It returns the bytes written.
func putZeros(dst []byte, n int) int {
	if n > zeroMaxLen {
		putXZero(dst, n)
		return 2
	}
	dst[0] = byte(n - 1)
	return 1
}

// walkSparse decodes the sparse opcodes in s (the bytes after the header) the
// way Redis's hllSparseToDense and hllMerge do, calling val for each VAL run,
// and reports whether they cover exactly 16384 registers. A VAL run that would
// pass register 16383 stops the walk (and fails it) before val is called.
// past is the byte after s (see xzeroLen).
func walkSparse(s []byte, past byte, val func(first, n int, v uint8)) bool {
	idx := 0
	for p := 0; p < len(s); {
		op := s[p]
		switch {
		case isZero(op):
			idx += zeroLen(op)
			p++
		case isXZero(op):
			idx += xzeroLen(s, p, past)
			p += 2
		default:
			n := valLen(op)
			if idx+n > Registers {
				return false
			}
			val(idx, n, uint8(valValue(op)))
			idx += n
			p++
		}
		if idx > Registers { // nothing can bring it back; Redis fails too
			return false
		}
	}
	return idx == Registers
}

func sparseValid(s []byte) bool {
	return walkSparse(s, 0, func(int, int, uint8) {})
}

// sparseMax raises m to the registers of the sparse opcodes s (hllMerge).
func sparseMax(s []byte, m *[Registers]uint8) bool {
	return walkSparse(s, 0, func(first, n int, v uint8) {
		for i := first; i < first+n; i++ {
			m[i] = max(m[i], v)
		}
	})
}

// sparseHisto adds the registers of s to h, reporting whether they cover
// exactly 16384 registers (Redis's hllSparseRegHisto, which unlike the walks
// above does not stop at an overflowing VAL run; the outcome is the same).
func sparseHisto(s []byte, h *histogram) bool {
	idx := 0
	for p := 0; p < len(s); {
		op := s[p]
		switch {
		case isZero(op):
			n := zeroLen(op)
			idx += n
			h[0] += n
			p++
		case isXZero(op):
			n := xzeroLen(s, p, 0)
			idx += n
			h[0] += n
			p += 2
		default:
			n := valLen(op)
			idx += n
			h[valValue(op)] += n
			p++
		}
		if idx > Registers {
			return false
		}
	}
	return idx == Registers
}

// sparseToDense converts the sparse value b to a new dense value, copying
// the whole header (magic, unused bytes and cached cardinality) as Redis
// does. It reports false, and returns nil, for a corrupt encoding. past is
// the byte after b (see xzeroLen).
func sparseToDense(b []byte, past byte) ([]byte, bool) {
	d := make([]byte, DenseSize)
	copy(d, b[:HeaderSize])
	d[encOffset] = encDense
	regs := d[HeaderSize:]
	ok := walkSparse(b[HeaderSize:], past, func(first, n int, v uint8) {
		for i := first; i < first+n; i++ {
			densePut(regs, i, v)
		}
	})
	if !ok {
		return nil, false
	}
	return d, true
}

// cursor carries state between the sparseSet calls of one command.
//
// past emulates the byte after the end of Redis's string, which matters only
// for a corrupt value ending in a cut-off XZERO (see xzeroLen). Redis resets
// it to NUL whenever the length changes, but an update that rewrites such an
// XZERO copies its new sequence one byte past the new end, and later updates
// in the same command read that byte back. Between commands it is taken to be
// NUL again, as it is for a value Redis has just loaded or copied.
//
// With track set, the cursor also remembers where opcodes start, so that a
// run of updates (PFMERGE sets registers in ascending order) does not rescan
// the value from its beginning for every register. marks holds consecutive
// opcodes from the first one on. An update rewrites bytes only from the
// opcode before the one it changes (the merge pass starts there), and that
// opcode keeps its offset and first register, so marks up to it stay true.
//
// The zero value is ready to use, without tracking.
type cursor struct {
	past  byte
	track bool
	marks []mark
}

type mark struct{ off, first int32 }

// locate finds the opcode covering register index: its offset p in b, the
// first register it covers, its span and length in bytes, and the offset of
// the opcode before it (-1 for none). ok is false when the opcodes end first.
func (c *cursor) locate(b []byte, index int) (p, first, span, oplen, prev int, ok bool) {
	end := len(b)
	if !c.track {
		p, prev = HeaderSize, -1
		for p < end {
			op := b[p]
			oplen = 1
			switch {
			case isZero(op):
				span = zeroLen(op)
			case isVal(op):
				span = valLen(op)
			default:
				span = xzeroLen(b, p, c.past)
				oplen = 2
			}
			if index < first+span {
				return p, first, span, oplen, prev, true
			}
			prev = p
			p += oplen
			first += span
		}
		return 0, 0, 0, 0, 0, false
	}

	// Resume from the last mark at or before index.
	if len(c.marks) == 0 {
		c.marks = append(make([]mark, 0, 64), mark{HeaderSize, 0})
	}
	k := sort.Search(len(c.marks), func(i int) bool { return int(c.marks[i].first) > index }) - 1
	k = max(k, 0)
	c.marks = c.marks[:k+1]
	p, first = int(c.marks[k].off), int(c.marks[k].first)
	for p < end {
		op := b[p]
		oplen = 1
		switch {
		case isZero(op):
			span = zeroLen(op)
		case isVal(op):
			span = valLen(op)
		default:
			span = xzeroLen(b, p, c.past)
			oplen = 2
		}
		if index < first+span {
			// The last mark is p; keep marks only up to the one before it.
			n := len(c.marks) - 1
			prev = -1
			if n > 0 {
				prev = int(c.marks[n-1].off)
				c.marks = c.marks[:n]
			}
			return p, first, span, oplen, prev, true
		}
		p += oplen
		first += span
		c.marks = append(c.marks, mark{int32(p), int32(first)})
	}
	c.marks = c.marks[:1]
	return 0, 0, 0, 0, 0, false
}

// sparseSet raises register index of the sparse value b to count if count is
// larger, reproducing Redis's hllSparseSet byte for byte: the opcode covering
// the register is split in place (at most XZERO-VAL-XZERO), then a pass over up
// to five opcodes from the previous one merges adjacent equal VAL runs. It
// promotes b to dense when count exceeds 32 or when growing would pass
// maxBytes.
//
// It returns the new value (b itself, regrown, or a new dense value) and 1 if
// the register changed, 0 if not, -1 if the encoding does not reach register
// index (or, on promotion, is corrupt). c may be nil.
func sparseSet(b []byte, index int, count uint8, maxBytes int, c *cursor) ([]byte, int) {
	if c == nil {
		c = &cursor{}
	}
	if count > valMaxValue {
		return promote(b, index, count, c.past)
	}
	// Step 1: find the opcode covering index, and the one before it.
	p, first, span, oplen, prev, ok := c.locate(b, index)
	if !ok {
		return b, -1
	}
	end := len(b)

	op := b[p]
	opZero, opXZero := isZero(op), isXZero(op)

	// Step 2: the trivial cases.
	if !opZero && !opXZero {
		if valValue(op) >= int(count) {
			return b, 0 // A: the run already holds as much
		}
		if span == 1 {
			b[p] = valOp(int(count), 1) // B
			return sparseMerge(b, prev, c), 1
		}
	}
	if opZero && span == 1 {
		b[p] = valOp(int(count), 1) // C
		return sparseMerge(b, prev, c), 1
	}

	// D: split the run into (before, our register, after).
	var seq [5]byte
	n := 0
	last := first + span - 1
	if opZero || opXZero {
		if index != first {
			n += putZeros(seq[n:], index-first)
		}
		seq[n] = valOp(int(count), 1)
		n++
		if index != last {
			n += putZeros(seq[n:], last-index)
		}
	} else {
		cur := valValue(op)
		if index != first {
			seq[n] = valOp(cur, index-first)
			n++
		}
		seq[n] = valOp(int(count), 1)
		n++
		if index != last {
			seq[n] = valOp(cur, last-index)
			n++
		}
	}

	// Step 3: put the new sequence in place of the old opcode.
	delta := n - oplen
	if delta > 0 && len(b)+delta > maxBytes {
		return promote(b, index, count, c.past)
	}
	next := p + oplen // past the end only for a cut-off trailing XZERO
	switch {
	case delta > 0:
		b = append(b, seq[:delta]...) // grow; the bytes are overwritten below
		if next < end {
			copy(b[next+delta:], b[next:end])
		}
	case delta < 0:
		if next < end {
			copy(b[next+delta:], b[next:end])
		}
		b = b[:end+delta]
	}
	// copy stops at the end of b: for a cut-off trailing XZERO Redis writes
	// the last byte of the sequence just past the string's end.
	c.past = 0
	if copy(b[p:], seq[:n]) < n {
		c.past = seq[n-1]
	}
	return sparseMerge(b, prev, c), 1
}

// sparseMerge is step 4 of hllSparseSet: starting at prev (or at the first
// opcode) it looks at up to five opcodes, merging each VAL with an equal VAL
// right after it while the joint run fits in one opcode, and then marks the
// cached cardinality invalid.
func sparseMerge(b []byte, prev int, c *cursor) []byte {
	p := prev
	if p < 0 {
		p = HeaderSize
	}
	for scan := 5; p < len(b) && scan > 0; {
		scan--
		op := b[p]
		if isXZero(op) {
			p += 2
			continue
		}
		if isZero(op) {
			p++
			continue
		}
		if p+1 < len(b) && isVal(b[p+1]) {
			v := valValue(op)
			if n := valLen(op) + valLen(b[p+1]); v == valValue(b[p+1]) && n <= valMaxLen {
				b[p+1] = valOp(v, n)
				copy(b[p:], b[p+1:])
				b = b[:len(b)-1]
				c.past = 0
				continue // try the merged run with the one after it
			}
		}
		p++
	}
	invalidateCache(b)
	return b
}

// promote converts b to dense and sets the register there (the promote label
// of hllSparseSet). The register always changes: count is above anything the
// sparse run held.
func promote(b []byte, index int, count uint8, past byte) ([]byte, int) {
	d, ok := sparseToDense(b, past)
	if !ok {
		return b, -1
	}
	denseSet(d[HeaderSize:], index, count)
	return d, 1
}
