package commands

import (
	"errors"
	"math"

	"github.com/abacusdb/abacus/internal/ds/ts"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/rdb"
)

// DUMP and RESTORE (cluster.c): a value serialized in Redis's RDB format,
// type byte first, then the RDB version and a CRC-64 (internal/rdb).
// Payloads cross both ways with redis-server 7.0; a hash whose fields
// carry TTLs is written with Redis 7.4's types and version 12, which 7.0
// refuses (docs/rdb.md). A time series is a module value of Abacus's own
// type ABACUS-TS, which redis-server refuses with Bad data format.

func init() {
	const (
		ks  = "@keyspace"
		gen = "generic"
	)
	engine.Register(
		&engine.Command{Name: "dump", Arity: 2, Flags: engine.FlagReadonly, First: 1, Last: 1, Step: 1, KeyFlags: "RO access",
			Tips: "nondeterministic_output", ACL: ks, Group: gen,
			Summary: "Return a serialized version of the value stored at the specified key.", Since: "2.6.0",
			Complexity: "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).",
			Handler:    cmdDump},
		&engine.Command{Name: "restore", Arity: -4, Flags: engine.FlagWrite | engine.FlagDenyOOM, First: 1, Last: 1, Step: 1, KeyFlags: "OW update",
			ACL: ks + " @dangerous", Group: gen,
			Summary: "Create a key using the provided serialized value, previously obtained using DUMP.", Since: "2.6.0",
			Complexity: "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).",
			Handler:    cmdRestore},
		// RESTORE-ASKING is what a cluster node's MIGRATE sends; without
		// cluster mode it is RESTORE.
		&engine.Command{Name: "restore-asking", Arity: -4, Flags: engine.FlagWrite | engine.FlagDenyOOM | engine.FlagAsking, First: 1, Last: 1, Step: 1, KeyFlags: "OW update",
			ACL: ks + " @dangerous", Group: gen,
			Summary: "An internal command for migrating keys in a cluster.", Since: "3.0.0",
			Complexity: "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).",
			Handler:    cmdRestore},
	)
}

const (
	errBusyKey    = "BUSYKEY Target key name already exists."
	errBadPayload = "ERR DUMP payload version or checksum are wrong"
	errBadFormat  = "ERR Bad data format"
	errNegTTL     = "ERR Invalid TTL value, must be >= 0"
	errNegIdle    = "ERR Invalid IDLETIME value, must be >= 0"
	errFreqRange  = "ERR Invalid FREQ value, must be >= 0 and <= 255"
)

func cmdDump(c *engine.Ctx) {
	o := c.DB.LookupRead(c.Key(1))
	if o == nil {
		c.W.Null()
		return
	}
	p, err := rdb.Dump(o, engine.DumpOptions(c))
	if err != nil {
		c.Error("ERR " + err.Error())
		return
	}
	c.W.Bulk(p)
}

// cmdRestore follows restoreCommand's order of checks: options, the
// existing key, the TTL, the payload's footer, then its value.
func cmdRestore(c *engine.Ctx) {
	var replace, absTTL bool
	idle, freq := int64(-1), int64(-1)
	for j := 4; j < len(c.Args); j++ {
		more := len(c.Args) - j - 1
		switch {
		case c.ArgIs(j, "replace"):
			replace = true
		case c.ArgIs(j, "absttl"):
			absTTL = true
		case c.ArgIs(j, "idletime") && more >= 1 && freq == -1:
			v, ok := c.Int(j + 1)
			if !ok {
				return
			}
			if v < 0 {
				c.Error(errNegIdle)
				return
			}
			idle = v
			j++
		case c.ArgIs(j, "freq") && more >= 1 && idle == -1:
			v, ok := c.Int(j + 1)
			if !ok {
				return
			}
			if v < 0 || v > 255 {
				c.Error(errFreqRange)
				return
			}
			freq = v
			j++
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	key := c.Key(1)
	if !replace && c.DB.Lookup(key) != nil {
		c.Error(errBusyKey)
		return
	}
	ttl, ok := c.Int(2)
	if !ok {
		return
	}
	if ttl < 0 {
		c.Error(errNegTTL)
		return
	}
	payload := c.Args[3]
	if _, err := rdb.VerifyPayload(payload); err != nil {
		c.Error(errBadPayload)
		return
	}
	o, err := rdb.DecodePayload(payload, engine.LoadOptions(c))
	expiredFields := errors.Is(err, rdb.ErrAllExpired)
	if err != nil && !expiredFields {
		c.Error(errBadFormat)
		return
	}
	deleted := false
	if replace {
		deleted = c.DB.Delete(key)
	}
	if ttl > 0 && !absTTL {
		if ttl > math.MaxInt64-c.Now {
			ttl = math.MaxInt64
		} else {
			ttl += c.Now
		}
	}
	if expiredFields || ttl > 0 && c.PastDeadline(ttl) {
		// Already expired: nothing is stored, the old value is gone.
		if deleted {
			c.Dirty(1)
			c.Propagate([]byte("DEL"), c.Args[1])
			c.Notify(engine.NotifyGeneric, "del", c.Args[1])
		}
		c.W.OK()
		return
	}
	o.Expire = ttl
	if s, ok := o.Val().(*ts.Series); ok {
		// links to and from it are by key name: the name it has now
		s.Name = key
	}
	c.DB.Add(key, o)
	c.Env.KS.SetAccess(o, freq, idle)
	c.Dirty(1)
	c.Notify(engine.NotifyGeneric, "restore", c.Args[1])
	if ttl > 0 && !absTTL {
		// The TTL replays as the absolute time it became.
		rw := append([][]byte{}, c.Args...)
		rw[2] = engine.MsArg(ttl)
		c.Propagate(append(rw, []byte("ABSTTL"))...)
	}
	c.W.OK()
}
