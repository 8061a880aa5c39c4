package engine

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/abacusdb/abacus/internal/acl"
	"github.com/abacusdb/abacus/internal/config"
)

// ACL: the engine's side of internal/acl. The catalog is built from the
// table once (the table is complete after init); each Command keeps its
// catalog entry so the check needs no lookup by name.

var (
	catalogOnce sync.Once
	catalog     *acl.Catalog
)

// ACLCatalog is the table as ACL rules see it.
func ACLCatalog() *acl.Catalog {
	catalogOnce.Do(func() {
		var top []*acl.Command
		for _, c := range All() {
			ac := aclEntry(c)
			subs := make([]string, 0, len(c.Subs))
			for n := range c.Subs {
				subs = append(subs, n)
			}
			sortStrings(subs)
			for _, n := range subs {
				ac.Subs = append(ac.Subs, aclEntry(c.Subs[n]))
			}
			top = append(top, ac)
		}
		catalog = acl.NewCatalog(top)
	})
	return catalog
}

func aclEntry(c *Command) *acl.Command {
	ac := &acl.Command{Name: c.Name, NoAuth: c.Flags&FlagNoAuth != 0}
	for _, cat := range c.Categories() {
		ac.Cats |= acl.CategoryBit(strings.TrimPrefix(cat, "@"))
	}
	c.acl = ac
	c.keyRoles, c.chanArgs = keyRolesOf(c.Name), chanArgsOf(c.Name)
	c.keyNeed = acl.KeyNeeds(c.KeyFlags)
	if c.KeyFlags == "" {
		switch {
		case c.Flags&FlagWrite != 0:
			c.keyNeed = acl.NeedWrite
		case c.Flags&FlagReadonly != 0:
			c.keyNeed = acl.NeedRead
		}
	}
	return ac
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// initACL makes the server's users: Redis's default user, with
// requirepass as its password, kept in step when CONFIG SET changes it.
func (e *Env) initACL() {
	e.ACL = acl.NewRegistry(ACLCatalog())
	e.ACL.SetRequirePass(e.Cfg.Str(config.RequirePass))
	prev := e.Cfg.OnChange
	e.Cfg.OnChange = func(id config.ID) {
		if prev != nil {
			prev(id)
		}
		if id == config.RequirePass {
			e.ACL.SetRequirePass(e.Cfg.Str(config.RequirePass))
		}
	}
}

// UserOf is the session's user: the default user until it authenticates
// as another.
func (e *Env) UserOf(s *Session) *acl.User {
	if s.ACLUser != nil {
		return s.ACLUser
	}
	return e.ACL.Default
}

// ClientInfo formats a session as CLIENT LIST does (ACL LOG's
// client-info); the commands package sets it.
var ClientInfo = func(e *Env, s *Session) string { return "id=" + itoa(s.ID) }

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// aclCheck is the ACL step of check: "" when the session's user may run
// cmd with these arguments, else the NOPERM error, logged in ACL LOG.
func (e *Env) aclCheck(s *Session, cmd *Command, args [][]byte) string {
	u := e.UserOf(s)
	if u.Open() {
		return ""
	}
	r, pos := e.aclDecide(u, cmd, args)
	if r == acl.Allowed {
		return ""
	}
	ctx := "toplevel"
	if s.tx.multi {
		ctx = "multi"
	}
	e.ACLDenied(s, u, r, cmd, args, pos, ctx)
	return acl.Refusal(r, cmd.acl)
}

// aclRecheck is EXEC's check of a queued command against the user's
// permissions as they are now: a SETUSER since the command was queued,
// or an AUTH earlier in the transaction, may have taken them away.
// Redis's execCommand words the refusal by reason and logs it with
// context multi.
func (e *Env) aclRecheck(s *Session, cmd *Command, args [][]byte) string {
	u := e.UserOf(s)
	if u.Open() {
		return ""
	}
	r, pos := e.aclDecide(u, cmd, args)
	if r == acl.Allowed {
		return ""
	}
	e.ACLDenied(s, u, r, cmd, args, pos, "multi")
	reason := "no permission"
	switch r {
	case acl.DeniedCmd:
		reason = "no permission to execute the command or subcommand"
	case acl.DeniedKey:
		reason = "no permission to touch the specified keys"
	case acl.DeniedChannel:
		reason = "no permission to access one of the channels used as arguments"
	}
	return "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: " + reason
}

func (e *Env) aclDecide(u *acl.User, cmd *Command, args [][]byte) (acl.Reason, int) {
	if cmd.acl == nil {
		ACLCatalog()
	}
	if aclAllowsFast(u, cmd, args) {
		return acl.Allowed, 0
	}
	var kb [8]acl.KeyRef
	keys := kb[:0]
	switch {
	case cmd.chanArgs != chanNone:
		// SPUBLISH's and SSUBSCRIBE's channels have key positions (for
		// cluster slots) that Redis's key specs mark NOT_KEY.
	case cmd.Keys != nil:
		for i, p := range cmd.Keys(args) {
			if p < len(args) {
				keys = append(keys, acl.KeyRef{Pos: p, Need: keyNeedAt(cmd, args, i, cmd.keyNeed)})
			}
		}
	case cmd.First > 0:
		// Fixed positions, walked without building KeyIndexes' slice.
		first, last := cmd.fixedKeys(len(args))
		for i, p := 0, first; p <= last; i, p = i+1, p+cmd.Step {
			keys = append(keys, acl.KeyRef{Pos: p, Need: keyNeedAt(cmd, args, i, cmd.keyNeed)})
		}
	}
	return u.Check(cmd.acl, args, keys, channelRefs(cmd, args))
}

// aclAllowsFast decides the usual case without building Check's
// arguments: a user without "(...)" selectors, a command with its keys at
// fixed positions and no channels. It only says yes; anything else (a
// refusal, whose reason and argument Check ranks) is left to Check.
func aclAllowsFast(u *acl.User, cmd *Command, args [][]byte) bool {
	sel := u.Single()
	if sel == nil || cmd.Keys != nil || cmd.chanArgs != chanNone || !sel.CommandAllowed(cmd.acl, args) {
		return false
	}
	if sel.AllKeys() || cmd.First <= 0 {
		return true
	}
	first, last := cmd.fixedKeys(len(args))
	for i, p := 0, first; p <= last; i, p = i+1, p+cmd.Step {
		need := cmd.keyNeed
		if cmd.keyRoles != rolesSame {
			need = keyNeedAt(cmd, args, i, need)
		}
		if !sel.KeyAllowed(args[p], need) {
			return false
		}
	}
	return true
}

// ACLDenied records a refusal: the INFO counter and an ACL LOG entry
// (context toplevel, multi or lua). pos is the argument refused (a key
// or channel).
func (e *Env) ACLDenied(s *Session, u *acl.User, r acl.Reason, cmd *Command, args [][]byte, pos int, ctx string) {
	obj := ""
	switch r {
	case acl.DeniedCmd:
		e.ACL.Denied.Cmd++
		obj = cmd.Name
	case acl.DeniedKey:
		e.ACL.Denied.Key++
		obj = string(args[pos])
	case acl.DeniedChannel:
		e.ACL.Denied.Channel++
		obj = string(args[pos])
	}
	e.aclLog(s, r, ctx, obj, u.Name)
}

// ACLAuthFailed records a failed AUTH or HELLO AUTH; the entry's object
// is the command's name as the client spelled it, as in Redis.
func (e *Env) ACLAuthFailed(s *Session, user, object string) {
	e.ACL.Denied.Auth++
	ctx := "toplevel"
	if s.tx.multi {
		ctx = "multi"
	}
	e.aclLog(s, acl.DeniedAuth, ctx, object, user)
}

func (e *Env) aclLog(s *Session, r acl.Reason, ctx, obj, user string) {
	e.ACL.Log.Add(acl.LogEntry{Reason: r.String(), Context: ctx, Object: obj, Username: user,
		Created: e.Clock.NowMs(), ClientInfo: ClientInfo(e, s)}, int(e.Cfg.Int(config.ACLLogMaxLen)))
}

// keyRoles says how the permission a key needs depends on its position.
// Commands whose keys play different roles (a source read, a
// destination written) have one key spec each in Redis; the table keeps
// one set of key flags per command, so those are classified here, once,
// when the catalog is built.
type keyRoles uint8

const (
	rolesSame     keyRoles = iota // every key needs keyNeed
	rolesSet                      // SET: written over (OW), read too with GET
	rolesCopy                     // the first key read, the others written
	rolesMove                     // the first key read and written, the others written
	rolesStore                    // the first key written, the others read
	rolesBitfield                 // read, and written when an operation sets
)

func keyRolesOf(name string) keyRoles {
	switch name {
	case "set":
		return rolesSet
	case "copy", "sort", "georadius", "georadiusbymember":
		// SORT's and GEORADIUS's STORE destination, as their getkeys
		// functions flag it (OW), after the key read.
		return rolesCopy
	case "rename", "renamenx", "smove", "lmove", "blmove", "rpoplpush", "brpoplpush":
		return rolesMove
	case "zunionstore", "zinterstore", "zdiffstore", "sunionstore", "sinterstore", "sdiffstore",
		"zrangestore", "geosearchstore", "bitop":
		return rolesStore
	case "bitfield":
		return rolesBitfield
	}
	return rolesSame
}

// keyNeedAt is the permission the i-th key of cmd needs.
func keyNeedAt(cmd *Command, args [][]byte, i, def int) int {
	const r, w, rw = acl.NeedRead, acl.NeedWrite, acl.NeedRead | acl.NeedWrite
	switch cmd.keyRoles {
	case rolesSet:
		// SET's key is written over (OW) unless GET reads it first, as
		// Redis's setGetKeys says.
		for _, a := range args[3:] {
			if len(a) == 3 && strings.EqualFold(string(a), "get") {
				return rw
			}
		}
		return w
	case rolesCopy:
		if i == 0 {
			return r
		}
		return w
	case rolesMove:
		if i == 0 {
			return rw
		}
		return w
	case rolesStore:
		if i == 0 {
			return w
		}
		return r
	case rolesBitfield:
		return bitfieldNeed(args)
	}
	return def
}

// bitfieldNeed is Redis's bitfieldGetKeys: the key is only read unless a
// SET or INCRBY operation (or something that does not parse) follows.
func bitfieldNeed(args [][]byte) int {
	const r, rw = acl.NeedRead, acl.NeedRead | acl.NeedWrite
	for i := 2; i < len(args); i++ {
		rem := len(args) - i - 1
		switch a := string(args[i]); {
		case strings.EqualFold(a, "get") && rem >= 2:
			i += 2
		case strings.EqualFold(a, "overflow") && rem >= 1:
			i++
		default:
			return rw // SET, INCRBY, or a syntax error: not read-only
		}
	}
	return r
}

// chanArgs says which arguments of a pub/sub command are channels, as
// Redis's channel key specs do: PUBLISH's, SUBSCRIBE's and PSUBSCRIBE's
// (as patterns). UNSUBSCRIBE and PUNSUBSCRIBE are never refused.
type chanArgs uint8

const (
	chanNone     chanArgs = iota
	chanFirst             // PUBLISH, SPUBLISH
	chanAll               // SUBSCRIBE, SSUBSCRIBE
	chanPatterns          // PSUBSCRIBE
)

func chanArgsOf(name string) chanArgs {
	switch name {
	case "publish", "spublish":
		return chanFirst
	case "subscribe", "ssubscribe":
		return chanAll
	case "psubscribe":
		return chanPatterns
	}
	return chanNone
}

// channelRefs lists the channels a pub/sub command names.
func channelRefs(cmd *Command, args [][]byte) []acl.ChanRef {
	switch cmd.chanArgs {
	case chanFirst:
		return []acl.ChanRef{{Pos: 1}}
	case chanAll, chanPatterns:
		out := make([]acl.ChanRef, 0, len(args)-1)
		for i := 1; i < len(args); i++ {
			out = append(out, acl.ChanRef{Pos: i, Pattern: cmd.chanArgs == chanPatterns})
		}
		return out
	}
	return nil
}

// aclRefused is the ACL step of redis.call: the script runs with its
// caller's user, and a denial is logged with context lua and raised as
// Redis's script error.
func (h *scriptHost) aclRefused(cmd *Command, args [][]byte) bool {
	e, s := h.env, h.run.caller
	u := e.UserOf(s)
	if u.Open() {
		return false
	}
	r, pos := e.aclDecide(u, cmd, args)
	if r == acl.Allowed {
		return false
	}
	e.ACLDenied(s, u, r, cmd, args, pos, "lua")
	h.refuse(cmd, "ERR "+acl.ScriptRefusal(r))
	return true
}

// Resolve finds the command args name (a subcommand when it has them),
// nil when unknown: ACL DRYRUN's lookup.
func Resolve(args [][]byte) *Command { return resolve(Lookup(args[0]), args) }

// ACLDecide is the permission check without its side effects (ACL
// DRYRUN): the reason and the argument refused.
func (e *Env) ACLDecide(u *acl.User, cmd *Command, args [][]byte) (acl.Reason, int) {
	return e.aclDecide(u, cmd, args)
}

// LoadUsers creates the users the configuration declares at startup: its
// "user" lines, or the aclfile (not both, as Redis refuses). The error
// is what Redis prints before exiting (a *config.FileError for a bad
// user line).
func (e *Env) LoadUsers() error {
	path := e.Cfg.Str(config.ACLFile)
	lines := e.Cfg.Users
	allCh := e.Cfg.Str(config.ACLPubsubDefault) == "allchannels"
	if path != "" && len(lines) > 0 {
		return errors.New("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.")
	}
	if path != "" {
		text, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("Aborting Redis startup because of ACL errors: Error loading ACLs, opening file '%s': %v", path, err)
		}
		if err := e.ACL.Load(path, string(text), allCh); err != nil {
			return errors.New("Aborting Redis startup because of ACL errors: " + err.Error())
		}
		return nil
	}
	seen := map[string]bool{}
	for _, l := range lines {
		fail := func(arg, msg string) error {
			return &config.FileError{Line: l.Line, Text: l.Text, Msg: "Error in user declaration '" + arg + "': " + msg}
		}
		name := l.Args[0]
		if seen[name] {
			return fail(name, acl.ErrDuplicate.Error())
		}
		seen[name] = true
		// As Redis: unknown commands are let through here, and the
		// argument named is the one at the failing rule's index in the
		// whole line ("user" counts), which is what redis-server prints.
		full := append([]string{"user"}, l.Args...)
		merged, err := acl.MergeSelectorArgs(l.Args[1:])
		if err != nil {
			return fail(name, err.Error())
		}
		rules := merged[:0:0]
		u := acl.NewUser(e.ACL.Cat, name, allCh)
		for j, r := range merged {
			if err := u.Apply(r, allCh); err != nil {
				if err == acl.ErrUnknown {
					continue
				}
				return fail(full[min(j, len(full)-1)], err.Error())
			}
			rules = append(rules, r)
		}
		if name == "default" {
			e.ACL.Default.Apply("reset", allCh)
		}
		if err := e.ACL.SetUser(name, rules, allCh); err != nil {
			return fail(name, err.Error())
		}
	}
	return nil
}
