package engine

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/resp"
	"github.com/abacusdb/abacus/internal/script"
)

// Running scripts: the state EVAL and FCALL share, the Host through which
// redis.call reaches the command table, and the record of the script in
// progress that other clients read, without the server lock, to answer
// BUSY and to kill it.
//
// A script runs inside its command's handler, under the server lock, like
// any command: nothing else runs until it ends. Its commands go through
// the command table with a session of its own (the "lua" client: the
// caller's database at the start, SELECT changes only the script's),
// after the checks Redis makes for scripts.
//
// The seam for all-or-nothing scripts: beginScript runs before the script,
// endScript after it with whether it failed, before its reply leaves (the
// reply is only buffered until the batch ends). An undo log attaches
// there; ScriptRun.Transactional says whether the script asked for it.

// scriptEnv is Env's scripting state. Its zero value is ready: the engine
// is made on first use (under the lock); running, libs and funcs are read
// without the lock.
type scriptEnv struct {
	engine   *script.Engine
	host     scriptHost
	countErr func(msg string, counted bool) // host.countError, made once
	sess     *Session                       // the "lua" client
	// running is the script in progress, nil between scripts.
	running atomic.Pointer[ScriptRun]
	// Library and function counts for FUNCTION STATS while a function runs.
	nlibs, nfuncs atomic.Int64
}

// ScriptRun describes the script in progress.
type ScriptRun struct {
	start    time.Duration // monotonic, since monoBase (exec.go)
	Eval     bool          // EVAL family (SCRIPT KILL), else FCALL (FUNCTION KILL)
	Name     string
	Argv     []string // the FCALL command line, for FUNCTION STATS
	ReadOnly bool
	Flags    script.Flags
	// wrote is set once the script has called a write command: it can no
	// longer be killed (UNKILLABLE).
	wrote atomic.Bool
	// Transactional marks an all-or-nothing script (flag "transactional").
	Transactional bool
	// undo: the script's writes are journaled and undone if it fails
	// (Transactional, or the script-transactional config). Set before the
	// run is published, read without the lock by SCRIPT KILL.
	undo   bool
	caller *Session
	// What runs: an EVAL script or a function, and the call's arguments
	// (kept here to allocate one object per run).
	Script   *script.Script
	Function *script.Function
	call     script.Call
	// Commands that arrive while the script runs wait on endCh (made by
	// the first of them) until it ends or passes busy-reply-threshold.
	endMu sync.Mutex
	ended bool
	endCh chan struct{}
}

// elapsed is how long the script has run.
func (r *ScriptRun) elapsed() time.Duration { return time.Since(monoBase) - r.start }

// finish wakes the commands waiting for the script (scripting_busy.go).
func (r *ScriptRun) finish() {
	r.endMu.Lock()
	r.ended = true
	if r.endCh != nil {
		close(r.endCh)
	}
	r.endMu.Unlock()
}

// endWait returns a channel closed when the script ends, or ended=true
// when it already has.
func (r *ScriptRun) endWait() (ch <-chan struct{}, ended bool) {
	r.endMu.Lock()
	defer r.endMu.Unlock()
	if r.ended {
		return nil, true
	}
	if r.endCh == nil {
		r.endCh = make(chan struct{})
	}
	return r.endCh, false
}

// Scripting returns the engine, creating it on first use.
func (e *Env) Scripting() *script.Engine {
	st := &e.scr
	if st.engine == nil {
		st.engine = script.New(script.Options{Log: e.scriptLog, Rand: scriptRand})
		st.sess = &Session{Addr: "lua", Authed: true, User: "default", Proto: 2, DenyBlocking: true}
		st.host.env = e
		st.countErr = st.host.countError
	}
	return st.engine
}

// scriptRand is math.random's generator: one per process, as in Redis.
var scriptRand = script.NewRand48()

// scriptLog writes redis.log lines at the matching server log level.
func (e *Env) scriptLog(level int, msg string) {
	if e.Log == nil {
		return
	}
	lv := slog.LevelInfo
	switch level {
	case script.LogDebug:
		lv = slog.LevelDebug
	case script.LogVerbose:
		lv = slog.Level(-2) // the server's verbose level
	case script.LogWarning:
		lv = slog.LevelWarn
	}
	e.Log.Log(context.Background(), lv, msg)
}

// ScriptRunning reports whether a script is running now. Safe without
// the server lock.
func (e *Env) ScriptRunning() bool { return e.scr.running.Load() != nil }

// RunScript runs the script or function of run for the command in c and
// writes its reply to c.W. It reports whether the script failed.
func (e *Env) RunScript(c *Ctx, run *ScriptRun, keys, args [][]byte) bool {
	st := &e.scr
	sess := st.sess
	sess.DB = c.S.DB
	sess.User = c.S.User
	sess.ACLUser = c.S.ACLUser
	sess.Proto = 2
	run.caller = c.S
	st.host.run = run
	st.host.ctx = c
	run.start = time.Since(monoBase)
	run.undo = run.Transactional || e.Cfg.Bool(config.ScriptTransactional)
	st.running.Store(run)
	if e.ScriptStarted != nil {
		e.ScriptStarted()
	}
	e.beginScript(run)
	if len(keys) > 1 {
		// The declared keys' cache misses overlap before the script's
		// commands look them up one by one (keyspace/prefetch.go).
		c.DB.Prefetch(keys, 1)
	}
	run.call = script.Call{Host: &st.host, Keys: keys, Args: args, W: c.W, CountError: st.countErr}
	var failed bool
	if run.Script != nil {
		failed = st.engine.RunScript(run.Script, &run.call)
	} else {
		failed = st.engine.RunFunction(run.Function, &run.call)
	}
	e.endScript(run, failed)
	st.running.Store(nil)
	run.finish()
	st.host.run, st.host.ctx = nil, nil
	return failed
}

// beginScript is called before a script runs: an all-or-nothing script
// opens the keyspace's undo journal (keyspace/undo.go).
func (e *Env) beginScript(run *ScriptRun) {
	e.propScriptBegin()
	if run.undo {
		e.KS.BeginUndo()
		e.pubsubHold()
	}
}

// endScript is called after a script ran, failed telling whether its
// reply is an error; the reply is buffered and not yet sent. An
// all-or-nothing script that failed has every write undone here, before
// anyone can see its reply or its effects.
func (e *Env) endScript(run *ScriptRun, failed bool) {
	if !run.undo {
		return
	}
	if failed {
		e.KS.Rollback()
		e.propScriptRollback()
		e.Stats.Decisions.ScriptRollbacks.Add(1)
	} else {
		e.KS.Commit()
	}
	e.pubsubRelease(!failed)
}

// scriptHost is the script.Host of the running script.
type scriptHost struct {
	env   *Env
	run   *ScriptRun
	ctx   *Ctx // the EVAL/FCALL command
	w     resp.Writer
	names map[string]*Command // see lookup
}

// Texts of the refusals of redis.call.
const (
	errScriptUnknownCmd = "ERR Unknown Redis command called from script"
	errScriptArity      = "ERR Wrong number of args calling Redis command from script"
	errScriptNoScript   = "ERR This Redis command is not allowed from script"
	errScriptReadOnly   = "ERR Write commands are not allowed from read-only scripts."
)

// Call implements script.Host: it runs a command for the script after
// Redis's checks, with the script's session, and returns the reply.
func (h *scriptHost) Call(args [][]byte, proto int) []byte {
	e := h.env
	w := &h.w
	w.Reset()
	w.Proto = proto
	cmd := h.lookup(args)
	switch {
	case cmd == nil:
		h.refuse(nil, errScriptUnknownCmd)
	case !cmd.ArityOK(len(args)):
		h.refuse(cmd, errScriptArity)
	case cmd.Flags&FlagNoScript != 0 && !e.denyScriptsOff.Load():
		h.refuse(cmd, errScriptNoScript)
	case h.aclRefused(cmd, args):
	case h.run.ReadOnly && cmd.Flags&(FlagWrite|FlagMayReplicate) != 0:
		h.refuse(cmd, errScriptReadOnly)
	case cmd.Flags&FlagDenyOOM != 0 && h.run.Flags&script.FlagAllowOOM == 0 && !h.run.wrote.Load() && e.ScriptOOM():
		// Redis's scriptVerifyOOM: over maxmemory when the script
		// started, its first write may not be one that needs memory.
		h.refuse(cmd, ErrOOM)
	default:
		if cmd.Flags&FlagWrite != 0 {
			h.run.wrote.Store(true)
		}
		if e.cluster != nil {
			if msg := e.scriptClusterRefusal(h.run.caller, cmd, args, h.run.Flags&(script.FlagAllowCrossSlot|script.FlagEvalCompat) != 0); msg != "" {
				h.refuse(cmd, msg)
				break
			}
		}
		sess := e.scr.sess
		sess.Proto = proto
		if h.run.undo {
			// Lookups by a write save their keys before the handler
			// changes them in place.
			e.KS.SetUndoWrites(cmd.Flags&FlagWrite != 0)
			e.run(sess, cmd, args, w)
			e.KS.SetUndoWrites(false)
		} else {
			e.run(sess, cmd, args, w)
		}
	}
	return w.Buf
}

// refuse answers a command redis.call does not run, counting it as Redis
// does (a rejected call, an error reply).
func (h *scriptHost) refuse(cmd *Command, msg string) {
	if cmd != nil {
		h.env.cmdStat(cmd.Name).Rejected++
	}
	h.env.CountError(msg)
	h.w.Error(msg)
}

// countError records an error reply of the script as Redis does: one the
// script made enters the error statistics and marks the EVAL/FCALL as
// failed; one that came from a command's reply (already counted by that
// command) adds a failed call to the EVAL/FCALL directly, once per error.
func (h *scriptHost) countError(msg string, counted bool) {
	c := h.ctx
	if counted {
		h.env.CountError(msg)
		c.err = true
		return
	}
	h.env.cmdStat(c.Cmd.Name).Failed++
}

// CommandKnown implements script.Host.
func (h *scriptHost) CommandKnown(args [][]byte) bool { return scriptLookup(args) != nil }

// lookup is scriptLookup with a cache of command names as the script
// spells them ("INCR" is looked up once, not lower-cased on every call).
// Subcommands are resolved each time.
func (h *scriptHost) lookup(args [][]byte) *Command {
	if c, ok := h.names[string(args[0])]; ok && len(c.Subs) == 0 {
		return c
	}
	c := scriptLookup(args)
	if c != nil && len(c.Subs) == 0 && c.parent == nil {
		if h.names == nil || len(h.names) >= 256 {
			h.names = map[string]*Command{}
		}
		h.names[string(args[0])] = c
	}
	return c
}

// scriptLookup finds the command a script calls: a subcommand when the
// command has them, nil for an unknown one, as Redis's lookupCommand.
func scriptLookup(args [][]byte) *Command {
	return resolve(Lookup(args[0]), args)
}

// SyncFunctionCounts publishes the library and function counts for
// FUNCTION STATS while a function runs.
func (e *Env) SyncFunctionCounts() {
	eng := e.Scripting()
	e.scr.nlibs.Store(int64(len(eng.Libraries())))
	e.scr.nfuncs.Store(int64(eng.NumFunctions()))
}

// ScriptEngine is the scripting engine, nil until the first script or
// function library is loaded (scripting makes it).
func (e *Env) ScriptEngine() *script.Engine { return e.scr.engine }
