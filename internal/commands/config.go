package commands

import (
	"errors"
	"net"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
)

// CONFIG GET / SET / RESETSTAT / REWRITE / HELP.

func init() {
	admin := engine.FlagAdmin | engine.FlagNoScript | engine.FlagLoading | engine.FlagStale
	engine.Register(&engine.Command{Name: "config", Arity: -2, Group: "server",
		Summary: "A container for server configuration commands.", Since: "2.0.0", Complexity: "Depends on subcommand.",
		Subs: map[string]*engine.Command{
			"get": {Arity: -3, Flags: admin, Handler: cmdConfigGet,
				Summary: "Returns the effective values of configuration parameters.", Since: "2.0.0",
				Complexity: "O(N) when N is the number of configuration parameters provided"},
			"set": {Arity: -4, Flags: admin, Handler: cmdConfigSet,
				Tips:    "request_policy:all_nodes response_policy:all_succeeded",
				Summary: "Sets configuration parameters in-flight.", Since: "2.0.0",
				Complexity: "O(N) when N is the number of configuration parameters provided"},
			"resetstat": {Arity: 2, Flags: admin, Handler: cmdConfigResetStat,
				Summary: "Resets the server's statistics.", Since: "2.0.0", Complexity: "O(1)"},
			"rewrite": {Arity: 2, Flags: admin, Handler: cmdConfigRewrite,
				Summary: "Persists the effective configuration to file.", Since: "2.8.0", Complexity: "O(1)"},
			"help": {Arity: 2, Flags: engine.FlagLoading | engine.FlagStale, Handler: cmdConfigHelp,
				Summary: "Returns helpful text about the different subcommands.", Since: "5.0.0", Complexity: "O(1)"},
		},
	})
}

func cmdConfigGet(c *engine.Ctx) {
	args := make([]string, len(c.Args)-2)
	for i := range args {
		args[i] = c.Arg(i + 2)
	}
	pairs := c.Env.Cfg.Matching(args)
	c.W.Map(len(pairs))
	for _, p := range pairs {
		c.W.BulkString(p.Name)
		c.W.BulkString(p.Value)
	}
}

func cmdConfigSet(c *engine.Ctx) {
	if len(c.Args)%2 != 0 {
		c.Error(engine.ErrSyntax)
		return
	}
	pairs := make([][2]string, 0, (len(c.Args)-2)/2)
	for i := 2; i+1 < len(c.Args); i += 2 {
		pairs = append(pairs, [2]string{c.Arg(i), c.Arg(i + 1)})
		// A sensitive value (a password) reaches neither MONITOR nor the
		// slow log, whether or not the whole call succeeds.
		if p, ok := config.Lookup(c.Arg(i)); ok && p.Sensitive {
			redact(c, i+1)
		}
	}
	if err := c.Env.Cfg.SetMany(pairs, IsLocal(c.S)); err != nil {
		c.Error("ERR " + err.Error())
		return
	}
	for _, p := range pairs {
		if q, ok := config.Lookup(p[0]); ok && q.Name == "maxmemory" {
			c.Env.MaxMemorySet()
			break
		}
	}
	c.W.OK()
}

// IsLocal reports whether a client is on a loopback or unix-socket
// connection (what the enable-*-command "local" setting allows).
func IsLocal(s *engine.Session) bool {
	host, _, err := net.SplitHostPort(s.Addr)
	if err != nil {
		return true // unix socket: no ip:port
	}
	ip := net.ParseIP(host)
	return ip == nil || ip.IsLoopback()
}

func cmdConfigResetStat(c *engine.Ctx) {
	c.Env.ResetStats()
	c.W.OK()
}

func cmdConfigRewrite(c *engine.Ctx) {
	err := c.Env.Cfg.Rewrite()
	switch {
	case errors.Is(err, config.ErrNoConfigFile):
		c.Error("ERR " + err.Error())
	case err != nil:
		c.Env.Log.Warn("CONFIG-REWRITE failed: " + config.ErrnoText(err))
		c.Error("ERR Rewriting config file: " + config.ErrnoText(err))
	default:
		c.Env.Log.Info("CONFIG REWRITE executed with success.")
		c.W.OK()
	}
}

func cmdConfigHelp(c *engine.Ctx) {
	c.ReplyHelp("CONFIG",
		"GET <pattern> [<pattern> ...]",
		"    Return the parameters matching the glob-like patterns, with their values.",
		"SET <directive> <value> [<directive> <value> ...]",
		"    Set the parameters to the values: all of them, or none when one is refused.",
		"RESETSTAT",
		"    Reset the statistics INFO reports.",
		"REWRITE",
		"    Write the current configuration to the file the server was started with.",
	)
}
