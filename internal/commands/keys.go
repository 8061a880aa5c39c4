package commands

import (
	"fmt"
	"math"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/glob"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
)

// The generic keyspace commands (db.c, object.c): they work on keys of any
// type. What they need from a value of a non-string type comes through
// the keyspace's value contract (keyspace.Value: OBJECT ENCODING, COPY).

func init() {
	const (
		ks  = "@keyspace"
		gen = "generic"
		srv = "server"
		o1  = "O(1)"
	)
	engine.Register(
		&engine.Command{Name: "del", Arity: -2, Flags: engine.FlagWrite, First: 1, Last: -1, Step: 1, KeyFlags: "RM delete",
			Tips: "request_policy:multi_shard response_policy:agg_sum", ACL: ks, Group: gen,
			Summary: "Delete a key", Since: "1.0.0",
			Complexity: "O(N) where N is the number of keys that will be removed. When a key to remove holds a value other than a string, the individual complexity for this key is O(M) where M is the number of elements in the list, set, sorted set or hash. Removing a single key that holds a string value is O(1).",
			Handler:    cmdDel},
		&engine.Command{Name: "unlink", Arity: -2, Flags: engine.FlagWrite | engine.FlagFast, First: 1, Last: -1, Step: 1, KeyFlags: "RM delete",
			Tips: "request_policy:multi_shard response_policy:agg_sum", ACL: ks, Group: gen,
			Summary: "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.", Since: "4.0.0",
			Complexity: "O(1) for each key removed regardless of its size. Then the command does O(N) work in a different thread in order to reclaim memory, where N is the number of allocations the deleted objects where composed of.",
			Handler:    cmdDel},
		&engine.Command{Name: "exists", Arity: -2, Flags: engine.FlagReadonly | engine.FlagFast, First: 1, Last: -1, Step: 1, KeyFlags: "RO",
			Tips: "request_policy:multi_shard response_policy:agg_sum", ACL: ks, Group: gen,
			Summary: "Determine if a key exists", Since: "1.0.0",
			Complexity: "O(N) where N is the number of keys to check.", Handler: cmdExists},
		&engine.Command{Name: "type", Arity: 2, Flags: engine.FlagReadonly | engine.FlagFast, First: 1, Last: 1, Step: 1, KeyFlags: "RO",
			ACL: ks, Group: gen, Summary: "Determine the type stored at key", Since: "1.0.0", Complexity: o1, Handler: cmdType},
		// RENAME, RENAMENX and COPY have two key specs in Redis, the source's
		// (given here) and the destination's: OW update (RENAME, COPY) or OW
		// insert (RENAMENX). The table holds one spec per command for now.
		&engine.Command{Name: "rename", Specs: keySpecs["rename"], Arity: 3, Flags: engine.FlagWrite, First: 1, Last: 2, Step: 1, KeyFlags: "RW access delete",
			ACL: ks, Group: gen, Summary: "Rename a key", Since: "1.0.0", Complexity: o1, Handler: cmdRename},
		&engine.Command{Name: "renamenx", Specs: keySpecs["renamenx"], Arity: 3, Flags: engine.FlagWrite | engine.FlagFast, First: 1, Last: 2, Step: 1, KeyFlags: "RW access delete",
			ACL: ks, Group: gen, Summary: "Rename a key, only if the new key does not exist", Since: "1.0.0", Complexity: o1, Handler: cmdRename},
		&engine.Command{Name: "keys", Arity: 2, Flags: engine.FlagReadonly, Tips: "request_policy:all_shards nondeterministic_output_order",
			ACL: ks + " @dangerous", Group: gen, Summary: "Find all keys matching the given pattern", Since: "1.0.0",
			Complexity: "O(N) with N being the number of keys in the database, under the assumption that the key names in the database and the given pattern have limited length.",
			Handler:    cmdKeys},
		&engine.Command{Name: "scan", Arity: -2, Flags: engine.FlagReadonly | engine.FlagTouchesArbitraryKeys, Tips: "nondeterministic_output request_policy:special",
			ACL: ks, Group: gen, Summary: "Incrementally iterate the keys space", Since: "2.8.0",
			Complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.",
			Handler:    cmdScan},
		&engine.Command{Name: "randomkey", Arity: 1, Flags: engine.FlagReadonly | engine.FlagTouchesArbitraryKeys, Tips: "request_policy:all_shards nondeterministic_output",
			ACL: ks, Group: gen, Summary: "Return a random key from the keyspace", Since: "1.0.0", Complexity: o1, Handler: cmdRandomkey},
		&engine.Command{Name: "dbsize", Arity: 1, Flags: engine.FlagReadonly | engine.FlagFast, Tips: "request_policy:all_shards response_policy:agg_sum",
			ACL: ks, Group: srv, Summary: "Return the number of keys in the selected database", Since: "1.0.0", Complexity: o1, Handler: cmdDbsize},
		&engine.Command{Name: "flushdb", Arity: -1, Flags: engine.FlagWrite, Tips: "request_policy:all_shards response_policy:all_succeeded",
			ACL: ks + " @dangerous", Group: srv, Summary: "Remove all keys from the current database", Since: "1.0.0",
			Complexity: "O(N) where N is the number of keys in the selected database", Handler: cmdFlush},
		&engine.Command{Name: "flushall", Arity: -1, Flags: engine.FlagWrite, Tips: "request_policy:all_shards response_policy:all_succeeded",
			ACL: ks + " @dangerous", Group: srv, Summary: "Remove all keys from all databases", Since: "1.0.0",
			Complexity: "O(N) where N is the total number of keys in all databases", Handler: cmdFlush},
		&engine.Command{Name: "move", Arity: 3, Flags: engine.FlagWrite | engine.FlagFast, First: 1, Last: 1, Step: 1, KeyFlags: "RW access update",
			ACL: ks, Group: gen, Summary: "Move a key to another database", Since: "1.0.0", Complexity: o1, Handler: cmdMove},
		&engine.Command{Name: "copy", Specs: keySpecs["copy"], Arity: -3, Flags: engine.FlagWrite | engine.FlagDenyOOM, First: 1, Last: 2, Step: 1, KeyFlags: "RO access",
			ACL: ks, Group: gen, Summary: "Copy a key", Since: "6.2.0",
			Complexity: "O(N) worst case for collections, where N is the number of nested items. O(1) for string values.", Handler: cmdCopy},
		&engine.Command{Name: "swapdb", Arity: 3, Flags: engine.FlagWrite | engine.FlagFast, ACL: ks + " @dangerous", Group: srv,
			Summary: "Swaps two Redis databases", Since: "4.0.0",
			Complexity: "O(N) where N is the count of clients watching or blocking on keys from both databases.", Handler: cmdSwapdb},
		&engine.Command{Name: "touch", Arity: -2, Flags: engine.FlagReadonly | engine.FlagFast, First: 1, Last: -1, Step: 1, KeyFlags: "RO",
			Tips: "request_policy:multi_shard response_policy:agg_sum", ACL: ks, Group: gen,
			Summary: "Alters the last access time of a key(s). Returns the number of existing keys specified.", Since: "3.2.1",
			Complexity: "O(N) where N is the number of keys that will be touched.", Handler: cmdTouch},
		&engine.Command{Name: "object", Arity: -2, Group: gen, Summary: "A container for object introspection commands",
			Since: "2.2.3", Complexity: "Depends on subcommand.", Subs: map[string]*engine.Command{
				"help": {Arity: 2, Flags: engine.FlagLoading | engine.FlagStale, ACL: ks,
					Summary: "Show helpful text about the different subcommands", Since: "6.2.0", Complexity: o1, Handler: cmdObjectHelp},
				"encoding": {Arity: 3, Flags: engine.FlagReadonly, First: 2, Last: 2, Step: 1, KeyFlags: "RO", Tips: "nondeterministic_output", ACL: ks,
					Summary: "Inspect the internal encoding of a Redis object", Since: "2.2.3", Complexity: o1, Handler: cmdObject},
				"refcount": {Arity: 3, Flags: engine.FlagReadonly, First: 2, Last: 2, Step: 1, KeyFlags: "RO", Tips: "nondeterministic_output", ACL: ks,
					Summary: "Get the number of references to the value of the key", Since: "2.2.3", Complexity: o1, Handler: cmdObject},
				"idletime": {Arity: 3, Flags: engine.FlagReadonly, First: 2, Last: 2, Step: 1, KeyFlags: "RO", Tips: "nondeterministic_output", ACL: ks,
					Summary: "Get the time since a Redis object was last accessed", Since: "2.2.3", Complexity: o1, Handler: cmdObject},
				"freq": {Arity: 3, Flags: engine.FlagReadonly, First: 2, Last: 2, Step: 1, KeyFlags: "RO", Tips: "nondeterministic_output", ACL: ks,
					Summary: "Get the logarithmic access frequency counter of a Redis object", Since: "4.0.0", Complexity: o1, Handler: cmdObject},
			}},
	)
}

// lookupNoTouch is lookupKeyReadWithFlags(LOOKUP_NOTOUCH): a read that
// counts keyspace hits and misses but leaves the access time alone (TYPE,
// EXISTS, TTL, OBJECT).
func lookupNoTouch(c *engine.Ctx, key string) *keyspace.Object {
	o := lookupNoNotify(c, key)
	if o == nil {
		c.NotifyKey(engine.NotifyKeyMiss, "keymiss", key)
	}
	return o
}

// lookupNoNotify is lookupNoTouch without the keymiss event
// (LOOKUP_NONOTIFY: OBJECT).
func lookupNoNotify(c *engine.Ctx, key string) *keyspace.Object {
	o := c.DB.Lookup(key)
	if o == nil {
		c.Env.KS.Stats.Misses++
	} else {
		c.Env.KS.Stats.Hits++
	}
	return o
}

// intArg parses argument i as a C int (getIntFromObjectOrReply). msg, if
// not empty, replaces both of Redis's default errors.
func intArg(c *engine.Ctx, i int, msg string) (int, bool) {
	v, ok := num.ParseInt(c.Args[i])
	if !ok {
		if msg == "" {
			msg = engine.ErrNotInt
		}
		c.Error(msg)
		return 0, false
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		if msg == "" {
			msg = fmt.Sprintf("ERR value is out of range, value must between %d and %d", math.MinInt32, math.MaxInt32)
		}
		c.Error(msg)
		return 0, false
	}
	return int(v), true
}

// dbArg parses a database index argument and checks its range.
func dbArg(c *engine.Ctx, i int) (*keyspace.DB, bool) {
	id, ok := intArg(c, i, "")
	if !ok {
		return nil, false
	}
	if id < 0 || id >= len(c.Env.KS.DBs) {
		c.Error(engine.ErrDBIndex)
		return nil, false
	}
	return c.Env.KS.DBs[id], true
}

// cmdDel serves DEL and UNLINK (memory is the collector's to reclaim, so
// UNLINK has nothing to do in the background).
func cmdDel(c *engine.Ctx) {
	var n int64
	for _, k := range c.Args[1:] {
		if c.DB.Delete(string(k)) {
			n++
			c.Notify(engine.NotifyGeneric, "del", k)
		}
	}
	c.Dirty(n)
	c.W.Int(n)
}

func cmdExists(c *engine.Ctx) {
	var n int64
	for _, k := range c.Args[1:] {
		if lookupNoTouch(c, string(k)) != nil {
			n++
		}
	}
	c.W.Int(n)
}

func cmdTouch(c *engine.Ctx) {
	var n int64
	for _, k := range c.Args[1:] {
		if c.DB.LookupRead(string(k)) != nil {
			n++
		}
	}
	c.W.Int(n)
}

func cmdType(c *engine.Ctx) {
	o := lookupNoTouch(c, c.Key(1))
	if o == nil {
		c.W.Simple("none")
		return
	}
	c.W.Simple(o.Type.String())
}

// cmdRename serves RENAME and RENAMENX. The value object moves as it is,
// with its TTL.
func cmdRename(c *engine.Ctx) {
	nx := c.Cmd.Name == "renamenx"
	src, dst := c.Key(1), c.Key(2)
	o := c.DB.Lookup(src)
	if o == nil {
		c.Error(engine.ErrNoKey)
		return
	}
	engine.TouchLRU(c, o)
	if src == dst {
		if nx {
			c.W.Int(0)
		} else {
			c.W.OK()
		}
		return
	}
	if c.DB.Lookup(dst) != nil {
		if nx {
			c.W.Int(0)
			return
		}
		c.DB.Delete(dst)
	}
	c.DB.Take(src)
	c.DB.Set(dst, o, false) // o.Expire travels with it
	c.Dirty(1)
	c.Notify(engine.NotifyGeneric, "rename_from", c.Args[1])
	c.Notify(engine.NotifyGeneric, "rename_to", c.Args[2])
	if nx {
		c.W.Int(1)
	} else {
		c.W.OK()
	}
}

func cmdKeys(c *engine.Ctx) {
	pat := c.Args[1]
	all := len(pat) == 1 && pat[0] == '*'
	var keys []string
	c.DB.ForEach(func(o *keyspace.Object) {
		// Expired keys are skipped, not reclaimed, as Redis's KEYS does.
		if o.Expire != 0 && o.Expire <= c.Now {
			return
		}
		if all || glob.Match(pat, o.Key, false) {
			keys = append(keys, o.Key)
		}
	})
	c.W.Array(len(keys))
	for _, k := range keys {
		c.W.BulkString(k)
	}
}

// scanCursorArg parses a SCAN-family cursor as Redis does, with strtoul:
// an optional sign ("-1" wraps around), digits up to the first NUL, an
// empty string meaning 0; leading space and overflow are errors.
func scanCursorArg(c *engine.Ctx, i int) (uint64, bool) {
	b := c.Args[i]
	bad := func() (uint64, bool) {
		c.Error("ERR invalid cursor")
		return 0, false
	}
	if len(b) > 0 && (b[0] == ' ' || (b[0] >= '\t' && b[0] <= '\r')) {
		return bad()
	}
	b = ascii.CStr(b)
	if len(b) == 0 {
		return 0, true
	}
	neg := false
	if b[0] == '+' || b[0] == '-' {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 {
		return bad() // a sign alone converts nothing
	}
	var v uint64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return bad()
		}
		d := uint64(ch - '0')
		if v > (math.MaxUint64-d)/10 {
			return bad()
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}

// scanOpts are the options of SCAN, HSCAN, SSCAN and ZSCAN.
type scanOpts struct {
	count int64
	// match is set by MATCH with any pattern but "*", which matches all.
	match   bool
	pattern []byte
	// hasType is set by TYPE (SCAN only); an unknown name matches nothing.
	hasType  bool
	typeName []byte
}

// parseScanOpts parses COUNT, MATCH and (with allowType) TYPE from
// argument i on, replying with Redis's errors.
func parseScanOpts(c *engine.Ctx, i int, allowType bool) (scanOpts, bool) {
	o := scanOpts{count: 10}
	for i < len(c.Args) {
		more := len(c.Args) - i
		switch {
		case ascii.OptIs(c.Args[i], "count") && more >= 2:
			n, ok := c.Int(i + 1)
			if !ok {
				return o, false
			}
			if n < 1 {
				c.Error(engine.ErrSyntax)
				return o, false
			}
			o.count = n
		case ascii.OptIs(c.Args[i], "match") && more >= 2:
			o.pattern = c.Args[i+1]
			o.match = !(len(o.pattern) == 1 && o.pattern[0] == '*')
		case allowType && ascii.OptIs(c.Args[i], "type") && more >= 2:
			o.hasType, o.typeName = true, c.Args[i+1]
		default:
			c.Error(engine.ErrSyntax)
			return o, false
		}
		i += 2
	}
	return o, true
}

// replyScan writes a SCAN-family reply: the next cursor and the items.
func replyScan(c *engine.Ctx, cursor uint64, items []string) {
	c.W.Array(2)
	var tmp [24]byte
	c.W.Bulk(appendUint(tmp[:0], cursor))
	c.W.Array(len(items))
	for _, s := range items {
		c.W.BulkString(s)
	}
}

func appendUint(b []byte, v uint64) []byte {
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}

// cmdScan walks the database with the dict's reverse-binary cursor: a key
// present for the whole iteration is returned at least once, however the
// table grows or shrinks in between.
func cmdScan(c *engine.Ctx) {
	cursor, ok := scanCursorArg(c, 1)
	if !ok {
		return
	}
	opts, ok := parseScanOpts(c, 2, true)
	if !ok {
		return
	}
	var keys []string
	// Up to 10*COUNT buckets, so that a sparse table cannot make one call
	// walk forever for nothing.
	maxIter := int64(math.MaxInt64)
	if opts.count <= math.MaxInt64/10 {
		maxIter = opts.count * 10
	}
	for {
		cursor = c.DB.Scan(cursor, func(o *keyspace.Object) {
			if opts.match && !glob.Match(opts.pattern, o.Key, false) {
				return
			}
			if opts.hasType {
				c.Env.KS.Stats.Hits++ // Redis looks each key up for its type
				if !ascii.OptIs(opts.typeName, o.Type.String()) {
					return
				}
			}
			keys = append(keys, o.Key)
		})
		if cursor == 0 || maxIter <= 0 || int64(len(keys)) >= opts.count {
			break
		}
		maxIter--
	}
	replyScan(c, cursor, keys)
}

func cmdRandomkey(c *engine.Ctx) {
	k, ok := c.DB.RandomKey()
	if !ok {
		c.W.Null()
		return
	}
	c.W.BulkString(k)
}

func cmdDbsize(c *engine.Ctx) { c.W.Int(int64(c.DB.Len())) }

// cmdFlush serves FLUSHDB and FLUSHALL [ASYNC|SYNC]. Both modes free
// synchronously: dropping the tables is O(1) and the collector reclaims
// the memory concurrently, which is what ASYNC asks for.
func cmdFlush(c *engine.Ctx) {
	switch {
	case len(c.Args) == 1:
	case len(c.Args) == 2 && (ascii.OptIs(c.Args[1], "sync") || ascii.OptIs(c.Args[1], "async")):
	default:
		c.Error(engine.ErrSyntax)
		return
	}
	dbs := []*keyspace.DB{c.DB}
	if c.Cmd.Name == "flushall" {
		dbs = c.Env.KS.DBs
	}
	var n int64
	c.Env.BeforeFlush()
	for _, db := range dbs {
		n += int64(db.Len())
		db.Flush()
	}
	// Redis 7.0 counts the keys removed, and nothing for the command
	// itself; it propagates the command even when there was nothing to
	// remove, so a replica or the AOF empties what it may hold besides.
	// With save points configured, Redis also saves the emptied dataset
	// after FLUSHALL, which leaves no change unsaved.
	c.Dirty(n)
	c.Propagate(c.Args...)
	if c.Cmd.Name == "flushall" {
		c.Env.Persistence().FlushAll()
	}
	c.W.OK()
}

func cmdMove(c *engine.Ctx) {
	if c.Env.Cluster() != nil {
		c.Error("ERR MOVE is not allowed in cluster mode")
		return
	}
	dst, ok := dbArg(c, 2)
	if !ok {
		return
	}
	if dst == c.DB {
		c.Error(engine.ErrSameObject)
		return
	}
	key := c.Key(1)
	o := c.DB.Lookup(key)
	if o == nil {
		c.W.Int(0)
		return
	}
	engine.TouchLRU(c, o)
	if dst.Lookup(key) != nil {
		c.W.Int(0)
		return
	}
	c.DB.Take(key)
	dst.Set(key, o, false) // o.Expire travels with it
	c.Dirty(1)
	c.Notify(engine.NotifyGeneric, "move_from", c.Args[1])
	c.Env.NotifyDB(engine.NotifyGeneric, "move_to", c.Args[1], dst.ID)
	c.W.Int(1)
}

func cmdCopy(c *engine.Ctx) {
	dst := c.DB
	replace := false
	for j := 3; j < len(c.Args); j++ {
		switch {
		case ascii.OptIs(c.Args[j], "replace"):
			replace = true
		case ascii.OptIs(c.Args[j], "db") && j+1 < len(c.Args):
			db, ok := dbArg(c, j+1)
			if !ok {
				return
			}
			dst = db
			j++
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	if c.Env.Cluster() != nil && (c.DB.ID != 0 || dst.ID != 0) {
		c.Error("ERR Copying to another database is not allowed in cluster mode")
		return
	}
	src, newKey := c.Key(1), c.Key(2)
	if dst == c.DB && src == newKey {
		c.Error(engine.ErrSameObject)
		return
	}
	o := c.DB.LookupRead(src)
	if o == nil {
		c.W.Int(0)
		return
	}
	exists := dst.Lookup(newKey) != nil
	if exists && !replace {
		c.W.Int(0)
		return
	}
	n, ok := o.Copy()
	if !ok {
		c.Error(fmt.Sprintf("ERR COPY of a %s value is not supported yet", o.Type))
		return
	}
	n.Expire = o.Expire
	if exists {
		// Redis deletes the old value and adds the copy as a new key
		// (with its new event).
		dst.Delete(newKey)
	}
	dst.Set(newKey, n, false)
	c.Dirty(1)
	c.Env.NotifyDB(engine.NotifyGeneric, "copy_to", c.Args[2], dst.ID)
	c.W.Int(1)
}

func cmdSwapdb(c *engine.Ctx) {
	if c.Env.Cluster() != nil {
		c.Error("ERR SWAPDB is not allowed in cluster mode")
		return
	}
	a, ok := intArg(c, 1, "ERR invalid first DB index")
	if !ok {
		return
	}
	b, ok := intArg(c, 2, "ERR invalid second DB index")
	if !ok {
		return
	}
	n := len(c.Env.KS.DBs)
	if a < 0 || a >= n || b < 0 || b >= n {
		c.Error(engine.ErrDBIndex)
		return
	}
	if a != b {
		c.Env.KS.Swap(a, b)
		c.Env.DBsSwapped(a, b)
	}
	c.Dirty(1)
	c.W.OK()
}

var objectHelp = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Prints this help.",
}

func cmdObjectHelp(c *engine.Ctx) {
	c.W.Array(len(objectHelp))
	for _, l := range objectHelp {
		c.W.Simple(l)
	}
}

// Redis's OBJ_SHARED_INTEGERS: SET and INCR store 0..9999 as shared
// objects, which OBJECT REFCOUNT reports with OBJ_SHARED_REFCOUNT.
const (
	sharedIntegers = 10000
	sharedRefcount = math.MaxInt32
)

// lfuPolicy reports whether maxmemory-policy is one of the LFU policies.
func lfuPolicy(c *engine.Ctx) bool {
	return c.Env.Policy().LFU()
}

// sharesIntegers reports whether small integers are shared objects: Redis
// stops sharing them when maxmemory is set with an LRU or LFU policy,
// because shared objects cannot carry a per-key access time.
func sharesIntegers(c *engine.Ctx) bool {
	if c.Env.Cfg.Int(config.MaxMemory) == 0 {
		return true
	}
	switch c.Env.Cfg.Str(config.MaxMemoryPolicy) {
	case "allkeys-lru", "volatile-lru", "allkeys-lfu", "volatile-lfu":
		return false
	}
	return true
}

// cmdObject serves OBJECT ENCODING, REFCOUNT, IDLETIME and FREQ.
func cmdObject(c *engine.Ctx) {
	o := lookupNoNotify(c, c.Key(2))
	if o == nil {
		c.W.Null()
		return
	}
	switch c.Cmd.Name {
	case "object|encoding":
		c.W.BulkString(o.Encoding())
	case "object|refcount":
		if o.Type == keyspace.TypeString && o.Enc == keyspace.EncInt && !o.Owned &&
			o.Int() >= 0 && o.Int() < sharedIntegers && sharesIntegers(c) {
			c.W.Int(sharedRefcount)
			return
		}
		c.W.Int(1)
	case "object|idletime":
		if lfuPolicy(c) {
			c.Error("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
			return
		}
		c.W.Int(c.Env.KS.IdleMs(o) / 1000)
	case "object|freq":
		if !lfuPolicy(c) {
			c.Error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
			return
		}
		c.W.Int(int64(c.Env.KS.LFUCounter(o)))
	}
}
