package commands

import (
	"encoding/binary"
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/rdb"
	"github.com/abacusdb/abacus/internal/resp"
)

// MIGRATE (cluster.c migrateCommand): keys are sent to another server as
// DUMP payloads in RESTORE commands (preceded by AUTH and SELECT) on one
// connection, and deleted here once the target accepted them (unless
// COPY). As in Redis, the command blocks its caller while it talks to the
// target, within the timeout per network operation; Abacus also holds the
// server lock meanwhile, as Redis's single thread does. Connections are
// cached per target (migrate_conn.go), and SELECT is sent only when the
// cached connection has another DB selected.

func init() {
	engine.Register(
		&engine.Command{Name: "migrate", Specs: keySpecs["migrate"], Arity: -6, Flags: engine.FlagWrite | engine.FlagMovableKeys, First: 3, Last: 3, Step: 1, Keys: migrateKeys,
			KeyFlags: "RW access delete", Tips: "nondeterministic_output",
			ACL: "@keyspace @dangerous", Group: "generic",
			Summary:    "Atomically transfers a key from one Redis instance to another.",
			Since:      "2.6.0",
			Complexity: "This command actually executes a DUMP+DEL in the source instance, and a RESTORE in the target instance. See the pages of these commands for time complexity. Also an O(N) data transfer between the two instances is performed.",
			Handler:    cmdMigrate},
	)
}

const (
	errMigrateKeys    = "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
	errMigrateConnect = "IOERR error or timeout connecting to the client"
)

// migrateKeys: the key argument, or the keys after KEYS when it is empty.
func migrateKeys(args [][]byte) []int {
	// Redis's migrateGetKeys: the options are walked (AUTH and AUTH2 take
	// arguments that may read "keys"); with KEYS the keys follow it and
	// the key argument must be empty (else none: the command's own
	// error follows), without it the key argument is the key.
	for j := 6; j < len(args); j++ {
		a := string(args[j])
		switch {
		case strings.EqualFold(a, "keys"):
			if len(args[3]) > 0 {
				return nil
			}
			out := make([]int, 0, len(args)-j-1)
			for k := j + 1; k < len(args); k++ {
				out = append(out, k)
			}
			return out
		case strings.EqualFold(a, "auth"):
			j++
		case strings.EqualFold(a, "auth2"):
			j += 2
		}
	}
	if len(args) > 3 {
		return []int{3}
	}
	return nil
}

type migrateArgs struct {
	host, port     string
	db, timeout    int64
	copy, replace  bool
	user, password []byte
	keys           [][]byte
}

func parseMigrate(c *engine.Ctx) (*migrateArgs, bool) {
	m := &migrateArgs{host: c.Arg(1), port: c.Arg(2)}
	keys := c.Args[3:4]
	for j := 6; j < len(c.Args); j++ {
		more := len(c.Args) - j - 1
		switch {
		case c.ArgIs(j, "copy"):
			m.copy = true
		case c.ArgIs(j, "replace"):
			m.replace = true
		case c.ArgIs(j, "auth"):
			if more < 1 {
				c.Error(engine.ErrSyntax)
				return nil, false
			}
			m.user, m.password = nil, c.Args[j+1]
			redact(c, j+1)
			j++
		case c.ArgIs(j, "auth2"):
			if more < 2 {
				c.Error(engine.ErrSyntax)
				return nil, false
			}
			m.user, m.password = c.Args[j+1], c.Args[j+2]
			redact(c, j+1)
			redact(c, j+2)
			j += 2
		case c.ArgIs(j, "keys"):
			if len(c.Args[3]) != 0 {
				c.Error(errMigrateKeys)
				return nil, false
			}
			keys = c.Args[j+1:]
			j = len(c.Args)
		default:
			c.Error(engine.ErrSyntax)
			return nil, false
		}
	}
	var ok bool
	if m.timeout, ok = c.Int(5); !ok {
		return nil, false
	}
	if m.db, ok = c.Int(4); !ok {
		return nil, false
	}
	if m.timeout <= 0 {
		m.timeout = 1000
	}
	m.keys = keys
	return m, true
}

func cmdMigrate(c *engine.Ctx) {
	m, ok := parseMigrate(c)
	if !ok {
		return
	}
	// the keys that exist, with their payloads and TTLs
	var keys [][]byte
	buf := resp.Writer{}
	opt := engine.DumpOptions(c)
	// A cluster node restores with RESTORE-ASKING, which the target serves
	// while it imports the slot (as Redis's migrateCommand sends it).
	restore := "RESTORE"
	if c.Env.Cluster() != nil {
		restore = "RESTORE-ASKING"
	}
	var why []string // per key sent: why a redis-server cannot load it ("" when it can)
	for _, k := range m.keys {
		o := c.DB.LookupRead(string(k))
		if o == nil {
			continue
		}
		ttl := int64(0)
		if o.Expire != 0 {
			ttl = max(o.Expire-c.Now, 1)
		}
		p, err := rdb.Dump(o, opt)
		if err != nil {
			c.Error("ERR " + err.Error())
			return
		}
		n := 4
		if m.replace {
			n = 5
		}
		buf.Array(n)
		buf.BulkString(restore)
		buf.Bulk(k)
		buf.BulkString(strconv.FormatInt(ttl, 10))
		buf.Bulk(p)
		if m.replace {
			buf.BulkString("REPLACE")
		}
		keys = append(keys, k)
		why = append(why, abacusOnly(o, p))
	}
	if len(keys) == 0 {
		c.W.Simple("NOKEY")
		return
	}
	addr := net.JoinHostPort(m.host, m.port)
	mc := migrateCaches.Of(c.Env)
	// As Redis: a failure other than a timeout to send, or to read the
	// first reply (a cached connection the target closed), is tried once
	// more on a new connection.
	for mayRetry := true; ; mayRetry = false {
		s := mc.get(c.Env.Cfg, addr, time.Duration(m.timeout)*time.Millisecond)
		if s == nil {
			c.Error(errMigrateConnect)
			return
		}
		if !migrateOnce(c, m, s, buf.Buf, keys, why, mayRetry) {
			mc.put(addr, s)
			return
		}
		if s.conn == nil {
			return
		}
	}
}

// migrateOnce sends the RESTOREs of keys (body) on s, preceded by AUTH and
// by SELECT unless s has the DB selected, and replies to the client. It
// returns true when s is closed: then s.conn is nil if the client has its
// reply, and kept (closed) if the call may be retried.
func migrateOnce(c *engine.Ctx, m *migrateArgs, s *migrateSocket, body []byte, keys [][]byte, why []string, mayRetry bool) bool {
	timeout := time.Duration(m.timeout) * time.Millisecond
	head := resp.Writer{}
	if m.password != nil {
		if m.user != nil {
			head.Array(3)
			head.BulkString("AUTH")
			head.Bulk(m.user)
		} else {
			head.Array(2)
			head.BulkString("AUTH")
		}
		head.Bulk(m.password)
	}
	selectDB := s.lastDB != m.db
	if selectDB {
		head.Array(2)
		head.BulkString("SELECT")
		head.BulkString(strconv.FormatInt(m.db, 10))
	}
	fail := func(what string, err error, retry bool) bool {
		s.conn.Close()
		var ne net.Error
		if retry && !(errors.As(err, &ne) && ne.Timeout()) {
			return true
		}
		s.conn = nil
		c.Error("IOERR error or timeout " + what + " to target instance")
		return true
	}
	s.conn.SetWriteDeadline(time.Now().Add(timeout))
	bufs := net.Buffers{head.Buf, body}
	if _, err := bufs.WriteTo(s.conn); err != nil {
		return fail("writing", err, mayRetry)
	}
	readLine := func() (string, error) {
		s.conn.SetReadDeadline(time.Now().Add(timeout))
		line, err := s.r.ReadString('\n')
		if err != nil {
			return "", err
		}
		return strings.TrimRight(line, "\r\n"), nil
	}
	var authReply, selectReply string
	var err error
	if m.password != nil {
		if authReply, err = readLine(); err != nil {
			return fail("reading", err, mayRetry)
		}
	}
	if selectDB {
		if selectReply, err = readLine(); err != nil {
			return fail("reading", err, mayRetry)
		}
	}
	var targetErr string
	var deleted [][]byte
	socketErr := false
	for i, k := range keys {
		line, err := readLine()
		if err != nil {
			if i == 0 {
				// No reply at all: nothing was restored there nor
				// deleted here, so a new connection may try again.
				return fail("reading", err, mayRetry)
			}
			socketErr = true
			break
		}
		switch {
		case strings.HasPrefix(authReply, "-"), strings.HasPrefix(selectReply, "-"), strings.HasPrefix(line, "-"):
			if targetErr == "" {
				switch {
				case strings.HasPrefix(authReply, "-"):
					targetErr = authReply
				case strings.HasPrefix(selectReply, "-"):
					targetErr = selectReply
				default:
					targetErr = line
					if why[i] != "" {
						targetErr += " (key '" + string(k) + "' is " + why[i] + ")"
					}
				}
			}
		case !m.copy:
			if c.DB.Delete(string(k)) {
				c.Dirty(1)
				c.Notify(engine.NotifyGeneric, "del", k)
				deleted = append(deleted, k)
			}
		}
	}
	if len(deleted) > 0 {
		c.Propagate(append([][]byte{[]byte("DEL")}, deleted...)...)
	}
	switch {
	case targetErr != "":
		// The DB selected on the target is no longer known.
		s.lastDB = -1
		c.Error("ERR Target instance replied with error: " + targetErr[1:])
		if socketErr {
			s.conn.Close()
			s.conn = nil
			return true
		}
	case socketErr:
		return fail("reading", nil, false)
	default:
		s.lastDB = m.db
		c.W.OK()
	}
	return false
}

// abacusOnly says why a redis-server 7.0 target cannot restore payload p of
// o, "" when it can: a time series is a value of Abacus's own module type,
// and a hash with field TTLs needs RDB version 12 (Redis 7.4). The target
// refuses such a key's RESTORE and MIGRATE leaves the key here; the reason
// is added to the target's error so the user knows which key and why.
func abacusOnly(o *keyspace.Object, p []byte) string {
	switch {
	case o.Type == keyspace.TypeTimeSeries:
		return "a time series, a type of Abacus that Redis cannot load; it stays here"
	case o.Type == keyspace.TypeHash && len(p) >= 10 && binary.LittleEndian.Uint16(p[len(p)-10:]) > rdb.Version:
		return "a hash with field TTLs, which Redis 7.0 cannot load; it stays here"
	}
	return ""
}
