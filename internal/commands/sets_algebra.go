package commands

import (
	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/ds/set"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
)

// SINTER, SINTERCARD, SUNION, SDIFF and the STORE forms. The data
// structure computes (with an integer fast path: intsets and roaring
// bitmaps combine without hashing); this file reproduces what Redis 7.0
// shows around the computation:
//
//   - Every source key is looked up as a read (keyspace hits and misses,
//     also for the STORE forms), in order, stopping at the first of another
//     type with WRONGTYPE. A missing key is an empty set, but the types of
//     all keys are checked before an intersection gives up on one.
//   - A STORE with an empty result deletes the destination, counting one
//     change only if there was something to delete; a non-empty result
//     replaces the destination (and its TTL) and counts one change.
//   - Result encodings follow the result's content, except for SDIFF's
//     second algorithm (see setDiff).

// setSources looks up the source keys for the algebra. Missing keys give
// nil sets and set missing; ok is false after a WRONGTYPE reply.
func setSources(c *engine.Ctx, keys [][]byte) (sets []*set.Set, missing, ok bool) {
	sets = make([]*set.Set, len(keys))
	for i, k := range keys {
		o := c.DB.LookupRead(string(k))
		if o == nil {
			missing = true
			continue
		}
		if o.Type != keyspace.TypeSet {
			c.Error(engine.ErrWrongType)
			return nil, false, false
		}
		sets[i] = o.Val().(*set.Set)
	}
	return sets, missing, true
}

// storeSet puts the result of a STORE form at key (argument 1) and replies
// with its size; an empty result deletes key instead. The event is the
// command's name (sinterstore, sunionstore, sdiffstore), or del.
func storeSet(c *engine.Ctx, key string, res *set.Set) {
	if res == nil || res.Len() == 0 {
		if c.DB.Delete(key) {
			c.Dirty(1)
			c.Notify(engine.NotifyGeneric, "del", c.Args[1])
		}
		c.W.Int(0)
		return
	}
	c.DB.Set(key, keyspace.NewValue(keyspace.TypeSet, res), false)
	c.Dirty(1)
	c.Notify(engine.NotifySet, c.Cmd.Name, c.Args[1])
	c.W.Int(int64(res.Len()))
}

// intersect is SINTER's computation; nil when a key is missing.
func intersect(c *engine.Ctx, keys [][]byte) (res *set.Set, ok bool) {
	sets, missing, ok := setSources(c, keys)
	if !ok || missing {
		return nil, ok
	}
	return set.Intersect(engine.SetLimits(c), sets...), true
}

func cmdSinter(c *engine.Ctx) {
	if res, ok := intersect(c, c.Args[1:]); ok {
		replyMembers(c, res)
	}
}

func cmdSinterstore(c *engine.Ctx) {
	if res, ok := intersect(c, c.Args[2:]); ok {
		storeSet(c, c.Key(1), res)
	}
}

// cmdSintercard: numkeys, the keys, then LIMIT (the last one given wins; 0
// means none). Options are checked before any key is looked up.
func cmdSintercard(c *engine.Ctx) {
	const errNumkeys = "ERR numkeys should be greater than 0"
	numkeys, ok := num.ParseInt(c.Args[1])
	if !ok || numkeys < 1 {
		c.Error(errNumkeys)
		return
	}
	if numkeys > int64(len(c.Args)-2) {
		c.Error("ERR Number of keys can't be greater than number of args")
		return
	}
	end := 2 + int(numkeys)
	limit := int64(0)
	for i := end; i < len(c.Args); i++ {
		if !ascii.OptIs(c.Args[i], "limit") || i+1 >= len(c.Args) {
			c.Error(engine.ErrSyntax)
			return
		}
		i++
		n, ok := num.ParseInt(c.Args[i])
		if !ok || n < 0 {
			c.Error("ERR LIMIT can't be negative")
			return
		}
		limit = n
	}
	sets, missing, ok := setSources(c, c.Args[2:end])
	if !ok {
		return
	}
	if missing {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(set.IntersectCard(int(min(limit, int64(maxInt))), sets...)))
}

const maxInt = int(^uint(0) >> 1)

func cmdSunion(c *engine.Ctx) {
	sets, _, ok := setSources(c, c.Args[1:])
	if ok {
		replyMembers(c, set.Union(engine.SetLimits(c), sets...))
	}
}

func cmdSunionstore(c *engine.Ctx) {
	sets, _, ok := setSources(c, c.Args[2:])
	if ok {
		storeSet(c, c.Key(1), set.Union(engine.SetLimits(c), sets...))
	}
}

func cmdSdiff(c *engine.Ctx) {
	sets, _, ok := setSources(c, c.Args[1:])
	if ok {
		replyMembers(c, setDiff(engine.SetLimits(c), sets))
	}
}

func cmdSdiffstore(c *engine.Ctx) {
	sets, _, ok := setSources(c, c.Args[2:])
	if ok {
		storeSet(c, c.Key(1), setDiff(engine.SetLimits(c), sets))
	}
}

// setDiff is SDIFF's computation. Redis 7.0 picks one of two algorithms by
// the sizes of the inputs, and the choice shows in the result's encoding:
// the first probes every member of the first set in the others and adds
// those found nowhere to a new set, so the result's encoding follows its
// content (as set.Diff's does); the second copies the first set and then
// removes the others' members, and removal never converts, so a first set
// too large or not all integers leaves a hash table even when what remains
// would fit an intset. Abacus takes the second path exactly when Redis
// would (both cost about the same then: the first set is large compared
// with the others).
func setDiff(lim set.Limits, sets []*set.Set) *set.Set {
	first := sets[0]
	if first == nil {
		return nil
	}
	// Redis's estimate: algorithm 1 costs |first| per non-missing input,
	// halved for its better constants; algorithm 2 the sum of their sizes.
	var one, two int64
	for _, s := range sets {
		if s != nil {
			one += int64(first.Len())
			two += int64(s.Len())
		}
	}
	if one/2 <= two {
		return set.Diff(lim, sets...)
	}
	res := set.Union(lim, first)
	for _, s := range sets[1:] {
		if s == nil {
			continue
		}
		for m := range s.All() {
			if res.Remove(m) && res.Len() == 0 {
				return res
			}
		}
	}
	return res
}
