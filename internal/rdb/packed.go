package rdb

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// The compact blobs Redis embeds in RDB strings: listpack (7.0+), ziplist
// (3.2-6.2), intset and zipmap (2.x). Only listpack and intset are
// written; all four are read. Each reader walks the whole blob, checks
// every length against its end and calls fn per element; an element is
// either a string s or, when s is nil, the integer v.

var errPacked = errors.New("bad encoded blob")

type elemFn func(s []byte, v int64) error

// elemBytes returns an element as bytes, formatting integers into scratch.
func elemBytes(s []byte, v int64, scratch []byte) []byte {
	if s != nil {
		return s
	}
	return strconv.AppendInt(scratch[:0], v, 10)
}

const (
	lpHeaderSize = 6
	lpEOF        = 0xff
)

// lpBacklenSize is the size of the back-length field after an entry whose
// encoding and data take l bytes.
func lpBacklenSize(l int) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

func appendBacklen(b []byte, l int) []byte {
	switch lpBacklenSize(l) {
	case 1:
		return append(b, byte(l))
	case 2:
		return append(b, byte(l>>7), byte(l&127|128))
	case 3:
		return append(b, byte(l>>14), byte(l>>7&127|128), byte(l&127|128))
	case 4:
		return append(b, byte(l>>21), byte(l>>14&127|128), byte(l>>7&127|128), byte(l&127|128))
	}
	return append(b, byte(l>>28), byte(l>>21&127|128), byte(l>>14&127|128), byte(l>>7&127|128), byte(l&127|128))
}

// readBacklen decodes the back-length stored in p (its exact bytes).
func readBacklen(p []byte) int {
	v := 0
	for _, c := range p {
		v = v<<7 | int(c&127)
	}
	return v
}

// listpackBuilder writes a listpack.
type listpackBuilder struct {
	b []byte
	n int
	// pool is where b came from (pooledListpack), nil if from the heap.
	pool *[]byte
}

func newListpack(capHint int) *listpackBuilder {
	b := make([]byte, lpHeaderSize, lpHeaderSize+capHint+1)
	return &listpackBuilder{b: b}
}

// addString appends s, as an integer entry when it is one (as lpAppend does).
func (l *listpackBuilder) addString(s []byte) {
	if len(s) <= 20 {
		if v, ok := canonicalInt(s); ok {
			l.addInt(v)
			return
		}
	}
	start := len(l.b)
	switch n := len(s); {
	case n < 64:
		l.b = append(l.b, 0x80|byte(n))
	case n < 4096:
		l.b = append(l.b, 0xe0|byte(n>>8), byte(n))
	default:
		l.b = append(l.b, 0xf0)
		l.b = binary.LittleEndian.AppendUint32(l.b, uint32(n))
	}
	l.b = append(l.b, s...)
	l.b = appendBacklen(l.b, len(l.b)-start)
	l.n++
}

func (l *listpackBuilder) addInt(v int64) {
	start := len(l.b)
	switch {
	case v >= 0 && v <= 127:
		l.b = append(l.b, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint64(v) & (1<<13 - 1)
		l.b = append(l.b, 0xc0|byte(u>>8), byte(u))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		l.b = append(l.b, 0xf1)
		l.b = binary.LittleEndian.AppendUint16(l.b, uint16(v))
	case v >= -1<<23 && v < 1<<23:
		u := uint32(v)
		l.b = append(l.b, 0xf2, byte(u), byte(u>>8), byte(u>>16))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		l.b = append(l.b, 0xf3)
		l.b = binary.LittleEndian.AppendUint32(l.b, uint32(v))
	default:
		l.b = append(l.b, 0xf4)
		l.b = binary.LittleEndian.AppendUint64(l.b, uint64(v))
	}
	l.b = appendBacklen(l.b, len(l.b)-start)
	l.n++
}

// size is the listpack's size once finished.
func (l *listpackBuilder) size() int { return len(l.b) + 1 }

// finish completes the header and terminator and returns the bytes.
func (l *listpackBuilder) finish() []byte {
	l.b = append(l.b, lpEOF)
	binary.LittleEndian.PutUint32(l.b, uint32(len(l.b)))
	n := l.n
	if n > 65535 {
		n = 65535
	}
	binary.LittleEndian.PutUint16(l.b[4:], uint16(n))
	return l.b
}

// signExtend interprets the low bits of u as a two's complement number.
func signExtend(u uint64, bits uint) int64 {
	shift := 64 - bits
	return int64(u<<shift) >> shift
}

// walkListpack calls fn for each element of the listpack p.
func walkListpack(p []byte, fn elemFn) error {
	if len(p) < lpHeaderSize+1 || int(binary.LittleEndian.Uint32(p)) != len(p) || p[len(p)-1] != lpEOF {
		return errPacked
	}
	want := int(binary.LittleEndian.Uint16(p[4:]))
	n := 0
	i := lpHeaderSize
	end := len(p) - 1
	for i < end {
		c := p[i]
		var s []byte
		var v int64
		var hdr, dl int // encoding bytes, data bytes
		need := func(k int) bool { return i+k <= end }
		switch {
		case c < 0x80:
			hdr, v = 1, int64(c)
		case c&0xc0 == 0x80:
			hdr, dl = 1, int(c&0x3f)
		case c&0xe0 == 0xc0:
			if !need(2) {
				return errPacked
			}
			hdr, v = 2, signExtend(uint64(c&0x1f)<<8|uint64(p[i+1]), 13)
		case c&0xf0 == 0xe0:
			if !need(2) {
				return errPacked
			}
			hdr, dl = 2, int(c&0x0f)<<8|int(p[i+1])
		case c == 0xf0:
			if !need(5) {
				return errPacked
			}
			hdr = 5
			l := binary.LittleEndian.Uint32(p[i+1:])
			if uint64(l) > uint64(end-i) {
				return errPacked
			}
			dl = int(l)
		case c == 0xf1:
			if !need(3) {
				return errPacked
			}
			hdr, v = 3, int64(int16(binary.LittleEndian.Uint16(p[i+1:])))
		case c == 0xf2:
			if !need(4) {
				return errPacked
			}
			hdr, v = 4, signExtend(uint64(p[i+1])|uint64(p[i+2])<<8|uint64(p[i+3])<<16, 24)
		case c == 0xf3:
			if !need(5) {
				return errPacked
			}
			hdr, v = 5, int64(int32(binary.LittleEndian.Uint32(p[i+1:])))
		case c == 0xf4:
			if !need(9) {
				return errPacked
			}
			hdr, v = 9, int64(binary.LittleEndian.Uint64(p[i+1:]))
		default:
			return errPacked
		}
		isStr := c >= 0x80 && (c&0xc0 == 0x80 || c&0xf0 == 0xe0 || c == 0xf0)
		entry := hdr + dl
		bl := lpBacklenSize(entry)
		if !need(entry + bl) {
			return errPacked
		}
		if readBacklen(p[i+entry:i+entry+bl]) != entry {
			return errPacked
		}
		if isStr {
			s = p[i+hdr : i+entry : i+entry]
			if s == nil {
				s = []byte{}
			}
		}
		if err := fn(s, v); err != nil {
			return err
		}
		n++
		i += entry + bl
	}
	if want != 65535 && want != n {
		return errPacked
	}
	return nil
}

// walkZiplist calls fn for each element of the ziplist p.
func walkZiplist(p []byte, fn elemFn) error {
	const hdr = 10
	if len(p) < hdr+1 || int(binary.LittleEndian.Uint32(p)) != len(p) || p[len(p)-1] != 0xff {
		return errPacked
	}
	want := int(binary.LittleEndian.Uint16(p[8:]))
	end := len(p) - 1
	n := 0
	prev := 0
	for i := hdr; i < end; {
		start := i
		// prevlen
		pl := int(p[i])
		i++
		if pl == 0xfe {
			if i+4 > end {
				return errPacked
			}
			pl = int(binary.LittleEndian.Uint32(p[i:]))
			i += 4
		}
		if pl != prev {
			return errPacked
		}
		if i >= end {
			return errPacked
		}
		c := p[i]
		var s []byte
		var v int64
		var dl int
		isStr := true
		switch c >> 6 {
		case 0:
			dl = int(c & 0x3f)
			i++
		case 1:
			if i+2 > end {
				return errPacked
			}
			dl = int(c&0x3f)<<8 | int(p[i+1])
			i += 2
		case 2:
			if c != 0x80 || i+5 > end {
				return errPacked
			}
			l := binary.BigEndian.Uint32(p[i+1:])
			if uint64(l) > uint64(end) {
				return errPacked
			}
			dl = int(l)
			i += 5
		default:
			isStr = false
			i++
			switch {
			case c == 0xc0:
				dl = 2
			case c == 0xd0:
				dl = 4
			case c == 0xe0:
				dl = 8
			case c == 0xf0:
				dl = 3
			case c == 0xfe:
				dl = 1
			case c >= 0xf1 && c <= 0xfd:
				v = int64(c&0x0f) - 1
			default:
				return errPacked
			}
		}
		if i+dl > end {
			return errPacked
		}
		d := p[i : i+dl : i+dl]
		if isStr {
			s = d
			if s == nil {
				s = []byte{}
			}
		} else {
			switch dl {
			case 1:
				v = int64(int8(d[0]))
			case 2:
				v = int64(int16(binary.LittleEndian.Uint16(d)))
			case 3:
				v = signExtend(uint64(d[0])|uint64(d[1])<<8|uint64(d[2])<<16, 24)
			case 4:
				v = int64(int32(binary.LittleEndian.Uint32(d)))
			case 8:
				v = int64(binary.LittleEndian.Uint64(d))
			}
		}
		i += dl
		prev = i - start
		if err := fn(s, v); err != nil {
			return err
		}
		n++
	}
	if want != 65535 && want != n {
		return errPacked
	}
	return nil
}

// walkIntset calls fn for each integer of the intset p, checking that they
// ascend strictly.
func walkIntset(p []byte, fn func(v int64) error) error {
	if len(p) < 8 {
		return errPacked
	}
	w := binary.LittleEndian.Uint32(p)
	n := binary.LittleEndian.Uint32(p[4:])
	if w != 2 && w != 4 && w != 8 || uint64(len(p)-8) != uint64(n)*uint64(w) {
		return errPacked
	}
	var last int64
	for i := 0; i < int(n); i++ {
		q := p[8+i*int(w):]
		var v int64
		switch w {
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(q)))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(q)))
		default:
			v = int64(binary.LittleEndian.Uint64(q))
		}
		if i > 0 && v <= last {
			return errPacked
		}
		last = v
		if err := fn(v); err != nil {
			return err
		}
	}
	return nil
}

// appendIntset appends an intset of the sorted, distinct values vs.
func appendIntset(b []byte, vs []int64) []byte {
	w := 2
	for _, v := range vs {
		switch {
		case v < math.MinInt32 || v > math.MaxInt32:
			w = 8
		case (v < math.MinInt16 || v > math.MaxInt16) && w < 4:
			w = 4
		}
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(w))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(vs)))
	for _, v := range vs {
		switch w {
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		default:
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	}
	return b
}

// walkZipmap calls fn with each field and value of the zipmap p (Redis
// 2.x's small hash).
func walkZipmap(p []byte, fn func(f, v []byte) error) error {
	if len(p) < 2 {
		return errPacked
	}
	i := 1 // zmlen: a count when < 254, not trusted
	readLen := func() (int, bool) {
		if i >= len(p) {
			return 0, false
		}
		c := p[i]
		switch {
		case c < 254:
			i++
			return int(c), true
		case c == 254:
			if i+5 > len(p) {
				return 0, false
			}
			l := binary.LittleEndian.Uint32(p[i+1:])
			i += 5
			if uint64(l) > uint64(len(p)) {
				return 0, false
			}
			return int(l), true
		}
		return 0, false
	}
	for {
		if i >= len(p) {
			return errPacked
		}
		if p[i] == 0xff {
			if i != len(p)-1 {
				return errPacked
			}
			return nil
		}
		fl, ok := readLen()
		if !ok || i+fl > len(p) {
			return errPacked
		}
		f := p[i : i+fl : i+fl]
		i += fl
		vl, ok := readLen()
		if !ok || i >= len(p) {
			return errPacked
		}
		free := int(p[i])
		i++
		if i+vl+free > len(p) {
			return errPacked
		}
		v := p[i : i+vl : i+vl]
		i += vl + free
		if err := fn(f, v); err != nil {
			return err
		}
	}
}
