package commands

import (
	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/num"
)

// RedisVersion is the Redis version Abacus answers as (HELLO, INFO).
const RedisVersion = "7.4.0"

// Error texts of the connection family.
const (
	errNoProto      = "NOPROTO unsupported protocol version"
	errProtoNotInt  = "ERR Protocol version is not an integer or out of range"
	errHelloNoAuth  = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
	errBadName      = "ERR Client names cannot contain spaces, newlines or special characters."
	redactedArgText = "(redacted)"
)

var redactedArg = []byte(redactedArgText)

const connFlags = engine.FlagNoScript | engine.FlagLoading | engine.FlagStale | engine.FlagFast | engine.FlagNoAuth | engine.FlagAllowBusy

func init() {
	engine.Register(
		&engine.Command{Name: "ping", Arity: -1, Flags: engine.FlagFast, Tips: "request_policy:all_shards response_policy:all_succeeded", ACL: "@connection", Group: "connection",
			Summary: "Returns the server's liveliness response.", Since: "1.0.0", Complexity: "O(1)", Handler: cmdPing},
		&engine.Command{Name: "echo", Arity: 2, Flags: engine.FlagLoading | engine.FlagStale | engine.FlagFast, ACL: "@connection", Group: "connection",
			Summary: "Returns the given string.", Since: "1.0.0", Complexity: "O(1)", Handler: cmdEcho},
		&engine.Command{Name: "quit", Arity: -1, Flags: connFlags, ACL: "@connection", Group: "connection",
			Summary: "Closes the connection.", Since: "1.0.0", Complexity: "O(1)", Handler: cmdQuit},
		&engine.Command{Name: "select", Arity: 2, Flags: engine.FlagLoading | engine.FlagStale | engine.FlagFast, ACL: "@connection", Group: "connection",
			Summary: "Changes the selected database.", Since: "1.0.0", Complexity: "O(1)", Handler: cmdSelect},
		&engine.Command{Name: "auth", Arity: -2, Flags: connFlags, ACL: "@connection", Group: "connection",
			Summary: "Authenticates the connection.", Since: "1.0.0", Complexity: "O(N) where N is the number of passwords defined for the user", Handler: cmdAuth},
		&engine.Command{Name: "hello", Arity: -1, Flags: connFlags, ACL: "@connection", Group: "connection",
			Summary: "Handshakes with the Redis server.", Since: "6.0.0", Complexity: "O(1)", Handler: cmdHello},
		&engine.Command{Name: "reset", Arity: 1, Flags: connFlags, ACL: "@connection", Group: "connection",
			Summary: "Resets the connection.", Since: "6.2.0", Complexity: "O(1)", Handler: cmdReset},
	)
}

func cmdPing(c *engine.Ctx) {
	if len(c.Args) > 2 {
		c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
		return
	}
	if c.S.Subscribed() && c.S.Proto == 2 {
		// The connection carries messages: PING answers as one of them.
		c.W.Array(2)
		c.W.BulkString("pong")
		if len(c.Args) == 2 {
			c.W.Bulk(c.Args[1])
		} else {
			c.W.BulkString("")
		}
		return
	}
	if len(c.Args) == 2 {
		c.W.Bulk(c.Args[1])
		return
	}
	c.W.Simple("PONG")
}

func cmdEcho(c *engine.Ctx) { c.W.Bulk(c.Args[1]) }

func cmdQuit(c *engine.Ctx) {
	c.W.OK()
	c.S.CloseAfterReply = true
}

func cmdSelect(c *engine.Ctx) {
	id, ok := num.ParseInt(c.Args[1])
	if !ok {
		c.Error(engine.ErrNotInt)
		return
	}
	if id != 0 && c.Env.Cluster() != nil {
		c.Error("ERR SELECT is not allowed in cluster mode")
		return
	}
	if id < 0 || id >= int64(len(c.Env.KS.DBs)) {
		c.Error(engine.ErrDBIndex)
		return
	}
	c.S.DB = int(id)
	c.DB = c.Env.KS.DBs[id]
	c.W.OK()
}

// redact replaces argument i by "(redacted)" for what looks at the
// arguments after the handler: MONITOR and the slow log.
func redact(c *engine.Ctx, i int) {
	if i < len(c.Args) {
		c.Args[i] = redactedArg
	}
}

// authenticate logs the session in as user when pass is one of its
// passwords (or it has nopass) and it is on; passwords are compared
// through their SHA-256 digests in constant time (acl.User.CheckPassword).
// A failure is counted and logged in ACL LOG, as Redis does.
func authenticate(c *engine.Ctx, user, pass []byte) bool {
	u := c.Env.ACL.User(string(user))
	if u == nil || !u.CheckPassword(pass) {
		c.Env.ACLAuthFailed(c.S, string(user), string(c.Args[0]))
		return false
	}
	c.S.Authed = true
	c.S.User = u.Name
	c.S.ACLUser = u
	if u == c.Env.ACL.Default {
		c.S.ACLUser = nil
	}
	return true
}

// AUTH <password> | AUTH <username> <password>
func cmdAuth(c *engine.Ctx) {
	if len(c.Args) > 3 {
		c.Error(engine.ErrSyntax)
		return
	}
	user, pass := []byte("default"), c.Args[1]
	if len(c.Args) == 3 {
		user, pass = c.Args[1], c.Args[2]
	}
	// redact replaces the arguments in c.Args, not the slices held here.
	redact(c, 1)
	redact(c, 2)
	// The one-argument form authenticates the default user, and makes no
	// sense when it has no password.
	if len(c.Args) == 2 && !c.Env.AuthRequired() {
		c.Error(engine.ErrAuthNoPass)
		return
	}
	if !authenticate(c, user, pass) {
		c.Error(engine.ErrWrongPass)
		return
	}
	c.W.OK()
}

// validName reports whether a client name (or library name or version) is
// acceptable: printable ASCII without spaces. Empty is allowed.
func validName(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

// HELLO [protover [AUTH username password] [SETNAME clientname]]
//
// As in Redis 7.0 the options take effect in the order given, each as it
// is read: AUTH authenticates (or fails with WRONGPASS), SETNAME names the
// connection (or fails), a bad option fails; only then is a client still
// not authenticated refused with NOAUTH.
func cmdHello(c *engine.Ctx) {
	ver := int64(0)
	next := 1
	if len(c.Args) >= 2 {
		v, ok := num.ParseInt(c.Args[1])
		if !ok {
			c.Error(errProtoNotInt)
			return
		}
		if v < 2 || v > 3 {
			c.Error(errNoProto)
			return
		}
		ver, next = v, 2
	}
	for j := next; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		switch {
		case ascii.EqualFold(c.Args[j], "auth") && more >= 2:
			user, pass := c.Args[j+1], c.Args[j+2]
			redact(c, j+1)
			redact(c, j+2)
			if !authenticate(c, user, pass) {
				c.Error(engine.ErrWrongPass)
				return
			}
			j += 2
		case ascii.EqualFold(c.Args[j], "setname") && more >= 1:
			if !validName(c.Args[j+1]) {
				c.Error(errBadName)
				return
			}
			c.S.Name = string(c.Args[j+1])
			j++
		default:
			c.Errorf("ERR Syntax error in HELLO option '%s'", ascii.CStr(c.Args[j]))
			return
		}
	}
	if !c.S.Authed && c.Env.AuthRequired() {
		c.Error(errHelloNoAuth)
		return
	}
	if ver != 0 {
		c.S.Proto = int(ver)
		c.W.Proto = int(ver)
	}
	c.W.Map(7)
	c.W.BulkString("server")
	c.W.BulkString("redis")
	c.W.BulkString("version")
	c.W.BulkString(RedisVersion)
	c.W.BulkString("proto")
	c.W.Int(int64(c.S.Proto))
	c.W.BulkString("id")
	c.W.Int(c.S.ID)
	c.W.BulkString("mode")
	c.W.BulkString("standalone")
	c.W.BulkString("role")
	c.W.BulkString("master")
	c.W.BulkString("modules")
	c.W.Array(0)
}

// RESET: back to a fresh connection's state. The library name and version
// stay, as in Redis.
func cmdReset(c *engine.Ctx) {
	c.Env.ResetSession(c.S)
	c.S.DB = 0
	c.DB = c.Env.KS.DBs[0]
	c.S.Proto = 2
	c.W.Proto = 2
	c.S.Name = ""
	c.S.NoEvict = false
	c.S.NoTouch = false
	// A reply already marked to be skipped (CLIENT REPLY SKIP just before)
	// stays skipped, as in Redis.
	if c.S.Reply != engine.ReplySkipNext {
		c.S.Reply = engine.ReplyOn
	}
	c.S.Authed = !c.Env.AuthRequired()
	c.S.User = "default"
	c.S.ACLUser = nil
	c.W.Simple("RESET")
}
