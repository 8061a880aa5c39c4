package commands

import (
	"bufio"
	"encoding/binary"
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
// server lock meanwhile, as Redis's single thread does. Abacus opens a
// connection per MIGRATE (Redis caches them for 10 s), so SELECT is always
// sent and migrate_cached_sockets stays 0.

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
			j++
		case c.ArgIs(j, "auth2"):
			if more < 2 {
				c.Error(engine.ErrSyntax)
				return nil, false
			}
			m.user, m.password = c.Args[j+1], c.Args[j+2]
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
	if m.password != nil {
		if m.user != nil {
			buf.Array(3)
			buf.BulkString("AUTH")
			buf.Bulk(m.user)
		} else {
			buf.Array(2)
			buf.BulkString("AUTH")
		}
		buf.Bulk(m.password)
	}
	buf.Array(2)
	buf.BulkString("SELECT")
	buf.BulkString(strconv.FormatInt(m.db, 10))
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
	timeout := time.Duration(m.timeout) * time.Millisecond
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(m.host, m.port), timeout)
	if err != nil {
		c.Error(errMigrateConnect)
		return
	}
	defer conn.Close()
	conn.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := conn.Write(buf.Buf); err != nil {
		c.Error("IOERR error or timeout writing to target instance")
		return
	}
	r := bufio.NewReader(conn)
	readLine := func() (string, bool) {
		conn.SetReadDeadline(time.Now().Add(timeout))
		line, err := r.ReadString('\n')
		if err != nil {
			return "", false
		}
		return strings.TrimRight(line, "\r\n"), true
	}
	var authReply, selectReply string
	if m.password != nil {
		if authReply, ok = readLine(); !ok {
			c.Error("IOERR error or timeout reading to target instance")
			return
		}
	}
	if selectReply, ok = readLine(); !ok {
		c.Error("IOERR error or timeout reading to target instance")
		return
	}
	var targetErr string
	var deleted [][]byte
	socketErr := false
	for i, k := range keys {
		line, ok := readLine()
		if !ok {
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
		c.Error("ERR Target instance replied with error: " + targetErr[1:])
	case socketErr:
		c.Error("IOERR error or timeout reading to target instance")
	default:
		c.W.OK()
	}
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
