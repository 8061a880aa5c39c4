// Package script is Abacus's Lua environment: Redis 7's scripting world
// (EVAL scripts and FUNCTION libraries) on gopher-lua, a pure-Go Lua 5.1.
//
// It knows nothing of the command table: a running script reaches the
// server through the Host interface, which the command package
// implements. The package provides the VM with Redis's globals (the redis
// table, cjson, cmsgpack, bit, struct, string/table/math with C-library
// number formatting), protected globals, the conversions between Lua
// values and RESP replies, Redis's error formatting, and the script and
// library caches.
//
// gopher-lua differs from the C Lua that Redis embeds in ways that cannot
// be patched from outside the VM: the text of runtime errors raised inside
// the VM itself (arithmetic on nil, calling a non-function, syntax errors)
// and the way the VM turns numbers into strings in the .. operator (Go's
// shortest representation rather than "%.14g"; integers, the common case,
// are the same). Every function this package installs follows Lua 5.1 and
// Redis exactly.
package script

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Host is what a running script needs from the server.
type Host interface {
	// Call runs one command for the script (redis.call/pcall) and returns
	// its reply as RESP in protocol resp (2 or 3). Refusals (unknown
	// command, arity, not allowed from scripts, writes from a read-only
	// script) come back as error replies with Redis's text. The bytes are
	// valid until the next Call.
	Call(args [][]byte, resp int) []byte
	// CommandKnown reports whether args names an existing command
	// (redis.acl_check_cmd; there are no ACLs, so any command is allowed).
	CommandKnown(args [][]byte) bool
}

// Logger writes a line to the server log at a Redis log level
// (LogDebug ... LogWarning); it decides itself whether the level passes
// the configured verbosity.
type Logger func(level int, msg string)

// Redis log levels, as redis.LOG_* expose them.
const (
	LogDebug   = 0
	LogVerbose = 1
	LogNotice  = 2
	LogWarning = 3
)

// Version is what redis.REDIS_VERSION and REDIS_VERSION_NUM report.
const (
	Version    = "7.4.0"
	VersionNum = 0x00070400
)

func init() {
	// gopher-lua's Lua 5.0 compatibility builds an "arg" table (with a
	// hash part) on every call of every vararg function, main chunks
	// included; Redis's scripts use "..." like any Lua 5.1 code.
	lua.CompatVarArg = false
}

// Options configure a VM.
type Options struct {
	Log Logger
	// Rand is the random generator behind math.random; Redis has one for
	// the whole process, shared by EVAL scripts and functions.
	Rand *Rand48
}

// vmKind tells the two VMs apart: Redis keeps one for EVAL scripts and
// one for function libraries, with different globals.
type vmKind uint8

const (
	kindEval vmKind = iota
	kindFunction
)

// VM is one Lua interpreter with Redis's environment. It is not safe for
// concurrent use; the server runs scripts under its lock. The kill state
// is the exception: Kill may be called from any goroutine.
type VM struct {
	L    *lua.LState
	kind vmKind
	opts Options

	globals *lua.LTable // the real globals
	env     *lua.LTable // readonly view of the globals: user code's environment
	envMeta *lua.LTable // env's metatable; its __index is switched for function loading
	// ro maps each readonly view to the table it shows; roMeta gives what
	// getmetatable answers for a view (nil for library tables).
	ro     map[*lua.LTable]*lua.LTable
	roMeta map[*lua.LTable]lua.LValue
	strMT  *lua.LTable // the string metatable and its readonly view
	strMTv *lua.LTable

	null       *lua.LUserData // cjson.null
	ipairsFn   *lua.LFunction // ipairs's iterator, made once
	errHandler *lua.LFunction
	loadAPI    *lua.LTable // what library code sees while FUNCTION LOAD runs it

	kmu     sync.Mutex // orders Kill against the start and end of runs
	running bool
	ctx     *killCtx
	killed  atomic.Bool
	// coroutines is set when a run created a coroutine: gopher-lua gives
	// each one a context derived from ctx, released when ctx is closed.
	coroutines bool

	// The run in progress (nil between runs), kept in runv.
	run  *runState
	runv runState
	// KEYS and ARGV of EVAL scripts, reused between runs.
	keys, argv globalArray
	// Reused buffers for redis.call arguments.
	argBuf []byte
	args   [][]byte
	offs   []int
}

// runState is what redis.* functions need while a script runs.
type runState struct {
	host Host
	resp int // redis.setresp
	name string
	// loading is set while FUNCTION LOAD runs a library's code: it
	// collects the functions registered.
	loading *Library
}

// killCtx is the context gopher-lua polls between instructions: closing
// done stops the script at its next instruction. It is its own type so
// that Done is a plain field read.
type killCtx struct{ done chan struct{} }

func (k *killCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (k *killCtx) Done() <-chan struct{}       { return k.done }
func (k *killCtx) Err() error                  { return errKilledCtx }
func (k *killCtx) Value(any) any               { return nil }

var errKilledCtx = fmt.Errorf("%s", msgKilled)

var _ context.Context = (*killCtx)(nil)

// Texts Redis uses.
const (
	msgKilled      = "Script killed by user with SCRIPT KILL..."
	msgReadonly    = "Attempt to modify a readonly table"
	msgNoGlobal    = "Script attempted to access nonexistent global variable '%s'"
	chunkScript    = "user_script"
	chunkFunction  = "user_function"
	maxUnpack      = 8000 // Lua 5.1's LUAI_MAXCSTACK: unpack's limit
	maxCallStack   = 20000
	registryInit   = 16 * 1024
	registryMax    = 4 * 1024 * 1024
	registryGrowBy = 64 * 1024
)

// newVM builds a VM of the given kind.
func newVM(kind vmKind, opts Options) *VM {
	if opts.Rand == nil {
		opts.Rand = NewRand48()
	}
	if opts.Log == nil {
		opts.Log = func(int, string) {}
	}
	L := lua.NewState(lua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       maxCallStack,
		MinimizeStackMemory: true,
		RegistrySize:        registryInit,
		RegistryMaxSize:     registryMax,
		RegistryGrowStep:    registryGrowBy,
	})
	vm := &VM{L: L, kind: kind, opts: opts, ro: map[*lua.LTable]*lua.LTable{}, roMeta: map[*lua.LTable]lua.LValue{}}
	vm.ctx = &killCtx{done: make(chan struct{})}
	vm.open()
	L.SetContext(vm.ctx)
	return vm
}

// open loads the libraries and builds the protected globals.
func (vm *VM) open() {
	L := vm.L
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	open := L.G.Global // what the libraries registered
	g := L.NewTable()
	vm.globals = g

	// The base functions Redis keeps, some replaced by versions that
	// follow Lua 5.1 and see through readonly views.
	for _, name := range []string{"rawequal", "select", "type", "xpcall", "load", "coroutine"} {
		g.RawSetString(name, open.RawGetString(name))
	}
	g.RawSetString("_VERSION", lua.LString("Lua 5.1"))
	vm.setFuncs(g, map[string]lua.LGFunction{
		"error":          vm.luaError,
		"pcall":          vm.luaPcall,
		"next":           vm.luaNext,
		"rawget":         vm.luaRawget,
		"rawset":         vm.luaRawset,
		"setmetatable":   vm.luaSetmetatable,
		"getmetatable":   vm.luaGetmetatable,
		"tostring":       vm.luaTostring,
		"tonumber":       luaTonumber,
		"unpack":         luaUnpack,
		"gcinfo":         luaGcinfo,
		"assert":         luaAssert,
		"collectgarbage": luaCollectgarbage,
		"loadstring":     vm.luaLoadstring,
		"ipairs":         vm.luaIpairs,
	})
	g.RawSetString("pairs", L.NewClosure(vm.luaPairs, g.RawGetString("next")))

	tbl := open.RawGetString("table").(*lua.LTable)
	vm.setFuncs(tbl, map[string]lua.LGFunction{
		"concat":   vm.tableConcat,
		"insert":   vm.tableInsert,
		"remove":   vm.tableRemove,
		"sort":     vm.tableSort,
		"foreach":  vm.tableForeach,
		"foreachi": vm.tableForeachi,
		"setn":     tableSetn,
		"getn":     vm.tableGetn,
		"maxn":     vm.tableMaxn,
	})
	str := open.RawGetString("string").(*lua.LTable)
	vm.setFuncs(str, map[string]lua.LGFunction{
		"format":  strFormat,
		"upper":   strUpper,
		"lower":   strLower,
		"rep":     strRep,
		"len":     strLen,
		"reverse": strReverse,
	})
	mth := open.RawGetString("math").(*lua.LTable)
	mth.RawSetString("huge", lua.LNumber(math.Inf(1)))
	vm.setFuncs(mth, map[string]lua.LGFunction{
		"random":     vm.mathRandom,
		"randomseed": vm.mathRandomseed,
	})
	co := open.RawGetString("coroutine").(*lua.LTable)
	create := co.RawGetString("create").(*lua.LFunction)
	co.RawSetString("create", L.NewFunction(func(L *lua.LState) int {
		vm.coroutines = true
		return create.GFunction(L)
	}))

	libs := map[string]*lua.LTable{
		"table":    tbl,
		"string":   str,
		"math":     mth,
		"cjson":    vm.openCjson(),
		"cmsgpack": vm.openCmsgpack(),
		"bit":      vm.openBit(),
		"struct":   vm.openStruct(),
		"redis":    vm.openRedis(),
	}
	for name, t := range libs {
		g.RawSetString(name, vm.readonly(t, nil))
	}
	g.RawSetString("server", g.RawGetString("redis")) // Valkey's name for it
	g.RawSetString("coroutine", vm.readonly(co, nil))

	// Strings index the (readonly) string library; their metatable is
	// itself readonly to scripts.
	vm.strMT = L.GetMetatable(lua.LString("")).(*lua.LTable)
	vm.strMT.RawSetString("__index", g.RawGetString("string"))
	vm.strMTv = vm.readonly(vm.strMT, nil)

	// Reading a global that does not exist is an error.
	gmeta := L.NewTable()
	gmeta.RawSetString("__index", L.NewFunction(noGlobal))
	L.SetMetatable(g, gmeta)

	// User code sees the globals through a readonly view.
	vm.envMeta = L.NewTable()
	vm.env = vm.readonlyWith(g, vm.envMeta)
	vm.roMeta[vm.env] = vm.readonly(vm.envMeta, nil)
	g.RawSetString("_G", vm.env)

	vm.errHandler = L.NewFunction(vm.handleError)
	if vm.kind == kindFunction {
		vm.loadAPI = vm.newLoadAPI()
	}
	// Functions created from here on (and the libraries' own functions,
	// through their G frames) resolve globals through the view.
	L.Env = vm.env
	L.G.Global = vm.env
}

func (vm *VM) setFuncs(t *lua.LTable, fns map[string]lua.LGFunction) {
	for name, fn := range fns {
		t.RawSetString(name, vm.L.NewFunction(fn))
	}
}

// readonly returns a readonly view of t: reads go through to t, writes
// fail with Redis's error. meta is what getmetatable answers for it.
func (vm *VM) readonly(t *lua.LTable, meta lua.LValue) *lua.LTable {
	v := vm.readonlyWith(t, vm.L.NewTable())
	if meta != nil {
		vm.roMeta[v] = meta
	}
	return v
}

func (vm *VM) readonlyWith(t, mt *lua.LTable) *lua.LTable {
	L := vm.L
	v := L.NewTable()
	mt.RawSetString("__index", t)
	mt.RawSetString("__newindex", L.NewFunction(roNewIndex))
	L.SetMetatable(v, mt)
	vm.ro[v] = t
	return v
}

// real returns the table a readonly view shows, or t itself.
func (vm *VM) real(t *lua.LTable) (*lua.LTable, bool) {
	if r, ok := vm.ro[t]; ok {
		return r, true
	}
	return t, false
}

func roNewIndex(L *lua.LState) int {
	L.RaiseError(msgReadonly)
	return 0
}

func noGlobal(L *lua.LState) int {
	L.RaiseError(msgNoGlobal, lua.LVAsString(L.Get(2)))
	return 0
}

// raiseReadonly is the readonly error raised from a library function:
// Redis raises it from C, without a position.
func raiseReadonly(L *lua.LState) {
	L.Error(lua.LString(msgReadonly), 0)
}

// Kill makes the running script fail at its next instruction (SCRIPT
// KILL, FUNCTION KILL, SHUTDOWN NOSAVE). Safe from any goroutine; a no-op
// when already killed or when no script runs.
func (vm *VM) Kill() {
	vm.kmu.Lock()
	defer vm.kmu.Unlock()
	if vm.running && !vm.killed.Load() {
		vm.killed.Store(true)
		close(vm.ctx.done)
	}
}

// beginRun marks the VM as running a script (Kill acts from now on).
func (vm *VM) beginRun() {
	vm.kmu.Lock()
	vm.running = true
	vm.kmu.Unlock()
}

// endRun prepares the kill context for the next run: a fresh one after a
// kill, or after coroutines were created (closing the old one releases
// what gopher-lua attached to it for them).
func (vm *VM) endRun() {
	vm.kmu.Lock()
	defer vm.kmu.Unlock()
	vm.running = false
	if vm.killed.Load() || vm.coroutines {
		if !vm.killed.Load() {
			close(vm.ctx.done)
		}
		vm.ctx = &killCtx{done: make(chan struct{})}
		vm.L.SetContext(vm.ctx)
		vm.killed.Store(false)
		vm.coroutines = false
	}
}

// Close releases the VM.
func (vm *VM) Close() { vm.L.Close() }

// compile compiles source as a chunk named name into a function whose
// environment is the protected globals.
func (vm *VM) compile(source, name string) (*lua.LFunction, error) {
	chunk, err := parse.Parse(strings.NewReader(source), name)
	if err != nil {
		return nil, syntaxError(err, source, name)
	}
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		return nil, syntaxError(err, source, name)
	}
	fn := vm.L.NewFunctionFromProto(proto)
	fn.Env = vm.env
	return fn, nil
}

// syntaxError renders a gopher-lua parse error the way Lua 5.1 reports
// one: "<chunk>:<line>: <message> near '<token>'". gopher-lua's parser
// only knows "syntax error" where Lua names what it expected; that is
// rendered as Lua's most common text, "unexpected symbol".
func syntaxError(err error, source, name string) error {
	if pe, ok := err.(*parse.Error); ok {
		line := pe.Pos.Line
		tok := pe.Token
		if line == parse.EOF || line <= 0 {
			line = strings.Count(source, "\n") + 1
			tok = "<eof>"
		}
		msg := pe.Message
		switch msg {
		case "syntax error", "", "Invalid token":
			msg = "unexpected symbol"
		case "unterminated string":
			msg = "unfinished string"
		case "unterminated multiline string":
			msg = "unfinished long string"
		case "invalid multiline comment":
			msg = "unfinished long comment"
		case "illegal hexadecimal number":
			msg = "malformed number"
		}
		if tok == "" {
			return fmt.Errorf("%s:%d: %s", name, line, msg)
		}
		return fmt.Errorf("%s:%d: %s near '%s'", name, line, msg, tok)
	}
	if ce, ok := err.(*lua.CompileError); ok {
		return fmt.Errorf("%s:%d: %s", name, ce.Line, ce.Message)
	}
	return fmt.Errorf("%s: %v", name, err)
}

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
				L.Push(lua.LNumber(n))
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
		if vm.killed.Load() {
			L.Error(lua.LString(msgKilled), 0)
		}
		var obj lua.LValue = lua.LString(err.Error())
		if ae, ok := err.(*lua.ApiError); ok {
			obj = ae.Object
		}
		if t, ok := obj.(*lua.LTable); ok {
			if s, ok := t.RawGetString("err").(lua.LString); ok {
				obj = s
			}
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
	L.Push(lua.LNumber(i))
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
	fn, err := vm.compile(src, chunkName)
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

// optNumber is luaL_optnumber.
func optNumber(L *lua.LState, n int, fname string, def float64) float64 {
	if L.Get(n) == lua.LNil {
		return def
	}
	return checkNumber(L, n, fname)
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

// isInteger reports whether f holds an integer value exactly.
func isInteger(f float64) bool { return f == math.Trunc(f) && !math.IsInf(f, 0) }
