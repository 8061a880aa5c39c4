package commands

import (
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
)

// MODULE: Abacus loads no modules, so LIST is empty and LOAD fails as
// Redis's does for a library it cannot open. LOAD, LOADEX and UNLOAD are
// refused unless enable-module-command allows them, as in Redis 7.0 (LIST
// and HELP are not gated there either).

// ErrModuleNotAllowed is the refusal when enable-module-command does not
// allow the client.
const ErrModuleNotAllowed = `ERR MODULE command not allowed. If the enable-module-command option is set to "local", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.`

func init() {
	gated := engine.FlagAdmin | engine.FlagNoScript
	engine.Register(&engine.Command{Name: "module", Arity: -2, Group: "server",
		Summary: "A container for module commands", Since: "4.0.0", Complexity: "Depends on subcommand.",
		Subs: map[string]*engine.Command{
			"list": {Arity: 2, Flags: gated, Tips: "nondeterministic_output_order", Handler: func(c *engine.Ctx) { c.W.Array(0) },
				Summary: "List all modules loaded by the server", Since: "4.0.0", Complexity: "O(N) where N is the number of loaded modules."},
			"load": {Arity: -3, Flags: gated | engine.FlagNoAsyncLoading, Handler: cmdModuleLoad,
				Summary: "Load a module", Since: "4.0.0", Complexity: "O(1)"},
			"loadex": {Arity: -3, Flags: gated | engine.FlagNoAsyncLoading, Handler: cmdModuleLoad,
				Summary: "Load a module with extended parameters", Since: "7.0.0", Complexity: "O(1)"},
			"unload": {Arity: 3, Flags: gated | engine.FlagNoAsyncLoading, Handler: cmdModuleUnload,
				Summary: "Unload a module", Since: "4.0.0", Complexity: "O(1)"},
			"help": {Arity: 2, Flags: engine.FlagLoading | engine.FlagStale, Handler: cmdModuleHelp,
				Summary: "Show helpful text about the different subcommands", Since: "5.0.0", Complexity: "O(1)"},
		}})
}

func moduleAllowed(c *engine.Ctx) bool {
	if !c.Env.Cfg.Allowed(config.EnableModuleCommand, IsLocal(c.S)) {
		c.Error(ErrModuleNotAllowed)
		return false
	}
	return true
}

func cmdModuleLoad(c *engine.Ctx) {
	if !moduleAllowed(c) {
		return
	}
	c.Env.Log.Warn("Module " + c.Arg(2) + " failed to load: Abacus does not load Redis modules")
	c.Error("ERR Error loading the extension. Please check the server logs.")
}

func cmdModuleUnload(c *engine.Ctx) {
	if moduleAllowed(c) {
		c.Error("ERR Error unloading module: no such module with that name")
	}
}

func cmdModuleHelp(c *engine.Ctx) {
	lines := []string{
		"MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"LIST",
		"    Return a list of loaded modules.",
		"LOAD <path> [<arg> ...]",
		"    Load a module library from <path>, passing to it any optional arguments.",
		"LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
		"    Load a module library from <path>, while passing it module configurations and optional arguments.",
		"UNLOAD <name>",
		"    Unload a module.",
		"HELP",
		"    Prints this help.",
	}
	c.W.Array(len(lines))
	for _, l := range lines {
		c.W.Simple(l)
	}
}
