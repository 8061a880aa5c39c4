package commands

import (
	"sort"
	"strings"

	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/glob"
	"github.com/abacusdb/abacus/internal/resp"
)

// The COMMAND family: everything it says comes from the command table.

func init() {
	intro := func(arity int, summary, since, complexity string, h func(*engine.Ctx)) *engine.Command {
		return &engine.Command{Arity: arity, Flags: engine.FlagLoading | engine.FlagStale, ACL: "@connection",
			Summary: summary, Since: since, Complexity: complexity, Handler: h}
	}
	engine.Register(&engine.Command{Name: "command", Arity: -1, Flags: engine.FlagLoading | engine.FlagStale, ACL: "@connection", Group: "server",
		Tips:    "nondeterministic_output_order",
		Summary: "Returns detailed information about all commands.", Since: "2.8.13", Complexity: "O(N) where N is the total number of Redis commands",
		Handler: cmdCommand,
		Subs: map[string]*engine.Command{
			"count": intro(2, "Returns a count of commands.", "2.8.13", "O(1)", cmdCommandCount),
			"docs": withTips(intro(-2, "Returns documentary information about one, multiple or all commands.", "7.0.0",
				"O(N) where N is the number of commands to look up", cmdCommandDocs), "nondeterministic_output_order"),
			"getkeys": intro(-4, "Extracts the key names from an arbitrary command.", "2.8.13",
				"O(N) where N is the number of arguments to the command", cmdCommandGetKeys),
			"getkeysandflags": intro(-4, "Extracts the key names and access flags for an arbitrary command.", "7.0.0",
				"O(N) where N is the number of arguments to the command", cmdCommandGetKeysAndFlags),
			"help": intro(2, "Returns helpful text about the different subcommands.", "5.0.0", "O(1)", cmdCommandHelp),
			"info": withTips(intro(-2, "Returns information about one, multiple or all commands.", "2.8.13",
				"O(N) where N is the number of commands to look up", cmdCommandInfo), "nondeterministic_output_order"),
			"list": withTips(intro(-2, "Returns a list of command names.", "7.0.0",
				"O(N) where N is the total number of Redis commands", cmdCommandList), "nondeterministic_output_order"),
		},
	})
}

func withTips(c *engine.Command, tips string) *engine.Command {
	c.Tips = tips
	return c
}

// Redis's order for flags in COMMAND INFO (may_replicate is not shown).
var flagReplyOrder = []struct {
	f    engine.Flag
	name string
}{
	{engine.FlagWrite, "write"}, {engine.FlagReadonly, "readonly"}, {engine.FlagDenyOOM, "denyoom"},
	{engine.FlagAdmin, "admin"}, {engine.FlagPubSub, "pubsub"}, {engine.FlagNoScript, "noscript"},
	{engine.FlagBlocking, "blocking"}, {engine.FlagLoading, "loading"}, {engine.FlagStale, "stale"},
	{engine.FlagSkipMonitor, "skip_monitor"}, {engine.FlagSkipSlowlog, "skip_slowlog"}, {engine.FlagAsking, "asking"},
	{engine.FlagFast, "fast"}, {engine.FlagNoAuth, "no_auth"}, {engine.FlagNoMandatoryKeys, "no_mandatory_keys"}, {engine.FlagNoAsyncLoading, "no_async_loading"},
	{engine.FlagNoMulti, "no_multi"}, {engine.FlagMovableKeys, "movablekeys"}, {engine.FlagAllowBusy, "allow_busy"},
}

// aclCategoryOrder is Redis's list of ACL categories, the order COMMAND
// INFO shows a command's categories in.
var aclCategoryOrder = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
	"blocking", "dangerous", "connection", "transaction", "scripting",
}

// replyFlags lists the flags COMMAND INFO shows for c.
func replyFlags(c *engine.Command) []string {
	f := c.Flags
	if c.Keys != nil {
		f |= engine.FlagMovableKeys
	}
	var out []string
	for _, fl := range flagReplyOrder {
		if f&fl.f != 0 {
			out = append(out, fl.name)
		}
	}
	return out
}

// categories returns c's ACL categories in Redis's order.
func categories(c *engine.Command) []string {
	cats := c.Categories()
	rank := func(s string) int {
		for i, n := range aclCategoryOrder {
			if "@"+n == s {
				return i
			}
		}
		return len(aclCategoryOrder)
	}
	sort.SliceStable(cats, func(i, j int) bool { return rank(cats[i]) < rank(cats[j]) })
	return cats
}

// hasKeys reports whether a command takes keys (COMMAND GETKEYS).
func hasKeys(c *engine.Command) bool { return c.First != 0 || c.Keys != nil }

// writeKeySpecs writes c's key specifications (engine.Command.KeySpecs).
func writeKeySpecs(w *resp.Writer, c *engine.Command) {
	specs := c.KeySpecs()
	w.Set(len(specs)) // a set in RESP3, as Redis replies
	for i := range specs {
		k := &specs[i]
		n := 3
		if k.Notes != "" {
			n++
			w.Map(n)
			w.BulkString("notes")
			w.BulkString(k.Notes)
		} else {
			w.Map(n)
		}
		w.BulkString("flags")
		writeSimpleSet(w, strings.Fields(k.Flags))
		w.BulkString("begin_search")
		w.Map(2)
		w.BulkString("type")
		switch {
		case k.Index > 0:
			w.BulkString("index")
			w.BulkString("spec")
			w.Map(1)
			w.BulkString("index")
			w.Int(int64(k.Index))
		case k.Keyword != "":
			w.BulkString("keyword")
			w.BulkString("spec")
			w.Map(2)
			w.BulkString("keyword")
			w.BulkString(k.Keyword)
			w.BulkString("startfrom")
			w.Int(int64(k.StartFrom))
		default:
			w.BulkString("unknown")
			w.BulkString("spec")
			w.Map(0)
		}
		w.BulkString("find_keys")
		w.Map(2)
		w.BulkString("type")
		switch k.Find {
		case engine.FindRange:
			w.BulkString("range")
			w.BulkString("spec")
			w.Map(3)
			w.BulkString("lastkey")
			w.Int(int64(k.LastKey))
			w.BulkString("keystep")
			w.Int(int64(k.KeyStep))
			w.BulkString("limit")
			w.Int(int64(k.Limit))
		case engine.FindKeynum:
			w.BulkString("keynum")
			w.BulkString("spec")
			w.Map(3)
			w.BulkString("keynumidx")
			w.Int(int64(k.KeynumIdx))
			w.BulkString("firstkey")
			w.Int(int64(k.FirstKey))
			w.BulkString("keystep")
			w.Int(int64(k.KeyStep))
		default:
			w.BulkString("unknown")
			w.BulkString("spec")
			w.Map(0)
		}
	}
}

func writeSimpleSet(w *resp.Writer, items []string) {
	w.Set(len(items))
	for _, s := range items {
		w.Simple(s)
	}
}

// writeCommandInfo writes COMMAND INFO's ten-element entry for c.
func writeCommandInfo(w *resp.Writer, c *engine.Command) {
	w.Array(10)
	w.BulkString(c.Name)
	w.Int(int64(c.Arity))
	writeSimpleSet(w, replyFlags(c))
	step := c.Step
	if c.First != 0 && step == 0 {
		step = 1
	}
	w.Int(int64(c.First))
	w.Int(int64(c.Last))
	w.Int(int64(step))
	writeSimpleSet(w, categories(c))
	tips := strings.Fields(c.Tips)
	w.Set(len(tips))
	for _, t := range tips {
		w.BulkString(t)
	}
	writeKeySpecs(w, c)
	subs := sortedSubs(c)
	w.Set(len(subs))
	for _, s := range subs {
		writeCommandInfo(w, s)
	}
}

func sortedSubs(c *engine.Command) []*engine.Command {
	out := make([]*engine.Command, 0, len(c.Subs))
	for _, s := range c.Subs {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// lookupFullName finds "get" or "config|get" (any case).
func lookupFullName(name string) *engine.Command {
	base, sub, isSub := strings.Cut(strings.ToLower(name), "|")
	c := engine.Lookup([]byte(base))
	if c == nil || !isSub {
		return c
	}
	return c.Subs[sub]
}

// lookupArgs finds the command an argument vector runs, as Redis's
// lookupCommand does: a container needs a known subcommand.
func lookupArgs(args [][]byte) *engine.Command {
	c := engine.Lookup(args[0])
	if c == nil || len(c.Subs) == 0 || len(args) == 1 {
		return c
	}
	return c.SubFor(args)
}

func cmdCommand(c *engine.Ctx) {
	if len(c.Args) > 1 {
		c.Errorf("ERR unknown subcommand '%.128s'. Try COMMAND HELP.", c.Args[1])
		return
	}
	writeAllCommandInfo(c.W)
}

func writeAllCommandInfo(w *resp.Writer) {
	all := engine.All()
	w.Array(len(all))
	for _, cmd := range all {
		writeCommandInfo(w, cmd)
	}
}

func cmdCommandCount(c *engine.Ctx) { c.W.Int(int64(engine.NumCommands())) }

func cmdCommandInfo(c *engine.Ctx) {
	if len(c.Args) == 2 {
		writeAllCommandInfo(c.W)
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, a := range c.Args[2:] {
		if cmd := lookupFullName(string(a)); cmd != nil {
			writeCommandInfo(c.W, cmd)
		} else {
			c.W.Null()
		}
	}
}

func cmdCommandDocs(c *engine.Ctx) {
	var cmds []*engine.Command
	if len(c.Args) == 2 {
		cmds = engine.All()
	} else {
		for _, a := range c.Args[2:] {
			if cmd := lookupFullName(string(a)); cmd != nil {
				cmds = append(cmds, cmd)
			}
		}
	}
	c.W.Map(len(cmds))
	for _, cmd := range cmds {
		c.W.BulkString(cmd.Name)
		writeCommandDocs(c.W, cmd)
	}
}

// writeCommandDocs writes COMMAND DOCS's map for one command.
func writeCommandDocs(w *resp.Writer, c *engine.Command) {
	fields := [][2]string{{"summary", c.Summary}, {"since", c.Since}, {"group", c.Group}, {"complexity", c.Complexity}}
	n := 0
	for _, f := range fields {
		if f[1] != "" {
			n++
		}
	}
	subs := sortedSubs(c)
	if len(subs) > 0 {
		n++
	}
	w.Map(n)
	for _, f := range fields {
		if f[1] != "" {
			w.BulkString(f[0])
			w.BulkString(f[1])
		}
	}
	if len(subs) > 0 {
		w.BulkString("subcommands")
		w.Map(len(subs))
		for _, s := range subs {
			w.BulkString(s.Name)
			writeCommandDocs(w, s)
		}
	}
}

func cmdCommandList(c *engine.Ctx) {
	var filter func(*engine.Command) bool
	switch {
	case len(c.Args) == 2:
	case len(c.Args) == 5 && c.ArgIs(2, "filterby"):
		arg := c.Arg(4)
		switch {
		case c.ArgIs(3, "module"):
			filter = func(*engine.Command) bool { return false }
		case c.ArgIs(3, "aclcat"):
			cat := "@" + strings.ToLower(arg)
			filter = func(cmd *engine.Command) bool {
				for _, k := range cmd.Categories() {
					if k == cat {
						return true
					}
				}
				return false
			}
		case c.ArgIs(3, "pattern"):
			filter = func(cmd *engine.Command) bool { return glob.Match(arg, cmd.Name, true) }
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	default:
		c.Error(engine.ErrSyntax)
		return
	}
	var names []string
	for _, cmd := range engine.All() {
		for _, x := range append([]*engine.Command{cmd}, sortedSubs(cmd)...) {
			if filter == nil || filter(x) {
				names = append(names, x.Name)
			}
		}
	}
	c.W.StringArray(names)
}

func cmdCommandGetKeys(c *engine.Ctx)         { commandGetKeys(c, false) }
func cmdCommandGetKeysAndFlags(c *engine.Ctx) { commandGetKeys(c, true) }

func commandGetKeys(c *engine.Ctx, withFlags bool) {
	args := c.Args[2:]
	cmd := lookupArgs(args)
	switch {
	case cmd == nil:
		c.Error("ERR Invalid command specified")
		return
	case !hasKeys(cmd):
		c.Error("ERR The command has no key arguments")
		return
	case !cmd.ArityOK(len(args)):
		c.Error("ERR Invalid number of arguments specified for command")
		return
	}
	keys, ok := cmd.KeysWithFlags(args)
	if !ok || len(keys) == 0 && cmd.Flags&engine.FlagNoMandatoryKeys == 0 {
		c.Error("ERR Invalid arguments specified for command")
		return
	}
	c.W.Array(len(keys))
	for _, k := range keys {
		if withFlags {
			c.W.Array(2)
			c.W.Bulk(args[k.Pos])
			writeSimpleSet(c.W, strings.Fields(k.Flags))
		} else {
			c.W.Bulk(args[k.Pos])
		}
	}
}

func cmdCommandHelp(c *engine.Ctx) {
	c.ReplyHelp("COMMAND",
		"(no subcommand)",
		"    Return details about every command.",
		"COUNT",
		"    Return how many commands the server has.",
		"LIST [FILTERBY (MODULE <name>|ACLCAT <category>|PATTERN <pattern>)]",
		"    Return the names of the commands, optionally only those matching a filter.",
		"INFO [<command-name> ...]",
		"    Return details about the named commands, or about all of them.",
		"DOCS [<command-name> ...]",
		"    Return the documentation of the named commands, or of all of them.",
		"GETKEYS <full-command>",
		"    Return the keys a complete command line would access.",
		"GETKEYSANDFLAGS <full-command>",
		"    Return those keys with their access flags.",
	)
}
