package commands

import (
	"strconv"

	"github.com/abacusdb/abacus/internal/engine"
)

// Server commands: TIME, SHUTDOWN. (SLOWLOG and LATENCY are in the
// engine's slowlog.go, INFO is in info.go, MEMORY in memory.go, DEBUG in debug.go, CONFIG in config.go.)

func init() {
	engine.Register(
		&engine.Command{Name: "time", Arity: 1, Flags: engine.FlagLoading | engine.FlagStale | engine.FlagFast, Group: "server",
			Tips:    "nondeterministic_output",
			Summary: "Returns the server time.", Since: "2.6.0", Complexity: "O(1)", Handler: cmdTime},
		&engine.Command{Name: "shutdown", Arity: -1, Flags: engine.FlagAdmin | engine.FlagNoScript | engine.FlagLoading | engine.FlagStale | engine.FlagNoMulti | engine.FlagAllowBusy, Group: "server",
			Summary: "Synchronously saves the database(s) to disk and shuts down the Redis server.", Since: "1.0.0",
			Complexity: "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)",
			Handler:    cmdShutdown},
	)
}

func cmdTime(c *engine.Ctx) {
	us := c.Env.Clock.NowUs()
	c.W.Array(2)
	c.W.BulkString(strconv.FormatInt(us/1e6, 10))
	c.W.BulkString(strconv.FormatInt(us%1e6, 10))
}

func cmdShutdown(c *engine.Ctx) {
	var save, nosave, now, force, abort bool
	for i := 1; i < len(c.Args); i++ {
		switch {
		case c.ArgIs(i, "nosave"):
			nosave = true
		case c.ArgIs(i, "save"):
			save = true
		case c.ArgIs(i, "now"):
			now = true
		case c.ArgIs(i, "force"):
			force = true
		case c.ArgIs(i, "abort"):
			abort = true
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	if (abort && (save || nosave || now || force)) || (save && nosave) {
		c.Error(engine.ErrSyntax)
		return
	}
	if abort {
		// A shutdown never waits here (there are no replicas to wait
		// for), so there is never one to abort.
		c.Error("ERR No shutdown in progress.")
		return
	}
	if c.Env.Host == nil {
		c.Error("ERR Errors trying to SHUTDOWN. Check logs.")
		return
	}
	if err := c.Env.Host.Shutdown(save, nosave, now, force); err != nil {
		c.Error("ERR " + err.Error())
		return
	}
	// As in Redis, the client gets no reply: the server goes away.
	c.S.CloseAfterReply = true
}
