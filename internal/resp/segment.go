package resp

import (
	"slices"
	"strconv"
)

// Elements is a sequence of byte strings that stay unchanged for as long
// as a Segment refers to them (list.Snapshot: views of list nodes, whose
// bytes are never overwritten). At is called with i from 0 up to Len()-1
// in order, from one goroutine at a time. Lengths returns the elements'
// total length and how many have lengths of each decimal width (width[d]
// for d+1 digits), which size the encoding without a pass over them.
type Elements interface {
	Len() int
	At(i int) []byte
	Lengths() (total int64, width [20]int)
}

// Segment is a reply that is encoded as it is sent rather than when the
// command runs: an array of bulk strings over Elements. Size is the
// number of bytes its encoding has left to produce, so the output it
// stands for is counted (output buffer limits, CLIENT LIST omem) before
// any byte of it is encoded. One goroutine at a time calls Next.
type Segment struct {
	els  Elements
	i    int   // next element to encode
	off  int   // bytes of element i's encoding already produced
	head int   // bytes of the array header already produced
	left int64 // bytes still to produce
}

// NewArraySegment returns the segment for an array of els's elements.
func NewArraySegment(els Elements) *Segment {
	var tmp [24]byte
	total, width := els.Lengths()
	size := int64(len(arrayHeader(tmp[:0], els.Len()))) + total
	for d, k := range width {
		size += int64(k) * int64(1+d+1+2+2) // "$", d+1 digits, CRLF, the bytes' CRLF
	}
	return &Segment{els: els, left: size}
}

// Size is how many bytes of the encoding Next has still to produce.
func (s *Segment) Size() int64 { return s.left }

// Next appends the next bytes of the encoding to dst, at most room of
// them, and returns it. An element longer than room is split across
// calls.
func (s *Segment) Next(dst []byte, room int) []byte {
	start := len(dst)
	end := len(dst) + room
	var tmp [24]byte
	if h := arrayHeader(tmp[:0], s.els.Len()); s.head < len(h) {
		k := min(room, len(h)-s.head)
		dst = append(dst, h[s.head:s.head+k]...)
		s.head += k
	}
	for s.i < s.els.Len() && len(dst) < end {
		v := s.els.At(s.i)
		room := end - len(dst)
		if s.off == 0 && bulkEncLen(len(v)) <= room {
			// The common case: the whole element fits.
			dst = AppendBulk(dst, v)
			s.i++
			continue
		}
		// Element i's encoding is header, v, CRLF: copy the window of it
		// from s.off that fits.
		h := AppendBulkHeader(tmp[:0], len(v))
		k := s.off
		if k < len(h) {
			n := min(room, len(h)-k)
			dst = append(dst, h[k:k+n]...)
			k, room = k+n, room-n
		}
		if b := k - len(h); b >= 0 && b < len(v) && room > 0 {
			n := min(room, len(v)-b)
			dst = append(dst, v[b:b+n]...)
			k, room = k+n, room-n
		}
		if c := k - len(h) - len(v); c >= 0 && c < 2 && room > 0 {
			n := min(room, 2-c)
			dst = append(dst, "\r\n"[c:c+n]...)
			k += n
		}
		if k == len(h)+len(v)+2 {
			s.i, s.off = s.i+1, 0
		} else {
			s.off = k
		}
	}
	s.left -= int64(len(dst) - start)
	return dst
}

func arrayHeader(dst []byte, n int) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}

// AppendBulkHeader appends "$n\r\n", from the shared headers when n is
// short.
func AppendBulkHeader(dst []byte, n int) []byte {
	if n < len(bulkHeaders) {
		return append(dst, bulkHeaders[n]...)
	}
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}

// bulkEncLen is the size of a bulk string of n bytes: "$n\r\n", the
// bytes, "\r\n".
func bulkEncLen(n int) int {
	if n < len(bulkHeaders) {
		return len(bulkHeaders[n]) + n + 2
	}
	d := 1
	for m := n; m >= 10; m /= 10 {
		d++
	}
	return 1 + d + 2 + n + 2
}

// AppendBulk appends v as a RESP bulk string.
func AppendBulk[S ~string | ~[]byte](dst []byte, v S) []byte {
	dst = AppendBulkHeader(dst, len(v))
	dst = append(dst, v...)
	return append(dst, '\r', '\n')
}

// Defer hands seg, which Next must not have started, to the writer's
// Deferrer, which queues it after the bytes already in Buf; without one,
// or when it declines, the reply is encoded into Buf now. Either way the
// client receives the same bytes.
func (w *Writer) Defer(seg *Segment) {
	if w.Deferrer != nil && w.Deferrer(seg) {
		return
	}
	// Encoded as Array and Bulk do, under the same output limit check
	// (Limit).
	w.Buf = slices.Grow(w.Buf, int(min(seg.Size(), 1<<20)))
	n := seg.els.Len()
	w.Array(n)
	for i := range n {
		w.Bulk(seg.els.At(i))
	}
}

// CanDefer reports whether Defer may queue a segment of n elements
// rather than encode it now: callers with a cheaper way to encode inline
// use it then.
func (w *Writer) CanDefer(n int) bool { return w.Deferrer != nil && n >= w.DeferFrom }
