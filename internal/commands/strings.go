package commands

import (
	"math"
	"strconv"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
)

// The string family (t_string.c). Values live inline in the Object: an
// integer as Int with EncInt, anything else as Str with EncEmbstr or EncRaw,
// chosen as Redis chooses them so that OBJECT ENCODING agrees:
//   - SET and friends store what tryObjectEncoding would: int when the value
//     is a canonical integer, embstr up to 44 bytes, raw beyond;
//   - APPEND and SETRANGE always leave a raw string (Redis unshares the
//     value into a fresh sds);
//   - INCR/DECR always leave an int; INCRBYFLOAT leaves embstr or raw,
//     never int, because Redis builds its result with createStringObject.

func init() {
	const (
		w, r    = engine.FlagWrite, engine.FlagReadonly
		wd      = engine.FlagWrite | engine.FlagDenyOOM
		wdf     = engine.FlagWrite | engine.FlagDenyOOM | engine.FlagFast
		str     = "@string"
		grp     = "string"
		o1      = "O(1)"
		rangeOp = "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings."
	)
	one := func(c *engine.Command) *engine.Command {
		c.First, c.Last, c.Step = 1, 1, 1
		c.ACL, c.Group = str, grp
		if c.Complexity == "" {
			c.Complexity = o1
		}
		return c
	}
	engine.Register(
		one(&engine.Command{Name: "get", Arity: 2, Flags: r | engine.FlagFast, KeyFlags: "RO access",
			Summary: "Get the value of a key", Since: "1.0.0", Handler: cmdGet}),
		one(&engine.Command{Name: "set", Specs: keySpecs["set"], Arity: -3, Flags: wd, KeyFlags: "RW access update variable_flags",
			Summary: "Set the string value of a key", Since: "1.0.0", Handler: cmdSet}),
		one(&engine.Command{Name: "getset", Arity: 3, Flags: wdf, KeyFlags: "RW access update",
			Summary: "Set the string value of a key and return its old value", Since: "1.0.0", Handler: cmdGetset}),
		one(&engine.Command{Name: "getdel", Arity: 2, Flags: w | engine.FlagFast, KeyFlags: "RW access delete",
			Summary: "Get the value of a key and delete the key", Since: "6.2.0", Handler: cmdGetdel}),
		one(&engine.Command{Name: "getex", Specs: keySpecs["getex"], Arity: -2, Flags: w | engine.FlagFast, KeyFlags: "RW access update",
			Summary: "Get the value of a key and optionally set its expiration", Since: "6.2.0", Handler: cmdGetex}),
		one(&engine.Command{Name: "setnx", Arity: 3, Flags: wdf, KeyFlags: "OW insert",
			Summary: "Set the value of a key, only if the key does not exist", Since: "1.0.0", Handler: cmdSetnx}),
		one(&engine.Command{Name: "setex", Arity: 4, Flags: wd, KeyFlags: "OW update",
			Summary: "Set the value and expiration of a key", Since: "2.0.0", Handler: cmdSetex}),
		one(&engine.Command{Name: "psetex", Arity: 4, Flags: wd, KeyFlags: "OW update",
			Summary: "Set the value and expiration in milliseconds of a key", Since: "2.6.0", Handler: cmdSetex}),
		&engine.Command{Name: "mset", Arity: -3, Flags: wd, First: 1, Last: -1, Step: 2, KeyFlags: "OW update",
			Tips: "request_policy:multi_shard response_policy:all_succeeded", ACL: str, Group: grp,
			Summary: "Set multiple keys to multiple values", Since: "1.0.1",
			Complexity: "O(N) where N is the number of keys to set.", Handler: cmdMset},
		&engine.Command{Name: "msetnx", Arity: -3, Flags: wd, First: 1, Last: -1, Step: 2, KeyFlags: "OW insert",
			Tips: "request_policy:multi_shard response_policy:agg_min", ACL: str, Group: grp,
			Summary: "Set multiple keys to multiple values, only if none of the keys exist", Since: "1.0.1",
			Complexity: "O(N) where N is the number of keys to set.", Handler: cmdMset},
		&engine.Command{Name: "mget", Arity: -2, Flags: r | engine.FlagFast, First: 1, Last: -1, Step: 1, KeyFlags: "RO access",
			Tips: "request_policy:multi_shard", ACL: str, Group: grp,
			Summary: "Get the values of all the given keys", Since: "1.0.0",
			Complexity: "O(N) where N is the number of keys to retrieve.", Handler: cmdMget},
		one(&engine.Command{Name: "append", Arity: 3, Flags: wdf, KeyFlags: "RW insert",
			Summary: "Append a value to a key", Since: "2.0.0",
			Complexity: "O(1). The amortized time complexity is O(1) assuming the appended value is small and the already present value is of any size, since the dynamic string library used by Redis will double the free space available on every reallocation.",
			Handler:    cmdAppend}),
		one(&engine.Command{Name: "strlen", Arity: 2, Flags: r | engine.FlagFast, KeyFlags: "RO",
			Summary: "Get the length of the value stored in a key", Since: "2.2.0", Handler: cmdStrlen}),
		one(&engine.Command{Name: "getrange", Arity: 4, Flags: r, KeyFlags: "RO access",
			Summary: "Get a substring of the string stored at a key", Since: "2.4.0", Complexity: rangeOp, Handler: cmdGetrange}),
		one(&engine.Command{Name: "substr", Arity: 4, Flags: r, KeyFlags: "RO access",
			Summary: "Get a substring of the string stored at a key", Since: "1.0.0", Complexity: rangeOp, Handler: cmdGetrange}),
		one(&engine.Command{Name: "setrange", Arity: 4, Flags: wd, KeyFlags: "RW update",
			Summary: "Overwrite part of a string at key starting at the specified offset", Since: "2.2.0",
			Complexity: "O(1), not counting the time taken to copy the new string in place. Usually, this string is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being the length of the value argument.",
			Handler:    cmdSetrange}),
		one(&engine.Command{Name: "incr", Arity: 2, Flags: wdf, KeyFlags: "RW access update",
			Summary: "Increment the integer value of a key by one", Since: "1.0.0", Handler: cmdIncr}),
		one(&engine.Command{Name: "decr", Arity: 2, Flags: wdf, KeyFlags: "RW access update",
			Summary: "Decrement the integer value of a key by one", Since: "1.0.0", Handler: cmdDecr}),
		one(&engine.Command{Name: "incrby", Arity: 3, Flags: wdf, KeyFlags: "RW access update",
			Summary: "Increment the integer value of a key by the given amount", Since: "1.0.0", Handler: cmdIncrby}),
		one(&engine.Command{Name: "decrby", Arity: 3, Flags: wdf, KeyFlags: "RW access update",
			Summary: "Decrement the integer value of a key by the given number", Since: "1.0.0", Handler: cmdDecrby}),
		one(&engine.Command{Name: "incrbyfloat", Arity: 3, Flags: wdf, KeyFlags: "RW access update",
			Summary: "Increment the float value of a key by the given amount", Since: "2.6.0", Handler: cmdIncrbyfloat}),
		&engine.Command{Name: "lcs", Arity: -3, Flags: r, First: 1, Last: 2, Step: 1, KeyFlags: "RO access",
			ACL: str, Group: grp, Summary: "Find longest common substring", Since: "7.0.0",
			Complexity: "O(N*M) where N and M are the lengths of s1 and s2, respectively", Handler: cmdLcs},
	)
}

// Error texts of this family that no other family uses.
const (
	errOffsetRange  = "ERR offset is out of range"
	errDecrOverflow = "ERR decrement would overflow"
)

// newStringNoInt makes a string object that is never integer-encoded
// (createStringObject: embstr up to 44 bytes, raw beyond).
func newStringNoInt(b []byte) *keyspace.Object {
	o := keyspace.NewRaw(append([]byte(nil), b...))
	if len(b) <= keyspace.EmbstrMaxLen {
		o.Enc = keyspace.EncEmbstr
	}
	return o
}

// rawBytes turns o into a raw string in place (dbUnshareStringValue) and
// returns its bytes, which the caller may then modify.
func rawBytes(o *keyspace.Object) []byte {
	if o.Enc == keyspace.EncInt {
		o.SetRaw(num.AppendInt(nil, o.Int()))
	}
	o.Enc = keyspace.EncRaw
	return o.Raw()
}

// checkStringLength is Redis's guard for APPEND and SETRANGE: the result
// may not exceed proto-max-bulk-len.
func checkStringLength(c *engine.Ctx, size, add int64) bool {
	total := uint64(size) + uint64(add)
	if int64(total) > c.Env.Cfg.Int(config.ProtoMaxBulkLen) || int64(total) < size || int64(total) < add {
		c.Error(engine.ErrStringTooLong)
		return false
	}
	return true
}

// flags of SET and GETEX (parseExtendedStringArgumentsOrReply).
const (
	setNX = 1 << iota
	setXX
	setGet
	setKeepTTL
	setPersist
	setEX
	setPX
	setEXAT
	setPXAT
	setExpireAny = setEX | setPX | setEXAT | setPXAT
)

// parseStringOpts parses SET's options (isSet) or GETEX's from argument
// start on, with Redis's rules for which combinations are a syntax error.
// It returns the flags and the expire argument, if any.
func parseStringOpts(c *engine.Ctx, start int, isSet bool) (flags int, expire []byte, ok bool) {
	args := c.Args
	for j := start; j < len(args); j++ {
		opt := args[j]
		hasNext := j+1 < len(args)
		// The expire options exclude each other, KEEPTTL and PERSIST, but
		// not themselves: "EX 1 EX 2" takes the last.
		expireOK := func(self int) bool {
			return flags&(setKeepTTL|setPersist) == 0 && flags&(setExpireAny&^self) == 0 && hasNext
		}
		switch {
		case isSet && ascii.OptIs(opt, "nx") && flags&setXX == 0:
			flags |= setNX
		case isSet && ascii.OptIs(opt, "xx") && flags&setNX == 0:
			flags |= setXX
		case isSet && ascii.OptIs(opt, "get"):
			flags |= setGet
		case isSet && ascii.OptIs(opt, "keepttl") && flags&(setPersist|setExpireAny) == 0:
			flags |= setKeepTTL
		case !isSet && ascii.OptIs(opt, "persist") && flags&(setKeepTTL|setExpireAny) == 0:
			flags |= setPersist
		case ascii.OptIs(opt, "ex") && expireOK(setEX):
			flags |= setEX
			expire = args[j+1]
			j++
		case ascii.OptIs(opt, "px") && expireOK(setPX):
			flags |= setPX
			expire = args[j+1]
			j++
		case ascii.OptIs(opt, "exat") && expireOK(setEXAT):
			flags |= setEXAT
			expire = args[j+1]
			j++
		case ascii.OptIs(opt, "pxat") && expireOK(setPXAT):
			flags |= setPXAT
			expire = args[j+1]
			j++
		default:
			c.Error(engine.ErrSyntax)
			return 0, nil, false
		}
	}
	return flags, expire, true
}

// parseSetExpire turns an EX/PX/EXAT/PXAT argument into a unix ms time
// (getExpireMillisecondsOrReply): the value must be positive, and neither
// the unit conversion nor adding the current time may overflow.
func parseSetExpire(c *engine.Ctx, arg []byte, flags int) (int64, bool) {
	v, ok := num.ParseInt(arg)
	if !ok {
		c.Error(engine.ErrNotInt)
		return 0, false
	}
	seconds := flags&(setEX|setEXAT) != 0
	if v <= 0 || (seconds && v > math.MaxInt64/1000) {
		c.Errorf(engine.ErrInvalidExpire, c.Cmd.Name)
		return 0, false
	}
	if seconds {
		v *= 1000
	}
	if flags&(setEX|setPX) != 0 {
		v += c.Now // may wrap, which the check below catches as Redis does
	}
	if v <= 0 {
		c.Errorf(engine.ErrInvalidExpire, c.Cmd.Name)
		return 0, false
	}
	return v, true
}

// replyString writes a string object's value as a bulk string.
func replyString(c *engine.Ctx, o *keyspace.Object) {
	if o.Enc == keyspace.EncInt {
		c.W.BulkInt(o.Int())
		return
	}
	c.W.Bulk(o.Raw())
}

// strLen is the length of a string object's value.
func strLen(o *keyspace.Object) int {
	if o.Enc == keyspace.EncInt {
		var tmp [24]byte
		return len(strconv.AppendInt(tmp[:0], o.Int(), 10))
	}
	return len(o.Raw())
}

// strBytes is a string object's value, formatted into scratch when it is
// an integer. (Object.Bytes formats through a function variable, which
// makes the scratch buffer escape to the heap.)
func strBytes(o *keyspace.Object, scratch []byte) []byte {
	if o.Enc == keyspace.EncInt {
		return strconv.AppendInt(scratch[:0], o.Int(), 10)
	}
	return o.Raw()
}

// replyGet is getGenericCommand: reply with the value at key or null; it
// returns false after replying WRONGTYPE.
func replyGet(c *engine.Ctx, key string) bool {
	o, ok := c.Lookup(key, keyspace.TypeString)
	if !ok {
		return false
	}
	if o == nil {
		c.W.Null()
	} else {
		replyString(c, o)
	}
	return true
}

func cmdGet(c *engine.Ctx) { replyGet(c, c.Key(1)) }

// setGeneric is setGenericCommand: SET, SETNX, SETEX and PSETEX. SETNX
// (intReply) answers 1 or 0 where the others answer OK or null.
// The key stays bytes until it is stored: lookups convert it without
// allocating, and StoreString copies it only for a new key.
func setGeneric(c *engine.Ctx, flags int, key, val, expire []byte, intReply bool) {
	var at int64
	if flags&setExpireAny != 0 {
		var ok bool
		if at, ok = parseSetExpire(c, expire, flags); !ok {
			return
		}
	}
	if flags&setGet != 0 && !replyGet(c, string(key)) {
		return
	}
	cur := c.DB.Lookup(string(key))
	if (flags&setNX != 0 && cur != nil) || (flags&setXX != 0 && cur == nil) {
		if flags&setGet == 0 {
			if intReply {
				c.W.Int(0)
			} else {
				c.W.Null()
			}
		}
		return
	}
	c.DB.StoreString(cur, key, val, at, flags&setKeepTTL != 0)
	c.Dirty(1)
	c.Notify(engine.NotifyString, "set", key)
	if flags&setExpireAny != 0 {
		c.Notify(engine.NotifyGeneric, "expire", key)
		// Any TTL replays as the absolute time, without the other
		// options (the write happened), as Redis 7.0 propagates it.
		c.Propagate([]byte("SET"), key, val, []byte("PXAT"), engine.MsArg(at))
	}
	if flags&setGet == 0 {
		if intReply {
			c.W.Int(1)
		} else {
			c.W.OK()
		}
	}
}

func cmdSet(c *engine.Ctx) {
	if len(c.Args) > 3 && setHasCondition(c.Args) {
		cmdSetCond(c) // IFEQ, IFNE, IFDEQ, IFDNE (condwrite.go)
		return
	}
	flags, expire, ok := parseStringOpts(c, 3, true)
	if !ok {
		return
	}
	setGeneric(c, flags, c.Args[1], c.Args[2], expire, false)
}

func cmdSetnx(c *engine.Ctx) {
	setGeneric(c, setNX, c.Args[1], c.Args[2], nil, true)
}

// cmdSetex serves SETEX (seconds) and PSETEX (milliseconds).
func cmdSetex(c *engine.Ctx) {
	flags := setEX
	if c.Cmd.Name == "psetex" {
		flags = setPX
	}
	setGeneric(c, flags, c.Args[1], c.Args[3], c.Args[2], false)
}

func cmdGetset(c *engine.Ctx) {
	key := c.Key(1)
	if !replyGet(c, key) {
		return
	}
	c.DB.Set(key, keyspace.NewString(c.Args[2]), false)
	c.Dirty(1)
	c.Notify(engine.NotifyString, "set", c.Args[1])
}

func cmdGetdel(c *engine.Ctx) {
	key := c.Key(1)
	o, ok := c.Lookup(key, keyspace.TypeString)
	if !ok {
		return
	}
	if o == nil {
		c.W.Null()
		return
	}
	replyString(c, o)
	c.DB.Delete(key)
	c.Dirty(1)
	c.Propagate([]byte("DEL"), c.Args[1])
	c.Notify(engine.NotifyGeneric, "del", c.Args[1])
}

func cmdGetex(c *engine.Ctx) {
	flags, expire, ok := parseStringOpts(c, 2, false)
	if !ok {
		return
	}
	key := c.Key(1)
	o, ok := c.Lookup(key, keyspace.TypeString)
	if !ok {
		return
	}
	if o == nil {
		c.W.Null()
		return
	}
	var at int64
	if flags&setExpireAny != 0 {
		if at, ok = parseSetExpire(c, expire, flags); !ok {
			return
		}
	}
	replyString(c, o)
	// GETEX is never propagated as received.
	switch {
	case flags&(setEXAT|setPXAT) != 0 && c.PastDeadline(at):
		// An absolute time already past deletes the key.
		c.DB.Delete(key)
		c.Dirty(1)
		c.Propagate([]byte("DEL"), c.Args[1])
		c.Notify(engine.NotifyGeneric, "del", c.Args[1])
	case flags&setExpireAny != 0:
		c.DB.SetExpire(o, at)
		c.Dirty(1)
		c.Propagate([]byte("PEXPIREAT"), c.Args[1], engine.MsArg(at))
		c.Notify(engine.NotifyGeneric, "expire", c.Args[1])
	case flags&setPersist != 0 && o.Expire != 0:
		c.DB.SetExpire(o, 0)
		c.Dirty(1)
		c.Propagate([]byte("PERSIST"), c.Args[1])
		c.Notify(engine.NotifyGeneric, "persist", c.Args[1])
	}
}

// cmdMset serves MSET and MSETNX.
func cmdMset(c *engine.Ctx) {
	if len(c.Args)%2 == 0 {
		c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
		return
	}
	nx := c.Cmd.Name == "msetnx"
	if nx {
		for j := 1; j < len(c.Args); j += 2 {
			if c.DB.Lookup(string(c.Args[j])) != nil {
				c.W.Int(0)
				return
			}
		}
	}
	c.DB.Prefetch(c.Args[1:], 2)
	for j := 1; j < len(c.Args); j += 2 {
		// setKey: the lookup expires a stale key first, as Redis's does.
		c.DB.StoreString(c.DB.Lookup(string(c.Args[j])), c.Args[j], c.Args[j+1], 0, false)
		c.Notify(engine.NotifyString, "set", c.Args[j])
	}
	c.Dirty(int64(len(c.Args)-1) / 2)
	if nx {
		c.W.Int(1)
	} else {
		c.W.OK()
	}
}

func cmdMget(c *engine.Ctx) {
	c.W.Array(len(c.Args) - 1)
	for _, k := range c.Args[1:] {
		o := c.DB.LookupRead(string(k))
		if o == nil || o.Type != keyspace.TypeString {
			c.W.Null()
			continue
		}
		replyString(c, o)
	}
}

func cmdAppend(c *engine.Ctx) {
	key, add := c.Key(1), c.Args[2]
	o, ok := c.LookupWrite(key, keyspace.TypeString)
	if !ok {
		return
	}
	var total int
	if o == nil {
		o = keyspace.NewString(add)
		c.DB.Set(key, o, false)
		total = len(add)
	} else {
		if !checkStringLength(c, int64(strLen(o)), int64(len(add))) {
			return
		}
		o.SetRaw(append(rawBytes(o), add...))
		total = len(o.Raw())
		c.DB.Renewed(o) // the write lookup counted the access
		c.DB.Modified(o.Key)
	}
	c.Dirty(1)
	c.Notify(engine.NotifyString, "append", c.Args[1])
	c.W.Int(int64(total))
}

func cmdStrlen(c *engine.Ctx) {
	o, ok := c.Lookup(c.Key(1), keyspace.TypeString)
	if !ok {
		return
	}
	if o == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(strLen(o)))
}

// cmdGetrange serves GETRANGE and SUBSTR.
func cmdGetrange(c *engine.Ctx) {
	start, ok := c.Int(2)
	if !ok {
		return
	}
	end, ok := c.Int(3)
	if !ok {
		return
	}
	o, ok := c.Lookup(c.Key(1), keyspace.TypeString)
	if !ok {
		return
	}
	if o == nil {
		c.W.Bulk(nil)
		return
	}
	var tmp [24]byte
	s := strBytes(o, tmp[:0])
	n := int64(len(s))
	if start < 0 && end < 0 && start > end {
		c.W.Bulk(nil)
		return
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		c.W.Bulk(nil)
		return
	}
	c.W.Bulk(s[start : end+1])
}

func cmdSetrange(c *engine.Ctx) {
	offset, ok := c.Int(2)
	if !ok {
		return
	}
	if offset < 0 {
		c.Error(errOffsetRange)
		return
	}
	key, val := c.Key(1), c.Args[3]
	o, ok := c.LookupWrite(key, keyspace.TypeString)
	if !ok {
		return
	}
	if o == nil {
		if len(val) == 0 {
			c.W.Int(0)
			return
		}
		if !checkStringLength(c, offset, int64(len(val))) {
			return
		}
		o = keyspace.NewRaw(make([]byte, int(offset)+len(val)))
		copy(o.Raw()[offset:], val)
		c.DB.Set(key, o, false)
	} else {
		if len(val) == 0 {
			c.W.Int(int64(strLen(o)))
			return
		}
		if !checkStringLength(c, offset, int64(len(val))) {
			return
		}
		b := rawBytes(o)
		if need := int(offset) + len(val); need > len(b) {
			b = append(b, make([]byte, need-len(b))...)
		}
		copy(b[offset:], val)
		o.SetRaw(b)
		c.DB.Renewed(o) // the write lookup counted the access
		c.DB.Modified(o.Key)
	}
	c.Dirty(1)
	c.Notify(engine.NotifyString, "setrange", c.Args[1])
	c.W.Int(int64(len(o.Raw())))
}

func cmdIncr(c *engine.Ctx) { incrDecr(c, 1) }
func cmdDecr(c *engine.Ctx) { incrDecr(c, -1) }

func cmdIncrby(c *engine.Ctx) {
	if by, ok := c.Int(2); ok {
		incrDecr(c, by)
	}
}

func cmdDecrby(c *engine.Ctx) {
	by, ok := c.Int(2)
	if !ok {
		return
	}
	if by == math.MinInt64 {
		c.Error(errDecrOverflow)
		return
	}
	incrDecr(c, -by)
}

// incrDecr adds by to the integer at key. An existing key is updated in
// place, keeping its TTL: an integer-encoded value costs no allocation.
func incrDecr(c *engine.Ctx, by int64) {
	o := c.DB.Lookup(string(c.Args[1]))
	var v int64
	if o != nil {
		if o.Type != keyspace.TypeString {
			c.Error(engine.ErrWrongType)
			return
		}
		if o.Enc == keyspace.EncInt {
			v = o.Int()
		} else {
			var ok bool
			if v, ok = num.ParseInt(o.Raw()); !ok {
				c.Error(engine.ErrNotInt)
				return
			}
		}
	}
	if (by < 0 && v < 0 && by < math.MinInt64-v) || (by > 0 && v > 0 && by > math.MaxInt64-v) {
		c.Error(engine.ErrOverflow)
		return
	}
	v += by
	if o != nil {
		// Redis replaces the object when the result is a shared integer;
		// either way the value is no longer a private copy.
		o.SetInt(v)
		o.Owned = false
		engine.TouchLRU(c, o)
		c.DB.Modified(o.Key)
	} else {
		c.DB.Set(c.Key(1), keyspace.NewInt(v), false)
	}
	c.Dirty(1)
	c.Notify(engine.NotifyString, "incrby", c.Args[1])
	c.W.Int(v)
}

// cmdIncrbyfloat adds in x87 long double precision, as Redis does, and
// stores the result as text ("%.17Lf" with trailing zeros removed).
func cmdIncrbyfloat(c *engine.Ctx) {
	o, ok := c.LookupWrite(c.Key(1), keyspace.TypeString)
	if !ok {
		return
	}
	cur := num.LongDoubleFromInt(0)
	if o != nil {
		if o.Enc == keyspace.EncInt {
			cur = num.LongDoubleFromInt(o.Int())
		} else if cur, ok = num.ParseLongDouble(o.Raw()); !ok {
			c.Error(engine.ErrNotFloat)
			return
		}
	}
	incr, ok := num.ParseLongDouble(c.Args[2])
	if !ok {
		c.Error(engine.ErrNotFloat)
		return
	}
	// inf+x is inf and inf-inf is NaN: either way an error, which also
	// keeps big.Float from panicking on the NaN.
	if cur.IsInf() || incr.IsInf() {
		c.Error(engine.ErrNaNOrInf)
		return
	}
	sum := num.AddLongDouble(cur, incr)
	if !num.LongDoubleInRange(sum) {
		c.Error(engine.ErrNaNOrInf)
		return
	}
	s := num.FormatLongDouble(sum)
	if o != nil {
		// Overwrite in place: the key keeps its TTL, as dbOverwrite does.
		o.SetRaw(append(o.Raw()[:0:0], s...))
		o.Enc = keyspace.EncRaw
		if len(s) <= keyspace.EmbstrMaxLen {
			o.Enc = keyspace.EncEmbstr
		}
		c.DB.Renewed(o) // the write lookup counted the access
		c.DB.Modified(o.Key)
	} else {
		o = newStringNoInt([]byte(s))
		c.DB.Set(c.Key(1), o, false)
	}
	c.Dirty(1)
	c.Notify(engine.NotifyString, "incrbyfloat", c.Args[1])
	// The result, not the increment, so that float formatting and
	// rounding are not replayed.
	c.Propagate([]byte("SET"), c.Args[1], []byte(s), []byte("KEEPTTL"))
	c.W.BulkString(s)
}
