package commands

import (
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
)

// MODULE: Abacus loads no modules. LIST answers an empty list, HELP
// Redis's text; LOAD, LOADEX and UNLOAD are refused as Redis refuses them
// under enable-module-command no, and otherwise fail as a load of a
// library Abacus cannot run.

const errModuleNotAllowed = `ERR MODULE command not allowed. If the enable-module-command option is set to "local", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.`

func init() {
	adm := engine.FlagAdmin | engine.FlagNoScript
	engine.Register(&engine.Command{Name: "module", Arity: -2, Group: "server",
		Summary: "A container for module commands.", Since: "4.0.0", Complexity: "Depends on subcommand.",
		Subs: map[string]*engine.Command{
			"list": {Arity: 2, Flags: adm, Handler: func(c *engine.Ctx) { c.W.Array(0) },
				Summary: "Returns all loaded modules.", Since: "4.0.0", Complexity: "O(N) where N is the number of loaded modules.", Tips: "nondeterministic_output"},
			"load": {Arity: -3, Flags: adm, Handler: cmdModuleLoad,
				Summary: "Loads a module.", Since: "4.0.0", Complexity: "O(1)"},
			"loadex": {Arity: -3, Flags: adm, Handler: cmdModuleLoad,
				Summary: "Loads a module using extended parameters.", Since: "7.0.0", Complexity: "O(1)"},
			"unload": {Arity: 3, Flags: adm, Handler: cmdModuleUnload,
				Summary: "Unloads a module.", Since: "4.0.0", Complexity: "O(1)"},
			"help": {Arity: 2, Flags: engine.FlagLoading | engine.FlagStale, Handler: cmdModuleHelp,
				Summary: "Returns helpful text about the different subcommands.", Since: "5.0.0", Complexity: "O(1)"},
		},
	})
}

func moduleAllowed(c *engine.Ctx) bool {
	if !c.Env.Cfg.Allowed(config.EnableModuleCommand, IsLocal(c.S)) {
		c.Error(errModuleNotAllowed)
		return false
	}
	return true
}

func cmdModuleLoad(c *engine.Ctx) {
	if moduleAllowed(c) {
		c.Error("ERR Error loading the extension. Please check the server logs.")
	}
}

func cmdModuleUnload(c *engine.Ctx) {
	if moduleAllowed(c) {
		c.Error("ERR Error unloading module: no such module with that name")
	}
}

// cmdModuleHelp is Redis's moduleCommand help, whose last line differs
// from addReplyHelp's ("Prints").
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
