package commands

import (
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/ds/hll"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// The HyperLogLog family (hyperloglog.c): PFADD, PFCOUNT, PFMERGE. A
// HyperLogLog is a string value in Redis's own byte format, kept and
// updated by internal/ds/hll; GET returns the same bytes redis-server
// would. Checks happen key by key in argument order, as in Redis: a value
// of another type answers the usual WRONGTYPE, a string that is not a
// HyperLogLog answers hll.ErrNotHLL's WRONGTYPE text, a corrupt sparse one
// INVALIDOBJ. Writing a HyperLogLog in place makes its string raw.

func init() {
	const (
		grp = "hyperloglog"
		acl = "@hyperloglog"
	)
	engine.Register(
		&engine.Command{Name: "pfadd", Arity: -2, Flags: engine.FlagWrite | engine.FlagDenyOOM | engine.FlagFast, First: 1, Last: 1, Step: 1,
			KeyFlags: "RW insert", ACL: acl, Group: grp,
			Summary: "Adds the specified elements to the specified HyperLogLog.", Since: "2.8.9",
			Complexity: "O(1) to add every element.", Handler: cmdPfadd},
		// PFCOUNT is flagged readonly although it may write the cached
		// cardinality back, hence its key spec's RW.
		&engine.Command{Name: "pfcount", Specs: keySpecs["pfcount"], Arity: -2, Flags: engine.FlagReadonly | engine.FlagMayReplicate, First: 1, Last: -1, Step: 1,
			KeyFlags: "RW access", ACL: acl, Group: grp,
			Summary: "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).", Since: "2.8.9",
			Complexity: "O(1) with a very small average constant time when called with a single key. O(N) with N being the number of keys, and much bigger constant times, when called with multiple keys.",
			Handler:    cmdPfcount},
		// Redis gives PFMERGE two key specs, the destination "RW access
		// insert" and the sources "RO access"; the table holds one.
		&engine.Command{Name: "pfmerge", Specs: keySpecs["pfmerge"], Arity: -2, Flags: engine.FlagWrite | engine.FlagDenyOOM, First: 1, Last: -1, Step: 1,
			KeyFlags: "RW access insert", ACL: acl, Group: grp,
			Summary: "Merge N different HyperLogLogs into a single one.", Since: "2.8.9",
			Complexity: "O(N) to merge N HyperLogLogs, but with high constant times.", Handler: cmdPfmerge},
		&engine.Command{Name: "pfdebug", Arity: 3, Flags: engine.FlagWrite | engine.FlagDenyOOM | engine.FlagAdmin, First: 2, Last: 2, Step: 1,
			KeyFlags: "RW access", ACL: acl, Group: grp,
			Summary: "Internal commands for debugging HyperLogLog values", Since: "2.8.9", Complexity: "N/A",
			Handler: cmdPfdebug},
		&engine.Command{Name: "pfselftest", Arity: 1, Flags: engine.FlagAdmin, ACL: acl, Group: grp,
			Summary: "An internal command for testing HyperLogLog values", Since: "2.8.9", Complexity: "N/A",
			Handler: cmdPfselftest},
	)
}

// hllBytes returns a live string object's bytes for the hll package,
// where nil means a missing key: an empty string must come out non-nil.
func hllBytes(o *keyspace.Object) []byte {
	if o.Enc == keyspace.EncInt {
		return o.Bytes(nil)
	}
	if o.Raw() == nil {
		return []byte{}
	}
	return o.Raw()
}

func hllSparseMax(c *engine.Ctx) int { return int(c.Env.Cfg.Int(config.HllSparseMaxBytes)) }

// hllLookupValid looks key up for reading and checks that it holds a valid
// HyperLogLog, replying with the error if not. It returns the value's
// bytes, nil for a missing key.
func hllLookupValid(c *engine.Ctx, key string) (b []byte, ok bool) {
	o, ok := c.Lookup(key, keyspace.TypeString)
	if !ok {
		return nil, false
	}
	if o == nil {
		return nil, true
	}
	b = hllBytes(o)
	if err := hll.Validate(b); err != nil {
		c.Error(err.Error())
		return nil, false
	}
	return b, true
}

// cmdPfadd is PFADD key [element ...]. The reply is 1 when the key was
// created or a register changed. Redis's dirty counter grows by one for
// the creation and one per element that changed a register.
func cmdPfadd(c *engine.Ctx) {
	key := c.Key(1)
	o, ok := c.LookupWrite(key, keyspace.TypeString)
	if !ok {
		return
	}
	elems := c.Args[2:]
	var changes int
	if o == nil {
		var b []byte
		b, changes, _ = hll.AddCount(nil, hllSparseMax(c), elems...)
		c.DB.Set(key, keyspace.NewRaw(b), false)
	} else {
		b, n, err := hll.AddCount(hllBytes(o), hllSparseMax(c), elems...)
		if err == hll.ErrNotHLL {
			c.Error(err.Error())
			return
		}
		bitUnshare(c, o)
		// On a corrupt value the registers set before the bad element
		// stay, as in Redis, but the key is not signalled as modified.
		o.SetRaw(b)
		if err != nil {
			c.Error(err.Error())
			return
		}
		changes = n
		if changes > 0 {
			c.DB.Modified(key)
		}
	}
	c.Dirty(int64(changes))
	if changes > 0 {
		c.Notify(engine.NotifyString, "pfadd", c.Args[1])
		c.W.Int(1)
	} else {
		c.W.Int(0)
	}
}

// cmdPfcount is PFCOUNT key [key ...]. With one key the cached cardinality
// answers, or is computed and written back into the value (a change, as in
// Redis, though the command is read-only); with several, the cardinality
// of their union is computed without touching any of them.
func cmdPfcount(c *engine.Ctx) {
	if len(c.Args) > 2 {
		hlls := make([][]byte, 0, len(c.Args)-1)
		for i := 1; i < len(c.Args); i++ {
			b, ok := hllLookupValid(c, c.Key(i))
			if !ok {
				return
			}
			hlls = append(hlls, b)
		}
		card, err := hll.CountMany(hlls...)
		if err != nil {
			c.Error(err.Error())
			return
		}
		c.W.Int(int64(card))
		return
	}
	key := c.Key(1)
	o, ok := c.Lookup(key, keyspace.TypeString)
	if !ok {
		return
	}
	if o == nil {
		c.W.Int(0)
		return
	}
	b := hllBytes(o)
	card, updated, err := hll.Count(b)
	if err == hll.ErrNotHLL {
		c.Error(err.Error())
		return
	}
	bitUnshare(c, o)
	if err != nil {
		c.Error(err.Error())
		return
	}
	if updated {
		c.DB.Modified(key)
		c.Dirty(1)
	}
	c.W.Int(int64(card))
}

// cmdPfmerge is PFMERGE destkey [sourcekey ...]: the destination, itself
// one of the merged values, becomes the union, created if missing.
func cmdPfmerge(c *engine.Ctx) {
	// Redis reads every key, the destination first, and validates each
	// before writing anything.
	srcs := make([][]byte, 0, len(c.Args)-2)
	for i := 1; i < len(c.Args); i++ {
		b, ok := hllLookupValid(c, c.Key(i))
		if !ok {
			return
		}
		if i > 1 {
			srcs = append(srcs, b)
		}
	}
	key := c.Key(1)
	o, _ := c.LookupWrite(key, keyspace.TypeString) // type checked above
	var dst []byte
	if o != nil {
		bitUnshare(c, o)
		dst = hllBytes(o)
	}
	out, err := hll.Merge(dst, hllSparseMax(c), srcs...)
	if err != nil {
		c.Error(err.Error())
		return
	}
	if o == nil {
		c.DB.Set(key, keyspace.NewRaw(out), false)
	} else {
		o.SetRaw(out)
		c.DB.Modified(key)
	}
	c.Dirty(1)
	c.Notify(engine.NotifyString, "pfadd", c.Args[1])
	c.W.OK()
}
