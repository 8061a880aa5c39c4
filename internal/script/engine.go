package script

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"sync/atomic"

	lua "github.com/yuin/gopher-lua"

	"github.com/abacusdb/abacus/internal/resp"
)

// Flags are a script's or function's flags (the shebang's flags=...,
// register_function's flags).
type Flags uint32

// Script flags, in Redis's order. FlagTransactional is Abacus's own: the
// name is reserved for all-or-nothing scripts. FlagEvalCompat marks an
// EVAL script without a shebang, which Redis runs with its pre-7 rules.
const (
	FlagNoWrites Flags = 1 << iota
	FlagAllowOOM
	FlagAllowStale
	FlagNoCluster
	FlagAllowCrossSlot
	FlagTransactional
	FlagEvalCompat
)

var flagNames = []struct {
	f    Flags
	name string
}{
	{FlagNoWrites, "no-writes"},
	{FlagAllowOOM, "allow-oom"},
	{FlagAllowStale, "allow-stale"},
	{FlagNoCluster, "no-cluster"},
	{FlagAllowCrossSlot, "allow-cross-slot-keys"},
	{FlagTransactional, "transactional"},
}

// Names lists the flags set, as FUNCTION LIST shows them.
func (f Flags) Names() []string {
	out := []string{}
	for _, n := range flagNames {
		if f&n.f != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

func lookupFlag(name string, fold bool) (Flags, bool) {
	for _, n := range flagNames {
		if n.name == name || (fold && strings.EqualFold(n.name, name)) {
			return n.f, true
		}
	}
	return 0, false
}

// Script is a cached EVAL script.
type Script struct {
	SHA   string // lower-case hex SHA1 of Body
	Body  string
	Flags Flags
	fn    *lua.LFunction
	// checkpointed: compiled with kill checkpoints, run without the
	// kill context (kill.go).
	checkpointed bool
}

// Engine is the server's scripting state: the EVAL VM with its script
// cache and the functions VM with its libraries. It is used under the
// server lock, except for the Kill and Running methods.
type Engine struct {
	opts    Options
	eval    *VM
	scripts map[string]*Script
	fns     *functions
	// active is the VM running a script now, for Kill from other
	// goroutines.
	active atomic.Pointer[VM]
}

// New makes an Engine; the VMs are created when first needed.
func New(opts Options) *Engine {
	if opts.Rand == nil {
		opts.Rand = NewRand48()
	}
	return &Engine{opts: opts, scripts: map[string]*Script{}, fns: newFunctions()}
}

func (e *Engine) evalVM() *VM {
	if e.eval == nil {
		e.eval = newVM(kindEval, e.opts)
	}
	return e.eval
}

// SHA1 returns the lower-case hex SHA1 of body, a script's name.
func SHA1(body string) string {
	sum := sha1.Sum([]byte(body))
	return hex.EncodeToString(sum[:])
}

// Load compiles body and caches it (SCRIPT LOAD, EVAL). The error has
// Redis's text, code included ("ERR Error compiling script ...").
func (e *Engine) Load(body string) (*Script, error) {
	sha := SHA1(body)
	if s := e.scripts[sha]; s != nil {
		return s, nil
	}
	flags, skip, err := ParseShebang(body)
	if err != nil {
		return nil, err
	}
	vm := e.evalVM()
	// The shebang line is skipped, its newline kept, so that line numbers
	// stay the user's.
	fn, checkpointed, err := vm.compile(body[skip:], chunkScript, false)
	if err != nil {
		return nil, replyErr("ERR Error compiling script (new function): " + err.Error())
	}
	s := &Script{SHA: sha, Body: body, Flags: flags, fn: fn, checkpointed: checkpointed}
	e.scripts[sha] = s
	return s, nil
}

// Lookup returns the cached script with the given SHA1 (any case), or nil.
func (e *Engine) Lookup(sha []byte) *Script {
	if len(sha) != 40 {
		return nil
	}
	if s := e.scripts[string(sha)]; s != nil {
		return s
	}
	return e.scripts[strings.ToLower(string(sha))]
}

// Flush empties the script cache and starts a fresh EVAL VM.
func (e *Engine) Flush() {
	e.scripts = map[string]*Script{}
	if e.eval != nil {
		e.eval.Close()
		e.eval = nil
	}
}

// NumScripts is the number of cached scripts (INFO's number_of_cached_scripts).
func (e *Engine) NumScripts() int { return len(e.scripts) }

// ScriptsSize estimates the memory of the cached scripts: their source and
// a fixed cost each.
func (e *Engine) ScriptsSize() int64 {
	var n int64
	for _, s := range e.scripts {
		n += int64(len(s.Body)) + 96
	}
	return n
}

// EvalVMStarted reports whether the EVAL VM exists (it is made on first use).
func (e *Engine) EvalVMStarted() bool { return e.eval != nil }

// FunctionVMStarted reports whether the functions VM exists.
func (e *Engine) FunctionVMStarted() bool { return e.fns.vm != nil }

// replyErr is an error whose text is a complete Redis error reply body.
type replyErr string

func (r replyErr) Error() string { return string(r) }

// ParseShebang reads an EVAL script's "#!lua flags=..." line. It returns
// the flags (FlagEvalCompat when there is no shebang) and the length of
// the line (without its newline) to skip when compiling.
func ParseShebang(body string) (Flags, int, error) {
	if !strings.HasPrefix(body, "#!") {
		return FlagEvalCompat, 0, nil
	}
	end := strings.IndexByte(body, '\n')
	if end < 0 {
		return 0, 0, replyErr("ERR Invalid script shebang")
	}
	parts, ok := resp.SplitArgs([]byte(body[:end]), nil)
	if !ok || len(parts) == 0 {
		return 0, 0, replyErr("ERR Invalid engine in script shebang")
	}
	if string(parts[0]) != "#!lua" {
		return 0, 0, replyErr("ERR Unexpected engine in script shebang: " + string(parts[0]))
	}
	var flags Flags
	for _, p := range parts[1:] {
		ps := string(p)
		if !strings.HasPrefix(ps, "flags=") {
			return 0, 0, replyErr("ERR Unknown lua shebang option: " + ps)
		}
		list := ps[len("flags="):]
		if list == "" {
			continue
		}
		for _, name := range strings.Split(list, ",") {
			f, ok := lookupFlag(name, false)
			if !ok {
				return 0, 0, replyErr("ERR Unexpected flag in script shebang: " + name)
			}
			flags |= f
		}
	}
	return flags, end, nil
}

// Call is one run of a script or function.
type Call struct {
	Host Host
	Keys [][]byte
	Args [][]byte
	// W receives the reply, in the caller's protocol.
	W *resp.Writer
	// CountError is told of every error reply written to W (the
	// top-level one or one nested in an array). counted is false for an
	// error that came from a command's reply, which the command already
	// counted in the error statistics.
	CountError func(msg string, counted bool)
}

// RunScript runs an EVAL script and writes its reply. It reports whether
// the reply is an error (the script failed).
func (e *Engine) RunScript(s *Script, c *Call) (failed bool) {
	vm := e.evalVM()
	vm.keys.fill(vm, "KEYS", c.Keys)
	vm.argv.fill(vm, "ARGV", c.Args)
	e.active.Store(vm)
	defer e.active.Store(nil)
	failed = vm.call(s.fn, s.checkpointed, s.SHA, c)
	vm.keys.check()
	vm.argv.check()
	return failed
}

// globalArray is KEYS or ARGV. Nothing a script does outlives it (the
// globals are read-only), so the table is reused from run to run, unless
// the script changed its shape, in which case the next run gets a new one.
type globalArray struct {
	t *lua.LTable
	n int
}

func (a *globalArray) fill(vm *VM, name string, items [][]byte) {
	if a.t == nil {
		a.t = vm.L.CreateTable(len(items), 0)
		vm.globals.RawSetString(name, a.t)
		a.n = 0
	}
	// An item equal to the one the last run had in its place keeps its
	// Lua string (constant arguments repeat from call to call); the
	// others share one new buffer: one allocation for their bytes.
	size := 0
	for i, it := range items {
		if !a.same(i, it) {
			size += len(it)
		}
	}
	var buf []byte
	if size > 0 {
		buf = make([]byte, 0, size)
	}
	for i, it := range items {
		if a.same(i, it) {
			continue
		}
		start := len(buf)
		buf = append(buf, it...)
		a.t.RawSetInt(i+1, lua.LString(bytesString(buf[start:len(buf):len(buf)])))
	}
	for i := len(items) + 1; i <= a.n; i++ {
		a.t.RawSetInt(i, lua.LNil)
	}
	a.n = len(items)
}

// same reports whether element i+1 of the table is already the string b.
func (a *globalArray) same(i int, b []byte) bool {
	if i >= a.n {
		return false
	}
	s, ok := a.t.RawGetInt(i + 1).(lua.LString)
	return ok && string(s) == string(b)
}

// check keeps the table for the next run only if it holds exactly the
// run's items (the script may have added, removed or set other keys).
func (a *globalArray) check() {
	if a.t == nil {
		return
	}
	if a.t.Len() != a.n || a.t.Metatable != lua.LNil {
		a.t = nil
		return
	}
	if k, _ := a.t.Next(lua.LNumber(a.n)); k != lua.LNil || (a.n == 0 && a.firstKey() != lua.LNil) {
		a.t = nil
	}
}

func (a *globalArray) firstKey() lua.LValue {
	k, _ := a.t.Next(lua.LNil)
	return k
}

// stringArray makes a Lua array of the items, their bytes copied into one
// buffer.
func stringArray(L *lua.LState, items [][]byte) *lua.LTable {
	t := L.CreateTable(len(items), 0)
	size := 0
	for _, it := range items {
		size += len(it)
	}
	buf := make([]byte, 0, size)
	for i, it := range items {
		start := len(buf)
		buf = append(buf, it...)
		t.RawSetInt(i+1, lua.LString(bytesString(buf[start:])))
	}
	return t
}

// call runs fn(args...) in protected mode and writes the reply; name is
// what error messages call the script, checkpointed tells how its chunk
// was compiled.
func (vm *VM) call(fn *lua.LFunction, checkpointed bool, name string, c *Call, args ...lua.LValue) bool {
	L := vm.L
	vm.runv = runState{host: c.Host, resp: 2, name: name}
	run := &vm.runv
	vm.run = run
	vm.beginRun(checkpointed)
	defer func() {
		vm.run = nil
		vm.endRun()
		L.SetTop(0)
	}()
	L.Push(fn)
	for _, a := range args {
		L.Push(a)
	}
	err := L.PCall(len(args), 1, vm.errHandler)
	rw := replyWriter{w: c.W, vm: vm, resp: run.resp, countErr: c.CountError}
	// A script killed after its last check ends as killed all the same.
	if err != nil || vm.killed() {
		var obj lua.LValue = lua.LNil
		if ae, ok := err.(*lua.ApiError); ok {
			obj = ae.Object
		} else if err != nil {
			obj = lua.LString(err.Error())
		}
		if vm.killed() {
			t := errorTable(L, msgKilled, false)
			if src, line, ok := tableSource(obj); ok {
				t.RawSetString("source", src)
				t.RawSetString("line", line)
			}
			obj = t
		}
		msg, counted := scriptError(L, obj, name)
		rw.error(msg, counted)
		return true
	}
	mark := len(c.W.Buf)
	rw.write(L.Get(-1), 0)
	return len(c.W.Buf) > mark && c.W.Buf[mark] == '-'
}

func tableSource(v lua.LValue) (lua.LValue, lua.LValue, bool) {
	t, ok := v.(*lua.LTable)
	if !ok {
		return nil, nil, false
	}
	src, line := t.RawGetString("source"), t.RawGetString("line")
	return src, line, src != lua.LNil && line != lua.LNil
}

// Kill stops the running script or function at its next instruction. It
// may be called from any goroutine; it does nothing when none runs.
func (e *Engine) Kill() {
	if vm := e.active.Load(); vm != nil {
		vm.Kill()
	}
}
