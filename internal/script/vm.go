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
	"fmt"
	"math"
	"strings"

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

	kill killState // kill.go

	// The run in progress (nil between runs), kept in runv.
	run  *runState
	runv runState
	// KEYS and ARGV of EVAL scripts, reused between runs.
	keys, argv globalArray
	// Short strings reused from call to call (intern.go).
	strs strCache
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
	vm.kill.ctx = newKillCtx()
	vm.open()
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
	for _, name := range []string{"rawequal", "select", "type", "load", "coroutine"} {
		g.RawSetString(name, open.RawGetString(name))
	}
	g.RawSetString("_VERSION", lua.LString("Lua 5.1"))
	g.RawSetString(concatName, L.NewFunction(vm.luaConcat)) // rewrite.go
	g.RawSetString(checkName, L.NewFunction(vm.luaCheck))   // kill.go
	if vm.kind == kindEval {
		// Present from the start, so that scripts compiled before the
		// first run can hoist them (hoist.go).
		g.RawSetString("KEYS", L.CreateTable(0, 0))
		g.RawSetString("ARGV", L.CreateTable(0, 0))
	}
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
	g.RawSetString("xpcall", vm.killAware(open.RawGetString("xpcall").(*lua.LFunction)))

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
		"floor":      mathFloor,
		"ceil":       mathCeil,
	})
	co := open.RawGetString("coroutine").(*lua.LTable)
	vm.wrapCoroutines(co)

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
	g.RawSetString("__redis__err__handler", vm.errHandler) // Redis exposes its handler too
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
	if t.Metatable == lua.LNil {
		return t, false // a view always has its metatable
	}
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

// Close releases the VM.
func (vm *VM) Close() { vm.L.Close() }

// compile compiles source as a chunk named name into a function whose
// environment is the protected globals. It reports whether the chunk is
// checkpointed (kill.go), which force makes it.
func (vm *VM) compile(source, name string, force bool) (*lua.LFunction, bool, error) {
	chunk, err := parse.Parse(strings.NewReader(source), name)
	if err != nil {
		return nil, false, syntaxError(err, source, name)
	}
	if vm.kind == kindEval {
		chunk = vm.hoistGlobals(chunk) // hoist.go
	}
	chunk, checkpointed := rewriteChunk(chunk, force)
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		return nil, false, syntaxError(err, source, name)
	}
	fn := vm.L.NewFunctionFromProto(proto)
	fn.Env = vm.env
	return fn, checkpointed, nil
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
