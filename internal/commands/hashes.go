package commands

import (
	"math"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/ds/hash"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/glob"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
)

// The hash family (t_hash.c). A hash key holds a *hash.Hash in Object.Val
// (one kept inside the Object itself when the key was created here:
// keyspace.NewHash).
// The commands Redis 7.0 has answer byte for byte as redis-server 7.0 does;
// the per-field expiry commands (hashes_ttl.go) follow Redis 7.4 and 8.0.
//
// Field expiry and the keyspace: every lookup of a hash whose next field
// expiry has passed reclaims its expired fields (DB.Lookup, through the
// keyspace's field-expiry index), and a hash left without fields is deleted
// there, so that no command ever sees an empty hash. The fields nobody
// touches are reclaimed by the active expiry cycle through the same index,
// which DB.Set keeps for new keys and HashDone (UpdateFieldExpiry) for
// changes made in place.

func init() {
	const (
		grp = "hash"
		acl = "@hash"
		o1  = "O(1)"
		w   = engine.FlagWrite
		r   = engine.FlagReadonly
		wdf = engine.FlagWrite | engine.FlagDenyOOM | engine.FlagFast
		rf  = engine.FlagReadonly | engine.FlagFast
	)
	one := func(c *engine.Command) *engine.Command {
		c.First, c.Last, c.Step = 1, 1, 1
		c.ACL, c.Group = acl, grp
		if c.Complexity == "" {
			c.Complexity = o1
		}
		return c
	}
	engine.Register(
		one(&engine.Command{Name: "hset", Arity: -4, Flags: wdf, KeyFlags: "RW update",
			Summary: "Set the string value of a hash field", Since: "2.0.0",
			Complexity: "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs.",
			Handler:    cmdHset}),
		one(&engine.Command{Name: "hmset", Arity: -4, Flags: wdf, KeyFlags: "RW update",
			Summary: "Set multiple hash fields to multiple values", Since: "2.0.0",
			Complexity: "O(N) where N is the number of fields being set.", Handler: cmdHset}),
		one(&engine.Command{Name: "hsetnx", Arity: 4, Flags: wdf, KeyFlags: "RW insert",
			Summary: "Set the value of a hash field, only if the field does not exist", Since: "2.0.0", Handler: cmdHsetnx}),
		one(&engine.Command{Name: "hget", Arity: 3, Flags: rf, KeyFlags: "RO access",
			Summary: "Get the value of a hash field", Since: "2.0.0", Handler: cmdHget}),
		one(&engine.Command{Name: "hmget", Arity: -3, Flags: rf, KeyFlags: "RO access",
			Summary: "Get the values of all the given hash fields", Since: "2.0.0",
			Complexity: "O(N) where N is the number of fields being requested.", Handler: cmdHmget}),
		one(&engine.Command{Name: "hgetall", Arity: 2, Flags: r, KeyFlags: "RO access", Tips: "nondeterministic_output_order",
			Summary: "Get all the fields and values in a hash", Since: "2.0.0",
			Complexity: "O(N) where N is the size of the hash.", Handler: cmdHgetall}),
		one(&engine.Command{Name: "hkeys", Arity: 2, Flags: r, KeyFlags: "RO access", Tips: "nondeterministic_output_order",
			Summary: "Get all the fields in a hash", Since: "2.0.0",
			Complexity: "O(N) where N is the size of the hash.", Handler: cmdHgetall}),
		one(&engine.Command{Name: "hvals", Arity: 2, Flags: r, KeyFlags: "RO access", Tips: "nondeterministic_output_order",
			Summary: "Get all the values in a hash", Since: "2.0.0",
			Complexity: "O(N) where N is the size of the hash.", Handler: cmdHgetall}),
		one(&engine.Command{Name: "hdel", Arity: -3, Flags: w | engine.FlagFast, KeyFlags: "RW delete",
			Summary: "Delete one or more hash fields", Since: "2.0.0",
			Complexity: "O(N) where N is the number of fields to be removed.", Handler: cmdHdel}),
		one(&engine.Command{Name: "hlen", Arity: 2, Flags: rf, KeyFlags: "RO",
			Summary: "Get the number of fields in a hash", Since: "2.0.0", Handler: cmdHlen}),
		one(&engine.Command{Name: "hexists", Arity: 3, Flags: rf, KeyFlags: "RO",
			Summary: "Determine if a hash field exists", Since: "2.0.0", Handler: cmdHexists}),
		one(&engine.Command{Name: "hstrlen", Arity: 3, Flags: rf, KeyFlags: "RO",
			Summary: "Get the length of the value of a hash field", Since: "3.2.0", Handler: cmdHstrlen}),
		one(&engine.Command{Name: "hincrby", Arity: 4, Flags: wdf, KeyFlags: "RW access update",
			Summary: "Increment the integer value of a hash field by the given number", Since: "2.0.0", Handler: cmdHincrby}),
		one(&engine.Command{Name: "hincrbyfloat", Arity: 4, Flags: wdf, KeyFlags: "RW access update",
			Summary: "Increment the float value of a hash field by the given amount", Since: "2.6.0", Handler: cmdHincrbyfloat}),
		one(&engine.Command{Name: "hrandfield", Arity: -2, Flags: r, KeyFlags: "RO access", Tips: "nondeterministic_output",
			Summary: "Get one or multiple random fields from a hash", Since: "6.2.0",
			Complexity: "O(N) where N is the number of fields returned", Handler: cmdHrandfield}),
		one(&engine.Command{Name: "hscan", Arity: -3, Flags: r, KeyFlags: "RO access", Tips: "nondeterministic_output",
			Summary: "Incrementally iterate hash fields and associated values", Since: "2.8.0",
			Complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
			Handler:    cmdHscan}),
	)
	registerHashTTLCommands(one)
}

// Error texts of this family that no other family uses.
const (
	ErrHashNotInt   = "ERR hash value is not an integer"
	errHashNotFloat = "ERR hash value is not a float"
	errIncrNaNInf   = "ERR value is NaN or Infinity"
)

// hashRead looks key up for a read command (lookupKeyRead): it counts a
// keyspace hit or miss and replies WRONGTYPE (ok false) for another type.
// A missing key gives a nil hash.
func hashRead(c *engine.Ctx, key string) (h *hash.Hash, ok bool) {
	o, ok := c.Lookup(key, keyspace.TypeHash)
	if !ok || o == nil {
		return nil, ok
	}
	return o.Val().(*hash.Hash), true
}

// hashWrite looks key up for a write (lookupKeyWrite: no statistics). A
// missing key gives nil.
func hashWrite(c *engine.Ctx, key string) (o *keyspace.Object, h *hash.Hash, ok bool) {
	o, ok = c.LookupWrite(key, keyspace.TypeHash)
	if !ok || o == nil {
		return nil, nil, ok
	}
	return o, o.Val().(*hash.Hash), true
}

// HashWriteOrCreate is hashWrite that makes a new hash object for a
// missing key (hashTypeLookupWriteOrCreate), reported by fresh: it is not
// stored until HashDone, so a command that fails leaves no empty hash.
func HashWriteOrCreate(c *engine.Ctx, key string) (o *keyspace.Object, h *hash.Hash, fresh, ok bool) {
	o, h, ok = hashWrite(c, key)
	if ok && o == nil {
		o, h = keyspace.NewHash()
		fresh = true
	}
	return o, h, fresh, ok
}

// HashDone finishes a write that changed the hash at o: a fresh object is
// stored, an existing one signalled (WATCH, blocked clients) and its place
// in the field-expiry index updated, and a hash left empty is deleted.
func HashDone(c *engine.Ctx, key string, o *keyspace.Object, fresh bool) {
	h := o.Val().(*hash.Hash)
	switch {
	case h.Len(c.Now) == 0:
		if !fresh {
			c.DB.Delete(key)
		}
	case fresh:
		c.DB.Set(key, o, false)
	default:
		c.DB.Modified(key)
		c.DB.UpdateFieldExpiry(o)
	}
}

// hashNotify publishes event for the hash at argument 1 and, when the
// write left it empty (HashDone deleted the key), a del event after it.
func hashNotify(c *engine.Ctx, event string, h *hash.Hash) {
	c.Notify(engine.NotifyHash, event, c.Args[1])
	if c.Env.Notifying(engine.NotifyGeneric) && h.Len(c.Now) == 0 {
		c.Notify(engine.NotifyGeneric, "del", c.Args[1])
	}
}

func cmdHset(c *engine.Ctx) {
	if len(c.Args)%2 == 1 {
		c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
		return
	}
	key := c.Key(1)
	o, h, fresh, ok := HashWriteOrCreate(c, key)
	if !ok {
		return
	}
	lim := engine.HashLimits(c)
	h.ReservePairs(c.Args[2:], lim)
	created := 0
	for i := 2; i < len(c.Args); i += 2 {
		if h.Set(c.Now, c.Args[i], c.Args[i+1], lim) {
			created++
		}
	}
	HashDone(c, key, o, fresh)
	c.Dirty(int64(len(c.Args)-2) / 2)
	c.Notify(engine.NotifyHash, "hset", c.Args[1])
	if c.Cmd.Name == "hmset" {
		c.W.OK()
		return
	}
	c.W.Int(int64(created))
}

func cmdHsetnx(c *engine.Ctx) {
	key := c.Key(1)
	o, h, fresh, ok := HashWriteOrCreate(c, key)
	if !ok {
		return
	}
	// An existing field leaves the hash alone, even its encoding: Redis 7.0
	// checks the field before it converts for long arguments.
	if !h.SetNX(c.Now, c.Args[2], c.Args[3], engine.HashLimits(c)) {
		c.W.Int(0)
		return
	}
	HashDone(c, key, o, fresh)
	c.Dirty(1)
	c.Notify(engine.NotifyHash, "hset", c.Args[1])
	c.W.Int(1)
}

func cmdHget(c *engine.Ctx) {
	h, ok := hashRead(c, c.Key(1))
	if !ok {
		return
	}
	if h == nil {
		c.W.Null()
		return
	}
	if v, found := h.Get(c.Now, c.Args[2]); found {
		c.W.Bulk(v)
		return
	}
	c.W.Null()
}

func cmdHmget(c *engine.Ctx) {
	h, ok := hashRead(c, c.Key(1))
	if !ok {
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, f := range c.Args[2:] {
		if h != nil {
			if v, found := h.Get(c.Now, f); found {
				c.W.Bulk(v)
				continue
			}
		}
		c.W.Null()
	}
}

// cmdHgetall serves HGETALL (a map in RESP3), HKEYS and HVALS.
func cmdHgetall(c *engine.Ctx) {
	keys, vals := c.Cmd.Name != "hvals", c.Cmd.Name != "hkeys"
	h, ok := hashRead(c, c.Key(1))
	if !ok {
		return
	}
	n := 0
	if h != nil {
		n = h.Len(c.Now)
	}
	if keys && vals {
		c.W.Map(n)
	} else {
		c.W.Array(n)
	}
	if n == 0 {
		return
	}
	h.Range(c.Now, func(f, v []byte) bool {
		if keys {
			c.W.Bulk(f)
		}
		if vals {
			c.W.Bulk(v)
		}
		return true
	})
}

func cmdHdel(c *engine.Ctx) {
	key := c.Key(1)
	o, h, ok := hashWrite(c, key)
	if !ok {
		return
	}
	if h == nil {
		c.W.Int(0)
		return
	}
	deleted := 0
	for _, f := range c.Args[2:] {
		if h.Delete(c.Now, f) {
			deleted++
			if h.Len(c.Now) == 0 {
				break
			}
		}
	}
	if deleted > 0 {
		HashDone(c, key, o, false)
		c.Dirty(int64(deleted))
		hashNotify(c, "hdel", h)
	}
	c.W.Int(int64(deleted))
}

func cmdHlen(c *engine.Ctx) {
	h, ok := hashRead(c, c.Key(1))
	if !ok {
		return
	}
	if h == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(h.Len(c.Now)))
}

func cmdHexists(c *engine.Ctx) {
	h, ok := hashRead(c, c.Key(1))
	if !ok {
		return
	}
	if h != nil && h.Exists(c.Now, c.Args[2]) {
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}

func cmdHstrlen(c *engine.Ctx) {
	h, ok := hashRead(c, c.Key(1))
	if !ok {
		return
	}
	if h == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(h.ValueLen(c.Now, c.Args[2])))
}

func cmdHincrby(c *engine.Ctx) {
	incr, ok := c.Int(3)
	if !ok {
		return
	}
	// The key is copied out of the arguments only for a new hash: the
	// lookup keeps nothing, and an existing object has its own.
	o, h, fresh, ok := HashWriteOrCreate(c, string(c.Args[1]))
	if !ok {
		return
	}
	var cur int64
	if v, found := h.Get(c.Now, c.Args[2]); found {
		if cur, ok = num.ParseInt(v); !ok {
			c.Error(ErrHashNotInt)
			return
		}
	}
	if incr < 0 && cur < 0 && incr < math.MinInt64-cur || incr > 0 && cur > 0 && incr > math.MaxInt64-cur {
		c.Error(engine.ErrOverflow)
		return
	}
	cur += incr
	var buf [24]byte
	// A field gets or keeps its TTL: an increment changes the value only.
	h.SetKeepTTL(c.Now, c.Args[2], num.AppendInt(buf[:0], cur), engine.HashLimits(c))
	key := o.Key
	if fresh {
		key = c.Key(1)
	}
	HashDone(c, key, o, fresh)
	c.Dirty(1)
	c.Notify(engine.NotifyHash, "hincrby", c.Args[1])
	c.W.Int(cur)
}

func cmdHincrbyfloat(c *engine.Ctx) {
	incr, ok := num.ParseLongDouble(c.Args[3])
	if !ok {
		c.Error(engine.ErrNotFloat)
		return
	}
	if incr.IsInf() {
		c.Error(errIncrNaNInf)
		return
	}
	key := c.Key(1)
	o, h, fresh, ok := HashWriteOrCreate(c, key)
	if !ok {
		return
	}
	cur := num.LongDoubleFromInt(0)
	if v, found := h.Get(c.Now, c.Args[2]); found {
		if cur, ok = num.ParseLongDouble(v); !ok {
			c.Error(errHashNotFloat)
			return
		}
	}
	if cur.IsInf() {
		c.Error(engine.ErrNaNOrInf) // inf + x: Redis computes it and refuses the result
		return
	}
	sum := num.AddLongDouble(cur, incr)
	if !num.LongDoubleInRange(sum) {
		c.Error(engine.ErrNaNOrInf)
		return
	}
	s := num.FormatLongDouble(sum)
	h.SetKeepTTL(c.Now, c.Args[2], []byte(s), engine.HashLimits(c))
	HashDone(c, key, o, fresh)
	c.Dirty(1)
	c.Notify(engine.NotifyHash, "hincrbyfloat", c.Args[1])
	// The result, so that float formatting is not replayed.
	c.Propagate([]byte("HSET"), c.Args[1], c.Args[2], []byte(s))
	c.W.BulkString(s)
}

// HRANDFIELD key [count [WITHVALUES]]
func cmdHrandfield(c *engine.Ctx) {
	if len(c.Args) == 2 {
		h, ok := hashRead(c, c.Key(1))
		if !ok {
			return
		}
		if h == nil {
			c.W.Null()
			return
		}
		f, _, _ := h.RandomField(c.Now, c.Env.KS.Rand())
		c.W.Bulk(f)
		return
	}
	l, ok := c.Int(2)
	if !ok {
		return
	}
	if l == math.MinInt64 {
		c.Errorf("ERR value is out of range, value must between %d and %d", -math.MaxInt64, int64(math.MaxInt64))
		return
	}
	withValues := false
	if len(c.Args) > 4 || len(c.Args) == 4 && !ascii.OptIs(c.Args[3], "withvalues") {
		c.Error(engine.ErrSyntax)
		return
	}
	if len(c.Args) == 4 {
		withValues = true
		if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
			c.Error("ERR value is out of range")
			return
		}
	}
	h, ok := hashRead(c, c.Key(1))
	if !ok {
		return
	}
	if h == nil || l == 0 {
		c.W.Array(0)
		return
	}
	count, repeat := int(l), false
	if l < 0 {
		count, repeat = int(-l), true
	}
	// Redis's case 1 (negative count, or 1) gives count picks; the others
	// at most the whole hash.
	n := count
	if !repeat && count != 1 {
		n = min(count, h.Len(c.Now))
	}
	resp3Pairs := withValues && c.W.Proto == 3
	if withValues && !resp3Pairs {
		c.W.Array(2 * n)
	} else {
		c.W.Array(n)
	}
	h.RandomFields(c.Now, count, repeat || count == 1, c.Env.KS.Rand(), func(f, v []byte) {
		if resp3Pairs {
			c.W.Array(2)
		}
		c.W.Bulk(f)
		if withValues {
			c.W.Bulk(v)
		}
	})
}

// HSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES]
//
// As in Redis, the options are parsed only once the key is found, so a
// missing key answers an empty scan whatever follows the cursor. A hash in
// the small form is returned whole with cursor 0.
func cmdHscan(c *engine.Ctx) {
	cursor, ok := scanCursorArg(c, 2)
	if !ok {
		return
	}
	h, ok := hashRead(c, c.Key(1))
	if !ok {
		return
	}
	if h == nil {
		replyScan(c, 0, nil)
		return
	}
	count := int64(10)
	var pattern []byte
	match, noValues := false, false
	for i := 3; i < len(c.Args); {
		more := len(c.Args) - i
		switch {
		case ascii.OptIs(c.Args[i], "count") && more >= 2:
			n, ok := c.Int(i + 1)
			if !ok {
				return
			}
			if n < 1 {
				c.Error(engine.ErrSyntax)
				return
			}
			count = n
			i += 2
		case ascii.OptIs(c.Args[i], "match") && more >= 2:
			pattern = c.Args[i+1]
			match = !(len(pattern) == 1 && pattern[0] == '*')
			i += 2
		case ascii.OptIs(c.Args[i], "novalues"):
			noValues = true
			i++
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	// The items alias the hash; nothing writes to it before the reply is
	// encoded.
	var items [][]byte
	emit := func(f, v []byte) {
		if match && !glob.Match(pattern, f, false) {
			return
		}
		items = append(items, f)
		if !noValues {
			items = append(items, v)
		}
	}
	hint := int(min(count, math.MaxInt32))
	// Like Redis, at most 10*COUNT steps, so that a sparse table cannot make
	// one call walk for nothing.
	maxIter := int64(math.MaxInt64)
	if count <= math.MaxInt64/10 {
		maxIter = count * 10
	}
	per := 2
	if noValues {
		per = 1
	}
	for {
		cursor = h.Scan(c.Now, cursor, hint, emit)
		if cursor == 0 || maxIter <= 0 || int64(len(items)/per) >= count {
			break
		}
		maxIter--
	}
	c.W.Array(2)
	var tmp [24]byte
	c.W.Bulk(appendUint(tmp[:0], cursor))
	c.W.Array(len(items))
	for _, it := range items {
		c.W.Bulk(it)
	}
}
