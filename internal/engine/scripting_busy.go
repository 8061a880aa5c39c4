package engine

import (
	"strings"
	"time"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/resp"
)

// While a script runs it holds the server lock. Redis, single-threaded,
// lets the script's hook serve other clients once the script has run for
// busy-reply-threshold milliseconds: they get BUSY, except for the few
// commands that must work then (SCRIPT KILL, FUNCTION KILL, FUNCTION
// STATS, SHUTDOWN NOSAVE). Abacus does the same from the connection
// goroutines, without the lock: ExecuteBusy is called for a command that
// arrives while a script runs, before the connection takes the lock.
//
// A command that was already waiting for the lock when the script started
// waits for the script to end instead of getting BUSY.

// ExecuteBusy answers a command from s that arrived while a script runs,
// without the server lock. It waits until the script ends or runs past
// busy-reply-threshold. It returns false when the command must run the
// usual way (no script is running any more, the threshold is 0, or the
// command is allowed while busy and needs the lock); otherwise it wrote
// the reply to w.
func (e *Env) ExecuteBusy(s *Session, args [][]byte, w *resp.Writer) bool {
	if len(args) == 0 {
		return false
	}
	var run *ScriptRun
	for {
		var left time.Duration
		run, left = e.busyIn()
		if run == nil {
			return false
		}
		if left <= 0 {
			break
		}
		ch, ended := run.endWait()
		if ended {
			continue // another script may have started since
		}
		t := time.NewTimer(left)
		select {
		case <-ch:
			t.Stop()
		case <-t.C:
		}
	}
	// The checks Redis makes before the busy one. Lookup, not the
	// session's cached lookupFor: this runs without the lock.
	found := Lookup(args[0])
	if found == nil && e.crossProtocol(s, args[0]) {
		return true
	}
	cmd, _, msg := e.check(s, found, args, false)
	if msg != "" {
		e.busyError(s, w, msg)
		return true
	}
	if cmd.Name == "exec" {
		// Redis aborts the transaction with the BUSY text, in MULTI or
		// not (execCommandAbort). The queue is the session's own; its
		// watches are in the keyspace, which needs the lock, and go
		// before the session's next command runs.
		s.tx.clearQueue()
		s.tx.unwatchLater = true
		msg := execAbortPrefix + busyText(run)
		e.CountError(msg)
		w.Error(msg)
		return true
	}
	if cmd.Flags&FlagAllowBusy == 0 {
		e.busyError(s, w, busyText(run))
		return true
	}
	switch cmd.Name {
	case "script|kill":
		e.killScript(w, run, true)
	case "function|kill":
		e.killScript(w, run, false)
	case "function|stats":
		e.functionStatsBusy(w, run)
	case "shutdown":
		nosave := false
		for _, a := range args[1:] {
			if strings.EqualFold(string(a), "nosave") {
				nosave = true
			}
		}
		if !nosave {
			e.busyError(s, w, busyText(run))
			return true
		}
		// The server exits under the script, as Redis does: the script
		// is stopped, none of its effects is propagated, its caller's
		// connection closes without a reply (run), and nothing is saved.
		e.dying.Store(true)
		e.scr.engine.Kill()
		if e.Host != nil {
			e.Host.Shutdown(false, true, false, false)
		}
		s.CloseAfterReply = true
	case "multi", "auth", "quit":
		// They only touch the client's own state: run them now, as Redis
		// does for allow_busy commands.
		ctx := Ctx{Args: args, Cmd: cmd, W: w, S: s, Env: e, Now: e.Clock.NowMs()}
		cmd.Handler(&ctx)
	default:
		return false // the other allow_busy commands wait for the lock
	}
	return true
}

// busyIn returns the running script and how long until it is busy (0 or
// less: it is), or nil when no script runs or none is ever busy
// (busy-reply-threshold 0: Redis never serves other clients then).
func (e *Env) busyIn() (*ScriptRun, time.Duration) {
	run := e.scr.running.Load()
	if run == nil {
		return nil, 0
	}
	th := time.Duration(e.Cfg.Int(config.BusyReplyThreshold)) * time.Millisecond
	if th <= 0 {
		return nil, 0
	}
	return run, th - run.elapsed()
}

// ScriptBusyIn reports how long until the running script is busy (0 when
// it is), and false when no script runs or none is ever busy. With
// ScriptStarted it lets the connection layer wait for a busy script
// without polling. Safe without the server lock.
func (e *Env) ScriptBusyIn() (time.Duration, bool) {
	run, left := e.busyIn()
	return max(left, 0), run != nil
}

// busyText is the BUSY error for the kind of script running.
func busyText(run *ScriptRun) string {
	if run.Eval {
		return ErrBusy
	}
	return ErrBusyFunction
}

// busyError writes an error reply outside the lock: the statistics it
// touches are safe there, and a transaction being queued is doomed.
func (e *Env) busyError(s *Session, w *resp.Writer, msg string) {
	if s.tx.multi {
		s.tx.aborted = true
	}
	e.CountError(msg)
	w.Error(msg)
}

// killScript is SCRIPT KILL (eval) and FUNCTION KILL while a script runs.
func (e *Env) killScript(w *resp.Writer, run *ScriptRun, eval bool) {
	switch {
	case run.wrote.Load() && !run.undo:
		// An all-or-nothing script can be killed after writing: its
		// writes are undone.
		e.CountError(ErrUnkillable)
		w.Error(ErrUnkillable)
	case eval && !run.Eval:
		e.CountError(ErrBusyFunction)
		w.Error(ErrBusyFunction)
	case !eval && run.Eval:
		e.CountError(ErrBusy)
		w.Error(ErrBusy)
	default:
		e.Log.Warn("Lua script killed by user with SCRIPT KILL.")
		e.scr.engine.Kill()
		// Redis stops the script before it reads the killer's next
		// command; wait (briefly) for it to end so the next command sees
		// no script running either, not a BUSY from one that is dying.
		for deadline := time.Now().Add(time.Second); e.scr.running.Load() == run && time.Now().Before(deadline); {
			time.Sleep(100 * time.Microsecond)
		}
		w.OK()
	}
}

// StopScripts stops the running script, if any, whatever it wrote: the
// server is going away (Server.Close). Safe without the lock.
func (e *Env) StopScripts() {
	if e.scr.running.Load() != nil {
		e.scr.engine.Kill()
	}
}

// functionStatsBusy is FUNCTION STATS while a script runs (no lock).
func (e *Env) functionStatsBusy(w *resp.Writer, run *ScriptRun) {
	if run.Eval {
		e.CountError(ErrBusy)
		w.Error(ErrBusy)
		return
	}
	writeFunctionStats(w, run, e.scr.nlibs.Load(), e.scr.nfuncs.Load())
}

func writeFunctionStats(w *resp.Writer, run *ScriptRun, nlibs, nfuncs int64) {
	w.Map(2)
	w.BulkString("running_script")
	if run == nil {
		w.Null()
	} else {
		w.Map(3)
		w.BulkString("name")
		w.BulkString(run.Name)
		w.BulkString("command")
		w.StringArray(run.Argv)
		w.BulkString("duration_ms")
		w.Int(run.elapsed().Milliseconds())
	}
	w.BulkString("engines")
	w.Map(1)
	w.BulkString("LUA")
	w.Map(2)
	w.BulkString("libraries_count")
	w.Int(nlibs)
	w.BulkString("functions_count")
	w.Int(nfuncs)
}

// WriteFunctionStats is FUNCTION STATS's reply with no script running.
func (e *Env) WriteFunctionStats(w *resp.Writer) {
	writeFunctionStats(w, nil, e.scr.nlibs.Load(), e.scr.nfuncs.Load())
}
