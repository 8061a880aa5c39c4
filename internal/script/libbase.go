package script

import (
	"math"
	"sort"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// The parts of Lua 5.1's table, string and math libraries that Abacus
// provides itself: where gopher-lua's versions format numbers the Go way,
// treat strings as UTF-8, grow the VM registry per element, or write
// through Redis's readonly tables.

// checkTable is luaL_checktype(L, n, LUA_TTABLE) for library function
// fname.
func checkTable(L *lua.LState, n int, fname string) *lua.LTable {
	t, ok := L.Get(n).(*lua.LTable)
	if !ok {
		typeError(L, n, fname, "table")
	}
	return t
}

// tableConcat is table.concat(t [, sep [, i [, j]]]), built in one
// buffer.
func (vm *VM) tableConcat(L *lua.LState) int {
	t := checkTable(L, 1, "concat")
	t, _ = vm.real(t)
	sep := ""
	if L.Get(2) != lua.LNil {
		sep = checkString(L, 2, "concat")
	}
	i := 1
	if L.Get(3) != lua.LNil {
		i = checkInt(L, 3, "concat")
	}
	j := 0
	if L.Get(4) != lua.LNil {
		j = checkInt(L, 4, "concat")
	} else {
		j = t.Len()
	}
	var b []byte
	for k := i; k <= j; k++ {
		switch v := t.RawGetInt(k).(type) {
		case lua.LString:
			b = append(b, v...)
		case lua.LNumber:
			b = appendNum14(b, float64(v))
		default:
			L.RaiseError("invalid value (%s) at index %d in table for 'concat'", typeName(v), k)
		}
		if k != j {
			b = append(b, sep...)
		}
	}
	L.Push(lua.LString(b))
	return 1
}

// tableInsert is table.insert(t, [pos,] value).
func (vm *VM) tableInsert(L *lua.LState) int {
	t := checkTable(L, 1, "insert")
	if _, ro := vm.real(t); ro {
		raiseReadonly(L)
	}
	e := t.Len() + 1
	switch L.GetTop() {
	case 2:
		t.RawSetInt(e, L.Get(2))
	case 3:
		pos := checkInt(L, 2, "insert")
		if pos > e {
			e = pos
		}
		for k := e; k > pos; k-- {
			t.RawSetInt(k, t.RawGetInt(k-1))
		}
		t.RawSetInt(pos, L.Get(3))
	default:
		L.RaiseError("wrong number of arguments to 'insert'")
	}
	return 0
}

// tableRemove is table.remove(t [, pos]).
func (vm *VM) tableRemove(L *lua.LState) int {
	t := checkTable(L, 1, "remove")
	n := t.Len()
	pos := n
	if L.Get(2) != lua.LNil {
		pos = checkInt(L, 2, "remove")
	}
	if pos < 1 || pos > n {
		return 0
	}
	if _, ro := vm.real(t); ro {
		raiseReadonly(L)
	}
	v := t.RawGetInt(pos)
	for ; pos < n; pos++ {
		t.RawSetInt(pos, t.RawGetInt(pos+1))
	}
	t.RawSetInt(n, lua.LNil)
	L.Push(v)
	return 1
}

// tableSort is table.sort(t [, comp]) over t[1..#t].
func (vm *VM) tableSort(L *lua.LState) int {
	t := checkTable(L, 1, "sort")
	if _, ro := vm.real(t); ro && t.Len() > 1 {
		raiseReadonly(L)
	}
	var comp *lua.LFunction
	if L.Get(2) != lua.LNil {
		f, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			typeError(L, 2, "sort", "function")
		}
		comp = f
	}
	n := t.Len()
	vals := make([]lua.LValue, n)
	for k := range vals {
		vals[k] = t.RawGetInt(k + 1)
	}
	less := func(a, b lua.LValue) bool {
		if comp != nil {
			L.Push(comp)
			L.Push(a)
			L.Push(b)
			L.Call(2, 1)
			r := lua.LVAsBool(L.Get(-1))
			L.Pop(1)
			return r
		}
		return lessThan(L, a, b)
	}
	sort.SliceStable(vals, func(i, j int) bool { return less(vals[i], vals[j]) })
	for k, v := range vals {
		t.RawSetInt(k+1, v)
	}
	return 0
}

// lessThan is Lua's < for sort: numbers and strings, or __lt.
func lessThan(L *lua.LState, a, b lua.LValue) bool {
	switch x := a.(type) {
	case lua.LNumber:
		if y, ok := b.(lua.LNumber); ok {
			return x < y
		}
	case lua.LString:
		if y, ok := b.(lua.LString); ok {
			return x < y
		}
	}
	if a.Type() == b.Type() {
		if mt, ok := L.GetMetatable(a).(*lua.LTable); ok {
			if fn := mt.RawGetString("__lt"); fn != lua.LNil {
				L.Push(fn)
				L.Push(a)
				L.Push(b)
				L.Call(2, 1)
				r := lua.LVAsBool(L.Get(-1))
				L.Pop(1)
				return r
			}
		}
	}
	L.RaiseError("attempt to compare two %s values", typeName(a))
	return false
}

func (vm *VM) tableForeach(L *lua.LState) int {
	t := checkTable(L, 1, "foreach")
	fn, ok := L.Get(2).(*lua.LFunction)
	if !ok {
		typeError(L, 2, "foreach", "function")
	}
	rt, _ := vm.real(t)
	k, v := rt.Next(lua.LNil)
	for k != lua.LNil {
		L.Push(fn)
		L.Push(k)
		L.Push(v)
		L.Call(2, 1)
		if r := L.Get(-1); r != lua.LNil {
			return 1
		}
		L.Pop(1)
		k, v = rt.Next(k)
	}
	return 0
}

func (vm *VM) tableForeachi(L *lua.LState) int {
	t := checkTable(L, 1, "foreachi")
	fn, ok := L.Get(2).(*lua.LFunction)
	if !ok {
		typeError(L, 2, "foreachi", "function")
	}
	rt, _ := vm.real(t)
	n := rt.Len()
	for i := 1; i <= n; i++ {
		L.Push(fn)
		L.Push(lua.LNumber(i))
		L.Push(rt.RawGetInt(i))
		L.Call(2, 1)
		if r := L.Get(-1); r != lua.LNil {
			return 1
		}
		L.Pop(1)
	}
	return 0
}

func tableSetn(L *lua.LState) int {
	checkTable(L, 1, "setn")
	L.RaiseError("'setn' is obsolete")
	return 0
}

func (vm *VM) tableGetn(L *lua.LState) int {
	t := checkTable(L, 1, "getn")
	t, _ = vm.real(t)
	L.Push(lua.LNumber(t.Len()))
	return 1
}

// tableMaxn is table.maxn: the largest positive numeric key.
func (vm *VM) tableMaxn(L *lua.LState) int {
	t := checkTable(L, 1, "maxn")
	t, _ = vm.real(t)
	max := 0.0
	k, _ := t.Next(lua.LNil)
	for k != lua.LNil {
		if n, ok := k.(lua.LNumber); ok && float64(n) > max {
			max = float64(n)
		}
		k, _ = t.Next(k)
	}
	L.Push(lua.LNumber(max))
	return 1
}

// strUpper and strLower change ASCII letters only, as toupper in the C
// locale does.
func strUpper(L *lua.LState) int {
	s := checkString(L, 1, "upper")
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	L.Push(lua.LString(b))
	return 1
}

func strLower(L *lua.LState) int {
	s := checkString(L, 1, "lower")
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	L.Push(lua.LString(b))
	return 1
}

func strLen(L *lua.LState) int {
	L.Push(lua.LNumber(len(checkString(L, 1, "len"))))
	return 1
}

func strReverse(L *lua.LState) int {
	s := checkString(L, 1, "reverse")
	b := make([]byte, len(s))
	for i := range b {
		b[i] = s[len(s)-1-i]
	}
	L.Push(lua.LString(b))
	return 1
}

// maxString bounds what string.rep may build (Lua would run out of
// memory; the server should not).
const maxString = 512 << 20

func strRep(L *lua.LState) int {
	s := checkString(L, 1, "rep")
	n := checkInt(L, 2, "rep")
	if n <= 0 || s == "" {
		L.Push(lua.LString(""))
		return 1
	}
	if int64(len(s))*int64(n) > maxString {
		L.RaiseError("not enough memory")
	}
	L.Push(lua.LString(strings.Repeat(s, n)))
	return 1
}

// Rand48 is the generator behind math.random: Redis's redisLrand48, the
// 48-bit linear congruential generator of POSIX lrand48, one state for
// the whole process.
type Rand48 struct {
	mu sync.Mutex
	x  uint64
}

const (
	rand48A    = 0x5DEECE66D
	rand48C    = 0xB
	rand48Mask = 1<<48 - 1
)

// NewRand48 returns a generator in the state Redis's has at startup.
func NewRand48() *Rand48 { return &Rand48{x: 0x1234ABCD330E} }

// Seed is redisSrand48.
func (r *Rand48) Seed(seed int32) {
	r.mu.Lock()
	r.x = uint64(uint32(seed))<<16 | 0x330E
	r.mu.Unlock()
}

// Next is redisLrand48: the top 31 bits of the next state.
func (r *Rand48) Next() int32 {
	r.mu.Lock()
	r.x = (rand48A*r.x + rand48C) & rand48Mask
	v := int32(r.x >> 17)
	r.mu.Unlock()
	return v
}

// math.floor and math.ceil, as Lua 5.1 (luaL_checknumber's errors),
// boxing small integers without allocating.
func mathFloor(L *lua.LState) int {
	L.Push(boxNum(math.Floor(checkNumber(L, 1, "floor"))))
	return 1
}

func mathCeil(L *lua.LState) int {
	L.Push(boxNum(math.Ceil(checkNumber(L, 1, "ceil"))))
	return 1
}

// mathRandom is Redis's math.random.
func (vm *VM) mathRandom(L *lua.LState) int {
	const max = math.MaxInt32
	r := float64(vm.opts.Rand.Next()%max) / float64(max)
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := checkInt(L, 1, "random")
		if u < 1 {
			argError(L, 1, "random", "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l := checkInt(L, 1, "random")
		u := checkInt(L, 2, "random")
		if l > u {
			argError(L, 2, "random", "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

func (vm *VM) mathRandomseed(L *lua.LState) int {
	vm.opts.Rand.Seed(int32(checkInt(L, 1, "randomseed")))
	return 0
}
