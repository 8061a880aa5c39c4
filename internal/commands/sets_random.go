package commands

import (
	"math"

	"github.com/abacusdb/abacus/internal/ds/set"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/num"
)

// SPOP and SRANDMEMBER. Which members they pick is random, in Redis as
// here; what is deterministic follows redis-server 7.0: reply types (SPOP
// with a count replies with a set, SRANDMEMBER with an array, even in
// RESP3), the whole set in iteration order when the count covers it, errors,
// and dirty counts.

func cmdSrandmember(c *engine.Ctx) {
	if len(c.Args) > 3 {
		c.Error(engine.ErrSyntax)
		return
	}
	if len(c.Args) == 2 {
		s, ok := setRead(c, c.Key(1))
		if !ok {
			return
		}
		if s == nil {
			c.W.Null()
			return
		}
		m, _ := s.RandomMember(c.Env.KS.Rand())
		c.W.Bulk(m)
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
	s, ok := setRead(c, c.Key(1))
	if !ok {
		return
	}
	if s == nil || l == 0 {
		c.W.Array(0)
		return
	}
	rng := c.Env.KS.Rand()
	write := func(m []byte) { c.W.Bulk(m) }
	if l < 0 {
		// Repetitions allowed: exactly -l picks. Like Redis, Abacus builds
		// the whole reply, so a huge count costs that much memory.
		c.W.Array(int(-l))
		s.RandomMembers(rng, int(-l), write)
		return
	}
	n := int(min(l, int64(s.Len())))
	c.W.Array(n)
	s.RandomDistinct(rng, n, write)
}

func cmdSpop(c *engine.Ctx) {
	if len(c.Args) > 3 {
		c.Error(engine.ErrSyntax)
		return
	}
	key := c.Key(1)
	if len(c.Args) == 2 {
		o, s, ok := setWrite(c, key)
		if !ok {
			return
		}
		if o == nil {
			c.W.Null()
			return
		}
		s.Pop(c.Env.KS.Rand(), 1, func(m []byte) {
			c.W.Bulk(m)
			sremEach{c}.add(m)
		})
		setChanged(c, key, s, "spop")
		c.Dirty(1)
		return
	}
	count, ok := num.ParseInt(c.Args[2])
	if !ok || count < 0 {
		c.Error(engine.ErrPositive)
		return
	}
	o, s, ok := setWrite(c, key)
	if !ok {
		return
	}
	if o == nil || count == 0 {
		c.W.Set(0)
		return
	}
	size := s.Len()
	rng := c.Env.KS.Rand()
	c.Notify(engine.NotifySet, "spop", c.Args[1])
	if count >= int64(size) {
		// Redis 7.0 replies through SUNION of the key, which counts one
		// more keyspace hit and iterates a fresh copy (an all-integer hash
		// table replies in ascending order), and then deletes the key.
		c.DB.LookupRead(key)
		replyMembers(c, set.Union(engine.SetLimits(c), s))
		c.DB.Delete(key)
		c.Dirty(int64(size))
		c.Propagate([]byte("DEL"), c.Args[1])
		c.Notify(engine.NotifyGeneric, "del", c.Args[1])
		return
	}
	c.W.Set(int(count))
	srem := sremEach{c}
	if keep := size - int(count); keep*spopMoveMul > int(count) {
		// Few members popped: pop them one by one.
		s.Pop(rng, int(count), func(m []byte) {
			c.W.Bulk(m)
			srem.add(m)
		})
	} else {
		// Most members popped: like Redis, pick the few that stay, build a
		// new set of them (its encoding follows its content, so a hash
		// table left with integers becomes an intset again) and reply with
		// the rest in the old set's order.
		lim := engine.SetLimits(c)
		kept := set.New()
		s.RandomDistinct(rng, keep, func(m []byte) { kept.Add(lim, m) })
		for m := range s.All() {
			if !kept.Contains(m) {
				c.W.Bulk(m)
				srem.add(m)
			}
		}
		o.SetVal(kept)
	}
	c.DB.Modified(key)
	c.Dirty(count)
}

// sremEach propagates each member SPOP took as an SREM of its own, as
// Redis 7.0 does (several are wrapped in MULTI/EXEC).
type sremEach struct{ c *engine.Ctx }

func (b sremEach) add(m []byte) { b.c.Propagate([]byte("SREM"), b.c.Args[1], m) }

// spopMoveMul is SPOP_MOVE_STRATEGY_MUL: SPOP with a count rebuilds the set
// from the members that stay when those are at most 1/5 of the popped.
const spopMoveMul = 5
