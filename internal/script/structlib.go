package script

import (
	"encoding/binary"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The struct library (Roberto Ierusalimschy's struct, as Redis bundles
// it): pack, unpack and size of binary records described by a format
// string, on a 64-bit little-endian machine (long and size_t are 8
// bytes, int 4, the largest alignment 8).

func (vm *VM) openStruct() *lua.LTable {
	t := vm.L.NewTable()
	vm.setFuncs(t, map[string]lua.LGFunction{
		"pack":   structPack,
		"unpack": structUnpack,
		"size":   structSize,
	})
	return t
}

const (
	structMaxIntSize = 32
	structMaxAlign   = 8
)

type structHeader struct {
	little bool
	align  int
}

type structFmt struct {
	L     *lua.LState
	fn    string
	s     string
	i     int
	h     structHeader
	fixed bool // struct.size: refuse variable sizes
}

func newStructFmt(L *lua.LState, fn string) *structFmt {
	s := checkString(L, 1, fn)
	if k := strings.IndexByte(s, 0); k >= 0 {
		s = s[:k] // a C string
	}
	return &structFmt{L: L, fn: fn, s: s, h: structHeader{little: true, align: 1}}
}

// getnum reads an optional decimal number, df when there is none.
func (f *structFmt) getnum(df int) int {
	if f.i >= len(f.s) || !isDigit(f.s[f.i]) {
		return df
	}
	a := 0
	for f.i < len(f.s) && isDigit(f.s[f.i]) {
		d := int(f.s[f.i] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			f.L.RaiseError("integral size overflow")
		}
		a = a*10 + d
		f.i++
	}
	return a
}

// optsize is the size of an option (reading its number when it has one).
func (f *structFmt) optsize(opt byte) int {
	switch opt {
	case 'B', 'b':
		return 1
	case 'H', 'h':
		return 2
	case 'L', 'l', 'T', 'd':
		return 8
	case 'f':
		return 4
	case 'x':
		return 1
	case 'c':
		return f.getnum(1)
	case 'i', 'I':
		sz := f.getnum(4)
		if sz > structMaxIntSize {
			f.L.RaiseError("integral size %d is larger than limit of %d", sz, structMaxIntSize)
		}
		return sz
	}
	return 0
}

func (f *structFmt) toalign(pos int, opt byte, size int) int {
	if size == 0 || opt == 'c' {
		return 0
	}
	if size > f.h.align {
		size = f.h.align
	}
	return (size - (pos & (size - 1))) & (size - 1)
}

// control handles the options that are not data: endianness, alignment,
// spaces; anything else is an error.
func (f *structFmt) control(opt byte) {
	switch opt {
	case ' ':
	case '>':
		f.h.little = false
	case '<':
		f.h.little = true
	case '!':
		a := f.getnum(structMaxAlign)
		if a <= 0 || a&(a-1) != 0 {
			f.L.RaiseError("alignment %d is not a power of 2", a)
		}
		f.h.align = a
	default:
		argError(f.L, 1, f.fn, "invalid format option '"+string(opt)+"'")
	}
}

func putInteger(b []byte, n float64, little bool, size int) []byte {
	var v uint64
	if n < 0 {
		v = uint64(toInt64(n))
	} else {
		v = toUint64(n)
	}
	var buf [structMaxIntSize]byte
	if little {
		for i := 0; i < size; i++ {
			buf[i] = byte(v)
			v >>= 8
		}
	} else {
		for i := size - 1; i >= 0; i-- {
			buf[i] = byte(v)
			v >>= 8
		}
	}
	return append(b, buf[:size]...)
}

func structPack(L *lua.LState) int {
	f := newStructFmt(L, "pack")
	// struct.pack pushes a nil before packing: the first missing argument
	// reads as that nil, not as "no value".
	L.Push(lua.LNil)
	arg := 2
	var b []byte
	total := 0
	for f.i < len(f.s) {
		opt := f.s[f.i]
		f.i++
		size := f.optsize(opt)
		pad := f.toalign(total, opt, size)
		total += pad
		for ; pad > 0; pad-- {
			b = append(b, 0)
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			b = putInteger(b, checkNumber(L, arg, "pack"), f.h.little, size)
			arg++
		case 'x':
			b = append(b, 0)
		case 'f':
			bits := math.Float32bits(float32(checkNumber(L, arg, "pack")))
			arg++
			if f.h.little {
				b = binary.LittleEndian.AppendUint32(b, bits)
			} else {
				b = binary.BigEndian.AppendUint32(b, bits)
			}
		case 'd':
			bits := math.Float64bits(checkNumber(L, arg, "pack"))
			arg++
			if f.h.little {
				b = binary.LittleEndian.AppendUint64(b, bits)
			} else {
				b = binary.BigEndian.AppendUint64(b, bits)
			}
		case 'c', 's':
			s := checkString(L, arg, "pack")
			arg++
			if size == 0 {
				size = len(s)
			}
			if len(s) < size {
				argError(L, arg, "pack", "string too short")
			}
			b = append(b, s[:size]...)
			if opt == 's' {
				b = append(b, 0)
				size++
			}
		default:
			f.control(opt)
		}
		total += size
	}
	L.Push(lua.LString(b))
	return 1
}

func getInteger(d string, little, signed bool, size int) float64 {
	var l uint64
	if little {
		for i := size - 1; i >= 0; i-- {
			l = l<<8 | uint64(d[i])
		}
	} else {
		for i := 0; i < size; i++ {
			l = l<<8 | uint64(d[i])
		}
	}
	if !signed {
		return float64(l)
	}
	shift := uint(size*8 - 1)
	if shift < 64 {
		mask := ^uint64(0) << shift
		if l&mask != 0 {
			l |= mask
		}
	}
	return float64(int64(l))
}

func structUnpack(L *lua.LState) int {
	f := newStructFmt(L, "unpack")
	data := checkString(L, 2, "unpack")
	ld := len(data)
	start := 1
	if L.Get(3) != lua.LNil {
		start = int(toInt64(checkNumber(L, 3, "unpack")))
	}
	pos := start - 1
	if pos < 0 || pos > ld {
		argError(L, 3, "unpack", "offset must be 1 or greater")
	}
	var out []lua.LValue
	for f.i < len(f.s) {
		opt := f.s[f.i]
		f.i++
		size := f.optsize(opt)
		pos += f.toalign(pos, opt, size)
		if size > ld || pos > ld-size {
			argError(L, 2, "unpack", "data string too short")
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			signed := opt >= 'a' && opt <= 'z'
			out = append(out, lua.LNumber(getInteger(data[pos:], f.h.little, signed, size)))
		case 'x':
		case 'f':
			var bits uint32
			if f.h.little {
				bits = binary.LittleEndian.Uint32([]byte(data[pos : pos+4]))
			} else {
				bits = binary.BigEndian.Uint32([]byte(data[pos : pos+4]))
			}
			out = append(out, lua.LNumber(math.Float32frombits(bits)))
		case 'd':
			var bits uint64
			if f.h.little {
				bits = binary.LittleEndian.Uint64([]byte(data[pos : pos+8]))
			} else {
				bits = binary.BigEndian.Uint64([]byte(data[pos : pos+8]))
			}
			out = append(out, lua.LNumber(math.Float64frombits(bits)))
		case 'c':
			if size == 0 {
				var prev float64
				ok := false
				if len(out) > 0 {
					prev, ok = luaToNumber(out[len(out)-1])
				}
				if !ok {
					L.RaiseError("format 'c0' needs a previous size")
				}
				size = int(toInt64(prev))
				out = out[:len(out)-1]
				if size < 0 || size > ld || pos > ld-size {
					argError(L, 2, "unpack", "data string too short")
				}
			}
			out = append(out, lua.LString(data[pos:pos+size]))
		case 's':
			e := strings.IndexByte(data[pos:], 0)
			if e < 0 {
				L.RaiseError("unfinished string in data")
			}
			size = e + 1
			out = append(out, lua.LString(data[pos:pos+e]))
		default:
			f.control(opt)
		}
		pos += size
	}
	for _, v := range out {
		L.Push(v)
	}
	L.Push(lua.LNumber(pos + 1))
	return len(out) + 1
}

func structSize(L *lua.LState) int {
	f := newStructFmt(L, "size")
	pos := 0
	for f.i < len(f.s) {
		opt := f.s[f.i]
		f.i++
		size := f.optsize(opt)
		pos += f.toalign(pos, opt, size)
		if opt == 's' {
			argError(L, 1, "size", "option 's' has no fixed size")
		} else if opt == 'c' && size == 0 {
			argError(L, 1, "size", "option 'c0' has no fixed size")
		}
		if !isAlnum(opt) {
			f.control(opt)
		}
		pos += size
	}
	L.Push(lua.LNumber(pos))
	return 1
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
