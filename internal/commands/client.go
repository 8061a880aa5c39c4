package commands

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/num"
)

// The CLIENT family (CLIENT UNBLOCK lives with the blocking commands, in
// blocking.go; TRACKING, CACHING, GETREDIR and TRACKINGINFO with
// client-side caching, in tracking.go).

const (
	clientAdmin = engine.FlagAdmin | engine.FlagNoScript | engine.FlagLoading | engine.FlagStale
	clientPlain = engine.FlagNoScript | engine.FlagLoading | engine.FlagStale
)

func init() {
	sub := func(arity int, flags engine.Flag, summary, since, complexity string, h func(*engine.Ctx)) *engine.Command {
		return &engine.Command{Arity: arity, Flags: flags, ACL: "@connection", Summary: summary, Since: since, Complexity: complexity, Handler: h}
	}
	engine.Register(&engine.Command{Name: "client", Arity: -2, Group: "connection",
		Summary: "A container for client connection commands.", Since: "2.4.0", Complexity: "Depends on subcommand.",
		Subs: map[string]*engine.Command{
			"id":           sub(2, clientPlain, "Returns the unique client ID of the connection.", "5.0.0", "O(1)", cmdClientID),
			"info":         withTips(sub(2, clientPlain, "Returns information about the connection.", "6.2.0", "O(1)", cmdClientInfo), "nondeterministic_output"),
			"list":         withTips(sub(-2, clientAdmin, "Lists open connections.", "2.4.0", "O(N) where N is the number of client connections", cmdClientList), "nondeterministic_output"),
			"kill":         sub(-3, clientAdmin, "Terminates open connections.", "2.4.0", "O(N) where N is the number of client connections", cmdClientKill),
			"setname":      sub(3, clientPlain, "Sets the connection name.", "2.6.9", "O(1)", cmdClientSetName),
			"getname":      sub(2, clientPlain, "Returns the name of the connection.", "2.6.9", "O(1)", cmdClientGetName),
			"setinfo":      sub(4, clientPlain, "Sets information specific to the client or connection.", "7.2.0", "O(1)", cmdClientSetInfo),
			"no-evict":     sub(3, clientAdmin, "Sets the client eviction mode of the connection.", "7.0.0", "O(1)", cmdClientNoEvict),
			"no-touch":     sub(3, clientPlain, "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.", "7.2.0", "O(1)", cmdClientNoTouch),
			"pause":        sub(-3, clientAdmin, "Suspends commands processing.", "3.0.0", "O(1)", cmdClientPause),
			"unpause":      sub(2, clientAdmin, "Resumes processing commands from paused clients.", "6.2.0", "O(N) Where N is the number of paused clients", cmdClientUnpause),
			"reply":        sub(3, clientPlain, "Instructs the server whether to reply to commands.", "3.2.0", "O(1)", cmdClientReply),
			"help":         sub(2, engine.FlagLoading|engine.FlagStale, "Returns helpful text about the different subcommands.", "5.0.0", "O(1)", cmdClientHelp),
			"tracking":     sub(-3, clientPlain, "Controls server-assisted client-side caching for the connection.", "6.0.0", "O(1). Some options may introduce additional complexity.", cmdClientTracking),
			"caching":      sub(3, clientPlain, "Instructs the server whether to track the keys in the next request.", "6.0.0", "O(1)", cmdClientCaching),
			"getredir":     sub(2, clientPlain, "Returns the client ID to which the connection's tracking notifications are redirected.", "6.0.0", "O(1)", cmdClientGetRedir),
			"trackinginfo": sub(2, clientPlain, "Returns information about server-assisted client-side caching for the connection.", "6.2.0", "O(1)", cmdClientTrackingInfo),
			"unblock":      sub(-3, clientAdmin, "Unblock a client blocked in a blocking command from a different connection", "5.0.0", "O(log N) where N is the number of client connections", engine.ClientUnblock), // blocking.go
		}})
}

func cmdClientID(c *engine.Ctx) { c.W.Int(c.S.ID) }

// clientLine is the CLIENT LIST / CLIENT INFO line of s, in Redis 7's
// field order. Fields of features Abacus does not have yet (pub/sub
// counts, MULTI, tracking redirection) show their idle values.
func clientLine(c *engine.Ctx, b []byte, s *engine.Session) []byte {
	nowS := c.Now / 1000
	argvMem := 0
	if s == c.S {
		for _, a := range c.Args {
			argvMem += len(a)
		}
	}
	qbuf, omem := s.QueryBuf.Load(), s.OutBuf.Load()
	num := func(key string, v int64) {
		b = append(b, key...)
		b = strconv.AppendInt(b, v, 10)
	}
	str := func(key, v string) {
		b = append(b, key...)
		b = append(b, v...)
	}
	num("id=", s.ID)
	str(" addr=", s.Addr)
	str(" laddr=", s.LAddr)
	num(" fd=", int64(s.FD))
	str(" name=", s.Name)
	num(" age=", nowS-s.Created/1000)
	num(" idle=", nowS-s.LastIO.Load()/1000)
	b = append(b, " flags="...)
	mark := len(b)
	if s.Monitor {
		b = append(b, 'O')
	}
	b = append(b, s.Flags...) // letters other families set (P...)
	inMulti, dirty, queued, multiMem := engine.TxClientInfo(s)
	if inMulti {
		b = append(b, 'x')
	}
	if s.Blocked {
		b = append(b, 'b')
	}
	tracking, topts, redir, broken, _ := s.Tracking()
	if tracking {
		b = append(b, 't')
	}
	if broken {
		b = append(b, 'R')
	}
	if topts&engine.TrackBcast != 0 {
		b = append(b, 'B')
	}
	if dirty {
		b = append(b, 'd')
	}
	if s.CloseAfterReply || s.Killed.Load() {
		b = append(b, 'c')
	}
	if s.ClusterReadOnly() {
		b = append(b, 'r')
	}
	if s.NoEvict {
		b = append(b, 'e')
	}
	if s.NoTouch {
		b = append(b, 'T')
	}
	if len(b) == mark {
		b = append(b, 'N')
	}
	num(" db=", int64(s.DB))
	num(" sub=", int64(s.SubCount(engine.SubChannel)))
	num(" psub=", int64(s.SubCount(engine.SubPattern)))
	num(" ssub=", int64(s.SubCount(engine.SubShard)))
	num(" multi=", queued)
	num(" qbuf=", qbuf)
	str(" qbuf-free=0", "")
	num(" argv-mem=", int64(argvMem))
	num(" multi-mem=", multiMem)
	num(" obl=", omem)
	str(" oll=0", "")
	num(" omem=", omem)
	num(" tot-mem=", qbuf+omem+int64(argvMem)+multiMem)
	if omem > 0 {
		str(" events=rw", "")
	} else {
		str(" events=r", "")
	}
	cmd := s.LastCmd
	if cmd == "" {
		cmd = "NULL"
	}
	str(" cmd=", cmd)
	str(" user=", s.User)
	if !tracking {
		redir = -1
	}
	num(" redir=", redir)
	num(" resp=", int64(s.Proto))
	str(" lib-name=", s.LibName)
	str(" lib-ver=", s.LibVer)
	return append(b, '\n')
}

func cmdClientInfo(c *engine.Ctx) {
	c.W.Verbatim("txt", string(clientLine(c, nil, c.S)))
}

// clientType classifies a session as CLIENT LIST TYPE and KILL TYPE see
// it, as Redis's getClientType: a replica (flag S), a primary's link
// (flag M), a subscriber, else normal (monitors are normal clients for
// this purpose).
func clientType(s *engine.Session) string {
	switch {
	case s.Monitor:
		return "normal"
	case strings.Contains(s.Flags, "S"):
		return "replica"
	case strings.Contains(s.Flags, "M"):
		return "master"
	case s.Subscribed():
		return "pubsub"
	}
	return "normal"
}

// parseClientType maps a TYPE argument to a type name, or "".
func parseClientType(b []byte) string {
	switch {
	case ascii.EqualFold(b, "normal"):
		return "normal"
	case ascii.EqualFold(b, "slave"), ascii.EqualFold(b, "replica"):
		return "replica"
	case ascii.EqualFold(b, "pubsub"):
		return "pubsub"
	case ascii.EqualFold(b, "master"):
		return "master"
	}
	return ""
}

// sessionsByID returns the connected clients, oldest first as Redis lists
// them.
func sessionsByID(c *engine.Ctx) []*engine.Session {
	if c.Env.Host == nil {
		return []*engine.Session{c.S}
	}
	all := c.Env.Host.Clients()
	if l := c.Env.PrimaryLink(); l != nil && !l.Killed.Load() {
		all = append(all, l)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all
}

// CLIENT LIST [TYPE normal|master|replica|pubsub] | [ID id [id ...]]
func cmdClientList(c *engine.Ctx) {
	var out []byte
	switch {
	case len(c.Args) == 2:
		for _, s := range sessionsByID(c) {
			out = clientLine(c, out, s)
		}
	case len(c.Args) == 4 && ascii.EqualFold(c.Args[2], "type"):
		t := parseClientType(c.Args[3])
		if t == "" {
			c.Errorf("ERR Unknown client type '%s'", ascii.CStr(c.Args[3]))
			return
		}
		for _, s := range sessionsByID(c) {
			if clientType(s) == t {
				out = clientLine(c, out, s)
			}
		}
	case len(c.Args) > 3 && ascii.EqualFold(c.Args[2], "id"):
		all := sessionsByID(c)
		byID := make(map[int64]*engine.Session, len(all))
		for _, s := range all {
			byID[s.ID] = s
		}
		for _, a := range c.Args[3:] {
			id, ok := num.ParseInt(a)
			if !ok {
				c.Error("ERR Invalid client ID")
				return
			}
			if s := byID[id]; s != nil {
				out = clientLine(c, out, s)
			}
		}
	default:
		c.Error(engine.ErrSyntax)
		return
	}
	c.W.Verbatim("txt", string(out))
}

// killFilter is the conjunction of CLIENT KILL's filters.
type killFilter struct {
	id, maxAge       int64
	typ, addr, laddr string
	user             string
	hasUser          bool
	skipMe           bool
}

func (f *killFilter) match(c *engine.Ctx, s *engine.Session) bool {
	switch {
	case f.id != 0 && s.ID != f.id,
		f.typ != "" && clientType(s) != f.typ,
		f.addr != "" && s.Addr != f.addr,
		f.laddr != "" && s.LAddr != f.laddr,
		f.hasUser && s.User != f.user,
		f.skipMe && s == c.S,
		f.maxAge != 0 && c.Now/1000-s.Created/1000 <= f.maxAge:
		return false
	}
	return true
}

// CLIENT KILL ip:port | CLIENT KILL <filter> <value> [<filter> <value> ...]
// Filters: ID, MAXAGE, TYPE, ADDR, LADDR, USER, SKIPME yes|no.
func cmdClientKill(c *engine.Ctx) {
	f := killFilter{skipMe: true}
	oldForm := len(c.Args) == 3
	if oldForm {
		// The old form may kill the calling client itself.
		f.addr, f.skipMe = string(c.Args[2]), false
	} else {
		for i := 2; i < len(c.Args); i += 2 {
			opt := c.Args[i]
			if i+1 >= len(c.Args) {
				c.Error(engine.ErrSyntax)
				return
			}
			val := c.Args[i+1]
			switch {
			case ascii.EqualFold(opt, "id"):
				id, ok := num.ParseInt(val)
				if !ok || id <= 0 {
					c.Error("ERR client-id should be greater than 0")
					return
				}
				f.id = id
			case ascii.EqualFold(opt, "maxage"):
				age, ok := num.ParseInt(val)
				if !ok {
					c.Error("ERR maxage is not an integer or out of range")
					return
				}
				if age <= 0 {
					c.Error("ERR maxage should be greater than 0")
					return
				}
				f.maxAge = age
			case ascii.EqualFold(opt, "type"):
				if f.typ = parseClientType(val); f.typ == "" {
					c.Errorf("ERR Unknown client type '%s'", ascii.CStr(val))
					return
				}
			case ascii.EqualFold(opt, "addr"):
				f.addr = string(val)
			case ascii.EqualFold(opt, "laddr"):
				f.laddr = string(val)
			case ascii.EqualFold(opt, "user"):
				// Only the default user exists until ACLs do.
				if string(val) != "default" {
					c.Errorf("ERR No such user '%s'", ascii.CStr(val))
					return
				}
				f.user, f.hasUser = string(val), true
			case ascii.EqualFold(opt, "skipme"):
				switch {
				case ascii.EqualFold(val, "yes"):
					f.skipMe = true
				case ascii.EqualFold(val, "no"):
					f.skipMe = false
				default:
					c.Error(engine.ErrSyntax)
					return
				}
			default:
				c.Error(engine.ErrSyntax)
				return
			}
		}
	}
	killed, self := int64(0), false
	for _, s := range sessionsByID(c) {
		if !f.match(c, s) {
			continue
		}
		killed++
		if s == c.S {
			self = true // closed once the reply is written
		} else {
			c.Env.KillSession(s)
		}
	}
	if oldForm {
		if killed == 0 {
			c.Error("ERR No such client")
			return
		}
		c.W.OK()
	} else {
		c.W.Int(killed)
	}
	if self {
		c.S.CloseAfterReply = true
	}
}

func cmdClientSetName(c *engine.Ctx) {
	name := c.Args[2]
	if !validName(name) {
		c.Error(errBadName)
		return
	}
	c.S.Name = string(name)
	c.W.OK()
}

func cmdClientGetName(c *engine.Ctx) {
	if c.S.Name == "" {
		c.W.Null()
		return
	}
	c.W.BulkString(c.S.Name)
}

// CLIENT SETINFO LIB-NAME <name> | LIB-VER <version>
func cmdClientSetInfo(c *engine.Ctx) {
	attr, val := c.Args[2], c.Args[3]
	var dst *string
	switch {
	case ascii.EqualFold(attr, "lib-name"):
		dst = &c.S.LibName
	case ascii.EqualFold(attr, "lib-ver"):
		dst = &c.S.LibVer
	default:
		c.Errorf("ERR Unrecognized option '%s'", ascii.CStr(attr))
		return
	}
	if !validName(val) {
		c.Errorf("ERR %s cannot contain spaces, newlines or special characters.", ascii.CStr(attr))
		return
	}
	*dst = string(val)
	c.W.OK()
}

// onOff parses ON|OFF (any case), replying with a syntax error otherwise.
func onOff(c *engine.Ctx, i int) (on, ok bool) {
	switch {
	case ascii.EqualFold(c.Args[i], "on"):
		return true, true
	case ascii.EqualFold(c.Args[i], "off"):
		return false, true
	}
	c.Error(engine.ErrSyntax)
	return false, false
}

func cmdClientNoEvict(c *engine.Ctx) {
	if on, ok := onOff(c, 2); ok {
		c.S.NoEvict = on
		c.W.OK()
	}
}

func cmdClientNoTouch(c *engine.Ctx) {
	if on, ok := onOff(c, 2); ok {
		c.S.NoTouch = on
		c.W.OK()
	}
}

// CLIENT PAUSE <timeout-ms> [WRITE|ALL]
func cmdClientPause(c *engine.Ctx) {
	if len(c.Args) > 4 {
		c.Errorf("ERR unknown subcommand or wrong number of arguments for '%s'. Try CLIENT HELP.", ascii.Trunc(ascii.CStr(c.Args[1]), 128))
		return
	}
	writeOnly := false
	if len(c.Args) == 4 {
		switch {
		case ascii.EqualFold(c.Args[3], "write"):
			writeOnly = true
		case ascii.EqualFold(c.Args[3], "all"):
		default:
			c.Error("ERR CLIENT PAUSE mode must be WRITE or ALL")
			return
		}
	}
	ms, ok := num.ParseInt(c.Args[2])
	if !ok {
		c.Error("ERR timeout is not an integer or out of range")
		return
	}
	if ms < 0 {
		c.Error(engine.ErrTimeoutNeg)
		return
	}
	if ms > math.MaxInt64-c.Now {
		c.Error("ERR timeout is out of range")
		return
	}
	if ms > 0 {
		c.Env.Host.Pause(engine.PauseByClient, c.Now+ms, writeOnly)
	}
	c.W.OK()
}

func cmdClientUnpause(c *engine.Ctx) {
	c.Env.Host.Unpause(engine.PauseByClient)
	c.W.OK()
}

// CLIENT REPLY ON|OFF|SKIP. OFF and SKIP have no reply of their own.
func cmdClientReply(c *engine.Ctx) {
	switch {
	case ascii.EqualFold(c.Args[2], "on"):
		c.S.Reply = engine.ReplyOn
		c.W.OK()
	case ascii.EqualFold(c.Args[2], "off"):
		c.S.Reply = engine.ReplyOff
	case ascii.EqualFold(c.Args[2], "skip"):
		if c.S.Reply != engine.ReplyOff {
			c.S.Reply = engine.ReplySkip
		}
	default:
		c.Error(engine.ErrSyntax)
	}
}

// clientHelp is redis-server 7.0's CLIENT HELP with the lines of the
// later subcommands and KILL filters Abacus has (SETINFO, NO-TOUCH, KILL
// ID and MAXAGE) as Redis 7.4 words them.
var clientHelp = []string{
	"CACHING (YES|NO)",
	"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
	"GETREDIR",
	"    Return the client ID we are redirecting to when tracking is enabled.",
	"GETNAME",
	"    Return the name of the current connection.",
	"ID",
	"    Return the ID of the current connection.",
	"INFO",
	"    Return information about the current client connection.",
	"KILL <ip:port>",
	"    Kill connection made from <ip:port>.",
	"KILL <option> <value> [<option> <value> [...]]",
	"    Kill connections. Options are:",
	"    * ADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made from the specified address",
	"    * LADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made to specified local address",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Kill connections by type.",
	"    * USER <username>",
	"      Kill connections authenticated by <username>.",
	"    * SKIPME (YES|NO)",
	"      Skip killing current connection (default: yes).",
	"    * ID <client-id>",
	"      Kill connections by client id.",
	"    * MAXAGE <maxage>",
	"      Kill connections older than the specified age.",
	"LIST [options ...]",
	"    Return information about client connections. Options:",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Return clients of specified type.",
	"UNPAUSE",
	"    Stop the current client pause, resuming traffic.",
	"PAUSE <timeout> [WRITE|ALL]",
	"    Suspend all, or just write, clients for <timeout> milliseconds.",
	"REPLY (ON|OFF|SKIP)",
	"    Control the replies sent to the current connection.",
	"SETNAME <name>",
	"    Assign the name <name> to the current connection.",
	"SETINFO <option> <value>",
	"    Set client meta attr. Options are:",
	"    * LIB-NAME: the client lib name.",
	"    * LIB-VER: the client lib version.",
	"UNBLOCK <clientid> [TIMEOUT|ERROR]",
	"    Unblock the specified blocked client.",
	"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
	"         [OPTIN] [OPTOUT] [NOLOOP]",
	"    Control server assisted client side caching.",
	"TRACKINGINFO",
	"    Report tracking status for the current connection.",
	"NO-EVICT (ON|OFF)",
	"    Protect current client connection from eviction.",
	"NO-TOUCH (ON|OFF)",
	"    Will not touch LRU/LFU stats when this mode is on.",
}

func cmdClientHelp(c *engine.Ctx) { c.ReplyHelp("CLIENT", clientHelp...) }
