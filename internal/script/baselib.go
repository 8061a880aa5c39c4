package script

import (
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The base functions Abacus provides itself, following Lua 5.1 (and
// Redis's pcall), and the argument helpers of every library here: they
// give Lua's error texts ("bad argument #1 to 'f' (number expected, got
// nil)") where gopher-lua's differ.

// luaTostring is Lua 5.1's tostring with "%.14g" numbers.
func (vm *VM) luaTostring(L *lua.LState) int {
	v := checkAny(L, 1, "tostring")
	if n, ok := v.(lua.LNumber); ok {
		L.Push(lua.LString(num14(float64(n))))
		return 1
	}
	if v == lua.LValue(vm.null) {
		L.Push(lua.LString("userdata: (nil)")) // a NULL lightuserdata in C
		return 1
	}
	L.Push(L.ToStringMeta(v))
	return 1
}

// tostr converts a value as lua_tolstring does (strings and numbers).
func tostr(v lua.LValue) (string, bool) {
	switch x := v.(type) {
	case lua.LString:
		return string(x), true
	case lua.LNumber:
		return num14(float64(x)), true
	}
	return "", false
}

// luaTonumber is Lua 5.1's tonumber: strtod's syntax in base 10, and
// digits of any base from 2 to 36.
func luaTonumber(L *lua.LState) int {
	base := L.OptInt(2, 10)
	v := checkAny(L, 1, "tonumber")
	if base == 10 {
		switch x := v.(type) {
		case lua.LNumber:
			L.Push(x)
			return 1
		case lua.LString:
			if n, ok := str2number(string(x)); ok {
				L.Push(boxNum(n))
				return 1
			}
		}
		L.Push(lua.LNil)
		return 1
	}
	s, ok := tostr(v)
	if !ok {
		argError(L, 1, "tonumber", "string expected, got "+typeName(v))
	}
	if base < 2 || base > 36 {
		argError(L, 2, "tonumber", "base out of range")
	}
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	var n float64
	digits := 0
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		var d int
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case c >= 'a' && c <= 'z':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'Z':
			d = int(c-'A') + 10
		default:
			d = 99
		}
		if d >= base {
			break
		}
		n = n*float64(base) + float64(d)
		digits++
	}
	rest := strings.TrimLeft(s[i:], " \t\n\r\f\v")
	if digits == 0 || rest != "" {
		L.Push(lua.LNil)
		return 1
	}
	// strtoul wraps to 32 bits... on LP64 it is 64: keep the float.
	if neg {
		n = -n
	}
	L.Push(lua.LNumber(n))
	return 1
}

// luaUnpack is unpack with Lua 5.1's limit on the number of results.
func luaUnpack(L *lua.LState) int {
	t := L.CheckTable(1)
	i := L.OptInt(2, 1)
	e := 0
	if L.Get(3) == lua.LNil {
		e = t.Len()
	} else {
		e = L.CheckInt(3)
	}
	if i > e {
		return 0
	}
	n := e - i + 1
	if n <= 0 || L.GetTop()+n > maxUnpack {
		L.RaiseError("too many results to unpack")
	}
	for k := i; k <= e; k++ {
		L.Push(t.RawGetInt(k))
	}
	return n
}

// luaGcinfo is Lua 5.1's gcinfo: the memory in use, in KB. Go's
// collector owns the VM's memory, so this is a nominal figure.
func luaGcinfo(L *lua.LState) int {
	L.Push(lua.LNumber(64))
	return 1
}

// luaCollectgarbage is Lua 5.1's collectgarbage(opt [, arg]); the Go
// collector does the work, so the options only answer as Lua would.
func luaCollectgarbage(L *lua.LState) int {
	opt := "collect"
	if L.Get(1) != lua.LNil {
		opt = checkString(L, 1, "collectgarbage")
	}
	switch opt {
	case "count":
		L.Push(lua.LNumber(64))
	case "step":
		L.Push(lua.LFalse)
	case "setpause", "setstepmul":
		L.Push(lua.LNumber(200))
	case "collect", "stop", "restart":
		L.Push(lua.LNumber(0))
	default:
		argError(L, 1, "collectgarbage", "invalid option '"+opt+"'")
	}
	return 1
}

// luaAssert is Lua 5.1's assert(v [, message]).
func luaAssert(L *lua.LState) int {
	checkAny(L, 1, "assert")
	if !lua.LVAsBool(L.Get(1)) {
		msg := "assertion failed!"
		if L.Get(2) != lua.LNil {
			msg = checkString(L, 2, "assert")
		}
		L.RaiseError("%s", msg)
	}
	return L.GetTop()
}

// luaError is Lua 5.1's error(message [, level]): a string message gets
// the position of the function at level (1: the caller of error).
func (vm *VM) luaError(L *lua.LState) int {
	msg := L.Get(1)
	level := L.OptInt(2, 1)
	if s, ok := tostr(msg); ok && level > 0 {
		msg = lua.LString(where(L, level) + s)
	}
	L.Error(msg, 0)
	return 0
}

// where is luaL_where: "chunk:line: " for a Lua function at level, ""
// for Go functions or levels beyond the stack.
func where(L *lua.LState, level int) string {
	dbg, ok := L.GetStack(level)
	if !ok {
		return ""
	}
	if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil {
		return ""
	}
	if dbg.CurrentLine > 0 && dbg.What != "G" {
		return fmt.Sprintf("%s:%d: ", dbg.Source, dbg.CurrentLine)
	}
	return ""
}

// luaPcall is Redis 7's pcall: an error table with a string err field is
// handed to the caller as that string. A killed script cannot catch its
// kill.
func (vm *VM) luaPcall(L *lua.LState) int {
	checkAny(L, 1, "pcall")
	top := L.GetTop()
	if err := L.PCall(top-1, lua.MultRet, nil); err != nil {
		vm.raiseIfKilled(L)
		var obj lua.LValue = lua.LString(err.Error())
		if ae, ok := err.(*lua.ApiError); ok {
			obj = ae.Object
		}
		if t, ok := obj.(*lua.LTable); ok {
			if s, ok := t.RawGetString("err").(lua.LString); ok {
				obj = s
			}
		} else if s, ok := obj.(lua.LString); ok {
			obj = lua.LString(vmErrorText(string(s)))
		}
		L.Push(lua.LFalse)
		L.Push(obj)
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

func (vm *VM) luaNext(L *lua.LState) int {
	t := L.CheckTable(1)
	t, _ = vm.real(t)
	k, v := t.Next(L.Get(2))
	for t == vm.globals && hiddenGlobal(k) {
		k, v = t.Next(k) // the hidden helpers of rewrite.go
	}
	if k == lua.LNil {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(k)
	L.Push(v)
	return 2
}

func (vm *VM) luaPairs(L *lua.LState) int {
	t := L.CheckTable(1)
	L.Push(L.Get(lua.UpvalueIndex(1)))
	L.Push(t)
	L.Push(lua.LNil)
	return 3
}

func (vm *VM) luaIpairs(L *lua.LState) int {
	t := L.CheckTable(1)
	if vm.ipairsFn == nil {
		vm.ipairsFn = L.NewFunction(vm.ipairsIter)
	}
	L.Push(vm.ipairsFn)
	L.Push(t)
	L.Push(lua.LNumber(0))
	return 3
}

func (vm *VM) ipairsIter(L *lua.LState) int {
	t := L.CheckTable(1)
	t, _ = vm.real(t)
	i := L.CheckInt(2) + 1
	v := t.RawGetInt(i)
	if v == lua.LNil {
		return 0
	}
	L.Push(boxNum(float64(i)))
	L.Push(v)
	return 2
}

func (vm *VM) luaRawget(L *lua.LState) int {
	t := L.CheckTable(1)
	t, _ = vm.real(t)
	L.Push(t.RawGet(L.CheckAny(2)))
	return 1
}

func (vm *VM) luaRawset(L *lua.LState) int {
	t := L.CheckTable(1)
	L.CheckAny(2)
	L.CheckAny(3)
	if _, ro := vm.real(t); ro {
		raiseReadonly(L)
	}
	t.RawSet(L.Get(2), L.Get(3))
	L.Push(t)
	return 1
}

func (vm *VM) luaSetmetatable(L *lua.LState) int {
	t := L.CheckTable(1)
	mt := L.Get(2)
	if mt != lua.LNil {
		if _, ok := mt.(*lua.LTable); !ok {
			argError(L, 2, "setmetatable", "nil or table expected")
		}
	}
	if _, ro := vm.real(t); ro {
		raiseReadonly(L)
	}
	if cur, ok := t.Metatable.(*lua.LTable); ok && cur.RawGetString("__metatable") != lua.LNil {
		L.RaiseError("cannot change a protected metatable")
	}
	L.SetMetatable(t, mt)
	L.Push(t)
	return 1
}

func (vm *VM) luaGetmetatable(L *lua.LState) int {
	v := L.CheckAny(1)
	if t, ok := v.(*lua.LTable); ok {
		if _, ro := vm.ro[t]; ro {
			if m, ok := vm.roMeta[t]; ok {
				L.Push(m)
			} else {
				L.Push(lua.LNil)
			}
			return 1
		}
	}
	mt := L.GetMetatable(v)
	if mt == vm.strMT {
		L.Push(vm.strMTv)
		return 1
	}
	if t, ok := mt.(*lua.LTable); ok {
		if p := t.RawGetString("__metatable"); p != lua.LNil {
			L.Push(p)
			return 1
		}
	}
	L.Push(mt)
	return 1
}

// luaLoadstring compiles a chunk in the protected environment; errors
// come back as nil and the message, as in Lua.
func (vm *VM) luaLoadstring(L *lua.LState) int {
	src := L.CheckString(1)
	name := L.OptString(2, src)
	chunkName := "[string \"" + firstLine(name) + "\"]"
	if strings.HasPrefix(src, "\x1b") {
		// Precompiled chunks are refused, as Redis's Lua refuses them
		// (loading bytecode escapes the sandbox); this is the text
		// Lua 5.1's lexer gives for the escape byte.
		L.Push(lua.LNil)
		L.Push(lua.LString(chunkName + ":1: unexpected symbol near 'char(27)'"))
		return 2
	}
	// Compiled checkpointed whatever it holds: it may run in a chunk
	// that runs without the kill context.
	fn, _, err := vm.compile(src, chunkName, true)
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	L.Push(fn)
	return 1
}

func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i] + "..."
	}
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// argError raises Lua 5.1's "bad argument #n to 'fname' (msg)".
func argError(L *lua.LState, n int, fname, msg string) {
	L.RaiseError("bad argument #%d to '%s' (%s)", n, fname, msg)
}

// typeError is argError for a value of the wrong type.
func typeError(L *lua.LState, n int, fname, want string) {
	v := L.Get(n)
	got := typeName(v)
	if v == lua.LNil && n > L.GetTop() {
		got = "no value"
	}
	argError(L, n, fname, want+" expected, got "+got)
}

// typeName is Lua's name for a value's type.
func typeName(v lua.LValue) string {
	switch v.Type() {
	case lua.LTNil:
		return "nil"
	case lua.LTBool:
		return "boolean"
	case lua.LTNumber:
		return "number"
	case lua.LTString:
		return "string"
	case lua.LTTable:
		return "table"
	case lua.LTFunction:
		return "function"
	case lua.LTUserData:
		return "userdata"
	case lua.LTThread:
		return "thread"
	}
	return v.Type().String()
}

// checkAny is luaL_checkany.
func checkAny(L *lua.LState, n int, fname string) lua.LValue {
	if L.GetTop() < n {
		argError(L, n, fname, "value expected")
	}
	return L.Get(n)
}

// checkNumber is luaL_checknumber: numbers, and strings that convert.
func checkNumber(L *lua.LState, n int, fname string) float64 {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		return float64(v)
	case lua.LString:
		if f, ok := str2number(string(v)); ok {
			return f
		}
	}
	typeError(L, n, fname, "number")
	return 0
}

// checkString is luaL_checklstring: strings, and numbers as "%.14g".
func checkString(L *lua.LState, n int, fname string) string {
	if s, ok := tostr(L.Get(n)); ok {
		return s
	}
	typeError(L, n, fname, "string")
	return ""
}

// checkInt is luaL_checkint: a number cast to int.
func checkInt(L *lua.LState, n int, fname string) int {
	return int(toInt32(checkNumber(L, n, fname)))
}
