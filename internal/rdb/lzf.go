package rdb

import (
	"errors"
	"sync"
)

// LZF, the compression Redis applies to strings in RDB files. The format is
// a sequence of runs, each starting with a control byte c:
//
//	c < 32:  a literal of c+1 bytes follows;
//	c >= 32: a back-reference of length (c>>5)+2, extended by the next byte
//	         when c>>5 == 7; the offset is ((c&31)<<8 | next byte) + 1
//	         bytes back from the current output position.

var errLZF = errors.New("corrupt LZF data")

var lzfTables = sync.Pool{New: func() any { return new([1 << lzfHashLog]int32) }}

const (
	lzfHashLog  = 14
	lzfMaxOff   = 1 << 13 // back-reference reach
	lzfMaxRef   = 7 + 255 + 2
	lzfMaxLit   = 32
	lzfMaxRatio = lzfMaxRef / 3 // most output bytes one input byte can make
)

// lzfDecompress expands src into a buffer of exactly n bytes.
func lzfDecompress(src []byte, n int) ([]byte, error) { return lzfDecompressTo(nil, src, n) }

// lzfDecompressTo is lzfDecompress into dst's memory (from its start) when
// it has room for n bytes: the caller's scratch.
func lzfDecompressTo(dst, src []byte, n int) ([]byte, error) {
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	out := dst[:n]
	o := 0
	for i := 0; i < len(src); {
		c := int(src[i])
		i++
		if c < 32 {
			l := c + 1
			if i+l > len(src) || o+l > n {
				return nil, errLZF
			}
			o += copy(out[o:], src[i:i+l])
			i += l
			continue
		}
		l := c >> 5
		if l == 7 {
			if i >= len(src) {
				return nil, errLZF
			}
			l += int(src[i])
			i++
		}
		if i >= len(src) {
			return nil, errLZF
		}
		ref := o - (c&31)<<8 - int(src[i]) - 1
		i++
		l += 2
		if ref < 0 || o+l > n {
			return nil, errLZF
		}
		// The reference may overlap what it writes (a run): out repeats
		// with period o-ref from ref on, so each copy may take all that is
		// written from ref, a whole number of periods, doubling.
		for k := 0; k < l; {
			k += copy(out[o+k:o+l], out[ref:o+k])
		}
		o += l
	}
	if o != n {
		return nil, errLZF
	}
	return out, nil
}

// lzfCompress returns the compressed form of src, or nil if it would not be
// at least 5 bytes shorter than src (Redis stores such strings raw).
func lzfCompress(src []byte) []byte { return lzfCompressTo(nil, src) }

// lzfCompressTo is lzfCompress into dst's memory (from its start), which
// it grows if need be: the caller's scratch.
func lzfCompressTo(dst, src []byte) []byte {
	n := len(src)
	limit := n - 4
	if limit <= 0 {
		return nil
	}
	if cap(dst) < n {
		dst = make([]byte, 0, n)
	}
	dst = dst[:0]
	// htab holds the position + 1 of the last 3-byte sequence with each
	// hash. Tables are reused without clearing: a stale entry is checked
	// like any other (it must lie before ip and its bytes must match), so
	// it can only cost a missed match, never a wrong one.
	htab := lzfTables.Get().(*[1 << lzfHashLog]int32)
	defer lzfTables.Put(htab)
	start := len(dst)
	lit := 0
	ctl := len(dst)
	dst = append(dst, 0)
	ip := 0
	for ip+2 < n {
		h := (uint32(src[ip])<<16 | uint32(src[ip+1])<<8 | uint32(src[ip+2])) * 2654435761 >> (32 - lzfHashLog)
		ref := int(htab[h]) - 1
		htab[h] = int32(ip + 1)
		if ref >= 0 && ref < ip && ip-ref-1 < lzfMaxOff && src[ref] == src[ip] && src[ref+1] == src[ip+1] && src[ref+2] == src[ip+2] {
			off := ip - ref - 1
			maxl := min(n-ip, lzfMaxRef)
			l := 3
			for l < maxl && src[ref+l] == src[ip+l] {
				l++
			}
			if lit > 0 {
				dst[ctl] = byte(lit - 1)
			} else {
				dst = dst[:len(dst)-1] // no literal: drop its control byte
			}
			code := l - 2
			if code < 7 {
				dst = append(dst, byte(off>>8|code<<5))
			} else {
				dst = append(dst, byte(off>>8|7<<5), byte(code-7))
			}
			dst = append(dst, byte(off))
			ip += l
			lit = 0
			ctl = len(dst)
			dst = append(dst, 0)
			if len(dst)-start > limit {
				return nil
			}
			continue
		}
		dst = append(dst, src[ip])
		ip++
		lit++
		if lit == lzfMaxLit {
			dst[ctl] = lzfMaxLit - 1
			lit = 0
			ctl = len(dst)
			dst = append(dst, 0)
		}
		if len(dst)-start > limit {
			return nil
		}
	}
	for ; ip < n; ip++ {
		dst = append(dst, src[ip])
		lit++
		if lit == lzfMaxLit {
			dst[ctl] = lzfMaxLit - 1
			lit = 0
			ctl = len(dst)
			dst = append(dst, 0)
		}
	}
	if lit > 0 {
		dst[ctl] = byte(lit - 1)
	} else {
		dst = dst[:len(dst)-1]
	}
	if len(dst)-start > limit || len(dst) == start {
		return nil
	}
	return dst
}
