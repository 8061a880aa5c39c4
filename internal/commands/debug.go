package commands

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
)

// DEBUG: the subset of Redis's test helpers that client libraries and test
// suites use. Like Redis 7, it is refused unless enable-debug-command
// allows it.

func init() {
	engine.Register(&engine.Command{Name: "debug", Arity: -2, Flags: engine.FlagAdmin | engine.FlagNoScript | engine.FlagLoading | engine.FlagStale, Group: "server",
		Summary: "A container for debugging commands.", Since: "1.0.0", Complexity: "Depends on subcommand.",
		Handler: cmdDebug})
}

// ErrDebugNotAllowed is DEBUG's refusal when enable-debug-command does not
// allow it.
const ErrDebugNotAllowed = `ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.`

type debugSub struct {
	argc int // exact argument count including DEBUG and the subcommand; < 0: at least -argc
	run  func(*engine.Ctx)
}

var debugSubs map[string]debugSub

func init() {
	debugSubs = map[string]debugSub{
		"help":                       {2, cmdDebugHelp},
		"sleep":                      {3, cmdDebugSleep},
		"set-active-expire":          {3, cmdDebugSetActiveExpire},
		"object":                     {3, cmdDebugObject},
		"log":                        {3, cmdDebugLog},
		"error":                      {3, func(c *engine.Ctx) { c.Error(c.Arg(2)) }},
		"protocol":                   {3, cmdDebugProtocol},
		"change-repl-id":             {2, cmdDebugChangeReplID},
		"reload":                     {-2, cmdDebugReload}, // persistence.go
		"populate":                   {-3, cmdDebugPopulate},
		"digest":                     {2, cmdDebugDigest},
		"digest-value":               {-2, cmdDebugDigestValue},
		"loadaof":                    {2, cmdDebugLoadAOF},
		"quicklist-packed-threshold": {3, cmdDebugQuicklistPackedThreshold},
		"pause-cron": {3, func(c *engine.Ctx) {
			c.Env.SetCronPaused(atoi(c.Arg(2)) != 0)
			c.W.OK()
		}},
		"set-disable-deny-scripts": {3, func(c *engine.Ctx) {
			c.Env.SetDenyScripts(atoi(c.Arg(2)) == 0)
			c.W.OK()
		}},
	}
}

func cmdDebug(c *engine.Ctx) {
	if !c.Env.Cfg.Allowed(config.EnableDebugCommand, IsLocal(c.S)) {
		c.Error(ErrDebugNotAllowed)
		return
	}
	sub, ok := debugSubs[ascii.Lower(c.Args[1])]
	if !ok || (sub.argc > 0 && len(c.Args) != sub.argc) || (sub.argc < 0 && len(c.Args) < -sub.argc) {
		c.Errorf("ERR unknown subcommand or wrong number of arguments for '%.128s'. Try DEBUG HELP.", c.Args[1])
		return
	}
	sub.run(c)
}

// cmdDebugHelp lists the subcommands Abacus has, with Redis 7.0's text
// and in its order.
func cmdDebugHelp(c *engine.Ctx) {
	c.ReplyHelp("DEBUG",
		"CHANGE-REPL-ID",
		"    Change the replication IDs of the instance.",
		"    Dangerous: should be used only for testing the replication subsystem.",
		"DIGEST",
		"    Output a hex signature representing the current DB content.",
		"DIGEST-VALUE <key> [<key> ...]",
		"    Output a hex signature of the values of all the specified keys.",
		"ERROR <string>",
		"    Return a Redis protocol error with <string> as message. Useful for clients",
		"    unit tests to simulate Redis errors.",
		"LOG <message>",
		"    Write <message> to the server log.",
		"LOADAOF",
		"    Flush the AOF buffers on disk and reload the AOF in memory.",
		"OBJECT <key>",
		"    Show low level info about `key` and associated value.",
		"POPULATE <count> [<prefix>] [<size>]",
		"    Create <count> string keys named key:<num>. If <prefix> is specified then",
		"    it is used instead of the 'key' prefix. These are not propagated to",
		"    replicas. Cluster slots are not respected so keys not belonging to the",
		"    current node can be created in cluster mode.",
		"PROTOCOL <type>",
		"    Reply with a test value of the specified type. <type> can be: string,",
		"    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
		"    true, false.",
		"RELOAD [option ...]",
		"    Save the RDB on disk and reload it back to memory. Valid <option> values:",
		"    * MERGE: conflicting keys will be loaded from RDB.",
		"    * NOFLUSH: the existing database will not be removed before load, but",
		"      conflicting keys will generate an exception and kill the server.",
		"    * NOSAVE: the database will be loaded from an existing RDB file.",
		"    Examples:",
		"    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
		"      the database.",
		"    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
		"      existing RDB file.",
		"    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
		"      file to the database.",
		"SET-ACTIVE-EXPIRE <0|1>",
		"    Setting it to 0 disables expiring keys in background when they are not",
		"    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
		"    default.",
		"QUICKLIST-PACKED-THRESHOLD <size>",
		"    Sets the threshold for elements to be inserted as plain vs packed nodes",
		"    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
		"SLEEP <seconds>",
		"    Stop the server for <seconds>. Decimals allowed.",
		"PAUSE-CRON <0|1>",
		"    Stop periodic cron job processing.",
	)
}

// atof and atoi read a leading number the way C's do: what does not parse
// is 0.
func atof(s string) float64 {
	for n := len(s); n > 0; n-- {
		if f, err := strconv.ParseFloat(s[:n], 64); err == nil {
			return f
		}
	}
	return 0
}

func atoi(s string) int64 {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, _ := strconv.ParseInt(s[:i], 10, 64)
	return n
}

// cmdDebugSleep blocks the whole server, as Redis's does: it holds the
// server lock while it sleeps.
func cmdDebugSleep(c *engine.Ctx) {
	if d := time.Duration(atof(c.Arg(2)) * float64(time.Second)); d > 0 {
		time.Sleep(d)
	}
	c.W.OK()
}

func cmdDebugSetActiveExpire(c *engine.Ctx) {
	c.Env.SetActiveExpire(atoi(c.Arg(2)) != 0)
	c.W.OK()
}

func cmdDebugLog(c *engine.Ctx) {
	c.Env.Log.Warn("DEBUG LOG: " + c.Arg(2))
	c.W.OK()
}

func cmdDebugChangeReplID(c *engine.Ctx) {
	c.Env.Stats.Info.NewReplID()
	c.W.OK()
}

func cmdDebugObject(c *engine.Ctx) {
	o := c.DB.Peek(c.Key(2))
	if o == nil {
		c.Error(engine.ErrNoKey)
		return
	}
	refcount := 1
	if o.Type == keyspace.TypeString && o.Enc == keyspace.EncInt && o.Int() >= 0 && o.Int() < sharedIntegers && sharesIntegers(c) {
		refcount = sharedRefcount
	}
	idle := c.Env.KS.IdleMs(o) / 1000
	c.W.Simple(fmt.Sprintf("Value at:%p refcount:%d encoding:%s serializedlength:%d lru:%d lru_seconds_idle:%d",
		o, refcount, o.Encoding(), serializedLength(o), o.LRU&(1<<24-1), idle))
}

// serializedLength is the size of a string in an RDB file without
// compression (DEBUG OBJECT's serializedlength; Redis compresses strings
// longer than 20 bytes with LZF, so it reports less for those). Other types
// report it with a SerializedLength method, or 0.
func serializedLength(o *keyspace.Object) int {
	if o.Type != keyspace.TypeString {
		if s, ok := o.Val().(interface{ SerializedLength() int }); ok {
			return s.SerializedLength()
		}
		return 0
	}
	var tmp [24]byte
	b := o.Bytes(tmp[:0])
	if len(b) <= 11 {
		if v, ok := num.ParseInt(b); ok {
			switch {
			case v >= -1<<7 && v < 1<<7:
				return 2
			case v >= -1<<15 && v < 1<<15:
				return 3
			case v >= -1<<31 && v < 1<<31:
				return 5
			}
		}
	}
	return rdbLenSize(len(b)) + len(b)
}

// rdbLenSize is the size of an RDB length prefix.
func rdbLenSize(n int) int {
	switch {
	case n < 1<<6:
		return 1
	case n < 1<<14:
		return 2
	case uint64(n) <= 1<<32-1:
		return 5
	}
	return 9
}

func cmdDebugProtocol(c *engine.Ctx) {
	w := c.W
	switch ascii.Lower(c.Args[2]) {
	case "string":
		w.BulkString("Hello World")
	case "integer":
		w.Int(12345)
	case "double":
		w.Double(3.141)
	case "bignum":
		w.BigNumber("1234567999999999999999999999999999999")
	case "null":
		w.Null()
	case "array":
		w.Array(3)
		for j := int64(0); j < 3; j++ {
			w.Int(j)
		}
	case "set":
		w.Set(3)
		for j := int64(0); j < 3; j++ {
			w.Int(j)
		}
	case "map":
		w.Map(3)
		for j := int64(0); j < 3; j++ {
			w.Int(j)
			w.Bool(j == 1)
		}
	case "attrib":
		if w.Proto == 3 {
			w.Raw([]byte("|1\r\n"))
			w.BulkString("key-popularity")
			w.Array(2)
			w.BulkString("key:123")
			w.Int(90)
		}
		w.BulkString("Some real reply following the attribute")
	case "push":
		if w.Proto != 3 {
			c.Error("ERR RESP2 is not supported by this command")
			return
		}
		w.Push(2)
		w.BulkString("server-cpu-usage")
		w.Int(42)
		w.BulkString("Some real reply following the push reply")
	case "true":
		w.Bool(true)
	case "false":
		w.Bool(false)
	case "verbatim":
		w.Verbatim("txt", "This is a verbatim\nstring")
	default:
		c.Error("ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false")
	}
}

// cmdDebugReload is DEBUG RELOAD [NOSAVE]: save, then load the file back
// in place of the data.
func cmdDebugReload(c *engine.Ctx) {
	save := true
	for i := 2; i < len(c.Args); i++ {
		switch {
		case c.ArgIs(i, "nosave"):
			save = false
		case c.ArgIs(i, "noflush"), c.ArgIs(i, "merge"):
			c.Error("ERR DEBUG RELOAD " + strings.ToUpper(c.Arg(i)) + " is not supported")
			return
		default:
			c.Error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
			return
		}
	}
	if err := c.Env.Persistence().Reload(save); err != nil {
		c.Error(err.Error())
		return
	}
	c.W.OK()
}
