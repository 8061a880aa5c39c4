package set

import (
	"bytes"
	"encoding/binary"
)

// listpack is the small-set encoding for members that are not all integers:
// members back to back in one byte slice, each preceded by its length as a
// uvarint. Like Redis's listpack it trades O(n) lookups for a single
// allocation, which is the right trade below set-max-listpack-entries.
type listpack struct {
	data []byte
	n    int
}

// next decodes the member starting at off and returns it with the offset of
// the following one.
func (l *listpack) next(off int) (m []byte, end int) {
	sz, k := binary.Uvarint(l.data[off:])
	start := off + k
	end = start + int(sz)
	return l.data[start:end:end], end
}

// find returns the offsets of m's record and of the record after it, or -1.
func (l *listpack) find(m []byte) (start, end int) {
	for off := 0; off < len(l.data); {
		v, e := l.next(off)
		if bytes.Equal(v, m) {
			return off, e
		}
		off = e
	}
	return -1, -1
}

func (l *listpack) contains(m []byte) bool {
	s, _ := l.find(m)
	return s >= 0
}

// push appends m, which the caller knows to be absent.
func (l *listpack) push(m []byte) {
	l.data = binary.AppendUvarint(l.data, uint64(len(m)))
	l.data = append(l.data, m...)
	l.n++
}

func (l *listpack) remove(m []byte) bool {
	s, e := l.find(m)
	if s < 0 {
		return false
	}
	l.data = append(l.data[:s], l.data[e:]...)
	l.n--
	return true
}

// each calls fn for every member in insertion order until fn returns false.
func (l *listpack) each(fn func(m []byte) bool) bool {
	for off := 0; off < len(l.data); {
		m, e := l.next(off)
		if !fn(m) {
			return false
		}
		off = e
	}
	return true
}

// offsets returns the record offset of every member, for random access.
func (l *listpack) offsets() []int {
	offs := make([]int, 0, l.n)
	for off := 0; off < len(l.data); {
		offs = append(offs, off)
		_, off = l.next(off)
	}
	return offs
}

// at returns the i-th member by walking the records.
func (l *listpack) at(i int) []byte {
	off := 0
	for ; i > 0; i-- {
		_, off = l.next(off)
	}
	m, _ := l.next(off)
	return m
}

// removeOffsets deletes the records starting at the given offsets, which
// must be sorted ascending and distinct, in one pass.
func (l *listpack) removeOffsets(offs []int) {
	out := l.data[:0]
	prev := 0
	for _, off := range offs {
		out = append(out, l.data[prev:off]...)
		_, prev = l.next(off)
	}
	out = append(out, l.data[prev:]...)
	l.data = out
	l.n -= len(offs)
}
