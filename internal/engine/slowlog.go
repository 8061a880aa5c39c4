package engine

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/num"
)

// SLOWLOG reads what execution records, so it lives beside it.
func init() {
	admin := FlagAdmin | FlagLoading | FlagStale
	Register(
		&Command{Name: "slowlog", Arity: -2, Group: "server",
			Summary: "A container for slow log commands.", Since: "2.2.12", Complexity: "Depends on subcommand.",
			Subs: map[string]*Command{
				"get": {Arity: -2, Flags: admin, Handler: cmdSlowlogGet,
					Tips:    "request_policy:all_nodes nondeterministic_output",
					Summary: "Returns the slow log's entries.", Since: "2.2.12", Complexity: "O(N) where N is the number of entries returned"},
				"len": {Arity: 2, Flags: admin, Handler: cmdSlowlogLen,
					Tips:    "request_policy:all_nodes response_policy:agg_sum nondeterministic_output",
					Summary: "Returns the number of entries in the slow log.", Since: "2.2.12", Complexity: "O(1)"},
				"reset": {Arity: 2, Flags: admin, Handler: cmdSlowlogReset,
					Tips:    "request_policy:all_nodes response_policy:all_succeeded",
					Summary: "Clears all entries from the slow log.", Since: "2.2.12", Complexity: "O(N) where N is the number of entries in the slowlog"},
				"help": {Arity: 2, Flags: FlagLoading | FlagStale, Handler: cmdSlowlogHelp,
					Summary: "Show helpful text about the different subcommands", Since: "6.2.0", Complexity: "O(1)"},
			}},
	)
}

func newRunID() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Redis's slowlog limits on what one entry keeps.
const (
	slowlogMaxArgc = 32
	slowlogMaxArg  = 128
)

type slowEntry struct {
	id     int64
	at     int64 // unix seconds
	usec   int64
	args   []string
	addr   string
	client string
}

// slowlog is a ring of the most recent slow commands, newest first.
type slowlog struct {
	entries []slowEntry
	nextID  int64
}

func (e *Env) slowlogPush(cmd *Command, s *Session, args [][]byte, dur time.Duration) {
	if cmd.Flags&FlagSkipSlowlog != 0 {
		return
	}
	limit := e.Cfg.Int(config.SlowlogLogSlowerThan)
	if limit < 0 || dur.Microseconds() < limit {
		return
	}
	maxLen := int(e.Cfg.Int(config.SlowlogMaxLen))
	ent := slowEntry{id: e.slowlog.nextID, at: time.Now().Unix(), usec: dur.Microseconds(), addr: s.Addr, client: s.Name}
	e.slowlog.nextID++
	n := len(args)
	if n > slowlogMaxArgc {
		n = slowlogMaxArgc
	}
	for i := 0; i < n; i++ {
		if i == slowlogMaxArgc-1 && len(args) > slowlogMaxArgc {
			ent.args = append(ent.args, fmt.Sprintf("... (%d more arguments)", len(args)-slowlogMaxArgc+1))
			break
		}
		a := args[i]
		if len(a) > slowlogMaxArg {
			ent.args = append(ent.args, fmt.Sprintf("%s... (%d more bytes)", a[:slowlogMaxArg], len(a)-slowlogMaxArg))
		} else {
			ent.args = append(ent.args, string(a))
		}
	}
	e.slowlog.entries = append([]slowEntry{ent}, e.slowlog.entries...)
	if len(e.slowlog.entries) > maxLen {
		e.slowlog.entries = e.slowlog.entries[:maxLen]
	}
}

// Cmd returns the table entry args name (resolving subcommands), or nil.
func (e *Env) Cmd(args [][]byte) *Command {
	if len(args) == 0 {
		return nil
	}
	c := Lookup(args[0])
	if c == nil {
		return nil
	}
	if s := c.SubFor(args); s != nil {
		return s
	}
	return c
}

func cmdSlowlogGet(c *Ctx) {
	if len(c.Args) > 3 {
		c.Errorf("ERR unknown subcommand or wrong number of arguments for '%.128s'. Try SLOWLOG HELP.", c.Args[1])
		return
	}
	count := int64(10)
	if len(c.Args) == 3 {
		n, ok := num.ParseInt(c.Args[2])
		if !ok || n < -1 {
			c.Error("ERR count should be greater than or equal to -1")
			return
		}
		count = n
	}
	entries := c.Env.slowlog.entries
	if count == -1 || count > int64(len(entries)) {
		count = int64(len(entries))
	}
	c.W.Array(int(count))
	for _, e := range entries[:count] {
		c.W.Array(6)
		c.W.Int(e.id)
		c.W.Int(e.at)
		c.W.Int(e.usec)
		c.W.StringArray(e.args)
		c.W.BulkString(e.addr)
		c.W.BulkString(e.client)
	}
}

func cmdSlowlogLen(c *Ctx) { c.W.Int(int64(len(c.Env.slowlog.entries))) }

func cmdSlowlogReset(c *Ctx) {
	c.Env.slowlog.entries = nil
	c.W.OK()
}

func cmdSlowlogHelp(c *Ctx) {
	c.ReplyHelp("SLOWLOG",
		"GET [<count>]",
		"    Return the <count> newest entries of the slow log (default 10, -1 for all).",
		"    Each entry is: id, unix time, duration in microseconds, arguments,",
		"    client address, client name.",
		"LEN",
		"    Return how many entries the slow log holds.",
		"RESET",
		"    Empty the slow log.",
	)
}
