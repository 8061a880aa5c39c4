package commands

import (
	"math"

	"github.com/abacusdb/abacus/internal/ds/set"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/glob"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// The set family (t_set.c). A set key holds a *set.Set in Object.Val; the
// data structure picks its encoding (intset, listpack, hash table, or
// Abacus's roaring bitmap for large integer sets, which OBJECT ENCODING
// reports as "hashtable" like Redis) from the set-max-* limits passed on
// every write.
//
// Replies, errors, dirty counts and keyspace statistics follow redis-server
// 7.0. Redis 7.0 has no listpack sets (set-max-listpack-* come from 7.2):
// with set-max-listpack-entries 0 Abacus's encodings are 7.0's exactly.
//
// Member order: intsets reply in ascending order as in Redis; Redis's hash
// tables reply in an order that depends on a per-process hash seed, so no
// client can depend on it, and Abacus's listpacks reply in insertion order
// and its bitmaps in ascending order.
//
// This file has the single-key commands and SMOVE and SSCAN; sets_random.go
// has SPOP and SRANDMEMBER, sets_algebra.go SINTER, SUNION, SDIFF and their
// STORE and CARD forms.

func init() {
	const (
		grp  = "set"
		acl  = "@set"
		o1   = "O(1)"
		r    = engine.FlagReadonly
		rf   = engine.FlagReadonly | engine.FlagFast
		wf   = engine.FlagWrite | engine.FlagFast
		wd   = engine.FlagWrite | engine.FlagDenyOOM
		card = "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets."
		sumN = "O(N) where N is the total number of elements in all given sets."
	)
	one := func(c *engine.Command) *engine.Command {
		c.First, c.Last, c.Step = 1, 1, 1
		c.ACL, c.Group = acl, grp
		if c.Complexity == "" {
			c.Complexity = o1
		}
		return c
	}
	// all: every argument from 1 on is a key (SINTER, SUNION, SDIFF) or,
	// for the STORE forms, the destination and then the sources.
	all := func(c *engine.Command) *engine.Command {
		c.First, c.Last, c.Step = 1, -1, 1
		c.ACL, c.Group = acl, grp
		return c
	}
	engine.Register(
		one(&engine.Command{Name: "sadd", Arity: -3, Flags: wd | engine.FlagFast, KeyFlags: "RW insert",
			Summary: "Add one or more members to a set", Since: "1.0.0",
			Complexity: "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.",
			Handler:    cmdSadd}),
		one(&engine.Command{Name: "srem", Arity: -3, Flags: wf, KeyFlags: "RW delete",
			Summary: "Remove one or more members from a set", Since: "1.0.0",
			Complexity: "O(N) where N is the number of members to be removed.", Handler: cmdSrem}),
		one(&engine.Command{Name: "sismember", Arity: 3, Flags: rf, KeyFlags: "RO",
			Summary: "Determine if a given value is a member of a set", Since: "1.0.0", Handler: cmdSismember}),
		one(&engine.Command{Name: "smismember", Arity: -3, Flags: rf, KeyFlags: "RO access",
			Summary: "Returns the membership associated with the given elements for a set", Since: "6.2.0",
			Complexity: "O(N) where N is the number of elements being checked for membership", Handler: cmdSmismember}),
		one(&engine.Command{Name: "scard", Arity: 2, Flags: rf, KeyFlags: "RO",
			Summary: "Get the number of members in a set", Since: "1.0.0", Handler: cmdScard}),
		one(&engine.Command{Name: "smembers", Arity: 2, Flags: r, KeyFlags: "RO access", Tips: "nondeterministic_output_order",
			Summary: "Get all the members in a set", Since: "1.0.0",
			Complexity: "O(N) where N is the set cardinality.", Handler: cmdSmembers}),
		one(&engine.Command{Name: "srandmember", Arity: -2, Flags: r, KeyFlags: "RO access", Tips: "nondeterministic_output",
			Summary: "Get one or multiple random members from a set", Since: "1.0.0",
			Complexity: "Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed count.",
			Handler:    cmdSrandmember}),
		one(&engine.Command{Name: "spop", Arity: -2, Flags: wf, KeyFlags: "RW access delete", Tips: "nondeterministic_output",
			Summary: "Remove and return one or multiple random members from a set", Since: "1.0.0",
			Complexity: "Without the count argument O(1), otherwise O(N) where N is the value of the passed count.",
			Handler:    cmdSpop}),
		// SMOVE has two key specs in Redis: the source's (RW access delete)
		// and the destination's (RW insert); the table holds the first.
		&engine.Command{Name: "smove", Specs: keySpecs["smove"], Arity: 4, Flags: wf, First: 1, Last: 2, Step: 1, KeyFlags: "RW access delete",
			ACL: acl, Group: grp, Summary: "Move a member from one set to another", Since: "1.0.0", Complexity: o1,
			Handler: cmdSmove},
		one(&engine.Command{Name: "sscan", Arity: -3, Flags: r, KeyFlags: "RO access", Tips: "nondeterministic_output",
			Summary: "Incrementally iterate Set elements", Since: "2.8.0",
			Complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
			Handler:    cmdSscan}),

		all(&engine.Command{Name: "sinter", Arity: -2, Flags: r, KeyFlags: "RO access", Tips: "nondeterministic_output_order",
			Summary: "Intersect multiple sets", Since: "1.0.0", Complexity: card, Handler: cmdSinter}),
		&engine.Command{Name: "sintercard", Specs: keySpecs["sintercard"], Arity: -3, Flags: r | engine.FlagMovableKeys, Keys: zsNumkeysKeys(1, false), KeyFlags: "RO access",
			ACL: acl, Group: grp, Summary: "Intersect multiple sets and return the cardinality of the result", Since: "7.0.0",
			Complexity: card, Handler: cmdSintercard},
		// The STORE forms have two key specs in Redis, the destination's
		// (given here) and the sources' (RO access).
		all(&engine.Command{Name: "sinterstore", Specs: keySpecs["sinterstore"], Arity: -3, Flags: wd, KeyFlags: "RW update",
			Summary: "Intersect multiple sets and store the resulting set in a key", Since: "1.0.0", Complexity: card,
			Handler: cmdSinterstore}),
		all(&engine.Command{Name: "sunion", Arity: -2, Flags: r, KeyFlags: "RO access", Tips: "nondeterministic_output_order",
			Summary: "Add multiple sets", Since: "1.0.0", Complexity: sumN, Handler: cmdSunion}),
		all(&engine.Command{Name: "sunionstore", Specs: keySpecs["sunionstore"], Arity: -3, Flags: wd, KeyFlags: "OW update",
			Summary: "Add multiple sets and store the resulting set in a key", Since: "1.0.0", Complexity: sumN,
			Handler: cmdSunionstore}),
		all(&engine.Command{Name: "sdiff", Arity: -2, Flags: r, KeyFlags: "RO access", Tips: "nondeterministic_output_order",
			Summary: "Subtract multiple sets", Since: "1.0.0", Complexity: sumN, Handler: cmdSdiff}),
		all(&engine.Command{Name: "sdiffstore", Specs: keySpecs["sdiffstore"], Arity: -3, Flags: wd, KeyFlags: "OW update",
			Summary: "Subtract multiple sets and store the resulting set in a key", Since: "1.0.0", Complexity: sumN,
			Handler: cmdSdiffstore}),
	)
}

// setRead looks key up for a read command (lookupKeyRead: a keyspace hit
// or miss) and replies WRONGTYPE (ok false) for another type. A missing key
// gives a nil set.
func setRead(c *engine.Ctx, key string) (s *set.Set, ok bool) {
	o, ok := c.Lookup(key, keyspace.TypeSet)
	if !ok || o == nil {
		return nil, ok
	}
	return o.Val().(*set.Set), true
}

// setWrite looks key up for a write (lookupKeyWrite: no statistics).
func setWrite(c *engine.Ctx, key string) (o *keyspace.Object, s *set.Set, ok bool) {
	o, ok = c.LookupWrite(key, keyspace.TypeSet)
	if !ok || o == nil {
		return nil, nil, ok
	}
	return o, o.Val().(*set.Set), true
}

// setChanged finishes a write that removed members from the set at key
// (argument 1): it publishes event, deletes an emptied set (Redis never
// keeps an empty set) with a del event, and signals any other change
// (WATCH, blocked clients).
func setChanged(c *engine.Ctx, key string, s *set.Set, event string) {
	c.Notify(engine.NotifySet, event, c.Args[1])
	if s.Len() == 0 {
		c.DB.Delete(key)
		c.Notify(engine.NotifyGeneric, "del", c.Args[1])
		return
	}
	c.DB.Modified(key)
}

// replyMembers writes s's members as a set reply (RESP3 '~'), in its
// iteration order. A nil s is empty.
func replyMembers(c *engine.Ctx, s *set.Set) {
	if s == nil {
		c.W.Set(0)
		return
	}
	c.W.Set(s.Len())
	for m := range s.All() {
		c.W.Bulk(m)
	}
}

func cmdSadd(c *engine.Ctx) {
	key := c.Key(1)
	o, s, ok := setWrite(c, key)
	if !ok {
		return
	}
	fresh := o == nil
	if fresh {
		s = set.New()
		o = keyspace.NewValue(keyspace.TypeSet, s)
	}
	lim := engine.SetLimits(c)
	added := 0
	for _, m := range c.Args[2:] {
		if s.Add(lim, m) {
			added++
		}
	}
	// A new key always gains its first member.
	switch {
	case fresh:
		c.DB.Set(key, o, false)
	case added > 0:
		c.DB.Modified(key)
	}
	if added > 0 {
		c.Notify(engine.NotifySet, "sadd", c.Args[1])
	}
	c.Dirty(int64(added))
	c.W.Int(int64(added))
}

func cmdSrem(c *engine.Ctx) {
	key := c.Key(1)
	o, s, ok := setWrite(c, key)
	if !ok {
		return
	}
	if o == nil {
		c.W.Int(0)
		return
	}
	removed := 0
	for _, m := range c.Args[2:] {
		if s.Remove(m) {
			removed++
			if s.Len() == 0 {
				break
			}
		}
	}
	if removed > 0 {
		setChanged(c, key, s, "srem")
		c.Dirty(int64(removed))
	}
	c.W.Int(int64(removed))
}

func cmdSismember(c *engine.Ctx) {
	s, ok := setRead(c, c.Key(1))
	if !ok {
		return
	}
	if s != nil && s.Contains(c.Args[2]) {
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}

func cmdSmismember(c *engine.Ctx) {
	s, ok := setRead(c, c.Key(1))
	if !ok {
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		if s != nil && s.Contains(m) {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
	}
}

func cmdScard(c *engine.Ctx) {
	s, ok := setRead(c, c.Key(1))
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(s.Len()))
}

// cmdSmembers is SINTER of one key in Redis 7.0; the reply is the set in
// its iteration order.
func cmdSmembers(c *engine.Ctx) {
	s, ok := setRead(c, c.Key(1))
	if !ok {
		return
	}
	replyMembers(c, s)
}

// cmdSmove moves a member between sets. Both keys are looked up first (so
// both expire if due); a missing source answers 0 before any type check.
func cmdSmove(c *engine.Ctx) {
	srcKey, dstKey := c.Key(1), c.Key(2)
	src, dst := c.DB.Lookup(srcKey), c.DB.Lookup(dstKey)
	if src == nil {
		c.W.Int(0)
		return
	}
	if src.Type != keyspace.TypeSet || dst != nil && dst.Type != keyspace.TypeSet {
		c.Error(engine.ErrWrongType)
		return
	}
	engine.TouchLRU(c, src)
	if dst != nil {
		engine.TouchLRU(c, dst)
	}
	m := c.Args[3]
	srcSet := src.Val().(*set.Set)
	if src == dst {
		// Moving within one set changes nothing; Redis answers membership.
		if srcSet.Contains(m) {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
		return
	}
	if !srcSet.Remove(m) {
		c.W.Int(0)
		return
	}
	setChanged(c, srcKey, srcSet, "srem")
	c.Dirty(1)
	lim := engine.SetLimits(c)
	if dst == nil {
		s := set.New()
		s.Add(lim, m)
		c.DB.Set(dstKey, keyspace.NewValue(keyspace.TypeSet, s), false)
		c.Dirty(1)
		c.Notify(engine.NotifySet, "sadd", c.Args[2])
	} else if dst.Val().(*set.Set).Add(lim, m) {
		c.DB.Modified(dstKey)
		c.Dirty(1)
		c.Notify(engine.NotifySet, "sadd", c.Args[2])
	}
	c.W.Int(1)
}

// cmdSscan: intsets and listpacks return every member with cursor 0 in one
// call, whatever the cursor, as Redis does; larger sets walk the data
// structure's cursor. A missing key answers an empty scan before the
// options are parsed, as in Redis.
func cmdSscan(c *engine.Ctx) {
	cursor, ok := scanCursorArg(c, 2)
	if !ok {
		return
	}
	s, ok := setRead(c, c.Key(1))
	if !ok {
		return
	}
	if s == nil {
		replyScan(c, 0, nil)
		return
	}
	opts, ok := parseScanOpts(c, 3, false)
	if !ok {
		return
	}
	var items []string
	next := s.Scan(cursor, int(min(opts.count, math.MaxInt32)), func(m []byte) {
		if opts.match && !glob.Match(opts.pattern, m, false) {
			return
		}
		items = append(items, string(m))
	})
	replyScan(c, next, items)
}
