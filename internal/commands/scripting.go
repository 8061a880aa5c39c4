package commands

import (
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/num"
	"github.com/abacusdb/abacus/internal/script"
)

// Lua scripting (eval.c in Redis 7.0): EVAL, EVALSHA, EVAL_RO,
// EVALSHA_RO and SCRIPT LOAD/EXISTS/FLUSH/KILL/DEBUG/HELP. The Lua
// environment itself lives in internal/script; this file parses the
// commands, applies the shebang flags' rules and runs scripts through
// RunScript (scripting_run.go).

func init() {
	const scr = "@scripting"
	evalFlags := engine.FlagNoScript | engine.FlagStale | engine.FlagSkipMonitor | engine.FlagNoMandatoryKeys
	eval := func(name string, ro bool, summary string, h func(*engine.Ctx)) *engine.Command {
		c := &engine.Command{Name: name, Specs: keySpecs[name], Arity: -3, Flags: evalFlags, Keys: engine.NumkeysKeys(2), KeyFlags: "RW access update",
			ACL: scr, Group: "scripting", Summary: summary, Since: "2.6.0",
			Complexity: "Depends on the script that is executed.", Handler: h}
		if ro {
			c.Flags |= engine.FlagReadonly
			c.KeyFlags = "RO access"
			c.Since = "7.0.0"
		} else {
			c.Flags |= engine.FlagMayReplicate
		}
		return c
	}
	engine.Register(
		eval("eval", false, "Executes a server-side Lua script.", cmdEval),
		eval("evalsha", false, "Executes a server-side Lua script by SHA1 digest.", cmdEvalsha),
		eval("eval_ro", true, "Executes a read-only server-side Lua script.", cmdEvalRO),
		eval("evalsha_ro", true, "Executes a read-only server-side Lua script by SHA1 digest.", cmdEvalshaRO),
		&engine.Command{Name: "script", Arity: -2, Group: "scripting",
			Summary: "A container for Lua scripts management commands.", Since: "2.6.0", Complexity: "Depends on subcommand.",
			Subs: map[string]*engine.Command{
				"load": {Arity: 3, Flags: engine.FlagNoScript | engine.FlagStale, ACL: scr, Handler: cmdScriptLoad,
					Tips:    "request_policy:all_nodes response_policy:all_succeeded",
					Summary: "Loads a server-side Lua script to the script cache.", Since: "2.6.0",
					Complexity: "O(N) with N being the length in bytes of the script body."},
				"exists": {Arity: -3, Flags: engine.FlagNoScript, ACL: scr, Handler: cmdScriptExists,
					Tips:    "request_policy:all_shards response_policy:agg_logical_and",
					Summary: "Determines whether server-side Lua scripts exist in the script cache.", Since: "2.6.0",
					Complexity: "O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation)."},
				"flush": {Arity: -2, Flags: engine.FlagNoScript, ACL: scr, Handler: cmdScriptFlush,
					Tips:    "request_policy:all_nodes response_policy:all_succeeded",
					Summary: "Removes all server-side Lua scripts from the script cache.", Since: "2.6.0",
					Complexity: "O(N) with N being the number of scripts in cache"},
				"kill": {Arity: 2, Flags: engine.FlagNoScript | engine.FlagAllowBusy, ACL: scr, Handler: cmdScriptKill,
					Tips:    "request_policy:all_shards response_policy:one_succeeded",
					Summary: "Terminates a server-side Lua script during execution.", Since: "2.6.0", Complexity: "O(1)"},
				"debug": {Arity: 3, Flags: engine.FlagNoScript, ACL: scr, Handler: cmdScriptDebug,
					Summary: "Sets the debug mode of server-side Lua scripts.", Since: "3.2.0", Complexity: "O(1)"},
				"help": {Arity: 2, Flags: engine.FlagLoading | engine.FlagStale, ACL: scr, Handler: cmdScriptHelp,
					Summary: "Returns helpful text about the different subcommands.", Since: "5.0.0", Complexity: "O(1)"},
			}},
	)
}

func cmdEval(c *engine.Ctx)       { evalGeneric(c, false, false) }
func cmdEvalsha(c *engine.Ctx)    { evalGeneric(c, true, false) }
func cmdEvalRO(c *engine.Ctx)     { evalGeneric(c, false, true) }
func cmdEvalshaRO(c *engine.Ctx)  { evalGeneric(c, true, true) }
func cmdScriptKill(c *engine.Ctx) { c.Error(engine.ErrNotBusy) } // nothing runs while this holds the lock

// Errors of the EVAL family.
const (
	errNumkeysGreater = "ERR Number of keys can't be greater than number of args"
	errNumkeysNeg     = "ERR Number of keys can't be negative"
	errWriteFlagRO    = "ERR Can not execute a script with write flag using *_ro command."
)

// scriptNumkeys parses the numkeys argument at 2 and replies with the
// error when it is out of range; bad is the error for a non-integer.
func scriptNumkeys(c *engine.Ctx, bad string) (int, bool) {
	n, ok := num.ParseInt(c.Args[2])
	switch {
	case !ok:
		c.Error(bad)
		return 0, false
	case n > int64(len(c.Args)-3):
		c.Error(errNumkeysGreater)
		return 0, false
	case n < 0:
		c.Error(errNumkeysNeg)
		return 0, false
	}
	return int(n), true
}

// feedScriptMonitors shows EVAL and FCALL to monitors before their
// script's commands, as Redis does (they are skip_monitor for that).
func feedScriptMonitors(c *engine.Ctx) {
	if c.Env.Monitored() {
		c.Env.FeedMonitors(c.S, c.Cmd, c.Args)
	}
}

func evalGeneric(c *engine.Ctx, bySHA, ro bool) {
	c.PreventPropagation() // the commands it runs propagate their own effects
	feedScriptMonitors(c)
	if bySHA && len(c.Args[1]) != 40 {
		c.Error(engine.ErrNoScript)
		return
	}
	nkeys, ok := scriptNumkeys(c, engine.ErrNotInt)
	if !ok {
		return
	}
	eng := c.Env.Scripting()
	var s *script.Script
	if bySHA {
		if s = eng.Lookup(c.Args[1]); s == nil {
			c.Error(engine.ErrNoScript)
			return
		}
	} else {
		var err error
		if s, err = eng.Load(string(c.Args[1])); err != nil {
			c.Error(err.Error())
			return
		}
	}
	run := &engine.ScriptRun{Eval: true, Name: s.SHA, Flags: s.Flags, Script: s}
	if !scriptAllowed(c, s.Flags, ro, run) {
		return
	}
	c.Env.RunScript(c, run, c.Args[3:3+nkeys], c.Args[3+nkeys:])
}

// scriptAllowed applies a script's flags before it runs (Redis's
// scriptPrepareForRun) and sets the run's read-only mode.
func scriptAllowed(c *engine.Ctx, flags script.Flags, ro bool, run *engine.ScriptRun) bool {
	compat := flags&script.FlagEvalCompat != 0
	if !compat && flags&script.FlagNoCluster != 0 && c.Env.Cluster() != nil {
		c.Error("ERR Can not run script on cluster, 'no-cluster' flag is set.")
		return false
	}
	if !compat && flags&script.FlagNoWrites == 0 && ro {
		c.Error(errWriteFlagRO)
		return false
	}
	if !compat && flags&(script.FlagNoWrites|script.FlagAllowOOM) == 0 && c.Env.ScriptOOM() {
		// A script that declares flags and may write is a denyoom
		// command, refused before it runs (Redis's scriptFlagsToCmdFlags).
		c.Error(engine.ErrOOM)
		return false
	}
	run.ReadOnly = ro || (!compat && flags&script.FlagNoWrites != 0)
	run.Transactional = flags&script.FlagTransactional != 0
	return true
}

// SCRIPT LOAD script
func cmdScriptLoad(c *engine.Ctx) {
	s, err := c.Env.Scripting().Load(string(c.Args[2]))
	if err != nil {
		c.Error(err.Error())
		return
	}
	c.W.BulkString(s.SHA)
}

// SCRIPT EXISTS sha [sha ...]
func cmdScriptExists(c *engine.Ctx) {
	eng := c.Env.Scripting()
	c.W.Array(len(c.Args) - 2)
	for _, a := range c.Args[2:] {
		if eng.Lookup(a) != nil {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
	}
}

// SCRIPT FLUSH [ASYNC|SYNC]: both empty the cache at once.
func cmdScriptFlush(c *engine.Ctx) {
	if len(c.Args) > 3 || (len(c.Args) == 3 && !c.ArgIs(2, "sync") && !c.ArgIs(2, "async")) {
		c.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
		return
	}
	c.Env.Scripting().Flush()
	c.W.OK()
}

// SCRIPT DEBUG YES|SYNC|NO: there is no Lua debugger; NO is accepted.
func cmdScriptDebug(c *engine.Ctx) {
	switch {
	case c.ArgIs(2, "no"):
		c.W.OK()
	case c.ArgIs(2, "yes"), c.ArgIs(2, "sync"):
		c.Error("ERR Abacus has no Lua debugger: SCRIPT DEBUG YES and SYNC are not supported")
	default:
		c.Error("ERR Use SCRIPT DEBUG YES/SYNC/NO")
	}
}

var scriptHelp = []string{
	"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DEBUG (YES|SYNC|NO)",
	"    Set the debug mode for subsequent scripts executed.",
	"EXISTS <sha1> [<sha1> ...]",
	"    Return information about the existence of the scripts in the script cache.",
	"FLUSH [ASYNC|SYNC]",
	"    Flush the Lua scripts cache. Very dangerous on replicas.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the scripts cache.",
	"    * SYNC: Synchronously flush the scripts cache.",
	"KILL",
	"    Kill the currently executing Lua script.",
	"LOAD <script>",
	"    Load a script into the scripts cache without executing it.",
	"HELP",
	"    Prints this help.",
}

func cmdScriptHelp(c *engine.Ctx) { statusLines(c, scriptHelp) }

// statusLines writes a HELP reply given in full: status lines.
func statusLines(c *engine.Ctx, lines []string) {
	c.W.Array(len(lines))
	for _, l := range lines {
		c.W.Simple(l)
	}
}
