package engine

import "time"

// What the engine's external tests (which link the command families) reach
// inside the engine.

// LookupFor is the session's cached command lookup.
func (s *Session) LookupFor(name []byte) *Command { return s.lookupFor(name) }

// StartedRun is a script run that started ago.
func StartedRun(ago time.Duration, eval bool) *ScriptRun {
	return &ScriptRun{start: time.Since(monoBase) - ago, Eval: eval}
}

// SetRunning makes run the script running now (nil: none).
func (e *Env) SetRunning(run *ScriptRun) { e.scr.running.Store(run) }

// Finish ends run as the script's end does.
func (r *ScriptRun) Finish() { r.finish() }
