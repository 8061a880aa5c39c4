package commands

import (
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// The blocking list commands. Each is its non-blocking form when a list
// can serve it; otherwise it parks the client (see blocking.go). Inside
// MULTI/EXEC or a script it answers at once as a timeout would, except
// that BLMOVE and BRPOPLPUSH answer there with a null bulk string where
// their timeout is a null array: Redis does the same.

func init() {
	const (
		lst = "@list"
		grp = "list"
		blk = engine.FlagWrite | engine.FlagNoScript | engine.FlagBlocking
	)
	popCx := "O(N) where N is the number of provided keys."
	engine.Register(
		&engine.Command{Name: "blpop", Arity: -3, Flags: blk, First: 1, Last: -2, Step: 1, KeyFlags: "RW access delete",
			ACL: lst, Group: grp, Complexity: popCx, Since: "2.0.0",
			Summary: "Remove and get the first element in a list, or block until one is available", Handler: cmdBlpop},
		&engine.Command{Name: "brpop", Arity: -3, Flags: blk, First: 1, Last: -2, Step: 1, KeyFlags: "RW access delete",
			ACL: lst, Group: grp, Complexity: popCx, Since: "2.0.0",
			Summary: "Remove and get the last element in a list, or block until one is available", Handler: cmdBrpop},
		&engine.Command{Name: "blmove", Specs: keySpecs["blmove"], Arity: 6, Flags: blk | engine.FlagDenyOOM, First: 1, Last: 2, Step: 1, KeyFlags: "RW access delete",
			ACL: lst, Group: grp, Complexity: "O(1)", Since: "6.2.0",
			Summary: "Pop an element from a list, push it to another list and return it; or block until one is available", Handler: cmdBlmove},
		&engine.Command{Name: "brpoplpush", Specs: keySpecs["brpoplpush"], Arity: 4, Flags: blk | engine.FlagDenyOOM, First: 1, Last: 2, Step: 1, KeyFlags: "RW access delete",
			ACL: lst, Group: grp, Complexity: "O(1)", Since: "2.2.0",
			Summary: "Pop an element from a list, push it to another list and return it; or block until one is available", Handler: cmdBrpoplpush},
		&engine.Command{Name: "blmpop", Specs: keySpecs["blmpop"], Arity: -5, Flags: engine.FlagWrite | engine.FlagBlocking | engine.FlagMovableKeys, Keys: engine.NumkeysKeys(2), KeyFlags: "RW access delete",
			ACL: lst, Group: grp, Since: "7.0.0",
			Complexity: "O(N+M) where N is the number of provided keys and M is the number of elements returned.",
			Summary:    "Pop elements from a list, or block until one is available", Handler: cmdBlmpop},
	)
}

func cmdBlpop(c *engine.Ctx) { blockingPop(c, true) }
func cmdBrpop(c *engine.Ctx) { blockingPop(c, false) }

// blockingPop is BLPOP/BRPOP key [key ...] timeout: the first non-empty
// list, in argument order, gives one element, replied as [key, element].
// The timeout is checked before the keys, as in Redis.
func blockingPop(c *engine.Ctx, front bool) {
	deadline, ok := c.BlockDeadline(len(c.Args) - 1)
	if !ok {
		return
	}
	keys := c.BlockKeys(c.Args[1 : len(c.Args)-1])
	for _, k := range keys {
		key := string(k)
		o, ok := lookupList(c, key)
		if !ok {
			return
		}
		if o == nil {
			continue
		}
		l := listOf(o)
		v := listPop(l, front, 1)[0]
		c.W.Array(2)
		c.W.Bulk(k)
		c.W.Bulk(v)
		listChanged(c, k, key, l, popEvent(front))
		c.Dirty(1)
		c.Rewrite(popName(front), k)
		return
	}
	if !c.Block(keyspace.TypeList, keys, deadline) {
		c.W.NullArray()
	}
}

// cmdBlmove is BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout.
func cmdBlmove(c *engine.Ctx) {
	from, ok := parseWhere(c, 3)
	if !ok {
		return
	}
	to, ok := parseWhere(c, 4)
	if !ok {
		return
	}
	blockingMove(c, from, to, 5)
}

// cmdBrpoplpush is BRPOPLPUSH source destination timeout.
func cmdBrpoplpush(c *engine.Ctx) { blockingMove(c, false, true, 3) }

// blockingMove serves BLMOVE and BRPOPLPUSH: LMOVE when the source has
// elements, a wait on the source otherwise. The destination's type is
// checked only when there is something to move, so a client served later
// can receive WRONGTYPE, as from Redis.
func blockingMove(c *engine.Ctx, from, to bool, timeoutArg int) {
	deadline, ok := c.BlockDeadline(timeoutArg)
	if !ok {
		return
	}
	o, ok := lookupList(c, c.Key(1))
	if !ok {
		return
	}
	if o != nil {
		lmove(c, from, to)
		return
	}
	if !c.Block(keyspace.TypeList, c.Args[1:2], deadline) {
		c.W.Null()
	}
}

// cmdBlmpop is BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT n]:
// its arguments are checked before its timeout.
func cmdBlmpop(c *engine.Ctx) {
	keys, front, count, ok := parseMpop(c, 2, parseWhere)
	if !ok {
		return
	}
	deadline, ok := c.BlockDeadline(1)
	if !ok {
		return
	}
	keys = c.BlockKeys(keys)
	if lmpopFrom(c, keys, front, count) {
		return
	}
	if !c.Block(keyspace.TypeList, keys, deadline) {
		c.W.NullArray()
	}
}
