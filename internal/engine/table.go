package engine

import (
	"sort"
	"strings"

	"github.com/abacusdb/abacus/internal/acl"
	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/num"
)

// Flag is a command flag as COMMAND INFO reports it.
type Flag uint32

// Command flags, named as Redis names them.
const (
	FlagWrite Flag = 1 << iota
	FlagReadonly
	FlagDenyOOM
	FlagAdmin
	FlagPubSub
	FlagNoScript
	FlagBlocking
	FlagLoading
	FlagStale
	FlagSkipMonitor
	FlagSkipSlowlog
	FlagFast
	FlagNoAuth
	// FlagMayReplicate: a command that may add to the replication stream
	// without writing (PUBLISH, PFCOUNT's cache, EVAL): held by CLIENT
	// PAUSE WRITE, refused in read-only scripts.
	FlagMayReplicate
	FlagNoMulti
	FlagAllowBusy
	FlagMovableKeys
	FlagNoMandatoryKeys
	// FlagAsking: served on a node importing the slot without ASKING
	// (RESTORE-ASKING).
	FlagAsking
	// FlagNoAsyncLoading: refused while a replica loads its primary's
	// data in the background (Redis's no_async_loading; shown only).
	FlagNoAsyncLoading
	// FlagTouchesArbitraryKeys: the command may delete keys it was not
	// given (expired keys SCAN and RANDOMKEY meet); run directly, not in
	// EXEC or a script, its effects are not wrapped in MULTI/EXEC (Redis's
	// CMD_TOUCHES_ARBITRARY_KEYS, which COMMAND INFO does not show).
	FlagTouchesArbitraryKeys
)

var flagNames = []string{
	"write", "readonly", "denyoom", "admin", "pubsub", "noscript", "blocking",
	"loading", "stale", "skip_monitor", "skip_slowlog", "fast", "no_auth",
	"", "no_multi", "allow_busy", "movablekeys", "no_mandatory_keys",
	"asking", "no_async_loading",
}

// Names lists the flag names set in f, in Redis's order. Redis 7.0's
// COMMAND INFO does not show may_replicate: it has no name here.
func (f Flag) Names() []string {
	var out []string
	for i, n := range flagNames {
		if f&(1<<i) != 0 && n != "" {
			out = append(out, n)
		}
	}
	return out
}

// Command is one entry of the command table.
type Command struct {
	Name  string // lower case; subcommands are "parent|sub"
	Arity int    // > 0 exact argument count, < 0 at least -Arity
	Flags Flag
	// Key positions: First, Last (negative counts from the end), Step. Zero
	// First means the command takes no keys at fixed positions; Keys, if
	// set, extracts keys for commands whose keys move (ZUNIONSTORE, EVAL).
	First, Last, Step int
	Keys              func(args [][]byte) []int
	// KeyFlags are the key-spec flags COMMAND INFO and GETKEYSANDFLAGS
	// report, e.g. "RW access update"; empty derives them from Flags.
	KeyFlags string
	// Specs, when set, are the command's key specs as Redis lists them
	// (keys that play different roles, keynum counts, notes); otherwise
	// they are derived from the fields around (KeySpecs). They describe
	// keys (COMMAND INFO, GETKEYSANDFLAGS); First/Last/Step and Keys
	// still find them for everything else.
	Specs []KeySpec
	// Keyword, if set, is the key spec COMMAND INFO shows for a command
	// whose Keys function finds its keys after a keyword (XREAD's
	// STREAMS), in place of an "unknown" spec.
	Keyword *KeywordSpec
	// Tips are COMMAND INFO's hints for clients, space-separated, e.g.
	// "nondeterministic_output request_policy:all_shards".
	Tips       string
	ACL        string // categories beyond those implied by flags, e.g. "@string"
	Group      string // COMMAND DOCS group: string, generic, server, connection ...
	Summary    string
	Since      string
	Complexity string
	Handler    func(*Ctx)
	Subs       map[string]*Command // subcommands by lower-case name
	parent     *Command
	acl        *acl.Command // the command in ACL rules (acl.go)
	keyNeed    int          // the permissions its keys need (acl.go)
	keyRoles   keyRoles     // how the needs differ by key position (acl.go)
	chanArgs   chanArgs     // which arguments are channels (acl.go)

	// Prepare, if set, is work done ahead of a command of very many
	// arguments, without the server lock (prepare.go).
	Prepare *Prepare
}

// KeywordSpec is a key spec that begins at a keyword searched from
// StartFrom and takes a range of keys after it (Redis's "keyword" begin
// search with a "range" find).
type KeywordSpec struct {
	Keyword              string
	StartFrom            int
	LastKey, Step, Limit int
}

// table is the command table: the one place commands are listed.
var table = map[string]*Command{}

// Register adds commands to the table; each family calls it from init,
// before any server runs (the table is read without a lock afterwards).
// Subcommands are registered through their parent's Subs.
func Register(cmds ...*Command) {
	for _, c := range cmds {
		if _, dup := table[c.Name]; dup {
			panic("command registered twice: " + c.Name)
		}
		if c.Step == 0 && c.First != 0 {
			c.Step = 1
		}
		for name, s := range c.Subs {
			s.parent = c
			if s.Name == "" {
				s.Name = c.Name + "|" + name
			}
			if s.Step == 0 && s.First != 0 {
				s.Step = 1
			}
			if s.Group == "" {
				s.Group = c.Group
			}
		}
		table[c.Name] = c
	}
}

// Lookup finds a command by name, case-insensitively (ASCII only, as
// Redis compares names), without allocating. The name is lowered first,
// so that upper-case names (what redis-cli and redis-benchmark send) cost
// one map lookup, not two.
func Lookup(name []byte) *Command {
	if len(name) > 32 {
		return nil // no command has a longer name
	}
	var lb [32]byte
	return table[string(ascii.AppendLower(lb[:0], name))]
}

// SubFor is the subcommand args[1] names, nil when c has none of that
// name (ASCII case-insensitively, without allocating).
func (c *Command) SubFor(args [][]byte) *Command {
	if len(c.Subs) == 0 || len(args) < 2 || len(args[1]) > 32 {
		return nil
	}
	var lb [32]byte
	return c.Subs[string(ascii.AppendLower(lb[:0], args[1]))]
}

// resolve is Redis's lookupCommand for a command found by its name: the
// subcommand args name, else the command itself, except that an unknown
// subcommand of a command that only has subcommands is nil.
func resolve(cmd *Command, args [][]byte) *Command {
	if cmd == nil {
		return nil
	}
	if s := cmd.SubFor(args); s != nil {
		return s
	}
	if len(cmd.Subs) > 0 && len(args) >= 2 && cmd.Handler == nil {
		return nil
	}
	return cmd
}

// NumCommands is the number of top-level commands (COMMAND COUNT).
func NumCommands() int { return len(table) }

// All returns every top-level command, sorted by name.
func All() []*Command {
	out := make([]*Command, 0, len(table))
	for _, c := range table {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Parent returns the parent of a subcommand, or nil.
func (c *Command) Parent() *Command { return c.parent }

// FullName is the name COMMAND and errors use ("config|get").
func (c *Command) FullName() string { return c.Name }

// ArityOK reports whether n arguments (including the name) fit the arity.
func (c *Command) ArityOK(n int) bool {
	if c.Arity > 0 {
		return n == c.Arity
	}
	return n >= -c.Arity
}

// KeyIndexes returns the positions of the keys in args.
func (c *Command) KeyIndexes(args [][]byte) []int {
	if c.Keys != nil {
		return c.Keys(args)
	}
	var out []int
	first, last := c.fixedKeys(len(args))
	for i := first; i <= last; i += c.Step {
		out = append(out, i)
	}
	return out
}

// fixedKeys is the range of the keys at fixed positions (every Step-th
// argument from first to last) in a command of n arguments; first > last
// when there are none.
func (c *Command) fixedKeys(n int) (first, last int) {
	if c.First <= 0 {
		return 1, 0
	}
	last = c.Last
	if last < 0 {
		last += n
	}
	return c.First, min(last, n-1)
}

// Categories returns the ACL categories: those implied by flags plus ACL.
func (c *Command) Categories() []string {
	var out []string
	if c.Flags&FlagWrite != 0 {
		out = append(out, "@write")
	}
	if c.Flags&FlagReadonly != 0 && !strings.Contains(c.ACL, "@scripting") {
		// Redis's setImplicitACLCategories leaves the read-only
		// scripting commands (EVAL_RO, FCALL_RO...) out of @read.
		out = append(out, "@read")
	}
	if c.Flags&FlagAdmin != 0 {
		out = append(out, "@admin", "@dangerous")
	}
	if c.Flags&FlagFast != 0 {
		out = append(out, "@fast")
	} else {
		out = append(out, "@slow")
	}
	if c.Flags&FlagBlocking != 0 {
		out = append(out, "@blocking")
	}
	if c.Flags&FlagPubSub != 0 {
		out = append(out, "@pubsub")
	}
	for _, a := range strings.Fields(c.ACL) {
		dup := false
		for _, o := range out {
			dup = dup || o == a
		}
		if !dup {
			out = append(out, a)
		}
	}
	return out
}

// NumkeysKeys extracts the keys of a command whose argument at idx counts
// the keys that follow it (LMPOP, ZMPOP, BLMPOP...). A malformed count
// yields no keys.
func NumkeysKeys(idx int) func(args [][]byte) []int {
	return func(args [][]byte) []int {
		if idx >= len(args) {
			return nil
		}
		n, ok := num.ParseInt(args[idx])
		if !ok || n <= 0 || n > int64(len(args)-idx-1) {
			return nil
		}
		out := make([]int, n)
		for i := range out {
			out[i] = idx + 1 + i
		}
		return out
	}
}
