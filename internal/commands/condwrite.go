package commands

import (
	"bytes"
	"math"
	"math/big"
	"strconv"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
	"github.com/abacusdb/abacus/internal/xxh3"
)

// Conditional writes (issue 6), for locks and counters without scripts:
// SET's IFEQ (Valkey 8.1) and IFNE/IFDEQ/IFDNE (Redis 8.4), DIGEST and
// DELEX (Redis 8.4), DELIFEQ (Valkey 9.0), MSETEX (Redis 8.4) and INCREX
// (Redis 8.8). A digest is XXH3-64 of the value, printed as 16 lower-case
// hex digits; a digest argument is 1 to 16 hex digits in either case,
// compared as a number. A condition never creates a key when it asks for
// equality (IFEQ, IFDEQ) and treats a missing key as unequal (IFNE, IFDNE
// create it); against a value of another type it is WRONGTYPE.
// docs/metrics.md shows the lock with fencing tokens built from these.

func init() {
	const (
		grp = "string"
		str = "@string"
	)
	engine.Register(
		&engine.Command{Name: "digest", Arity: 2, Flags: engine.FlagReadonly | engine.FlagFast, First: 1, Last: 1, Step: 1,
			KeyFlags: "RO access", ACL: str, Group: grp,
			Summary: "Returns the hash digest of a string value as a hexadecimal string.", Since: "8.4.0",
			Complexity: "O(N) where N is the length of the string value.", Handler: cmdDigest},
		&engine.Command{Name: "delex", Arity: -2, Flags: engine.FlagWrite | engine.FlagFast, First: 1, Last: 1, Step: 1,
			KeyFlags: "RW delete variable_flags", ACL: str, Group: grp,
			Summary: "Conditionally removes the specified key based on value or digest comparison.", Since: "8.4.0",
			Complexity: "O(1) for IFEQ/IFNE, O(N) for IFDEQ/IFDNE where N is the length of the string value.",
			Handler:    cmdDelex},
		&engine.Command{Name: "delifeq", Arity: 3, Flags: engine.FlagWrite | engine.FlagFast, First: 1, Last: 1, Step: 1,
			KeyFlags: "RW delete", ACL: str, Group: grp,
			Summary: "Delete key if value matches string.", Since: "9.0.0",
			Complexity: "O(1)", Handler: cmdDelifeq},
		&engine.Command{Name: "msetex", Arity: -4, Flags: engine.FlagWrite | engine.FlagDenyOOM | engine.FlagMovableKeys, Keys: msetexKeys,
			KeyFlags: "OW update", Tips: "request_policy:multi_shard response_policy:all_succeeded", ACL: str, Group: grp,
			Summary: "Atomically sets multiple string keys with a shared expiration in a single operation.", Since: "8.4.0",
			Complexity: "O(N) where N is the number of keys to set.", Handler: cmdMsetex},
		&engine.Command{Name: "increx", Arity: -2, Flags: engine.FlagWrite | engine.FlagDenyOOM | engine.FlagFast, First: 1, Last: 1, Step: 1,
			KeyFlags: "RW access update", ACL: str, Group: grp,
			Summary: "Increments the numeric value of a key by a number and sets its expiration time.", Since: "8.8.0",
			Complexity: "O(1)", Handler: cmdIncrex},
	)
}

// Error texts of the conditional writes (Abacus's where the documentation
// gives none).
const (
	errDigestArg   = "ERR digest must be a hexadecimal number of 1 to 16 digits"
	errMsetexKeys  = "ERR numkeys should be greater than 0"
	errIncrexBound = "ERR LBOUND must be less than or equal to UBOUND"
)

// condKind is a value condition.
type condKind uint8

const (
	condNone condKind = iota
	condEQ
	condNE
	condDEQ
	condDNE
)

func condOf(opt []byte) condKind {
	switch {
	case ascii.OptIs(opt, "ifeq"):
		return condEQ
	case ascii.OptIs(opt, "ifne"):
		return condNE
	case ascii.OptIs(opt, "ifdeq"):
		return condDEQ
	case ascii.OptIs(opt, "ifdne"):
		return condDNE
	}
	return condNone
}

// cond is a parsed condition on a string key's value.
type cond struct {
	kind   condKind
	val    []byte
	digest uint64
}

// parseCond makes the condition kind with its argument, replying with an
// error (ok false) for a malformed digest.
func parseCond(c *engine.Ctx, kind condKind, arg []byte) (cond, bool) {
	cd := cond{kind: kind, val: arg}
	if kind == condDEQ || kind == condDNE {
		if len(arg) == 0 || len(arg) > 16 {
			c.Error(errDigestArg)
			return cd, false
		}
		d, err := strconv.ParseUint(string(arg), 16, 64)
		if err != nil || arg[0] == '+' || arg[0] == '-' {
			c.Error(errDigestArg)
			return cd, false
		}
		cd.digest = d
	}
	return cd, true
}

// holds reports whether the condition holds for the string object o (nil
// for a missing key).
func (cd cond) holds(o *keyspace.Object) bool {
	if o == nil {
		return cd.kind == condNE || cd.kind == condDNE
	}
	var tmp [24]byte
	v := strBytes(o, tmp[:0])
	switch cd.kind {
	case condEQ:
		return bytes.Equal(v, cd.val)
	case condNE:
		return !bytes.Equal(v, cd.val)
	case condDEQ:
		return xxh3.Hash(v) == cd.digest
	case condDNE:
		return xxh3.Hash(v) != cd.digest
	}
	return true
}

// appendDigest appends d as DIGEST prints it.
func appendDigest(dst []byte, d uint64) []byte {
	const hex = "0123456789abcdef"
	for s := 60; s >= 0; s -= 4 {
		dst = append(dst, hex[d>>uint(s)&15])
	}
	return dst
}

func cmdDigest(c *engine.Ctx) {
	o, ok := c.Lookup(c.Key(1), keyspace.TypeString)
	if !ok {
		return
	}
	if o == nil {
		c.W.Null()
		return
	}
	var tmp [24]byte
	var out [16]byte
	c.W.Bulk(appendDigest(out[:0], xxh3.Hash(strBytes(o, tmp[:0]))))
}

// condDelete deletes key when cd holds for its string value: DELEX with a
// condition and DELIFEQ.
func condDelete(c *engine.Ctx, cd cond) {
	key := c.Key(1)
	o := c.DB.Lookup(key)
	switch {
	case o == nil:
		c.W.Int(0)
	case o.Type != keyspace.TypeString:
		c.Error(engine.ErrWrongType)
	case !cd.holds(o):
		c.W.Int(0)
	default:
		c.DB.Delete(key)
		c.Dirty(1)
		c.Notify(engine.NotifyGeneric, "del", c.Args[1])
		c.W.Int(1)
	}
}

func cmdDelex(c *engine.Ctx) {
	if len(c.Args) == 2 {
		// No condition: DEL of one key, whatever its type.
		if c.DB.Delete(c.Key(1)) {
			c.Dirty(1)
			c.Notify(engine.NotifyGeneric, "del", c.Args[1])
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
		return
	}
	kind := condOf(c.Args[2])
	if len(c.Args) != 4 || kind == condNone {
		c.Error(engine.ErrSyntax)
		return
	}
	if cd, ok := parseCond(c, kind, c.Args[3]); ok {
		condDelete(c, cd)
	}
}

func cmdDelifeq(c *engine.Ctx) { condDelete(c, cond{kind: condEQ, val: c.Args[2]}) }

// isExpireOpt reports whether opt is one of the expire options that take
// an argument.
func isExpireOpt(opt []byte) bool {
	return ascii.OptIs(opt, "ex") || ascii.OptIs(opt, "px") || ascii.OptIs(opt, "exat") || ascii.OptIs(opt, "pxat")
}

// expireFlag is the SET flag of an expire option (isExpireOpt).
func expireFlag(opt []byte) int {
	switch {
	case ascii.OptIs(opt, "ex"):
		return setEX
	case ascii.OptIs(opt, "px"):
		return setPX
	case ascii.OptIs(opt, "exat"):
		return setEXAT
	}
	return setPXAT
}

// setHasCondition reports whether SET's options hold IFEQ, IFNE, IFDEQ or
// IFDNE, walking them as SET's parser does (an expire option takes the
// next argument). strings.go's cmdSet hands such a SET to cmdSetCond.
func setHasCondition(args [][]byte) bool {
	for j := 3; j < len(args); j++ {
		if isExpireOpt(args[j]) {
			j++
		} else if condOf(args[j]) != condNone {
			return true
		}
	}
	return false
}

// cmdSetCond is SET with a condition: the condition is taken out and the
// other options go through SET's own parser; NX and XX do not combine
// with a condition, nor two conditions with each other.
func cmdSetCond(c *engine.Ctx) {
	rest := make([][]byte, 0, len(c.Args))
	var kind condKind
	var arg []byte
	for j := 0; j < len(c.Args); j++ {
		a := c.Args[j]
		if j >= 3 {
			if isExpireOpt(a) && j+1 < len(c.Args) {
				rest = append(rest, a, c.Args[j+1])
				j++
				continue
			}
			if k := condOf(a); k != condNone {
				if kind != condNone || j+1 >= len(c.Args) {
					c.Error(engine.ErrSyntax)
					return
				}
				kind, arg = k, c.Args[j+1]
				j++
				continue
			}
		}
		rest = append(rest, a)
	}
	all := c.Args
	c.Args = rest
	flags, expire, ok := parseStringOpts(c, 3, true)
	c.Args = all
	if !ok {
		return
	}
	if flags&(setNX|setXX) != 0 {
		c.Error(engine.ErrSyntax)
		return
	}
	cd, ok := parseCond(c, kind, arg)
	if !ok {
		return
	}
	var at int64
	if flags&setExpireAny != 0 {
		if at, ok = parseSetExpire(c, expire, flags); !ok {
			return
		}
	}
	key := c.Args[1]
	cur := c.DB.Lookup(string(key))
	if cur != nil && cur.Type != keyspace.TypeString {
		c.Error(engine.ErrWrongType)
		return
	}
	get := flags&setGet != 0
	if get {
		if cur == nil {
			c.W.Null()
		} else {
			replyString(c, cur)
		}
	}
	if !cd.holds(cur) {
		if !get {
			c.W.Null()
		}
		return
	}
	c.DB.StoreString(cur, key, c.Args[2], at, flags&setKeepTTL != 0)
	c.Dirty(1)
	c.Notify(engine.NotifyString, "set", key)
	if flags&setExpireAny != 0 {
		c.Notify(engine.NotifyGeneric, "expire", key)
	}
	if !get {
		c.W.OK()
	}
}

// msetexKeys: numkeys at 1, then key value pairs.
func msetexKeys(args [][]byte) []int {
	if len(args) < 2 {
		return nil
	}
	n, ok := num.ParseInt(args[1])
	if !ok || n <= 0 || n > int64(len(args)-2)/2 {
		return nil
	}
	out := make([]int, n)
	for i := range out {
		out[i] = 2 + 2*i
	}
	return out
}

// cmdMsetex is MSETEX numkeys key value [key value ...] [NX | XX]
// [EX s | PX ms | EXAT s | PXAT ms | KEEPTTL], options in any order.
func cmdMsetex(c *engine.Ctx) {
	n, ok := num.ParseInt(c.Args[1])
	if !ok {
		c.Error(engine.ErrNotInt)
		return
	}
	if n <= 0 {
		c.Error(errMsetexKeys)
		return
	}
	if n > int64(len(c.Args)-2)/2 {
		c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
		return
	}
	end := 2 + 2*int(n)
	flags := 0
	var expire []byte
	for j := end; j < len(c.Args); j++ {
		opt := c.Args[j]
		switch {
		case ascii.OptIs(opt, "nx") && flags&setXX == 0:
			flags |= setNX
		case ascii.OptIs(opt, "xx") && flags&setNX == 0:
			flags |= setXX
		case ascii.OptIs(opt, "keepttl") && flags&setExpireAny == 0:
			flags |= setKeepTTL
		case isExpireOpt(opt) && j+1 < len(c.Args) && flags&setKeepTTL == 0:
			f := expireFlag(opt)
			if flags&(setExpireAny&^f) != 0 {
				c.Error(engine.ErrSyntax)
				return
			}
			flags |= f
			expire = c.Args[j+1]
			j++
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	var at int64
	if flags&setExpireAny != 0 {
		if at, ok = parseSetExpire(c, expire, flags); !ok {
			return
		}
	}
	if flags&(setNX|setXX) != 0 {
		for j := 2; j < end; j += 2 {
			exists := c.DB.Lookup(string(c.Args[j])) != nil
			if exists == (flags&setNX != 0) {
				c.W.Int(0)
				return
			}
		}
	}
	for j := 2; j < end; j += 2 {
		c.DB.StoreString(c.DB.Lookup(string(c.Args[j])), c.Args[j], c.Args[j+1], at, flags&setKeepTTL != 0)
		c.Notify(engine.NotifyString, "set", c.Args[j])
		if at != 0 {
			c.Notify(engine.NotifyGeneric, "expire", c.Args[j])
		}
	}
	c.Dirty(n)
	c.W.Int(1)
}

// increxOpts are INCREX's parsed options.
type increxOpts struct {
	float, saturate, enx, persist bool
	by, lb, ub, expire            []byte
	expFlags                      int
}

func parseIncrex(c *engine.Ctx) (o increxOpts, ok bool) {
	args := c.Args
	mode := 0 // 1 BYINT, 2 BYFLOAT
	for j := 2; j < len(args); j++ {
		opt := args[j]
		next := j+1 < len(args)
		switch {
		case (ascii.OptIs(opt, "byint") || ascii.OptIs(opt, "byfloat")) && next:
			m := 1
			if ascii.OptIs(opt, "byfloat") {
				m = 2
			}
			if mode != 0 && mode != m {
				c.Error(engine.ErrSyntax)
				return o, false
			}
			mode, o.by = m, args[j+1]
			j++
		case ascii.OptIs(opt, "lbound") && next:
			o.lb = args[j+1]
			j++
		case ascii.OptIs(opt, "ubound") && next:
			o.ub = args[j+1]
			j++
		case ascii.OptIs(opt, "saturate"):
			o.saturate = true
		case ascii.OptIs(opt, "enx"):
			o.enx = true
		case ascii.OptIs(opt, "persist") && o.expFlags == 0:
			o.persist = true
		case isExpireOpt(opt) && next && !o.persist:
			f := expireFlag(opt)
			if o.expFlags&^f != 0 {
				c.Error(engine.ErrSyntax)
				return o, false
			}
			o.expFlags, o.expire = f, args[j+1]
			j++
		default:
			c.Error(engine.ErrSyntax)
			return o, false
		}
	}
	if o.enx && o.expFlags == 0 {
		c.Error(engine.ErrSyntax)
		return o, false
	}
	o.float = mode == 2
	return o, true
}

// cmdIncrex is INCREX key [BYINT n | BYFLOAT f] [LBOUND l] [UBOUND u]
// [SATURATE] [EX s | PX ms | EXAT s | PXAT ms | PERSIST] [ENX]. A result
// outside the bounds (or the type's range) is skipped, replying [current,
// 0] with the key and its TTL untouched, or with SATURATE clamped to the
// bound. Reply: [new value, increment applied].
func cmdIncrex(c *engine.Ctx) {
	opts, ok := parseIncrex(c)
	if !ok {
		return
	}
	key := c.Key(1)
	if opts.float {
		increxFloat(c, key, opts)
		return
	}
	incr, lb, ub := int64(1), int64(math.MinInt64), int64(math.MaxInt64)
	for _, p := range []struct {
		arg []byte
		v   *int64
	}{{opts.by, &incr}, {opts.lb, &lb}, {opts.ub, &ub}} {
		if p.arg != nil {
			if *p.v, ok = num.ParseInt(p.arg); !ok {
				c.Error(engine.ErrNotInt)
				return
			}
		}
	}
	if lb > ub {
		c.Error(errIncrexBound)
		return
	}
	at, ok := increxExpire(c, opts)
	if !ok {
		return
	}
	o := c.DB.Lookup(key)
	var cur int64
	if o != nil {
		if o.Type != keyspace.TypeString {
			c.Error(engine.ErrWrongType)
			return
		}
		var tmp [24]byte
		if cur, ok = num.ParseInt(strBytes(o, tmp[:0])); !ok {
			c.Error(engine.ErrNotInt)
			return
		}
	}
	over := incr > 0 && cur > math.MaxInt64-incr || incr < 0 && cur < math.MinInt64-incr
	next := cur + incr
	if over || next < lb || next > ub {
		if !opts.saturate {
			c.W.Array(2)
			c.W.Int(cur)
			c.W.Int(0)
			return
		}
		if over && incr > 0 || !over && next > ub {
			next = ub
		} else {
			next = lb
		}
		if d := next - cur; (next >= 0) != (cur >= 0) && (d >= 0) != (next >= 0) {
			c.Error(engine.ErrOverflow) // the applied increment does not fit
			return
		}
	}
	var buf [24]byte
	increxStore(c, o, key, num.AppendInt(buf[:0], next), at, opts)
	c.W.Array(2)
	c.W.Int(next)
	c.W.Int(next - cur)
}

// increxExpire parses the expire option (0 when none).
func increxExpire(c *engine.Ctx, opts increxOpts) (int64, bool) {
	if opts.expFlags == 0 {
		return 0, true
	}
	return parseSetExpire(c, opts.expire, opts.expFlags)
}

// increxStore writes the new value with INCREX's TTL rules: no option
// keeps the TTL, PERSIST drops it, EX/PX/EXAT/PXAT set it, with ENX only
// on a key that has none.
func increxStore(c *engine.Ctx, o *keyspace.Object, key string, val []byte, at int64, opts increxOpts) {
	keep := opts.expFlags == 0 && !opts.persist || opts.enx && o != nil && o.Expire != 0
	if keep {
		at = 0
	}
	persisted := opts.persist && o != nil && o.Expire != 0
	c.DB.StoreString(o, []byte(key), val, at, keep)
	c.Dirty(1)
	if opts.float {
		c.Notify(engine.NotifyString, "incrbyfloat", c.Args[1])
	} else {
		c.Notify(engine.NotifyString, "incrby", c.Args[1])
	}
	switch {
	case at != 0:
		c.Notify(engine.NotifyGeneric, "expire", c.Args[1])
	case persisted:
		c.Notify(engine.NotifyGeneric, "persist", c.Args[1])
	}
}

func increxFloat(c *engine.Ctx, key string, opts increxOpts) {
	incr := num.LongDoubleFromInt(1)
	var lb, ub num.LongDouble
	for _, p := range []struct {
		arg []byte
		v   *num.LongDouble
	}{{opts.by, &incr}, {opts.lb, &lb}, {opts.ub, &ub}} {
		if p.arg != nil {
			v, ok := num.ParseLongDouble(p.arg)
			if !ok || v.IsInf() {
				c.Error(engine.ErrNotFloat)
				return
			}
			*p.v = v
		}
	}
	if lb != nil && ub != nil && lb.Cmp(ub) > 0 {
		c.Error(errIncrexBound)
		return
	}
	at, ok := increxExpire(c, opts)
	if !ok {
		return
	}
	o := c.DB.Lookup(key)
	cur := num.LongDoubleFromInt(0)
	if o != nil {
		if o.Type != keyspace.TypeString {
			c.Error(engine.ErrWrongType)
			return
		}
		var tmp [24]byte
		if cur, ok = num.ParseLongDouble(strBytes(o, tmp[:0])); !ok {
			c.Error(engine.ErrNotFloat)
			return
		}
		if cur.IsInf() {
			c.Error(engine.ErrNaNOrInf)
			return
		}
	}
	next := num.AddLongDouble(cur, incr)
	if next.MantExp(nil) > ldblMaxExp {
		// Past ±LDBL_MAX, the type's limits: out of bounds like any bound
		// (skipped, or saturated to the limit).
		if !opts.saturate {
			increxFloatReply(c, cur, num.LongDoubleFromInt(0))
			return
		}
		next = ldblMax(next.Signbit())
	} else if !num.LongDoubleInRange(next) {
		c.Error(engine.ErrNaNOrInf)
		return
	}
	if lb != nil && next.Cmp(lb) < 0 || ub != nil && next.Cmp(ub) > 0 {
		if !opts.saturate {
			increxFloatReply(c, cur, num.LongDoubleFromInt(0))
			return
		}
		if lb != nil && next.Cmp(lb) < 0 {
			next = lb
		} else {
			next = ub
		}
	}
	delta := new(big.Float).SetPrec(cur.Prec()).SetMode(cur.Mode()).Sub(next, cur)
	increxStore(c, o, key, []byte(num.FormatLongDouble(next)), at, opts)
	increxFloatReply(c, next, delta)
}

// ldblMaxExp is the binary exponent of LDBL_MAX (MantExp's, mantissa in
// [0.5, 1)): a long double at or past 2^16384 is out of range.
const ldblMaxExp = 16384

// ldblMax is ±LDBL_MAX: 64 mantissa bits set, just under 2^16384.
func ldblMax(neg bool) num.LongDouble {
	m := new(big.Float).SetPrec(64).SetUint64(math.MaxUint64)
	f := new(big.Float).SetPrec(64).SetMode(big.ToNearestEven).SetMantExp(m, ldblMaxExp-64)
	if neg {
		f.Neg(f)
	}
	return f
}

// increxFloatReply writes BYFLOAT's pair: bulk strings in RESP2 (the
// value as INCRBYFLOAT prints it), doubles in RESP3.
func increxFloatReply(c *engine.Ctx, v, d num.LongDouble) {
	c.W.Array(2)
	for _, x := range []num.LongDouble{v, d} {
		if c.W.Proto == 3 {
			f, _ := x.Float64()
			c.W.Double(f)
		} else {
			c.W.BulkString(num.FormatLongDouble(x))
		}
	}
}
