package script

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// Reusing Lua values from call to call.
//
// A Lua string or number handed to the VM is an interface value: a string
// costs two allocations (its bytes and the boxed header), a number one.
// Scripts make the same short strings over and over: the hash fields the
// limiter builds with .. ('t:' .. win), the counts HGET answers, and
// small integers everywhere (ipairs indexes, replies of INCR and HSET).
// Strings are immutable and compared by value in Lua, so handing out the
// same boxed string again cannot be told apart from making a new one.

// strCacheSize is the number of slots of a VM's string cache (a power of
// two), maxCached the longest string it keeps.
const (
	strCacheSize = 512
	maxCached    = 64
)

// strCache maps short byte strings to boxed Lua strings, one per slot by
// hash: a miss replaces the slot.
type strCache struct {
	slots [strCacheSize]struct {
		s string
		v lua.LValue
	}
}

// get returns the Lua string with the bytes of b (which it does not keep).
func (c *strCache) get(b []byte) lua.LValue {
	if len(b) > maxCached {
		return lua.LString(string(b))
	}
	// FNV-1a: a few instructions per byte for these short strings.
	h := uint32(2166136261)
	for _, x := range b {
		h = (h ^ uint32(x)) * 16777619
	}
	e := &c.slots[h&(strCacheSize-1)]
	if e.v != nil && e.s == string(b) {
		return e.v
	}
	e.s = string(b)
	e.v = lua.LString(e.s)
	return e.v
}

// smallInts are the boxed integers 0..len-1, made once.
var smallInts = func() (t [1024]lua.LValue) {
	for i := range t {
		t[i] = lua.LNumber(i)
	}
	return t
}()

// boxNum returns n as a Lua value, without allocating for a small
// non-negative integer.
func boxNum(n float64) lua.LValue {
	if i := int(n); float64(i) == n && i >= 0 && i < len(smallInts) && !(n == 0 && math.Signbit(n)) {
		return smallInts[i]
	}
	return lua.LNumber(n)
}
