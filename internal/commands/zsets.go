package commands

import (
	"math"
	"unsafe"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/ds/zset"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
	"github.com/abacusdb/abacus/internal/resp"
)

// The sorted-set family (t_zset.c). A zset key holds a *zset.Set in
// Object.Val; the set answers OBJECT ENCODING ("listpack"/"skiplist") and
// MEMORY USAGE itself. This file holds the table, the shared helpers and
// the single-key commands; ranges are in zsets_range.go, the multi-key
// algebra in zsets_algebra.go, pops, random members and ZSCAN in
// zsets_pop.go, and the two ways Redis reads doubles in zsets_float.go.
//
// Conversions follow Redis 7.0: new sets take the current
// zset-max-listpack-* limits; a CONFIG SET reaches an existing set at its
// next write (zsWrite syncs the limits), and only inserts convert.
//
// One listpack detail is kept on purpose: a listpack stores a score as
// text, and Redis writes -0 as "0", so a -0 score written while the set is
// a listpack reads back as 0, while a skiplist keeps -0 (zsPut).

func init() {
	const (
		w, r = engine.FlagWrite, engine.FlagReadonly
		wd   = engine.FlagWrite | engine.FlagDenyOOM
		f    = engine.FlagFast
		acl  = "@sortedset"
		grp  = "sorted-set"
		logN = "O(log(N)) with N being the number of elements in the sorted set."
	)
	one := func(c *engine.Command) *engine.Command {
		c.First, c.Last, c.Step = 1, 1, 1
		c.ACL, c.Group = acl, grp
		return c
	}
	moving := func(c *engine.Command) *engine.Command {
		c.Flags |= engine.FlagMovableKeys
		c.ACL, c.Group = acl, grp
		return c
	}
	rangeCx := "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned."
	limitCx := "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N))."
	remCx := "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation."
	engine.Register(
		one(&engine.Command{Name: "zadd", Arity: -4, Flags: wd | f, KeyFlags: "RW update",
			Summary: "Add one or more members to a sorted set, or update its score if it already exists", Since: "1.2.0",
			Complexity: "O(log(N)) for each item added, where N is the number of elements in the sorted set.", Handler: cmdZadd}),
		one(&engine.Command{Name: "zincrby", Arity: 4, Flags: wd | f, KeyFlags: "RW access update",
			Summary: "Increment the score of a member in a sorted set", Since: "1.2.0",
			Complexity: "O(log(N)) where N is the number of elements in the sorted set.", Handler: cmdZincrby}),
		one(&engine.Command{Name: "zscore", Arity: 3, Flags: r | f, KeyFlags: "RO access",
			Summary: "Get the score associated with the given member in a sorted set", Since: "1.2.0",
			Complexity: "O(1)", Handler: cmdZscore}),
		one(&engine.Command{Name: "zmscore", Arity: -3, Flags: r | f, KeyFlags: "RO access",
			Summary: "Get the score associated with the given members in a sorted set", Since: "6.2.0",
			Complexity: "O(N) where N is the number of members being requested.", Handler: cmdZmscore}),
		one(&engine.Command{Name: "zcard", Arity: 2, Flags: r | f, KeyFlags: "RO",
			Summary: "Get the number of members in a sorted set", Since: "1.2.0", Complexity: "O(1)", Handler: cmdZcard}),
		one(&engine.Command{Name: "zcount", Arity: 4, Flags: r | f, KeyFlags: "RO access",
			Summary: "Count the members in a sorted set with scores within the given values", Since: "2.0.0",
			Complexity: logN, Handler: cmdZcount}),
		one(&engine.Command{Name: "zlexcount", Arity: 4, Flags: r | f, KeyFlags: "RO access",
			Summary: "Count the number of members in a sorted set between a given lexicographical range", Since: "2.8.9",
			Complexity: logN, Handler: cmdZlexcount}),
		one(&engine.Command{Name: "zrank", Arity: -3, Flags: r | f, KeyFlags: "RO access",
			Summary: "Determine the index of a member in a sorted set", Since: "2.0.0",
			Complexity: "O(log(N))", Handler: cmdZrank}),
		one(&engine.Command{Name: "zrevrank", Arity: -3, Flags: r | f, KeyFlags: "RO access",
			Summary: "Determine the index of a member in a sorted set, with scores ordered from high to low", Since: "2.0.0",
			Complexity: "O(log(N))", Handler: cmdZrevrank}),
		one(&engine.Command{Name: "zrem", Arity: -3, Flags: w | f, KeyFlags: "RW delete",
			Summary: "Remove one or more members from a sorted set", Since: "1.2.0",
			Complexity: "O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements to be removed.",
			Handler:    cmdZrem}),
		one(&engine.Command{Name: "zremrangebyrank", Arity: 4, Flags: w, KeyFlags: "RW delete",
			Summary: "Remove all members in a sorted set within the given indexes", Since: "2.0.0",
			Complexity: remCx, Handler: cmdZremrangebyrank}),
		one(&engine.Command{Name: "zremrangebyscore", Arity: 4, Flags: w, KeyFlags: "RW delete",
			Summary: "Remove all members in a sorted set within the given scores", Since: "1.2.0",
			Complexity: remCx, Handler: cmdZremrangebyscore}),
		one(&engine.Command{Name: "zremrangebylex", Arity: 4, Flags: w, KeyFlags: "RW delete",
			Summary: "Remove all members in a sorted set between the given lexicographical range", Since: "2.8.9",
			Complexity: remCx, Handler: cmdZremrangebylex}),

		one(&engine.Command{Name: "zrange", Arity: -4, Flags: r, KeyFlags: "RO access",
			Summary: "Return a range of members in a sorted set", Since: "1.2.0", Complexity: rangeCx, Handler: cmdZrange}),
		&engine.Command{Name: "zrangestore", Specs: keySpecs["zrangestore"], Arity: -5, Flags: wd, First: 1, Last: 2, Step: 1, KeyFlags: "OW update",
			ACL: acl, Group: grp, Summary: "Store a range of members from sorted set into another key", Since: "6.2.0",
			Complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements stored into the destination key.",
			Handler:    cmdZrangestore},
		one(&engine.Command{Name: "zrevrange", Arity: -4, Flags: r, KeyFlags: "RO access",
			Summary: "Return a range of members in a sorted set, by index, with scores ordered from high to low", Since: "1.2.0",
			Complexity: rangeCx, Handler: cmdZrevrange}),
		one(&engine.Command{Name: "zrangebyscore", Arity: -4, Flags: r, KeyFlags: "RO access",
			Summary: "Return a range of members in a sorted set, by score", Since: "1.0.5", Complexity: limitCx, Handler: cmdZrangebyscore}),
		one(&engine.Command{Name: "zrevrangebyscore", Arity: -4, Flags: r, KeyFlags: "RO access",
			Summary: "Return a range of members in a sorted set, by score, with scores ordered from high to low", Since: "2.2.0",
			Complexity: limitCx, Handler: cmdZrevrangebyscore}),
		one(&engine.Command{Name: "zrangebylex", Arity: -4, Flags: r, KeyFlags: "RO access",
			Summary: "Return a range of members in a sorted set, by lexicographical range", Since: "2.8.9",
			Complexity: limitCx, Handler: cmdZrangebylex}),
		one(&engine.Command{Name: "zrevrangebylex", Arity: -4, Flags: r, KeyFlags: "RO access",
			Summary: "Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings.", Since: "2.8.9",
			Complexity: limitCx, Handler: cmdZrevrangebylex}),

		moving(&engine.Command{Name: "zunion", Specs: keySpecs["zunion"], Arity: -3, Flags: r, Keys: zsNumkeysKeys(1, false), KeyFlags: "RO access",
			Summary: "Add multiple sorted sets", Since: "6.2.0",
			Complexity: "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.",
			Handler:    cmdZunion}),
		moving(&engine.Command{Name: "zinter", Specs: keySpecs["zinter"], Arity: -3, Flags: r, Keys: zsNumkeysKeys(1, false), KeyFlags: "RO access",
			Summary: "Intersect multiple sorted sets", Since: "6.2.0",
			Complexity: "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.",
			Handler:    cmdZinter}),
		moving(&engine.Command{Name: "zdiff", Specs: keySpecs["zdiff"], Arity: -3, Flags: r, Keys: zsNumkeysKeys(1, false), KeyFlags: "RO access",
			Summary: "Subtract multiple sorted sets", Since: "6.2.0",
			Complexity: "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.",
			Handler:    cmdZdiff}),
		moving(&engine.Command{Name: "zunionstore", Specs: keySpecs["zunionstore"], Arity: -4, Flags: wd, First: 1, Last: 1, Step: 1, Keys: zsNumkeysKeys(2, true), KeyFlags: "OW update",
			Summary: "Add multiple sorted sets and store the resulting sorted set in a new key", Since: "2.0.0",
			Complexity: "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.",
			Handler:    cmdZunionstore}),
		moving(&engine.Command{Name: "zinterstore", Specs: keySpecs["zinterstore"], Arity: -4, Flags: wd, First: 1, Last: 1, Step: 1, Keys: zsNumkeysKeys(2, true), KeyFlags: "OW update",
			Summary: "Intersect multiple sorted sets and store the resulting sorted set in a new key", Since: "2.0.0",
			Complexity: "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.",
			Handler:    cmdZinterstore}),
		moving(&engine.Command{Name: "zdiffstore", Specs: keySpecs["zdiffstore"], Arity: -4, Flags: wd, First: 1, Last: 1, Step: 1, Keys: zsNumkeysKeys(2, true), KeyFlags: "OW update",
			Summary: "Subtract multiple sorted sets and store the resulting sorted set in a new key", Since: "6.2.0",
			Complexity: "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.",
			Handler:    cmdZdiffstore}),
		moving(&engine.Command{Name: "zintercard", Specs: keySpecs["zintercard"], Arity: -3, Flags: r, Keys: zsNumkeysKeys(1, false), KeyFlags: "RO access",
			Summary: "Intersect multiple sorted sets and return the cardinality of the result", Since: "7.0.0",
			Complexity: "O(N*K) worst case with N being the smallest input sorted set, K being the number of input sorted sets.",
			Handler:    cmdZintercard}),

		one(&engine.Command{Name: "zpopmin", Arity: -2, Flags: w | f, KeyFlags: "RW access delete",
			Summary: "Remove and return members with the lowest scores in a sorted set", Since: "5.0.0",
			Complexity: "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.",
			Handler:    cmdZpopmin}),
		one(&engine.Command{Name: "zpopmax", Arity: -2, Flags: w | f, KeyFlags: "RW access delete",
			Summary: "Remove and return members with the highest scores in a sorted set", Since: "5.0.0",
			Complexity: "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.",
			Handler:    cmdZpopmax}),
		moving(&engine.Command{Name: "zmpop", Specs: keySpecs["zmpop"], Arity: -4, Flags: w, Keys: zsNumkeysKeys(1, false), KeyFlags: "RW access delete",
			Summary: "Remove and return members with scores in a sorted set", Since: "7.0.0",
			Complexity: "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.",
			Handler:    cmdZmpop}),
		one(&engine.Command{Name: "zrandmember", Arity: -2, Flags: r, KeyFlags: "RO access", Tips: "nondeterministic_output",
			Summary: "Get one or multiple random elements from a sorted set", Since: "6.2.0",
			Complexity: "O(N) where N is the number of elements returned", Handler: cmdZrandmember}),
		one(&engine.Command{Name: "zscan", Arity: -3, Flags: r, KeyFlags: "RO access", Tips: "nondeterministic_output",
			Summary: "Incrementally iterate sorted sets elements and associated scores", Since: "2.8.0",
			Complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
			Handler:    cmdZscan}),
	)
}

// Error texts of this family.
const (
	errZsetNaN         = "ERR resulting score is not a number (NaN)"
	errZaddXXNX        = "ERR XX and NX options at the same time are not compatible"
	errZaddGTLTNX      = "ERR GT, LT, and/or NX options at the same time are not compatible"
	errZaddIncrPair    = "ERR INCR option supports a single increment-element pair"
	errZsetMinMax      = "ERR min or max is not a float"
	errZsetLexRange    = "ERR min or max not valid string range item"
	errZsetWeight      = "ERR weight value is not a float"
	errZrangeLimit     = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
	errZrangeLexScores = "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
)

// zsView returns b as a string without copying it, for a lookup that does
// not keep its argument (Score, Rank, Delete). Add keeps its member, so it
// gets a copy.
func zsView(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// zsRead returns the sorted set at key for a read, nil when the key is
// missing; ok is false once WRONGTYPE has been replied.
func zsRead(c *engine.Ctx, key string) (s *zset.Set, ok bool) {
	o, ok := c.Lookup(key, keyspace.TypeZSet)
	if !ok || o == nil {
		return nil, ok
	}
	return o.Val().(*zset.Set), true
}

// zsWrite is zsRead for a write: no hit/miss statistics, and the set picks
// up limits changed by CONFIG SET since its last write, so the insert that
// follows converts where Redis's would.
func zsWrite(c *engine.Ctx, key string) (s *zset.Set, ok bool) {
	o, ok := c.LookupWrite(key, keyspace.TypeZSet)
	if !ok || o == nil {
		return nil, ok
	}
	s = o.Val().(*zset.Set)
	if lim := engine.ZSetLimits(c); s.Limits() != lim {
		s.SetLimits(lim)
	}
	return s, true
}

// zsPut sets member's score. A listpack holds scores as text and Redis
// writes -0 there as "0", so a -0 written while the set stays a listpack
// is stored as 0; a skiplist keeps -0, as Redis's does.
func zsPut(s *zset.Set, member string, score float64) zset.AddResult {
	res := s.Add(member, score)
	if score == 0 && math.Signbit(score) && s.Encoding() == zset.Listpack {
		s.Delete(member)
		s.Add(member, 0)
	}
	return res
}

// zsFromEntries builds a *STORE result. Redis builds a skiplist and then
// converts it to a listpack if it fits, which writes every -0 as 0.
func zsFromEntries(es []zset.Entry, lim zset.Limits) *zset.Set {
	s := zset.FromEntries(es, lim)
	if s.Encoding() != zset.Listpack {
		return s
	}
	fixed := false
	for i := range es {
		if es[i].Score == 0 && math.Signbit(es[i].Score) {
			es[i].Score, fixed = 0, true
		}
	}
	if fixed {
		s = zset.FromEntries(es, lim)
	}
	return s
}

// zsReplyEntries writes members, with their scores if asked: one flat
// array in RESP2, an array of [member, score] pairs in RESP3 (Redis 7's
// shape, so clients keep the order).
func zsReplyEntries(c *engine.Ctx, es []zset.Entry, withScores bool) {
	r := zsStartReply(c, len(es), withScores)
	for _, e := range es {
		r.entry(e.Member, e.Score)
	}
}

// zsReply writes the entries of a reply that zsStartReply began.
type zsReply struct {
	w                  *resp.Writer
	withScores, nested bool
}

// zsStartReply writes the header of a reply of n entries in
// zsReplyEntries's shape.
func zsStartReply(c *engine.Ctx, n int, withScores bool) zsReply {
	r := zsReply{w: c.W, withScores: withScores, nested: withScores && c.W.Proto > 2}
	if withScores && !r.nested {
		n *= 2
	}
	r.w.Array(n)
	return r
}

func (r zsReply) entry(member string, score float64) {
	if r.nested {
		r.w.Array(2)
	}
	r.w.BulkString(member)
	if r.withScores {
		r.w.Double(score)
	}
}

// zsNumkeysKeys extracts the keys of a numkeys command: numkeys at numIdx,
// the keys after it, and the destination at 1 when dest is set. Invalid
// numkeys yield no keys at all, as Redis's getkeys functions do.
func zsNumkeysKeys(numIdx int, dest bool) func(args [][]byte) []int {
	return func(args [][]byte) []int {
		if numIdx >= len(args) {
			return nil
		}
		n, ok := num.ParseInt(args[numIdx])
		if !ok || n < 1 || n > int64(len(args)-numIdx-1) {
			return nil
		}
		var out []int
		if dest {
			out = append(out, 1)
		}
		for i := 0; i < int(n); i++ {
			out = append(out, numIdx+1+i)
		}
		return out
	}
}

// ZADD and ZINCRBY flags (ZADD_IN_*).
const (
	zaddNX = 1 << iota
	zaddXX
	zaddGT
	zaddLT
	zaddIncr
	zaddCH
)

func cmdZadd(c *engine.Ctx)    { zaddGeneric(c, 0) }
func cmdZincrby(c *engine.Ctx) { zaddGeneric(c, zaddIncr) }

// zaddGeneric is zaddGenericCommand: options (which ZINCRBY parses too, so
// "ZINCRBY k nx m" is a syntax error there as well), every score parsed
// before anything changes, then one zsetAdd per pair.
func zaddGeneric(c *engine.Ctx, flags int) {
	args := c.Args
	idx := 2
options:
	for ; idx < len(args); idx++ {
		switch a := args[idx]; {
		case ascii.OptIs(a, "nx"):
			flags |= zaddNX
		case ascii.OptIs(a, "xx"):
			flags |= zaddXX
		case ascii.OptIs(a, "ch"):
			flags |= zaddCH
		case ascii.OptIs(a, "incr"):
			flags |= zaddIncr
		case ascii.OptIs(a, "gt"):
			flags |= zaddGT
		case ascii.OptIs(a, "lt"):
			flags |= zaddLT
		default:
			break options
		}
	}
	incr, nx, xx := flags&zaddIncr != 0, flags&zaddNX != 0, flags&zaddXX != 0
	gt, lt := flags&zaddGT != 0, flags&zaddLT != 0
	elements := len(args) - idx
	if elements%2 != 0 || elements == 0 {
		c.Error(engine.ErrSyntax)
		return
	}
	elements /= 2
	switch {
	case nx && xx:
		c.Error(errZaddXXNX)
		return
	case (gt && nx) || (lt && nx) || (gt && lt):
		c.Error(errZaddGTLTNX)
		return
	case incr && elements > 1:
		c.Error(errZaddIncrPair)
		return
	}
	scores := make([]float64, elements)
	for j := range scores {
		v, ok := zsParseDouble(args[idx+2*j])
		if !ok {
			c.Error(engine.ErrNotFloat)
			return
		}
		scores[j] = v
	}

	// The key and the members are copied out of the arguments only where
	// they are stored (a new set, a new member): the lookups keep nothing.
	s, ok := zsWrite(c, string(args[1]))
	if !ok {
		return
	}
	created := false
	if s == nil {
		if xx {
			zaddReply(c, incr, flags&zaddCH != 0, 0, 0, 0, 0)
			return
		}
		s = zset.New(engine.ZSetLimits(c))
		created = true
	}
	var added, updated, processed int64
	var last float64
	plain := flags&(zaddNX|zaddXX|zaddGT|zaddLT|zaddIncr) == 0
	for j, score := range scores {
		member := args[idx+2*j+1]
		if plain {
			// No condition to test: one lookup, in Add.
			switch zsPut(s, string(member), score) {
			case zset.Added:
				added++
			case zset.Updated:
				updated++
			}
			processed++
			last = score
			continue
		}
		cur, exists := s.Score(string(member))
		switch {
		case exists:
			if nx {
				continue
			}
			if incr {
				score += cur
				if math.IsNaN(score) {
					c.Error(errZsetNaN)
					zaddFinish(c, s, created, added+updated)
					return
				}
			}
			if (lt && score >= cur) || (gt && score <= cur) {
				continue
			}
			last = score
			processed++
			if score != cur {
				zsPut(s, string(member), score)
				updated++
			}
		case !xx:
			zsPut(s, string(member), score)
			last = score
			added++
			processed++
		}
	}
	zaddFinish(c, s, created, added+updated)
	if added+updated > 0 {
		c.Notify(engine.NotifyZset, cond2(incr, "zincr", "zadd"), c.Args[1])
	}
	zaddReply(c, incr, flags&zaddCH != 0, added, updated, processed, last)
}

// zaddFinish stores a new set at the key (argument 1) or signals the
// change of an existing one.
func zaddFinish(c *engine.Ctx, s *zset.Set, created bool, changed int64) {
	if created {
		if s.Len() > 0 {
			c.DB.Set(c.Key(1), keyspace.NewValue(keyspace.TypeZSet, s), false)
		}
	} else if changed > 0 {
		c.DB.Modified(c.Key(1))
	}
	c.Dirty(changed)
}

func zaddReply(c *engine.Ctx, incr, ch bool, added, updated, processed int64, score float64) {
	switch {
	case incr && processed > 0:
		c.W.Double(score)
	case incr:
		c.W.Null()
	case ch:
		c.W.Int(added + updated)
	default:
		c.W.Int(added)
	}
}

func cmdZscore(c *engine.Ctx) {
	s, ok := zsRead(c, c.Key(1))
	if !ok {
		return
	}
	if s == nil {
		c.W.Null()
		return
	}
	if v, found := s.Score(zsView(c.Args[2])); found {
		c.W.Double(v)
	} else {
		c.W.Null()
	}
}

func cmdZmscore(c *engine.Ctx) {
	s, ok := zsRead(c, c.Key(1))
	if !ok {
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		if s == nil {
			c.W.Null()
			continue
		}
		if v, found := s.Score(zsView(m)); found {
			c.W.Double(v)
		} else {
			c.W.Null()
		}
	}
}

func cmdZcard(c *engine.Ctx) {
	s, ok := zsRead(c, c.Key(1))
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(s.Len()))
}

// zsScoreRange parses a min and max as zslParseRange does.
func zsScoreRange(c *engine.Ctx, minIdx, maxIdx int) (zset.ScoreRange, bool) {
	var r zset.ScoreRange
	var ok1, ok2 bool
	r.Min, r.MinExclusive, ok1 = zsParseRangeEnd(c.Args[minIdx])
	r.Max, r.MaxExclusive, ok2 = zsParseRangeEnd(c.Args[maxIdx])
	if !ok1 || !ok2 {
		c.Error(errZsetMinMax)
		return r, false
	}
	return r, true
}

// zsLexBound parses one end of a lexicographic range as
// zslParseLexRangeItem does: "+" and "-" compare as C strings (so "+\0x"
// is still "+"), "(" and "[" take the rest of the argument, binary-safe.
func zsLexBound(b []byte) (zset.LexBound, bool) {
	if len(b) == 0 {
		return zset.LexBound{}, false
	}
	switch b[0] {
	case '+', '-':
		if len(b) > 1 && b[1] != 0 {
			return zset.LexBound{}, false
		}
		if b[0] == '+' {
			return zset.LexBound{Kind: zset.LexPosInf}, true
		}
		return zset.LexBound{Kind: zset.LexNegInf}, true
	case '(':
		return zset.LexBound{Kind: zset.LexExclusive, Value: string(b[1:])}, true
	case '[':
		return zset.LexBound{Kind: zset.LexInclusive, Value: string(b[1:])}, true
	}
	return zset.LexBound{}, false
}

// zsLexRange parses a lexicographic min and max.
func zsLexRange(c *engine.Ctx, minIdx, maxIdx int) (zset.LexRange, bool) {
	lo, ok1 := zsLexBound(c.Args[minIdx])
	hi, ok2 := zsLexBound(c.Args[maxIdx])
	if !ok1 || !ok2 {
		c.Error(errZsetLexRange)
		return zset.LexRange{}, false
	}
	return zset.LexRange{Min: lo, Max: hi}, true
}

func cmdZcount(c *engine.Ctx) {
	r, ok := zsScoreRange(c, 2, 3)
	if !ok {
		return
	}
	s, ok := zsRead(c, c.Key(1))
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(s.CountByScore(r)))
}

func cmdZlexcount(c *engine.Ctx) {
	r, ok := zsLexRange(c, 2, 3)
	if !ok {
		return
	}
	s, ok := zsRead(c, c.Key(1))
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(s.CountByLex(r)))
}

func cmdZrank(c *engine.Ctx)    { zrankGeneric(c, false) }
func cmdZrevrank(c *engine.Ctx) { zrankGeneric(c, true) }

// zrankGeneric is ZRANK/ZREVRANK with Redis 7.2's WITHSCORE: the reply
// becomes [rank, score], and a miss a null array instead of a null.
func zrankGeneric(c *engine.Ctx, reverse bool) {
	if len(c.Args) > 4 {
		c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.FullName())
		return
	}
	withScore := false
	if len(c.Args) == 4 {
		if !ascii.OptIs(c.Args[3], "withscore") {
			c.Error(engine.ErrSyntax)
			return
		}
		withScore = true
	}
	miss := func() {
		if withScore {
			c.W.NullArray()
		} else {
			c.W.Null()
		}
	}
	s, ok := zsRead(c, c.Key(1))
	if !ok {
		return
	}
	if s == nil {
		miss()
		return
	}
	member := zsView(c.Args[2])
	rank, found := s.Rank(member, reverse)
	if !found {
		miss()
		return
	}
	if withScore {
		score, _ := s.Score(member)
		c.W.Array(2)
		c.W.Int(int64(rank))
		c.W.Double(score)
		return
	}
	c.W.Int(int64(rank))
}

func cmdZrem(c *engine.Ctx) {
	key := c.Key(1)
	s, ok := zsWrite(c, key)
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	var deleted int64
	removed := false
	for _, m := range c.Args[2:] {
		if s.Delete(zsView(m)) {
			deleted++
		}
		if s.Len() == 0 {
			c.DB.Delete(key)
			removed = true
			break
		}
	}
	if deleted > 0 {
		if !removed {
			c.DB.Modified(key)
		}
		c.Dirty(deleted)
		c.Notify(engine.NotifyZset, "zrem", c.Args[1])
		if removed {
			c.Notify(engine.NotifyGeneric, "del", c.Args[1])
		}
	}
	c.W.Int(deleted)
}

// zsRank converts Redis's start and stop indexes (negative from the end)
// for a set of n members into inclusive ranks; ok is false when the range
// is empty.
func zsRank(start, stop int64, n int) (lo, hi int, ok bool) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if stop < 0 {
		stop += ln
	}
	if start < 0 {
		start = 0
	}
	if start > stop || start >= ln {
		return 0, 0, false
	}
	if stop >= ln {
		stop = ln - 1
	}
	return int(start), int(stop), true
}

func cmdZremrangebyrank(c *engine.Ctx) {
	start, ok := c.Int(2)
	if !ok {
		return
	}
	stop, ok := c.Int(3)
	if !ok {
		return
	}
	zremrangeGeneric(c, func(s *zset.Set) int {
		lo, hi, ok := zsRank(start, stop, s.Len())
		if !ok {
			return 0
		}
		return s.DeleteByRank(lo, hi)
	})
}

func cmdZremrangebyscore(c *engine.Ctx) {
	r, ok := zsScoreRange(c, 2, 3)
	if !ok {
		return
	}
	zremrangeGeneric(c, func(s *zset.Set) int { return s.DeleteByScore(r) })
}

func cmdZremrangebylex(c *engine.Ctx) {
	r, ok := zsLexRange(c, 2, 3)
	if !ok {
		return
	}
	zremrangeGeneric(c, func(s *zset.Set) int { return s.DeleteByLex(r) })
}

// zremrangeGeneric runs a range deletion parsed by the caller, deleting
// the key when it empties.
func zremrangeGeneric(c *engine.Ctx, del func(*zset.Set) int) {
	key := c.Key(1)
	s, ok := zsWrite(c, key)
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	n := del(s)
	if n > 0 {
		// The event is the command's name: zremrangebyrank, ...byscore,
		// ...bylex.
		c.Notify(engine.NotifyZset, c.Cmd.Name, c.Args[1])
		if s.Len() == 0 {
			c.DB.Delete(key)
			c.Notify(engine.NotifyGeneric, "del", c.Args[1])
		} else {
			c.DB.Modified(key)
		}
	}
	c.Dirty(int64(n))
	c.W.Int(int64(n))
}
