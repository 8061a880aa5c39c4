package script

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Killing a running script (SCRIPT KILL, FUNCTION KILL, SHUTDOWN NOSAVE,
// the FUNCTION LOAD timeout) from another goroutine.
//
// gopher-lua offers one way to stop running Lua code from outside: a
// context, which its VM polls with a select before every instruction.
// That select costs as much as a fifth of a simple instruction, on every
// instruction of every script. So a chunk is compiled one of two ways
// (rewrite.go decides):
//
//   - checkpointed: every loop body that can run long and every function
//     body starts with a checkpoint, a countdown that calls luaCheck every
//     100 passes; the chunk runs without a context. Chosen when every such
//     body does real work (it calls something), so that the checkpoint is
//     cheap next to it: the limiter's loops, for example.
//   - polled: no checkpoints; the chunk runs with the kill context set,
//     as gopher-lua intends. Chosen for chunks with a tight loop or a
//     small function, where three instructions per pass would cost more
//     than the select on each of a few instructions.
//
// In both, redis.call and pcall refuse to go on once the script is
// killed, and a script killed after its last check still ends with the
// kill error.

// killState is a VM's kill state.
type killState struct {
	mu      sync.Mutex // orders Kill against the start and end of runs
	running bool
	// killed is set by Kill; checkpoints, redis.call and pcall read it.
	killed atomic.Bool
	ctx    *killCtx
	// coroutines is set when a polled run made a coroutine: gopher-lua
	// gave it a context derived from ctx, released when ctx is closed.
	coroutines bool
}

// killCtx is the context of polled runs. Until Kill arms it, Done answers
// nil, which the VM's select skips at the least cost (a nil channel is
// never ready, and the runtime sees that before touching any channel).
// It is also armed before a coroutine is made, since gopher-lua derives
// the coroutine's context from it with context.WithCancel, which reads
// Done once, at that moment.
type killCtx struct {
	done  chan struct{}
	armed atomic.Bool
}

func newKillCtx() *killCtx { return &killCtx{done: make(chan struct{})} }

func (k *killCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (k *killCtx) Err() error                  { return errKilledCtx }
func (k *killCtx) Value(any) any               { return nil }
func (k *killCtx) Done() <-chan struct{} {
	if k.armed.Load() {
		return k.done
	}
	return nil
}

var errKilledCtx = fmt.Errorf("%s", msgKilled)

var _ context.Context = (*killCtx)(nil)

// Kill makes the running script fail: at its next instruction when it is
// polled, at its next checkpoint (within 100 loop iterations or function
// calls), redis.call or pcall when it is checkpointed, or when it ends.
// Safe from any goroutine; a no-op when already killed or when no script
// runs.
func (vm *VM) Kill() {
	k := &vm.kill
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.running && !k.killed.Load() {
		k.killed.Store(true)
		close(k.ctx.done)
		k.ctx.armed.Store(true)
	}
}

// killed reports whether the running script was killed.
func (vm *VM) killed() bool { return vm.kill.killed.Load() }

// raiseIfKilled raises the kill error when the script was killed.
func (vm *VM) raiseIfKilled(L *lua.LState) {
	if vm.kill.killed.Load() {
		L.Error(lua.LString(msgKilled), 0)
	}
}

// luaCheck is the function the checkpoints call.
func (vm *VM) luaCheck(L *lua.LState) int {
	vm.raiseIfKilled(L)
	return 0
}

// killAware wraps a function that catches errors (xpcall) so that a
// killed script cannot catch its kill error with it.
func (vm *VM) killAware(fn *lua.LFunction) *lua.LFunction {
	g := fn.GFunction
	return vm.L.NewFunction(func(L *lua.LState) int {
		n := g(L)
		vm.raiseIfKilled(L)
		return n
	})
}

// wrapCoroutines makes coroutine.create and coroutine.wrap arm the kill
// context first (see killCtx).
func (vm *VM) wrapCoroutines(co *lua.LTable) {
	for _, name := range []string{"create", "wrap"} {
		g := co.RawGetString(name).(*lua.LFunction).GFunction
		co.RawSetString(name, vm.L.NewFunction(func(L *lua.LState) int {
			if L.Context() != nil {
				vm.kill.coroutines = true
				vm.kill.ctx.armed.Store(true)
			}
			return g(L)
		}))
	}
}

// beginRun marks the VM as running a chunk compiled checkpointed or not
// (Kill acts from now on).
func (vm *VM) beginRun(checkpointed bool) {
	k := &vm.kill
	if checkpointed {
		vm.L.RemoveContext()
	} else {
		vm.L.SetContext(k.ctx)
	}
	k.mu.Lock()
	k.running = true
	k.mu.Unlock()
}

// endRun marks the end of a run and prepares the kill context for the
// next: a fresh one after a kill, or after coroutines were made (closing
// the old one releases what gopher-lua attached to it for them).
func (vm *VM) endRun() {
	k := &vm.kill
	k.mu.Lock()
	defer k.mu.Unlock()
	k.running = false
	if k.killed.Load() || k.coroutines {
		if !k.killed.Load() {
			close(k.ctx.done)
		}
		k.ctx = newKillCtx()
		k.killed.Store(false)
		k.coroutines = false
	}
}
