package commands

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strings"

	"github.com/abacusdb/abacus/internal/acl"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/num"
)

// ACL: Redis 7.0's command family over internal/acl.

const errNoACLFile = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."

func init() {
	admin := engine.FlagAdmin | engine.FlagNoScript | engine.FlagLoading | engine.FlagStale
	info := engine.FlagNoScript | engine.FlagLoading | engine.FlagStale
	engine.Register(&engine.Command{Name: "acl", Arity: -2, Group: "server",
		Summary: "A container for Access List Control commands.", Since: "6.0.0", Complexity: "Depends on subcommand.",
		Subs: map[string]*engine.Command{
			"cat": {Arity: -2, Flags: info, Handler: cmdACLCat,
				Summary: "Lists the ACL categories, or the commands inside a category.", Since: "6.0.0", Complexity: "O(1) since the categories and commands are a fixed set."},
			"deluser": {Arity: -3, Flags: admin, Handler: cmdACLDelUser,
				Summary: "Deletes ACL users, and terminates their connections.", Since: "6.0.0", Complexity: "O(1) amortized time considering the typical user."},
			"dryrun": {Arity: -4, Flags: admin, Handler: cmdACLDryRun,
				Summary: "Simulates the execution of a command by a user, without executing the command.", Since: "7.0.0", Complexity: "O(1)."},
			"genpass": {Arity: -2, Flags: info, Handler: cmdACLGenPass,
				Summary: "Generates a pseudorandom, secure password that can be used to identify ACL users.", Since: "6.0.0", Complexity: "O(1)"},
			"getuser": {Arity: 3, Flags: admin, Handler: cmdACLGetUser,
				Summary: "Lists the ACL rules of a user.", Since: "6.0.0", Complexity: "O(N). Where N is the number of password, command and pattern rules that the user has."},
			"list": {Arity: 2, Flags: admin, Handler: cmdACLList,
				Summary: "Dumps the effective rules in ACL file format.", Since: "6.0.0", Complexity: "O(N). Where N is the number of configured users."},
			"load": {Arity: 2, Flags: admin, Handler: cmdACLLoad,
				Summary: "Reloads the rules from the configured ACL file.", Since: "6.0.0", Complexity: "O(N). Where N is the number of configured users."},
			"log": {Arity: -2, Flags: admin, Handler: cmdACLLog,
				Summary: "Lists recent security events generated due to ACL rules.", Since: "6.0.0", Complexity: "O(N) with N being the number of entries shown."},
			"save": {Arity: 2, Flags: admin, Handler: cmdACLSave,
				Summary: "Saves the effective ACL rules in the configured ACL file.", Since: "6.0.0", Complexity: "O(N). Where N is the number of configured users."},
			"setuser": {Arity: -3, Flags: admin, Handler: cmdACLSetUser,
				Summary: "Creates and modifies an ACL user and its rules.", Since: "6.0.0", Complexity: "O(N). Where N is the number of rules provided."},
			"users": {Arity: 2, Flags: admin, Handler: cmdACLUsers,
				Summary: "Lists all ACL users.", Since: "6.0.0", Complexity: "O(N). Where N is the number of configured users."},
			"whoami": {Arity: 2, Flags: info, Handler: cmdACLWhoami,
				Summary: "Returns the authenticated username of the current connection.", Since: "6.0.0", Complexity: "O(1)"},
			"help": {Arity: 2, Flags: engine.FlagLoading | engine.FlagStale, Handler: cmdACLHelp,
				Summary: "Returns helpful text about the different subcommands.", Since: "6.0.0", Complexity: "O(1)"},
		}})
	engine.ClientInfo = func(e *engine.Env, s *engine.Session) string {
		return string(clientLine(&engine.Ctx{Env: e, S: s, Now: e.Clock.NowMs()}, nil, s))
	}
}

func allChannelsDefault(c *engine.Ctx) bool {
	return c.Env.Cfg.Str(config.ACLPubsubDefault) == "allchannels"
}

func cmdACLSetUser(c *engine.Ctx) {
	name := c.Arg(2)
	rules := make([]string, 0, len(c.Args)-3)
	for _, a := range c.Args[3:] {
		rules = append(rules, string(a))
	}
	// Neither the user nor its rules reach MONITOR or the slow log,
	// whatever the outcome (Redis redacts them all first).
	for j := 2; j < len(c.Args); j++ {
		redact(c, j)
	}
	if strings.ContainsAny(name, " \x00") {
		c.Error("ERR Usernames can't contain spaces or null characters")
		return
	}
	var before *acl.User
	if u := c.Env.ACL.User(name); u != nil {
		before = u.Clone()
	}
	err := c.Env.ACL.SetUser(name, rules, allChannelsDefault(c))
	var re *acl.RuleError
	switch {
	case errors.As(err, &re):
		c.Errorf("ERR Error in ACL SETUSER modifier '%s': %s", re.Rule, re.Err)
	case err != nil:
		c.Error("ERR " + err.Error())
	default:
		if before != nil && acl.ChannelsNarrowed(before, c.Env.ACL.User(name)) {
			killRevokedSubscribers(c, c.Env.ACL.User(name))
		}
		c.W.OK()
	}
}

// killRevokedSubscribers disconnects u's clients with a subscription u no
// longer allows, as Redis's ACLKillPubsubClientsIfNeeded: a pattern must
// still be one of u's channel patterns literally, a channel must match
// one. Clients without subscriptions are left alone.
func killRevokedSubscribers(c *engine.Ctx, u *acl.User) {
	for _, s := range c.Env.Host.Clients() {
		if !s.Subscribed() || c.Env.UserOf(s) != u {
			continue
		}
		revoked := false
		for _, kind := range []engine.SubKind{engine.SubPattern, engine.SubChannel, engine.SubShard} {
			for _, name := range s.Subscriptions(kind) {
				if !u.ChannelAllowed(name, kind == engine.SubPattern) {
					revoked = true
				}
			}
		}
		if revoked {
			closeClient(c, s)
		}
	}
}

// closeClient closes s: after this command's reply when it is the
// caller, as Redis's CLIENT_CLOSE_AFTER_COMMAND, else as CLIENT KILL.
func closeClient(c *engine.Ctx, s *engine.Session) {
	if s == c.S {
		s.CloseAfterReply = true
	} else {
		c.Env.Host.Kill(s)
	}
}

func cmdACLGetUser(c *engine.Ctx) {
	u := c.Env.ACL.User(c.Arg(2))
	if u == nil {
		c.W.Null()
		return
	}
	w := c.W
	w.Map(6)
	w.BulkString("flags")
	strs(w, u.FlagNames())
	w.BulkString("passwords")
	strs(w, u.Passwords())
	root := u.Root()
	w.BulkString("commands")
	w.BulkString(root.CommandRules())
	w.BulkString("keys")
	w.BulkString(root.KeysString())
	w.BulkString("channels")
	w.BulkString(root.ChannelsString())
	w.BulkString("selectors")
	w.Array(len(u.Selectors()))
	for _, s := range u.Selectors() {
		w.Map(3)
		w.BulkString("commands")
		w.BulkString(s.CommandRules())
		w.BulkString("keys")
		w.BulkString(s.KeysString())
		w.BulkString("channels")
		w.BulkString(s.ChannelsString())
	}
}

func strs(w interface {
	Array(int)
	BulkString(string)
}, l []string) {
	w.Array(len(l))
	for _, s := range l {
		w.BulkString(s)
	}
}

func cmdACLList(c *engine.Ctx) { strs(c.W, c.Env.ACL.Lines()) }

func cmdACLUsers(c *engine.Ctx) { strs(c.W, c.Env.ACL.Names()) }

func cmdACLWhoami(c *engine.Ctx) { c.W.BulkString(c.Env.UserOf(c.S).Name) }

func cmdACLDelUser(c *engine.Ctx) {
	n := int64(0)
	for _, a := range c.Args[2:] {
		name := string(a)
		if name == "default" {
			c.Error("ERR The 'default' user cannot be removed")
			return
		}
	}
	for _, a := range c.Args[2:] {
		u := c.Env.ACL.User(string(a))
		if u == nil || !c.Env.ACL.Delete(string(a)) {
			continue
		}
		n++
		// Its clients are disconnected, as Redis does.
		for _, s := range c.Env.Host.Clients() {
			if s.ACLUser == u {
				closeClient(c, s)
			}
		}
	}
	c.W.Int(n)
}

func cmdACLCat(c *engine.Ctx) {
	if len(c.Args) > 3 {
		subcommandSyntaxError(c) // within the arity: ACL's own check, as Redis's
		return
	}
	if len(c.Args) == 2 {
		strs(c.W, acl.Categories)
		return
	}
	bit := acl.CategoryBit(c.Arg(2))
	if bit == 0 {
		c.Errorf("ERR Unknown category '%.128s'", c.Args[2])
		return
	}
	strs(c.W, c.Env.ACL.Cat.InCategory(bit))
}

func cmdACLGenPass(c *engine.Ctx) {
	bits := int64(256)
	if len(c.Args) > 3 {
		subcommandSyntaxError(c) // within the arity: ACL's own check, as Redis's
		return
	}
	if len(c.Args) == 3 {
		v, ok := c.Int(2)
		if !ok {
			return
		}
		if v <= 0 || v > 4096 {
			c.Error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096")
			return
		}
		bits = v
	}
	chars := (bits + 3) / 4
	b := make([]byte, (chars+1)/2)
	rand.Read(b)
	c.W.BulkString(hex.EncodeToString(b)[:chars])
}

func cmdACLLog(c *engine.Ctx) {
	if len(c.Args) > 3 {
		subcommandSyntaxError(c) // within the arity: ACL's own check, as Redis's
		return
	}
	log := &c.Env.ACL.Log
	count := int64(10)
	if len(c.Args) == 3 {
		if c.ArgIs(2, "reset") {
			log.Reset()
			c.W.OK()
			return
		}
		v, ok := num.ParseInt(c.Args[2])
		if !ok {
			c.Error(engine.ErrNotInt)
			return
		}
		count = max(v, 0)
	}
	n := min(int(count), len(log.Entries))
	c.W.Array(n)
	for _, e := range log.Entries[:n] {
		c.W.Map(7)
		c.W.BulkString("count")
		c.W.Int(e.Count)
		c.W.BulkString("reason")
		c.W.BulkString(e.Reason)
		c.W.BulkString("context")
		c.W.BulkString(e.Context)
		c.W.BulkString("object")
		c.W.BulkString(e.Object)
		c.W.BulkString("username")
		c.W.BulkString(e.Username)
		c.W.BulkString("age-seconds")
		c.W.Double(float64(c.Now-e.Created) / 1000)
		c.W.BulkString("client-info")
		c.W.BulkString(e.ClientInfo)
	}
}

func cmdACLDryRun(c *engine.Ctx) {
	u := c.Env.ACL.User(c.Arg(2))
	if u == nil {
		c.Errorf("ERR User '%s' not found", c.Args[2])
		return
	}
	args := c.Args[3:]
	cmd := engine.Resolve(args)
	if cmd == nil {
		c.Errorf("ERR Command '%s' not found", args[0])
		return
	}
	if !cmd.ArityOK(len(args)) {
		c.Errorf("ERR wrong number of arguments for '%s' command", cmd.Name)
		return
	}
	r, pos := c.Env.ACLDecide(u, cmd, args)
	switch r {
	case acl.Allowed:
		c.W.OK()
	case acl.DeniedCmd:
		c.W.BulkString("This user has no permissions to run the '" + cmd.Name + "' command")
	case acl.DeniedKey:
		c.W.BulkString("This user has no permissions to access the '" + string(args[pos]) + "' key")
	case acl.DeniedChannel:
		c.W.BulkString("This user has no permissions to access the '" + string(args[pos]) + "' channel")
	}
}

func cmdACLSave(c *engine.Ctx) {
	path := c.Env.Cfg.Str(config.ACLFile)
	if path == "" {
		c.Error(errNoACLFile)
		return
	}
	if err := c.Env.ACL.Save(path); err != nil {
		c.Env.Log.Warn("Saving ACL file: " + err.Error())
		c.Error("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
		return
	}
	c.W.OK()
}

func cmdACLLoad(c *engine.Ctx) {
	path := c.Env.Cfg.Str(config.ACLFile)
	if path == "" {
		c.Error(errNoACLFile)
		return
	}
	text, err := os.ReadFile(path)
	if err != nil {
		c.Errorf("ERR Error loading ACLs, opening file '%s': %s", path, config.ErrnoText(err))
		return
	}
	if err := c.Env.ACL.Load(path, string(text), allChannelsDefault(c)); err != nil {
		c.Error("ERR Error loading ACLs: " + err.Error())
		return
	}
	// The users were made anew (the default one kept its identity): the
	// clients logged in as the others are disconnected, as Redis 7.0's
	// ACLFreeUsersSet does with the old set.
	for _, s := range c.Env.Host.Clients() {
		if s.ACLUser != nil && s.ACLUser != c.Env.ACL.Default {
			closeClient(c, s)
		}
	}
	c.W.OK()
}

func cmdACLHelp(c *engine.Ctx) {
	lines := []string{
		"ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"CAT [<category>]",
		"    List all commands that belong to <category>, or all command categories",
		"    when no category is specified.",
		"DELUSER <username> [<username> ...]",
		"    Delete a list of users.",
		"DRYRUN <username> <command> [<arg> ...]",
		"    Returns whether the user can execute the given command without executing the command.",
		"GETUSER <username>",
		"    Get the user's details.",
		"GENPASS [<bits>]",
		"    Generate a secure 256-bit user password. The optional `bits` argument can",
		"    be used to specify a different size.",
		"LIST",
		"    Show users details in config file format.",
		"LOAD",
		"    Reload users from the ACL file.",
		"LOG [<count> | RESET]",
		"    Show the ACL log entries.",
		"SAVE",
		"    Save the current config to the ACL file.",
		"SETUSER <username> <attribute> [<attribute> ...]",
		"    Create or modify a user with the specified attributes.",
		"USERS",
		"    List all the registered usernames.",
		"WHOAMI",
		"    Return the current connection username.",
		"HELP",
		"    Prints this help.",
	}
	c.W.Array(len(lines))
	for _, l := range lines {
		c.W.Simple(l)
	}
}
