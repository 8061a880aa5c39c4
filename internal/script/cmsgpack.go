package script

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// The cmsgpack library (lua-cmsgpack 0.4.0, as Redis bundles it).

const msgpackMaxNesting = 16

func (vm *VM) openCmsgpack() *lua.LTable {
	t := vm.L.NewTable()
	vm.setFuncs(t, map[string]lua.LGFunction{
		"pack":         vm.msgpackPack,
		"unpack":       func(L *lua.LState) int { return vm.msgpackUnpack(L, 0, 0) },
		"unpack_one":   vm.msgpackUnpackOne,
		"unpack_limit": vm.msgpackUnpackLimit,
	})
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	return t
}

func (vm *VM) msgpackPack(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		argError(L, 0, "pack", "MessagePack pack needs input.")
	}
	var b []byte
	for i := 1; i <= n; i++ {
		b = vm.mpEncode(b, L.Get(i), 0)
	}
	L.Push(lua.LString(b))
	return 1
}

// isInt64 is IS_INT64_EQUIVALENT: a finite number that survives a round
// trip through int64.
func isInt64(f float64) bool {
	return !math.IsInf(f, 0) && !math.IsNaN(f) && f >= -9223372036854775808.0 && f < 9223372036854775808.0 && float64(int64(f)) == f
}

func (vm *VM) mpEncode(b []byte, v lua.LValue, level int) []byte {
	switch x := v.(type) {
	case lua.LString:
		return mpBytes(b, string(x))
	case lua.LBool:
		if x {
			return append(b, 0xc3)
		}
		return append(b, 0xc2)
	case lua.LNumber:
		f := float64(x)
		if isInt64(f) {
			return mpInt(b, int64(f))
		}
		if f32 := float32(f); float64(f32) == f {
			b = append(b, 0xca)
			return binary.BigEndian.AppendUint32(b, math.Float32bits(f32))
		}
		b = append(b, 0xcb)
		return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
	case *lua.LTable:
		if level == msgpackMaxNesting {
			return append(b, 0xc0)
		}
		t, _ := vm.real(x)
		if mpIsArray(t) {
			n := t.Len()
			b = mpHeader(b, n, 0x90, 0xdc, 0xdd)
			for i := 1; i <= n; i++ {
				b = vm.mpEncode(b, t.RawGetInt(i), level+1)
			}
			return b
		}
		n := 0
		for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
			n++
		}
		b = mpHeader(b, n, 0x80, 0xde, 0xdf)
		for k, val := t.Next(lua.LNil); k != lua.LNil; k, val = t.Next(k) {
			b = vm.mpEncode(b, k, level+1)
			b = vm.mpEncode(b, val, level+1)
		}
		return b
	}
	return append(b, 0xc0)
}

// mpIsArray is table_is_an_array: every key a positive integer (that
// fits an int) and the largest equal to the count.
func mpIsArray(t *lua.LTable) bool {
	count, max := 0, 0
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n, ok := k.(lua.LNumber)
		f := float64(n)
		if !ok || f <= 0 || f > math.MaxInt32 || f != math.Trunc(f) {
			return false
		}
		if int(f) > max {
			max = int(f)
		}
		count++
	}
	return max == count
}

func mpHeader(b []byte, n int, fix, b16, b32 byte) []byte {
	switch {
	case n <= 15:
		return append(b, fix|byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, b16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, b32), uint32(n))
}

func mpBytes(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= 0xff:
		b = append(b, 0xd9, byte(n))
	case n <= 0xffff:
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

func mpInt(b []byte, n int64) []byte {
	if n >= 0 {
		switch {
		case n <= 127:
			return append(b, byte(n))
		case n <= 0xff:
			return append(b, 0xcc, byte(n))
		case n <= 0xffff:
			return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
		case n <= 0xffffffff:
			return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	}
	switch {
	case n >= -32:
		return append(b, byte(int8(n)))
	case n >= -128:
		return append(b, 0xd0, byte(int8(n)))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(int16(n)))
	case n >= -2147483648:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(int32(n)))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

// Decoding.

type mpCursor struct {
	p   string
	err int // 0, mpEOF, mpBadFmt
}

const (
	mpEOF = iota + 1
	mpBadFmt
)

func (c *mpCursor) need(n int) bool {
	if len(c.p) < n {
		c.err = mpEOF
		return false
	}
	return true
}

func (vm *VM) msgpackUnpackOne(L *lua.LState) int {
	offset := 0
	if L.Get(2) != lua.LNil {
		offset = int(toInt64(checkNumber(L, 2, "unpack_one")))
	}
	L.SetTop(1)
	return vm.msgpackUnpack(L, 1, offset)
}

func (vm *VM) msgpackUnpackLimit(L *lua.LState) int {
	limit := int(toInt64(checkNumber(L, 2, "unpack_limit")))
	offset := 0
	if L.Get(3) != lua.LNil {
		offset = int(toInt64(checkNumber(L, 3, "unpack_limit")))
	}
	L.SetTop(1)
	return vm.msgpackUnpack(L, limit, offset)
}

func (vm *VM) msgpackUnpack(L *lua.LState, limit, offset int) int {
	s := checkString(L, 1, "unpack")
	all := limit == 0 && offset == 0
	if offset < 0 || limit < 0 {
		L.RaiseError("Invalid request to unpack with offset of %d and limit of %d.", offset, len(s))
	}
	if offset > len(s) {
		L.RaiseError("Start offset %d greater than input length %d.", offset, len(s))
	}
	if all {
		limit = math.MaxInt32
	}
	c := mpCursor{p: s[offset:]}
	var out []lua.LValue
	for cnt := 0; len(c.p) > 0 && cnt < limit; cnt++ {
		if len(out) >= maxUnpack {
			L.RaiseError("stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)")
		}
		v := vm.mpDecode(L, &c, 0)
		switch c.err {
		case mpEOF:
			L.RaiseError("Missing bytes in input.")
		case mpBadFmt:
			L.RaiseError("Bad data format in input.")
		}
		out = append(out, v)
	}
	if !all {
		next := len(s) - len(c.p)
		if len(c.p) == 0 {
			next = -1
		}
		L.Push(lua.LNumber(next))
	}
	for _, v := range out {
		L.Push(v)
	}
	if !all {
		return len(out) + 1
	}
	return len(out)
}

func (vm *VM) mpDecode(L *lua.LState, c *mpCursor, depth int) lua.LValue {
	if !c.need(1) {
		return lua.LNil
	}
	if depth > 10000 {
		L.RaiseError("stack overflow")
	}
	t := c.p[0]
	uint := func(n int) (uint64, bool) {
		if !c.need(1 + n) {
			return 0, false
		}
		var v uint64
		for i := 1; i <= n; i++ {
			v = v<<8 | uint64(c.p[i])
		}
		c.p = c.p[1+n:]
		return v, true
	}
	str := func(hdr int) lua.LValue {
		n, ok := uint(hdr)
		if !ok {
			return lua.LNil
		}
		if uint64(len(c.p)) < n {
			c.err = mpEOF
			return lua.LNil
		}
		s := c.p[:n]
		c.p = c.p[n:]
		return lua.LString(s)
	}
	switch t {
	case 0xcc, 0xcd, 0xce, 0xcf:
		v, _ := uint(1 << (t - 0xcc))
		return lua.LNumber(float64(v))
	case 0xd0:
		v, _ := uint(1)
		return lua.LNumber(int8(v))
	case 0xd1:
		v, _ := uint(2)
		return lua.LNumber(int16(v))
	case 0xd2:
		v, _ := uint(4)
		return lua.LNumber(int32(v))
	case 0xd3:
		v, _ := uint(8)
		return lua.LNumber(float64(int64(v)))
	case 0xc0:
		c.p = c.p[1:]
		return lua.LNil
	case 0xc3:
		c.p = c.p[1:]
		return lua.LTrue
	case 0xc2:
		c.p = c.p[1:]
		return lua.LFalse
	case 0xca:
		v, _ := uint(4)
		return lua.LNumber(math.Float32frombits(uint32(v)))
	case 0xcb:
		v, _ := uint(8)
		return lua.LNumber(math.Float64frombits(v))
	case 0xd9:
		return str(1)
	case 0xda:
		return str(2)
	case 0xdb:
		return str(4)
	case 0xdc, 0xdd:
		n, ok := uint(2 << (t - 0xdc))
		if !ok {
			return lua.LNil
		}
		return vm.mpArray(L, c, int(n), depth)
	case 0xde, 0xdf:
		n, ok := uint(2 << (t - 0xde))
		if !ok {
			return lua.LNil
		}
		return vm.mpMap(L, c, int(n), depth)
	}
	switch {
	case t&0x80 == 0:
		c.p = c.p[1:]
		return lua.LNumber(t)
	case t&0xe0 == 0xe0:
		c.p = c.p[1:]
		return lua.LNumber(int8(t))
	case t&0xe0 == 0xa0:
		n := int(t & 0x1f)
		if !c.need(1 + n) {
			return lua.LNil
		}
		s := c.p[1 : 1+n]
		c.p = c.p[1+n:]
		return lua.LString(s)
	case t&0xf0 == 0x90:
		c.p = c.p[1:]
		return vm.mpArray(L, c, int(t&0xf), depth)
	case t&0xf0 == 0x80:
		c.p = c.p[1:]
		return vm.mpMap(L, c, int(t&0xf), depth)
	}
	c.err = mpBadFmt
	return lua.LNil
}

func (vm *VM) mpArray(L *lua.LState, c *mpCursor, n, depth int) lua.LValue {
	t := L.CreateTable(min(n, 64), 0) // n comes from the data: only a hint
	for i := 1; i <= n; i++ {
		v := vm.mpDecode(L, c, depth+1)
		if c.err != 0 {
			return t
		}
		t.RawSetInt(i, v)
	}
	return t
}

func (vm *VM) mpMap(L *lua.LState, c *mpCursor, n, depth int) lua.LValue {
	t := L.CreateTable(0, min(n, 64))
	for i := 0; i < n; i++ {
		k := vm.mpDecode(L, c, depth+1)
		if c.err != 0 {
			return t
		}
		v := vm.mpDecode(L, c, depth+1)
		if c.err != 0 {
			return t
		}
		if k == lua.LNil {
			L.RaiseError("table index is nil")
		}
		if n, ok := k.(lua.LNumber); ok && math.IsNaN(float64(n)) {
			L.RaiseError("table index is NaN")
		}
		t.RawSet(k, v)
	}
	return t
}
