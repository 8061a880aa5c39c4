package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/abacusdb/abacus/internal/ds/hash"
)

// ErrTruncated reports input that ends inside a value.
var ErrTruncated = errors.New("unexpected end of input")

// CorruptError describes malformed input: what was wrong and where.
type CorruptError struct {
	Offset int
	What   string
}

func (e *CorruptError) Error() string { return fmt.Sprintf("at offset %d: %s", e.Offset, e.What) }

// maxAlloc bounds a single string the decoder will build (LZF output):
// Redis's proto-max-bulk-len ceiling.
const maxAlloc = 1 << 32

// reader walks encoded input. Slices it returns alias the input.
type reader struct {
	b   []byte
	off int
	// src, when set, is the stream b is read from: a read past the bytes
	// held fills b from it (loadstream.go).
	src *source
	// Scratch that decoding reuses from value to value.
	group [3]elem      // a run of packed elements (groups)
	hb    hash.Builder // a small hash's block
	// A sorted set's members back to back, where each ends, and scores.
	zbuf    []byte
	zends   []int
	zscores []float64
	// A packed list node's elements, and its integers as text.
	elems  []elem
	vals   [][]byte
	numBuf []byte
	// A key's and a string value's bytes when they are not the input's.
	keyBuf, strBuf []byte
	blobBuf        []byte  // a compressed collection's packed blob
	ints           []int64 // an intset's members
}

func (r *reader) corrupt(format string, args ...any) error {
	return &CorruptError{Offset: r.off, What: fmt.Sprintf(format, args...)}
}

func (r *reader) left() int { return len(r.b) - r.off }

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) && (r.src == nil || r.fill(1) != nil) {
		return 0, ErrTruncated
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

// bytes returns the next n bytes.
func (r *reader) bytes(n uint64) ([]byte, error) {
	if n > uint64(r.left()) && (r.src == nil || r.fill(n) != nil) {
		return nil, ErrTruncated
	}
	p := r.b[r.off : r.off+int(n) : r.off+int(n)]
	r.off += int(n)
	return p, nil
}

// length reads a length; special is true when it is an encoding marker
// (11xxxxxx) rather than a length, and the value is the encoding.
func (r *reader) length() (v uint64, special bool, err error) {
	c, err := r.byte()
	if err != nil {
		return 0, false, err
	}
	switch c >> 6 {
	case len6:
		return uint64(c & 0x3f), false, nil
	case len14:
		d, err := r.byte()
		if err != nil {
			return 0, false, err
		}
		return uint64(c&0x3f)<<8 | uint64(d), false, nil
	case lenEncV:
		return uint64(c & 0x3f), true, nil
	}
	switch c {
	case len32:
		p, err := r.bytes(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(p)), false, nil
	case len64:
		p, err := r.bytes(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(p), false, nil
	}
	r.off--
	return 0, false, r.corrupt("unknown length encoding 0x%02x", c)
}

// count reads a plain length (a collection size).
func (r *reader) count() (uint64, error) {
	v, special, err := r.length()
	if err != nil {
		return 0, err
	}
	if special {
		return 0, r.corrupt("encoded value where a length was expected")
	}
	return v, nil
}

// str reads a string in any of its encodings. isInt reports an
// integer-encoded string, whose value is iv (s is nil then).
func (r *reader) str() (s []byte, iv int64, isInt bool, err error) { return r.strInto(nil) }

// strInto is str expanding a compressed string into *scratch's memory,
// when scratch is set, rather than a new slice: for a string the caller
// copies before the next use of the scratch.
func (r *reader) strInto(scratch *[]byte) (s []byte, iv int64, isInt bool, err error) {
	v, special, err := r.length()
	if err != nil {
		return nil, 0, false, err
	}
	if !special {
		s, err = r.bytes(v)
		return s, 0, false, err
	}
	switch v {
	case encInt8:
		c, err := r.byte()
		return nil, int64(int8(c)), true, err
	case encInt16:
		p, err := r.bytes(2)
		if err != nil {
			return nil, 0, false, err
		}
		return nil, int64(int16(binary.LittleEndian.Uint16(p))), true, nil
	case encInt32:
		p, err := r.bytes(4)
		if err != nil {
			return nil, 0, false, err
		}
		return nil, int64(int32(binary.LittleEndian.Uint32(p))), true, nil
	case encLZF:
		start := r.off
		clen, err := r.count()
		if err != nil {
			return nil, 0, false, err
		}
		ulen, err := r.count()
		if err != nil {
			return nil, 0, false, err
		}
		src, err := r.bytes(clen)
		if err != nil {
			return nil, 0, false, err
		}
		if ulen == 0 || ulen > maxAlloc || ulen > clen*lzfMaxRatio+lzfMaxLit {
			r.off = start
			return nil, 0, false, r.corrupt("bad LZF lengths %d/%d", clen, ulen)
		}
		var dst []byte
		if scratch != nil {
			dst = *scratch
		}
		out, err := lzfDecompressTo(dst, src, int(ulen))
		if err != nil {
			r.off = start
			return nil, 0, false, r.corrupt("corrupt LZF data")
		}
		if scratch != nil && cap(out) <= scratchMax {
			*scratch = out
		}
		return out, 0, false, nil
	}
	r.off--
	return nil, 0, false, r.corrupt("unknown string encoding %d", v)
}

// bstr is str with integers formatted as text.
func (r *reader) bstr() ([]byte, error) { return r.bstrInto(nil) }

// bstrInto is bstr formatting or expanding into *scratch's memory when
// scratch is set (see strInto).
func (r *reader) bstrInto(scratch *[]byte) ([]byte, error) {
	s, iv, isInt, err := r.strInto(scratch)
	if isInt {
		var dst []byte
		if scratch != nil {
			dst = (*scratch)[:0]
		}
		s = strconv.AppendInt(dst, iv, 10)
		if scratch != nil {
			*scratch = s
		}
	}
	return s, err
}

// binaryDouble reads an 8-byte little-endian IEEE 754 double (ZSET_2).
func (r *reader) binaryDouble() (float64, error) {
	p, err := r.bytes(8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(p)), nil
}

// textDouble reads the old double form: a length byte (253 NaN, 254 +inf,
// 255 -inf) and that many ASCII characters.
func (r *reader) textDouble() (float64, error) {
	c, err := r.byte()
	if err != nil {
		return 0, err
	}
	switch c {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	p, err := r.bytes(uint64(c))
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(p), 64)
	if err != nil {
		return 0, r.corrupt("bad double %q", p)
	}
	return f, nil
}

// millis reads an 8-byte little-endian millisecond time.
func (r *reader) millis() (int64, error) {
	p, err := r.bytes(8)
	if err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(p)), nil
}
