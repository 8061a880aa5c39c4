package commands

import (
	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/ds/bitmap"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
)

// BITFIELD and BITFIELD_RO (bitfieldGeneric in bitops.c). Every operation
// is parsed and checked before any runs, so a bad argument anywhere means
// nothing is done; then the key is looked up once, for reading when there
// are only GETs, else for writing with the string grown to the furthest
// bit any SET or INCRBY reaches.

const (
	errBitfieldType   = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
	errBitfieldOvType = "ERR Invalid OVERFLOW type specified"
	errBitfieldRO     = "ERR BITFIELD_RO only supports the GET subcommand"
)

type bfOpcode uint8

const (
	bfGet bfOpcode = iota
	bfSet
	bfIncrBy
)

// bfOp is one parsed BITFIELD operation.
type bfOp struct {
	offset uint64
	value  int64 // SET's value or INCRBY's increment
	opcode bfOpcode
	signed bool
	bits   int
	ow     bitmap.Overflow // the OVERFLOW in force when it was parsed
}

func cmdBitfield(c *engine.Ctx)   { bitfieldGeneric(c, false) }
func cmdBitfieldRO(c *engine.Ctx) { bitfieldGeneric(c, true) }

// bitfieldType parses a field type as Redis's getBitfieldTypeFromArgument:
// i1..i64 or u1..u63, the letter in lower case only (Redis 7.0 refuses
// I8 and U8); the width is read up to the first NUL byte, as C's strlen
// sees it.
func bitfieldType(c *engine.Ctx, arg []byte) (signed bool, bits int, ok bool) {
	arg = ascii.CStr(arg)
	if len(arg) == 0 {
		c.Error(errBitfieldType)
		return false, 0, false
	}
	switch arg[0] {
	case 'i':
		signed = true
	case 'u':
	default:
		c.Error(errBitfieldType)
		return false, 0, false
	}
	n, ok := num.ParseInt(arg[1:])
	maxBits := int64(63)
	if signed {
		maxBits = 64
	}
	if !ok || n < 1 || n > maxBits {
		c.Error(errBitfieldType)
		return false, 0, false
	}
	return signed, int(n), true
}

// bitfieldParse parses the operations after the key. It reports whether
// all of them are GETs, and the highest bit a write reaches.
func bitfieldParse(c *engine.Ctx, ops []bfOp) (_ []bfOp, readonly bool, highest uint64, ok bool) {
	args := c.Args
	ow := bitmap.Wrap
	readonly = true
	for j := 2; j < len(args); j++ {
		rem := len(args) - j - 1 // arguments after this one
		var op bfOp
		switch {
		case bitWord(args[j], "get") && rem >= 2:
			op.opcode = bfGet
		case bitWord(args[j], "set") && rem >= 3:
			op.opcode = bfSet
		case bitWord(args[j], "incrby") && rem >= 3:
			op.opcode = bfIncrBy
		case bitWord(args[j], "overflow") && rem >= 1:
			j++
			switch {
			case bitWord(args[j], "wrap"):
				ow = bitmap.Wrap
			case bitWord(args[j], "sat"):
				ow = bitmap.Sat
			case bitWord(args[j], "fail"):
				ow = bitmap.Fail
			default:
				c.Error(errBitfieldOvType)
				return nil, false, 0, false
			}
			continue
		default:
			c.Error(engine.ErrSyntax)
			return nil, false, 0, false
		}
		if op.signed, op.bits, ok = bitfieldType(c, args[j+1]); !ok {
			return nil, false, 0, false
		}
		if op.offset, ok = bitOffsetArg(c, args[j+2], true, op.bits); !ok {
			return nil, false, 0, false
		}
		if op.opcode != bfGet {
			readonly = false
			highest = max(highest, op.offset+uint64(op.bits)-1)
			if op.value, ok = c.Int(j + 3); !ok {
				return nil, false, 0, false
			}
			j++
		}
		op.ow = ow
		ops = append(ops, op)
		j += 2
	}
	return ops, readonly, highest, true
}

func bitfieldGeneric(c *engine.Ctx, ro bool) {
	var opsBuf [8]bfOp
	ops, readonly, highest, ok := bitfieldParse(c, opsBuf[:0])
	if !ok {
		return
	}
	key := c.Key(1)
	var (
		o    *keyspace.Object
		grew bool
	)
	if readonly {
		if o, ok = c.Lookup(key, keyspace.TypeString); !ok {
			return
		}
	} else {
		if ro {
			c.Error(errBitfieldRO)
			return
		}
		if o, grew, ok = bitStringForWrite(c, key, highest); !ok {
			return
		}
	}

	c.W.Array(len(ops))
	var tmp [24]byte
	changes := int64(0)
	for _, op := range ops {
		if op.opcode == bfGet {
			var b []byte
			if o != nil {
				b = bitBytes(o, tmp[:])
			}
			c.W.Int(bitfieldGet(b, op))
			continue
		}
		old := bitfieldGet(o.Raw(), op)
		var reply, stored int64
		var done bool
		if op.opcode == bfSet {
			var nb []byte
			nb, reply, done = bitmap.FieldSet(o.Raw(), op.offset, op.bits, op.signed, op.value, op.ow)
			o.SetRaw(nb)
			stored = bitfieldGet(o.Raw(), op)
		} else {
			var nb []byte
			nb, reply, done = bitmap.FieldIncrBy(o.Raw(), op.offset, op.bits, op.signed, op.value, op.ow)
			o.SetRaw(nb)
			stored = reply
		}
		if !done {
			c.W.Null() // OVERFLOW FAIL: nothing written
			continue
		}
		c.W.Int(reply)
		// A write counts when the string was created or grown for this
		// command, or when the field's value changed.
		if grew || stored != old {
			changes++
		}
	}
	if changes > 0 {
		c.DB.Modified(key)
		c.Dirty(changes)
		c.Notify(engine.NotifyString, "setbit", c.Args[1])
	}
}

// bitfieldGet reads op's field from b as a signed or unsigned integer.
func bitfieldGet(b []byte, op bfOp) int64 {
	if op.signed {
		return bitmap.GetSigned(b, op.offset, op.bits)
	}
	return int64(bitmap.GetUnsigned(b, op.offset, op.bits))
}
