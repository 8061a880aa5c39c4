package commands

import (
	"math/rand"

	"github.com/abacusdb/abacus/internal/ds/hll"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// PFDEBUG and PFSELFTEST, Redis 7.0's HyperLogLog test helpers (test
// suites call them; they are not behind enable-debug-command in Redis),
// registered with the family in hll.go.

// cmdPfdebug is PFDEBUG GETREG|DECODE|ENCODING|TODENSE key. The key is
// checked before the subcommand, as in Redis. GETREG and TODENSE store a
// sparse value as dense, and that change is propagated (the command as
// received), without signalling the key as modified, as Redis does.
func cmdPfdebug(c *engine.Ctx) {
	key := c.Key(2)
	o, ok := c.LookupWrite(key, keyspace.TypeString)
	if !ok {
		return
	}
	if o == nil {
		c.Error("ERR The specified key does not exist")
		return
	}
	b := hllBytes(o)
	if err := hll.Validate(b); err == hll.ErrNotHLL {
		c.Error(err.Error())
		return
	}
	bitUnshare(c, o)
	toDense := func() bool {
		d, conv, err := hll.ToDense(b)
		if err != nil {
			c.Error(err.Error())
			return false
		}
		if conv {
			o.SetRaw(d)
			b = d
			c.Dirty(1)
		}
		return true
	}
	switch {
	case c.ArgIs(1, "getreg"):
		if !toDense() {
			return
		}
		regs := hll.DenseRegisters(make([]uint8, 0, hll.Registers), b)
		c.W.Array(len(regs))
		for _, r := range regs {
			c.W.Int(int64(r))
		}
	case c.ArgIs(1, "decode"):
		if hll.IsDense(b) {
			c.Error("ERR HLL encoding is not sparse")
			return
		}
		c.W.BulkString(hll.DecodeSparse(b))
	case c.ArgIs(1, "encoding"):
		if hll.IsDense(b) {
			c.W.Simple("dense")
		} else {
			c.W.Simple("sparse")
		}
	case c.ArgIs(1, "todense"):
		dense := hll.IsDense(b)
		if !toDense() {
			return
		}
		if dense {
			c.W.Int(0)
		} else {
			c.W.Int(1)
		}
	default:
		c.Errorf("ERR Unknown PFDEBUG subcommand '%s'", c.Args[1])
	}
}

// cmdPfselftest is PFSELFTEST: hll.SelfTest, +OK or its TESTFAILED error.
// Like Redis's it takes a second or so, holding the server.
func cmdPfselftest(c *engine.Ctx) {
	if msg := hll.SelfTest(rand.New(rand.NewSource(c.Now)), hllSparseMax(c)); msg != "" {
		c.Error(msg)
		return
	}
	c.W.OK()
}
