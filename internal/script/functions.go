package script

import (
	"sort"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/abacusdb/abacus/internal/resp"
)

// Redis 7 functions: libraries of Lua code loaded with FUNCTION LOAD,
// whose code registers named functions with redis.register_function.
// Library code runs in a narrow environment (only redis.register_function,
// redis.log and the constants); the functions run with the same globals
// as EVAL scripts, minus KEYS and ARGV, which they receive as arguments.

// Library is a loaded function library.
type Library struct {
	Name  string
	Code  string
	Funcs map[string]*Function // by lower-case name: names are case-insensitive
	// checkpointed: compiled with kill checkpoints (kill.go).
	checkpointed bool
}

// Function is a registered function.
type Function struct {
	Name    string
	Desc    string
	HasDesc bool
	Flags   Flags
	Lib     *Library
	fn      *lua.LFunction
}

// SortedFuncs returns the library's functions by name.
func (l *Library) SortedFuncs() []*Function {
	out := make([]*Function, 0, len(l.Funcs))
	for _, f := range l.Funcs {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

type functions struct {
	vm    *VM
	libs  map[string]*Library
	funcs map[string]*Function
}

func newFunctions() *functions {
	return &functions{libs: map[string]*Library{}, funcs: map[string]*Function{}}
}

// loadTimeout bounds how long FUNCTION LOAD may run a library's code.
const loadTimeout = 500 * time.Millisecond

func (e *Engine) fnVM() *VM {
	if e.fns.vm == nil {
		e.fns.vm = newVM(kindFunction, e.opts)
	}
	return e.fns.vm
}

// newLoadAPI builds what library code sees while it is loaded: a redis
// table with register_function, log and the constants, nothing else, also
// named server (Valkey's name, which EVAL scripts and functions have too).
func (vm *VM) newLoadAPI() *lua.LTable {
	L := vm.L
	rt := L.NewTable()
	rt.RawSetString("register_function", L.NewFunction(vm.registerFunction))
	rt.RawSetString("log", L.NewFunction(vm.redisLog))
	setLogConsts(rt)
	strict := L.NewTable()
	strict.RawSetString("__index", L.NewFunction(noGlobal))
	L.SetMetatable(rt, strict)
	api := L.NewTable()
	ro := vm.readonly(rt, nil)
	api.RawSetString("redis", ro)
	api.RawSetString("server", ro)
	api.RawSetString(concatName, vm.globals.RawGetString(concatName))
	api.RawSetString(checkName, vm.globals.RawGetString(checkName))
	L.SetMetatable(api, strict)
	return api
}

// Library metadata errors and checks, with Redis's texts.
const (
	errNameChars = "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"
)

// validName reports whether a library or function name is made of
// letters, digits and underscores, and is not empty.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// libraryMeta parses "#!<engine> name=<lib>" and returns the engine, the
// name and the code after the shebang (starting at its newline).
func libraryMeta(code string) (engine, name, rest string, err error) {
	if !strings.HasPrefix(code, "#!") {
		return "", "", "", replyErr("ERR Missing library metadata")
	}
	end := strings.IndexByte(code, '\n')
	if end < 0 {
		return "", "", "", replyErr("ERR Invalid library metadata")
	}
	parts, ok := resp.SplitArgs([]byte(code[:end]), nil)
	if !ok || len(parts) == 0 {
		return "", "", "", replyErr("ERR Invalid library metadata")
	}
	engine = string(parts[0][2:])
	gotName := false
	for _, p := range parts[1:] {
		ps := string(p)
		if len(ps) >= 5 && strings.EqualFold(ps[:5], "name=") {
			if gotName {
				return "", "", "", replyErr("ERR Invalid metadata value, name argument was given multiple times")
			}
			name, gotName = ps[5:], true
			continue
		}
		return "", "", "", replyErr("ERR Invalid metadata value given: " + ps)
	}
	if !gotName {
		return "", "", "", replyErr("ERR Library name was not given")
	}
	return engine, name, code[end:], nil
}

// compileLibrary runs a library's code in the load environment and
// returns the library with the functions it registered. Nothing is
// installed.
func (e *Engine) compileLibrary(code string) (*Library, error) {
	engine, name, body, err := libraryMeta(code)
	if err != nil {
		return nil, err
	}
	if !validName(name) {
		return nil, replyErr(errNameChars)
	}
	if !strings.EqualFold(engine, "lua") {
		return nil, replyErr("ERR Engine '" + engine + "' not found")
	}
	vm := e.fnVM()
	fn, checkpointed, err := vm.compile(body, chunkFunction, false)
	if err != nil {
		return nil, replyErr("ERR Error compiling function: " + err.Error())
	}
	lib := &Library{Name: name, Code: code, Funcs: map[string]*Function{}, checkpointed: checkpointed}
	if err := vm.runLoad(fn, lib); err != nil {
		return nil, err
	}
	if len(lib.Funcs) == 0 {
		return nil, replyErr("ERR No functions registered")
	}
	return lib, nil
}

// runLoad runs a library's main chunk with the load environment in place
// and a time limit.
func (vm *VM) runLoad(fn *lua.LFunction, lib *Library) error {
	L := vm.L
	vm.envMeta.RawSetString("__index", vm.loadAPI)
	vm.runv = runState{resp: 2, loading: lib}
	vm.run = &vm.runv
	vm.beginRun(lib.checkpointed)
	timer := time.AfterFunc(loadTimeout, vm.Kill)
	defer func() {
		timer.Stop()
		vm.envMeta.RawSetString("__index", vm.globals)
		vm.run = nil
		vm.endRun()
		L.SetTop(0)
	}()
	L.Push(fn)
	err := L.PCall(0, 0, nil)
	if vm.killed() {
		return replyErr("ERR Error registering functions: ERR FUNCTION LOAD timeout")
	}
	if err == nil {
		return nil
	}
	var obj lua.LValue = lua.LString(err.Error())
	if ae, ok := err.(*lua.ApiError); ok {
		obj = ae.Object
	}
	var msg string
	if s, ok := tostr(obj); ok {
		msg = "ERR " + s
	} else if t, ok := obj.(*lua.LTable); ok {
		msg, _ = tostr(t.RawGetString("err"))
	}
	return replyErr("ERR Error registering functions: " + msg)
}

// registerFunction is redis.register_function(name, fn) and
// redis.register_function{function_name=, callback=, flags=, description=}.
func (vm *VM) registerFunction(L *lua.LState) int {
	run := vm.run
	if run == nil || run.loading == nil {
		raiseErr(L, "redis.register_function can only be called on FUNCTION LOAD command")
	}
	f := &Function{Lib: run.loading}
	switch L.GetTop() {
	case 1:
		vm.registerNamed(L, f)
	case 2:
		name, ok := tostr(L.Get(1))
		if !ok {
			raiseErr(L, "first argument to redis.register_function must be a string")
		}
		fn, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			raiseErr(L, "second argument to redis.register_function must be a function")
		}
		f.Name, f.fn = name, fn
	default:
		raiseErr(L, "wrong number of arguments to redis.register_function")
	}
	if !validName(f.Name) {
		raiseErr(L, errNameChars)
	}
	key := strings.ToLower(f.Name)
	if _, dup := run.loading.Funcs[key]; dup {
		raiseErr(L, "Function already exists in the library")
	}
	run.loading.Funcs[key] = f
	return 0
}

func (vm *VM) registerNamed(L *lua.LState, f *Function) {
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		raiseErr(L, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).")
	}
	t, _ = vm.real(t)
	gotName := false
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		key, ok := tostr(k)
		if !ok {
			raiseErr(L, "named argument key given to redis.register_function is not a string")
		}
		switch strings.ToLower(key) {
		case "function_name":
			s, ok := tostr(v)
			if !ok {
				raiseErr(L, "function_name argument given to redis.register_function must be a string")
			}
			f.Name, gotName = s, true
		case "description":
			s, ok := tostr(v)
			if !ok {
				raiseErr(L, "description argument given to redis.register_function must be a string")
			}
			f.Desc, f.HasDesc = s, true
		case "callback":
			fn, ok := v.(*lua.LFunction)
			if !ok {
				raiseErr(L, "callback argument given to redis.register_function must be a function")
			}
			f.fn = fn
		case "flags":
			ft, ok := v.(*lua.LTable)
			if !ok {
				raiseErr(L, "flags argument to redis.register_function must be a table representing function flags")
			}
			ft, _ = vm.real(ft)
			for i := 1; ; i++ {
				fv := ft.RawGetInt(i)
				if fv == lua.LNil {
					break
				}
				s, ok := tostr(fv)
				if !ok {
					raiseErr(L, "unknown flag given")
				}
				fl, ok := lookupFlag(s, true)
				if !ok {
					raiseErr(L, "unknown flag given")
				}
				f.Flags |= fl
			}
		default:
			raiseErr(L, "unknown argument given to redis.register_function")
		}
	}
	if !gotName {
		raiseErr(L, "redis.register_function must get a function name argument")
	}
	if f.fn == nil {
		raiseErr(L, "redis.register_function must get a callback argument")
	}
}

// LoadLibrary is FUNCTION LOAD [REPLACE]: it returns the library name.
func (e *Engine) LoadLibrary(code string, replace bool) (string, error) {
	engine, name, _, err := libraryMeta(code)
	if err != nil {
		return "", err
	}
	if !validName(name) {
		return "", replyErr(errNameChars)
	}
	if !strings.EqualFold(engine, "lua") {
		return "", replyErr("ERR Engine '" + engine + "' not found")
	}
	if e.fns.libs[name] != nil && !replace {
		return "", replyErr("ERR Library '" + name + "' already exists")
	}
	lib, err := e.compileLibrary(code)
	if err != nil {
		return "", err
	}
	old := e.fns.libs[name]
	for _, f := range lib.SortedFuncs() {
		if cur := e.fns.funcs[strings.ToLower(f.Name)]; cur != nil && cur.Lib != old {
			return "", replyErr("ERR Function " + f.Name + " already exists")
		}
	}
	e.fns.install(lib)
	return name, nil
}

// install adds lib, replacing a library of the same name.
func (fs *functions) install(lib *Library) {
	if old := fs.libs[lib.Name]; old != nil {
		fs.remove(old)
	}
	fs.libs[lib.Name] = lib
	for name, f := range lib.Funcs {
		fs.funcs[name] = f
	}
}

func (fs *functions) remove(lib *Library) {
	for name := range lib.Funcs {
		delete(fs.funcs, name)
	}
	delete(fs.libs, lib.Name)
}

// DeleteLibrary is FUNCTION DELETE; it reports whether the library existed.
func (e *Engine) DeleteLibrary(name string) bool {
	lib := e.fns.libs[name]
	if lib == nil {
		return false
	}
	e.fns.remove(lib)
	return true
}

// FlushFunctions is FUNCTION FLUSH: no libraries, a fresh VM.
func (e *Engine) FlushFunctions() {
	vm := e.fns.vm
	e.fns = newFunctions()
	if vm != nil {
		vm.Close()
	}
}

// Libraries returns the libraries by name.
func (e *Engine) Libraries() []*Library {
	out := make([]*Library, 0, len(e.fns.libs))
	for _, l := range e.fns.libs {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Function returns the registered function name (any case), or nil.
func (e *Engine) Function(name string) *Function {
	if f := e.fns.funcs[name]; f != nil {
		return f
	}
	return e.fns.funcs[strings.ToLower(name)]
}

// NumFunctions is the number of registered functions.
func (e *Engine) NumFunctions() int { return len(e.fns.funcs) }

// RestorePolicy is FUNCTION RESTORE's handling of existing libraries.
type RestorePolicy int

// Restore policies.
const (
	RestoreAppend RestorePolicy = iota
	RestoreReplace
	RestoreFlush
)

// RestoreLibraries loads the libraries whose codes are given (FUNCTION
// RESTORE). Nothing changes when an error is returned.
func (e *Engine) RestoreLibraries(codes []string, policy RestorePolicy) error {
	loaded := newFunctions()
	for _, code := range codes {
		lib, err := e.compileLibrary(code)
		if err != nil {
			return err
		}
		if loaded.libs[lib.Name] != nil {
			return replyErr("ERR Library '" + lib.Name + "' already exists")
		}
		for key, f := range lib.Funcs {
			if loaded.funcs[key] != nil {
				return replyErr("ERR Function " + f.Name + " already exists")
			}
		}
		loaded.install(lib)
	}
	if policy == RestoreFlush {
		vm := e.fns.vm
		loaded.vm = vm
		e.fns = loaded
		return nil
	}
	// Join: library collisions first, then function collisions with the
	// libraries that stay.
	names := make([]string, 0, len(loaded.libs))
	for n := range loaded.libs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if e.fns.libs[n] != nil && policy != RestoreReplace {
			return replyErr("ERR Library " + n + " already exists")
		}
	}
	for _, n := range names {
		for _, f := range loaded.libs[n].SortedFuncs() {
			if cur := e.fns.funcs[strings.ToLower(f.Name)]; cur != nil && loaded.libs[cur.Lib.Name] == nil {
				return replyErr("ERR Function " + f.Name + " already exists")
			}
		}
	}
	for _, n := range names {
		e.fns.install(loaded.libs[n])
	}
	return nil
}

// RunFunction runs a function (FCALL) and writes its reply; it reports
// whether the reply is an error.
func (e *Engine) RunFunction(f *Function, c *Call) bool {
	vm := e.fnVM()
	e.active.Store(vm)
	defer e.active.Store(nil)
	return vm.call(f.fn, f.Lib.checkpointed, f.Name, c, stringArray(vm.L, c.Keys), stringArray(vm.L, c.Args))
}
