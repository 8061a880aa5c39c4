package commands

import (
	"strings"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/glob"
	"github.com/abacusdb/abacus/internal/script"
)

// Redis 7 functions (functions.c): FUNCTION LOAD/DELETE/FLUSH/LIST/DUMP/
// RESTORE/STATS/KILL/HELP and FCALL, FCALL_RO. The libraries live in
// internal/script; DUMP and RESTORE's payload format is in
// functions_dump.go.

func init() {
	const scr = "@scripting"
	fcall := func(name string, ro bool, summary string, h func(*engine.Ctx)) *engine.Command {
		c := &engine.Command{Name: name, Specs: keySpecs[name], Arity: -3, Flags: engine.FlagNoScript | engine.FlagStale | engine.FlagSkipMonitor | engine.FlagNoMandatoryKeys,
			Keys: engine.NumkeysKeys(2), KeyFlags: "RW access update", ACL: scr, Group: "scripting", Summary: summary,
			Since: "7.0.0", Complexity: "Depends on the function that is executed.", Handler: h}
		if ro {
			c.Flags |= engine.FlagReadonly
			c.KeyFlags = "RO access"
		} else {
			c.Flags |= engine.FlagMayReplicate
		}
		return c
	}
	shards := "request_policy:all_shards response_policy:all_succeeded"
	engine.Register(
		fcall("fcall", false, "Invokes a function.", cmdFcall),
		fcall("fcall_ro", true, "Invokes a read-only function.", cmdFcallRO),
		&engine.Command{Name: "function", Arity: -2, Group: "scripting",
			Summary: "A container for function commands.", Since: "7.0.0", Complexity: "Depends on subcommand.",
			Subs: map[string]*engine.Command{
				"load": {Arity: -3, Flags: engine.FlagWrite | engine.FlagDenyOOM | engine.FlagNoScript, ACL: scr, Tips: shards, Handler: cmdFunctionLoad,
					Summary: "Creates a library.", Since: "7.0.0", Complexity: "O(1) (considering compilation time is redundant)"},
				"delete": {Arity: 3, Flags: engine.FlagWrite | engine.FlagNoScript, ACL: scr, Tips: shards, Handler: cmdFunctionDelete,
					Summary: "Deletes a library and its functions.", Since: "7.0.0", Complexity: "O(1)"},
				"flush": {Arity: -2, Flags: engine.FlagWrite | engine.FlagNoScript, ACL: scr, Tips: shards, Handler: cmdFunctionFlush,
					Summary: "Deletes all libraries and functions.", Since: "7.0.0", Complexity: "O(N) where N is the number of functions deleted"},
				"list": {Arity: -2, Flags: engine.FlagNoScript, ACL: scr, Tips: "nondeterministic_output_order", Handler: cmdFunctionList,
					Summary: "Returns information about all libraries.", Since: "7.0.0", Complexity: "O(N) where N is the number of functions"},
				"dump": {Arity: 2, Flags: engine.FlagNoScript, ACL: scr, Handler: cmdFunctionDump,
					Summary: "Dumps all libraries into a serialized binary payload.", Since: "7.0.0", Complexity: "O(N) where N is the number of functions"},
				"restore": {Arity: -3, Flags: engine.FlagWrite | engine.FlagDenyOOM | engine.FlagNoScript, ACL: scr, Tips: shards, Handler: cmdFunctionRestore,
					Summary: "Restores all libraries from a payload.", Since: "7.0.0", Complexity: "O(N) where N is the number of functions on the payload"},
				"stats": {Arity: 2, Flags: engine.FlagNoScript | engine.FlagAllowBusy, ACL: scr,
					Tips:    "nondeterministic_output request_policy:all_shards response_policy:special",
					Handler: cmdFunctionStats,
					Summary: "Returns information about a function during execution.", Since: "7.0.0", Complexity: "O(1)"},
				"kill": {Arity: 2, Flags: engine.FlagNoScript | engine.FlagAllowBusy, ACL: scr,
					Tips:    "request_policy:all_shards response_policy:one_succeeded",
					Handler: cmdFunctionKill,
					Summary: "Terminates a function during execution.", Since: "7.0.0", Complexity: "O(1)"},
				"help": {Arity: 2, Flags: engine.FlagLoading | engine.FlagStale, ACL: scr, Handler: cmdFunctionHelp,
					Summary: "Returns helpful text about the different subcommands.", Since: "7.0.0", Complexity: "O(1)"},
			}},
	)
}

func cmdFcall(c *engine.Ctx)        { fcallGeneric(c, false) }
func cmdFcallRO(c *engine.Ctx)      { fcallGeneric(c, true) }
func cmdFunctionKill(c *engine.Ctx) { c.Error(engine.ErrNotBusy) } // nothing runs while this holds the lock

func fcallGeneric(c *engine.Ctx, ro bool) {
	c.PreventPropagation() // the commands it runs propagate their own effects
	feedScriptMonitors(c)
	eng := c.Env.Scripting()
	f := eng.Function(string(c.Args[1]))
	if f == nil {
		c.Error("ERR Function not found")
		return
	}
	nkeys, ok := scriptNumkeys(c, "ERR Bad number of keys provided")
	if !ok {
		return
	}
	run := &engine.ScriptRun{Name: f.Name, Flags: f.Flags, Function: f}
	if !scriptAllowed(c, f.Flags, ro, run) {
		return
	}
	run.Argv = make([]string, len(c.Args))
	for i, a := range c.Args {
		run.Argv[i] = string(a)
	}
	c.Env.RunScript(c, run, c.Args[3:3+nkeys], c.Args[3+nkeys:])
}

// FUNCTION LOAD [REPLACE] code
func cmdFunctionLoad(c *engine.Ctx) {
	replace := false
	i := 2
	for ; i < len(c.Args)-1; i++ {
		if !c.ArgIs(i, "replace") {
			c.Errorf("ERR Unknown option given: %s", c.Args[i])
			return
		}
		replace = true
	}
	name, err := c.Env.Scripting().LoadLibrary(string(c.Args[i]), replace)
	if err != nil {
		c.Error(err.Error())
		return
	}
	c.Env.SyncFunctionCounts()
	c.Dirty(1)
	c.W.BulkString(name)
}

// FUNCTION DELETE library
func cmdFunctionDelete(c *engine.Ctx) {
	if !c.Env.Scripting().DeleteLibrary(string(c.Args[2])) {
		c.Error("ERR Library not found")
		return
	}
	c.Env.SyncFunctionCounts()
	c.Dirty(1)
	c.W.OK()
}

// FUNCTION FLUSH [ASYNC|SYNC]
func cmdFunctionFlush(c *engine.Ctx) {
	if len(c.Args) > 3 {
		subcommandSyntaxError(c)
		return
	}
	if len(c.Args) == 3 && !c.ArgIs(2, "sync") && !c.ArgIs(2, "async") {
		c.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
		return
	}
	c.Env.Scripting().FlushFunctions()
	c.Env.SyncFunctionCounts()
	c.Dirty(1)
	c.W.OK()
}

// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]
func cmdFunctionList(c *engine.Ctx) {
	withCode := false
	var pattern []byte
	havePattern := false
	for i := 2; i < len(c.Args); i++ {
		switch {
		case !withCode && c.ArgIs(i, "withcode"):
			withCode = true
		case !havePattern && c.ArgIs(i, "libraryname"):
			if i >= len(c.Args)-1 {
				c.Error("ERR library name argument was not given")
				return
			}
			i++
			pattern, havePattern = c.Args[i], true
		default:
			c.Errorf("ERR Unknown argument %s", c.Args[i])
			return
		}
	}
	var libs []*script.Library
	for _, l := range c.Env.Scripting().Libraries() {
		if !havePattern || glob.Match(pattern, l.Name, true) {
			libs = append(libs, l)
		}
	}
	w := c.W
	w.Array(len(libs))
	for _, l := range libs {
		if withCode {
			w.Map(4)
		} else {
			w.Map(3)
		}
		w.BulkString("library_name")
		w.BulkString(l.Name)
		w.BulkString("engine")
		w.BulkString("LUA")
		w.BulkString("functions")
		fns := l.SortedFuncs()
		w.Array(len(fns))
		for _, f := range fns {
			w.Map(3)
			w.BulkString("name")
			w.BulkString(f.Name)
			w.BulkString("description")
			if f.HasDesc {
				w.BulkString(f.Desc)
			} else {
				w.Null()
			}
			w.BulkString("flags")
			names := f.Flags.Names()
			w.Set(len(names))
			for _, n := range names {
				w.Simple(n)
			}
		}
		if withCode {
			w.BulkString("library_code")
			w.BulkString(l.Code)
		}
	}
}

// FUNCTION STATS under the lock: no function is running then.
func cmdFunctionStats(c *engine.Ctx) {
	c.Env.SyncFunctionCounts()
	c.Env.WriteFunctionStats(c.W)
}

var functionHelp = []string{
	"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"LOAD [REPLACE] <FUNCTION CODE>",
	"    Create a new library with the given library name and code.",
	"DELETE <LIBRARY NAME>",
	"    Delete the given library.",
	"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
	"    Return general information on all the libraries:",
	"    * Library name",
	"    * The engine used to run the Library",
	"    * Library description",
	"    * Functions list",
	"    * Library code (if WITHCODE is given)",
	"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
	"STATS",
	"    Return information about the current function running:",
	"    * Function name",
	"    * Command used to run the function",
	"    * Duration in MS that the function is running",
	"    If no function is running, return nil",
	"    In addition, returns a list of available engines.",
	"KILL",
	"    Kill the current running function.",
	"FLUSH [ASYNC|SYNC]",
	"    Delete all the libraries.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the libraries.",
	"    * SYNC: Synchronously flush the libraries.",
	"DUMP",
	"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
	"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
	"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
	"    control how to handle existing libraries (default APPEND):",
	"    * FLUSH: delete all existing libraries.",
	"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
	"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
	"      libraries with the new libraries (notice that even on this option there is a chance of failure",
	"      in case of functions name collision with another library).",
	"HELP",
	"    Prints this help.",
}

func cmdFunctionHelp(c *engine.Ctx) { statusLines(c, functionHelp) }

// subcommandSyntaxError is Redis's addReplySubcommandSyntaxError.
func subcommandSyntaxError(c *engine.Ctx) {
	c.Errorf("ERR unknown subcommand or wrong number of arguments for '%s'. Try %s HELP.",
		ascii.Trunc(ascii.CStr(c.Args[1]), 128), strings.ToUpper(string(c.Args[0])))
}
