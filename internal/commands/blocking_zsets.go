package commands

import (
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// BZPOPMIN, BZPOPMAX and BZMPOP: the blocking forms of ZPOPMIN, ZPOPMAX
// and ZMPOP, served by zpopGeneric (zsets_pop.go) when a sorted set has
// members, parked on their keys otherwise (blocking.go). Their timeout
// reply, and their reply inside MULTI/EXEC or a script, is a null array.

func init() {
	const (
		acl = "@sortedset"
		grp = "sorted-set"
		blk = engine.FlagWrite | engine.FlagNoScript | engine.FlagBlocking
	)
	engine.Register(
		&engine.Command{Name: "bzpopmin", Arity: -3, Flags: blk | engine.FlagFast, First: 1, Last: -2, Step: 1, KeyFlags: "RW access delete",
			ACL: acl, Group: grp, Since: "5.0.0", Complexity: "O(log(N)) with N being the number of elements in the sorted set.",
			Summary: "Remove and return the member with the lowest score from one or more sorted sets, or block until one is available",
			Handler: cmdBzpopmin},
		&engine.Command{Name: "bzpopmax", Arity: -3, Flags: blk | engine.FlagFast, First: 1, Last: -2, Step: 1, KeyFlags: "RW access delete",
			ACL: acl, Group: grp, Since: "5.0.0", Complexity: "O(log(N)) with N being the number of elements in the sorted set.",
			Summary: "Remove and return the member with the highest score from one or more sorted sets, or block until one is available",
			Handler: cmdBzpopmax},
		&engine.Command{Name: "bzmpop", Specs: keySpecs["bzmpop"], Arity: -5, Flags: engine.FlagWrite | engine.FlagBlocking | engine.FlagMovableKeys, Keys: engine.NumkeysKeys(2), KeyFlags: "RW access delete",
			ACL: acl, Group: grp, Since: "7.0.0",
			Complexity: "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.",
			Summary:    "Remove and return members with scores in a sorted set or block until one is available",
			Handler:    cmdBzmpop},
	)
}

func cmdBzpopmin(c *engine.Ctx) {
	blockingZpop(c, c.Args[1:len(c.Args)-1], false, len(c.Args)-1, -1, false)
}
func cmdBzpopmax(c *engine.Ctx) {
	blockingZpop(c, c.Args[1:len(c.Args)-1], true, len(c.Args)-1, -1, false)
}

// cmdBzmpop is BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT n]:
// its arguments are checked before its timeout, as in Redis.
func cmdBzmpop(c *engine.Ctx) {
	keys, max, count, ok := zmpopArgs(c, 2)
	if !ok {
		return
	}
	blockingZpop(c, keys, max, 1, count, true)
}

// blockingZpop is Redis's blockingGenericZpopCommand: the timeout first,
// then the keys in order; the first sorted set found is popped from (a
// key of another type is WRONGTYPE); none found parks the client. BZPOP*
// reply [key, member, score]; BZMPOP (nested) [key, [[member, score]...]].
func blockingZpop(c *engine.Ctx, keys [][]byte, max bool, timeoutIdx int, count int64, nested bool) {
	deadline, ok := c.BlockDeadline(timeoutIdx)
	if !ok {
		return
	}
	keys = c.BlockKeys(keys)
	for i, k := range keys {
		o := c.DB.Lookup(string(k))
		if o == nil {
			continue
		}
		if o.Type != keyspace.TypeZSet {
			c.Error(engine.ErrWrongType)
			return
		}
		zpopGeneric(c, keys[i:i+1], max, count, true, nested, nested)
		return
	}
	if !c.Block(keyspace.TypeZSet, keys, deadline) {
		c.W.NullArray()
	}
}
