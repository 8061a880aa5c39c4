package commands

import (
	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/ds/bitmap"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
)

// The bitmap family (bitops.c): SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP
// here, BITFIELD and BITFIELD_RO in bitmaps_field.go. Bitmaps are plain
// string values; the bit algorithms live in internal/ds/bitmap and this
// file does what Redis's command layer does around them: argument checks
// in Redis's order, the lookups (read lookups count keyspace hits and
// misses, write lookups do not), and the side effects on the value:
//   - a write makes the value a raw string (dbUnshareStringValue), so an
//     integer-encoded string becomes its decimal digits first, and OBJECT
//     ENCODING says "raw" afterwards even if no bit changed;
//   - a write counts as a change (dirty, WATCH) only when the key was
//     created, the string grew, or a bit or field actually changed, as
//     Redis 7.0's lookupStringForBitCommand and its callers decide.

func init() {
	const (
		grp = "bitmap"
		acl = "@bitmap"
	)
	one := func(c *engine.Command) *engine.Command {
		c.First, c.Last, c.Step = 1, 1, 1
		c.ACL, c.Group = acl, grp
		return c
	}
	engine.Register(
		one(&engine.Command{Name: "setbit", Arity: 4, Flags: engine.FlagWrite | engine.FlagDenyOOM, KeyFlags: "RW access update",
			Summary: "Sets or clears the bit at offset in the string value stored at key", Since: "2.2.0",
			Complexity: "O(1)", Handler: cmdSetbit}),
		one(&engine.Command{Name: "getbit", Arity: 3, Flags: engine.FlagReadonly | engine.FlagFast, KeyFlags: "RO access",
			Summary: "Returns the bit value at offset in the string value stored at key", Since: "2.2.0",
			Complexity: "O(1)", Handler: cmdGetbit}),
		one(&engine.Command{Name: "bitcount", Arity: -2, Flags: engine.FlagReadonly, KeyFlags: "RO access",
			Summary: "Count set bits in a string", Since: "2.6.0",
			Complexity: "O(N)", Handler: cmdBitcount}),
		one(&engine.Command{Name: "bitpos", Arity: -3, Flags: engine.FlagReadonly, KeyFlags: "RO access",
			Summary: "Find first bit set or clear in a string", Since: "2.8.7",
			Complexity: "O(N)", Handler: cmdBitpos}),
		// Redis gives BITOP two key specs, the destination "OW update" and
		// the sources "RO access"; the table holds one, and the stricter
		// one is the safe choice for key permission checks.
		&engine.Command{Name: "bitop", Specs: keySpecs["bitop"], Arity: -4, Flags: engine.FlagWrite | engine.FlagDenyOOM, First: 2, Last: -1, Step: 1,
			KeyFlags: "OW update", ACL: acl, Group: grp,
			Summary: "Perform bitwise operations between strings", Since: "2.6.0",
			Complexity: "O(N)", Handler: cmdBitop},
		one(&engine.Command{Name: "bitfield", Specs: keySpecs["bitfield"], Arity: -2, Flags: engine.FlagWrite | engine.FlagDenyOOM, KeyFlags: "RW access update variable_flags",
			Summary: "Perform arbitrary bitfield integer operations on strings", Since: "3.2.0",
			Complexity: "O(1) for each subcommand specified", Handler: cmdBitfield}),
		one(&engine.Command{Name: "bitfield_ro", Arity: -2, Flags: engine.FlagReadonly | engine.FlagFast, KeyFlags: "RO access",
			Summary: "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD", Since: "6.0.0",
			Complexity: "O(1) for each subcommand specified", Handler: cmdBitfieldRO}),
	)
}

// Error texts of the bitmap family.
const (
	errBitOffset   = "ERR bit offset is not an integer or out of range"
	errBitValue    = "ERR bit is not an integer or out of range"
	errBitArg      = "ERR The bit argument must be 1 or 0."
	errBitopNot    = "ERR BITOP NOT must be called with a single source key."
	errBitopTwoFmt = "ERR BITOP %s must be called with at least two source keys."
)

// bitWord reports whether arg equals word (lower case ASCII) as Redis's
// strcasecmp compares them: ASCII case folding, and arg ends at its first
// NUL byte, as the C string does.
func bitWord(arg []byte, word string) bool {
	arg = ascii.CStr(arg)
	if len(arg) != len(word) {
		return false
	}
	for i, ch := range arg {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		if ch != word[i] {
			return false
		}
	}
	return true
}

// bitOffsetArg parses a bit offset as Redis's getBitOffsetFromArgument
// does: a non-negative integer whose byte (offset/8) is below
// proto-max-bulk-len. With hash (BITFIELD), "#n" means n*bits, multiplied
// in 64 bits with C's wrap-around.
func bitOffsetArg(c *engine.Ctx, arg []byte, hash bool, bits int) (uint64, bool) {
	useHash := hash && len(arg) > 0 && arg[0] == '#'
	if useHash {
		arg = arg[1:]
	}
	v, ok := num.ParseInt(arg)
	if ok && useHash {
		v = int64(uint64(v) * uint64(bits))
	}
	if !ok || v < 0 || v>>3 >= c.Env.Cfg.Int(config.ProtoMaxBulkLen) {
		c.Error(errBitOffset)
		return 0, false
	}
	return uint64(v), true
}

// bitBytes returns a string object's value for reading; integer
// strings are formatted into scratch.
func bitBytes(o *keyspace.Object, scratch []byte) []byte {
	return o.Bytes(scratch[:0])
}

// bitStringForWrite is Redis's lookupStringForBitCommand: it looks key up
// for a write and returns its string object, made raw and grown with zero
// bytes to hold bit maxbit, creating the key if it is missing. grew
// reports that the key was created or its string got longer, which counts
// as a change even if no bit does. ok is false after a WRONGTYPE reply.
func bitStringForWrite(c *engine.Ctx, key string, maxbit uint64) (o *keyspace.Object, grew, ok bool) {
	o, ok = c.LookupWrite(key, keyspace.TypeString)
	if !ok {
		return nil, false, false
	}
	need := maxbit>>3 + 1
	if o == nil {
		o = keyspace.NewRaw(make([]byte, need))
		c.DB.Set(key, o, false)
		return o, true, true
	}
	bitUnshare(c, o)
	if uint64(len(o.Raw())) < need {
		o.SetRaw(bitmap.Grow(o.Raw(), maxbit+1))
		grew = true
	}
	return o, grew, true
}

// bitUnshare is Redis's dbUnshareStringValue for a live string object
// about to be modified in place: the value becomes raw, an integer turned
// into its digits. Redis replaces the object, which also renews its access
// time.
func bitUnshare(c *engine.Ctx, o *keyspace.Object) {
	if o.Enc == keyspace.EncInt {
		o.SetRaw(num.AppendInt(nil, o.Int()))
	}
	o.Enc = keyspace.EncRaw
	c.DB.Renewed(o)
}

func cmdSetbit(c *engine.Ctx) {
	offset, ok := bitOffsetArg(c, c.Args[2], false, 0)
	if !ok {
		return
	}
	on, ok := num.ParseInt(c.Args[3])
	if !ok || on&^1 != 0 {
		c.Error(errBitValue)
		return
	}
	key := c.Key(1)
	o, grew, ok := bitStringForWrite(c, key, offset)
	if !ok {
		return
	}
	var old int
	var nb []byte
	nb, old = bitmap.SetBit(o.Raw(), offset, int(on))
	o.SetRaw(nb)
	if grew || old != int(on) {
		c.DB.Modified(key)
		c.Dirty(1)
		c.Notify(engine.NotifyString, "setbit", c.Args[1])
	}
	c.W.Int(int64(old))
}

func cmdGetbit(c *engine.Ctx) {
	offset, ok := bitOffsetArg(c, c.Args[2], false, 0)
	if !ok {
		return
	}
	o, ok := c.Lookup(c.Key(1), keyspace.TypeString)
	if !ok {
		return
	}
	if o == nil {
		c.W.Int(0)
		return
	}
	var tmp [24]byte
	c.W.Int(int64(bitmap.GetBit(bitBytes(o, tmp[:]), offset)))
}

// bitUnit parses BITCOUNT's and BITPOS's BYTE|BIT argument.
func bitUnit(c *engine.Ctx, arg []byte) (isBit, ok bool) {
	switch {
	case bitWord(arg, "bit"):
		return true, true
	case bitWord(arg, "byte"):
		return false, true
	}
	c.Error(engine.ErrSyntax)
	return false, false
}

// cmdBitcount is BITCOUNT key [start end [BYTE|BIT]]. As in Redis 7.0, a
// missing key answers 0 before the arguments are looked at, and two
// negative indexes with start > end answer 0 before BYTE|BIT is checked.
func cmdBitcount(c *engine.Ctx) {
	o, ok := c.Lookup(c.Key(1), keyspace.TypeString)
	if !ok {
		return
	}
	if o == nil {
		c.W.Int(0)
		return
	}
	var tmp [24]byte
	b := bitBytes(o, tmp[:])
	switch len(c.Args) {
	case 2:
		c.W.Int(bitmap.CountAll(b))
	case 4, 5:
		start, ok := c.Int(2)
		if !ok {
			return
		}
		end, ok := c.Int(3)
		if !ok {
			return
		}
		if start < 0 && end < 0 && start > end {
			c.W.Int(0)
			return
		}
		isBit := false
		if len(c.Args) == 5 {
			if isBit, ok = bitUnit(c, c.Args[4]); !ok {
				return
			}
		}
		c.W.Int(bitmap.Count(b, start, end, isBit))
	default:
		c.Error(engine.ErrSyntax)
	}
}

// cmdBitpos is BITPOS key bit [start [end [BYTE|BIT]]]. The bit argument is
// checked first; then a missing key answers at once (0 when looking for a
// clear bit, -1 for a set one), before the range is parsed.
func cmdBitpos(c *engine.Ctx) {
	bit, ok := c.Int(2)
	if !ok {
		return
	}
	if bit != 0 && bit != 1 {
		c.Error(errBitArg)
		return
	}
	o, ok := c.Lookup(c.Key(1), keyspace.TypeString)
	if !ok {
		return
	}
	if o == nil {
		c.W.Int(-bit)
		return
	}
	var tmp [24]byte
	b := bitBytes(o, tmp[:])
	n := len(c.Args)
	switch {
	case n == 3:
		c.W.Int(bitmap.Pos(b, int(bit), 0, 0, false, false))
	case n <= 6:
		start, ok := c.Int(3)
		if !ok {
			return
		}
		isBit := false
		if n == 6 {
			if isBit, ok = bitUnit(c, c.Args[5]); !ok {
				return
			}
		}
		var end int64
		if n >= 5 {
			if end, ok = c.Int(4); !ok {
				return
			}
		}
		c.W.Int(bitmap.Pos(b, int(bit), start, end, n >= 5, isBit))
	default:
		c.Error(engine.ErrSyntax)
	}
}

// bitopCodes maps BITOP's operation names to the bitmap operations: AND,
// OR, XOR and NOT as in Redis 7.0, DIFF, DIFF1, ANDOR and ONE as added in
// Redis 8.2.
var bitopCodes = []struct {
	name string
	op   bitmap.OpCode
}{
	{"and", bitmap.OpAnd}, {"or", bitmap.OpOr}, {"xor", bitmap.OpXor}, {"not", bitmap.OpNot},
	{"diff", bitmap.OpDiff}, {"diff1", bitmap.OpDiff1}, {"andor", bitmap.OpAndOr}, {"one", bitmap.OpOne},
}

// cmdBitop is BITOP op destkey key [key ...]. Missing sources read as
// empty strings; the result is as long as the longest source, and an empty
// result deletes the destination. The reply is the result's length.
func cmdBitop(c *engine.Ctx) {
	op := bitmap.OpCode(-1)
	for _, e := range bitopCodes {
		if bitWord(c.Args[1], e.name) {
			op = e.op
			break
		}
	}
	nsrc := len(c.Args) - 3
	switch {
	case op < 0:
		c.Error(engine.ErrSyntax)
		return
	case op == bitmap.OpNot && nsrc != 1:
		c.Error(errBitopNot)
		return
	case (op == bitmap.OpDiff || op == bitmap.OpDiff1 || op == bitmap.OpAndOr) && nsrc < 2:
		c.Errorf(errBitopTwoFmt, op.String())
		return
	}
	srcs := make([][]byte, nsrc)
	for i := range srcs {
		o, ok := c.Lookup(c.Key(3+i), keyspace.TypeString)
		if !ok {
			return
		}
		if o != nil {
			// Op never modifies its sources, so the stored bytes serve.
			srcs[i] = o.Bytes(nil)
		}
	}
	res := bitmap.Op(op, srcs)
	dest := c.Key(2)
	if len(res) > 0 {
		// createObject(OBJ_STRING, ...): raw whatever its length; setKey
		// drops any TTL the destination had.
		c.DB.Set(dest, keyspace.NewRaw(res), false)
		c.Dirty(1)
		c.Notify(engine.NotifyString, "set", c.Args[2])
	} else if c.DB.Delete(dest) {
		c.Dirty(1)
		c.Notify(engine.NotifyGeneric, "del", c.Args[2])
	}
	c.W.Int(int64(len(res)))
}
