package script

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// The bit library (LuaBitOp 1.0.2, as Redis bundles it): 32-bit
// operations on Lua numbers, results as signed 32-bit numbers.

func (vm *VM) openBit() *lua.LTable {
	t := vm.L.NewTable()
	vm.setFuncs(t, map[string]lua.LGFunction{
		"tobit":   bitTobit,
		"bnot":    bitBnot,
		"band":    bitOp("band", func(a, b uint32) uint32 { return a & b }),
		"bor":     bitOp("bor", func(a, b uint32) uint32 { return a | b }),
		"bxor":    bitOp("bxor", func(a, b uint32) uint32 { return a ^ b }),
		"lshift":  bitShift("lshift", func(b uint32, n uint) uint32 { return b << n }),
		"rshift":  bitShift("rshift", func(b uint32, n uint) uint32 { return b >> n }),
		"arshift": bitShift("arshift", func(b uint32, n uint) uint32 { return uint32(int32(b) >> n) }),
		"rol":     bitShift("rol", func(b uint32, n uint) uint32 { return b<<n | b>>(32-n) }),
		"ror":     bitShift("ror", func(b uint32, n uint) uint32 { return b>>n | b<<(32-n) }),
		"bswap":   bitBswap,
		"tohex":   bitTohex,
	})
	return t
}

// barg converts argument i as LuaBitOp does: the number plus 2^52+2^51,
// whose low 32 mantissa bits are the number rounded and taken modulo 2^32.
// A value that is not a number counts as 0, and is an error when that is
// what it converts to.
func barg(L *lua.LState, i int, fname string) uint32 {
	v := L.Get(i)
	n, ok := luaToNumber(v)
	b := uint32(math.Float64bits(n+6755399441055744.0) & 0xFFFFFFFF)
	if b == 0 && !ok {
		typeError(L, i, fname, "number")
	}
	return b
}

func bret(L *lua.LState, b uint32) int {
	L.Push(lua.LNumber(int32(b)))
	return 1
}

func bitTobit(L *lua.LState) int { return bret(L, barg(L, 1, "tobit")) }
func bitBnot(L *lua.LState) int  { return bret(L, ^barg(L, 1, "bnot")) }

func bitOp(name string, op func(a, b uint32) uint32) lua.LGFunction {
	return func(L *lua.LState) int {
		b := barg(L, 1, name)
		for i := L.GetTop(); i > 1; i-- {
			b = op(b, barg(L, i, name))
		}
		return bret(L, b)
	}
}

func bitShift(name string, op func(b uint32, n uint) uint32) lua.LGFunction {
	return func(L *lua.LState) int {
		b := barg(L, 1, name)
		n := uint(barg(L, 2, name) & 31)
		return bret(L, op(b, n))
	}
}

func bitBswap(L *lua.LState) int {
	b := barg(L, 1, "bswap")
	b = b>>24 | (b>>8)&0xff00 | (b&0xff00)<<8 | b<<24
	return bret(L, b)
}

func bitTohex(L *lua.LState) int {
	b := barg(L, 1, "tohex")
	n := int32(8)
	if L.GetTop() >= 2 {
		n = int32(barg(L, 2, "tohex"))
	}
	digits := "0123456789abcdef"
	if n < 0 {
		n = -n
		digits = "0123456789ABCDEF"
	}
	if n > 8 {
		n = 8
	}
	buf := make([]byte, n)
	for i := int(n) - 1; i >= 0; i-- {
		buf[i] = digits[b&15]
		b >>= 4
	}
	L.Push(lua.LString(buf))
	return 1
}
