package commands

import (
	"cmp"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/ds/zset"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
)

// ZUNION, ZINTER, ZDIFF, their *STORE forms and ZINTERCARD, as Redis's
// zunionInterDiffGenericCommand does them: plain sets are accepted as
// inputs with every score 1, a missing key is an empty input, WEIGHTS
// multiply (inf*0 counts as 0), AGGREGATE SUM|MIN|MAX combines, and sums
// are taken in Redis's order (inputs sorted by size, stably) so that
// floating-point results agree to the last bit.

const (
	zsUnion = iota
	zsInter
	zsDiff
)

const (
	zsAggSum = iota
	zsAggMin
	zsAggMax
)

// zsPlainSet is what the algebra needs of a set value (internal/ds/set's
// *Set), named as an interface so that this family does not depend on the
// set family's package.
type zsPlainSet interface {
	Len() int
	Contains(member []byte) bool
	All() iter.Seq[[]byte]
}

// zsSource is one input of the algebra: a sorted set, a set, or nothing.
type zsSource struct {
	z      *zset.Set
	s      zsPlainSet
	val    any // the stored value, to spot one key given twice
	weight float64
}

func (src *zsSource) len() int {
	switch {
	case src.z != nil:
		return src.z.Len()
	case src.s != nil:
		return src.s.Len()
	}
	return 0
}

// each yields every member with its score (1 for a plain set). Members of
// a plain set are copied: the set hands out views of its own buffer.
func (src *zsSource) each(yield func(member string, score float64) bool) {
	switch {
	case src.z != nil:
		src.z.All()(yield)
	case src.s != nil:
		for m := range src.s.All() {
			if !yield(string(m), 1) {
				return
			}
		}
	}
}

// find returns member's score in the source (1 for a plain set).
func (src *zsSource) find(member string) (float64, bool) {
	switch {
	case src.z != nil:
		return src.z.Score(member)
	case src.s != nil:
		if src.s.Contains([]byte(member)) {
			return 1, true
		}
	}
	return 0, false
}

// zsAggregate is zunionInterAggregate: a NaN sum (inf + -inf) counts as 0,
// and MIN/MAX keep the target when the value is NaN.
func zsAggregate(target *float64, val float64, agg int) {
	switch agg {
	case zsAggSum:
		*target += val
		if math.IsNaN(*target) {
			*target = 0
		}
	case zsAggMin:
		if val < *target {
			*target = val
		}
	case zsAggMax:
		if val > *target {
			*target = val
		}
	}
}

func cmdZunion(c *engine.Ctx)      { zsAlgebra(c, "", false, 1, zsUnion, false) }
func cmdZinter(c *engine.Ctx)      { zsAlgebra(c, "", false, 1, zsInter, false) }
func cmdZdiff(c *engine.Ctx)       { zsAlgebra(c, "", false, 1, zsDiff, false) }
func cmdZintercard(c *engine.Ctx)  { zsAlgebra(c, "", false, 1, zsInter, true) }
func cmdZunionstore(c *engine.Ctx) { zsAlgebra(c, c.Key(1), true, 2, zsUnion, false) }
func cmdZinterstore(c *engine.Ctx) { zsAlgebra(c, c.Key(1), true, 2, zsInter, false) }
func cmdZdiffstore(c *engine.Ctx)  { zsAlgebra(c, c.Key(1), true, 2, zsDiff, false) }

// zsAlgebra parses "numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE
// SUM|MIN|MAX] [WITHSCORES]" (or LIMIT for ZINTERCARD) from numIdx on, in
// Redis's order: numkeys, then the keys' types, then the options, each of
// which may repeat.
func zsAlgebra(c *engine.Ctx, dst string, store bool, numIdx int, op int, cardOnly bool) {
	args := c.Args
	setnum, ok := c.Int(numIdx)
	if !ok {
		return
	}
	if setnum < 1 {
		c.Errorf("ERR at least 1 input key is needed for '%s' command", c.Cmd.FullName())
		return
	}
	if setnum > int64(len(args)-(numIdx+1)) {
		c.Error(engine.ErrSyntax)
		return
	}
	srcs := make([]zsSource, setnum)
	for i := range srcs {
		srcs[i].weight = 1
		o := c.DB.LookupRead(string(args[numIdx+1+i]))
		if o == nil {
			continue
		}
		switch o.Type {
		case keyspace.TypeZSet:
			srcs[i].z = o.Val().(*zset.Set)
		case keyspace.TypeSet:
			ps, ok := o.Val().(zsPlainSet)
			if !ok {
				panic(fmt.Sprintf("zset algebra: set value of type %T", o.Val()))
			}
			srcs[i].s = ps
		default:
			c.Error(engine.ErrWrongType)
			return
		}
		srcs[i].val = o.Val()
	}

	agg, withScores, limit := zsAggSum, false, int64(0)
	for j := numIdx + 1 + int(setnum); j < len(args); {
		remaining := int64(len(args) - j)
		a := args[j]
		switch {
		case op != zsDiff && !cardOnly && remaining >= setnum+1 && ascii.OptIs(a, "weights"):
			j++
			for i := range srcs {
				w, ok := zsParseDouble(args[j])
				if !ok {
					c.Error(errZsetWeight)
					return
				}
				srcs[i].weight = w
				j++
			}
		case op != zsDiff && !cardOnly && remaining >= 2 && ascii.OptIs(a, "aggregate"):
			switch b := args[j+1]; {
			case ascii.OptIs(b, "sum"):
				agg = zsAggSum
			case ascii.OptIs(b, "min"):
				agg = zsAggMin
			case ascii.OptIs(b, "max"):
				agg = zsAggMax
			default:
				c.Error(engine.ErrSyntax)
				return
			}
			j += 2
		case !store && !cardOnly && ascii.OptIs(a, "withscores"):
			withScores = true
			j++
		case cardOnly && remaining >= 2 && ascii.OptIs(a, "limit"):
			v, ok := num.ParseInt(args[j+1])
			if !ok || v < 0 {
				c.Error("ERR LIMIT can't be negative")
				return
			}
			limit = v
			j += 2
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}

	if op != zsDiff {
		slices.SortStableFunc(srcs, func(a, b zsSource) int { return cmp.Compare(a.len(), b.len()) })
	}
	var es []zset.Entry
	switch op {
	case zsInter:
		if cardOnly {
			c.W.Int(zsInterCard(srcs, limit))
			return
		}
		es = zsInterEntries(srcs, agg)
	case zsUnion:
		es = zsUnionEntries(srcs, agg)
	case zsDiff:
		es = zsDiffEntries(srcs)
	}
	if store {
		zsStoreResult(c, dst, es, -1)
		return
	}
	slices.SortFunc(es, func(a, b zset.Entry) int {
		if a.Score != b.Score {
			return cmp.Compare(a.Score, b.Score)
		}
		return strings.Compare(a.Member, b.Member)
	})
	zsReplyEntries(c, es, withScores)
}

// zsInterScore is the intersection score of member (first score sc in
// srcs[0]); ok is false when some input lacks member.
func zsInterScore(srcs []zsSource, member string, sc float64, agg int) (float64, bool) {
	score := srcs[0].weight * sc
	if math.IsNaN(score) {
		score = 0
	}
	for j := 1; j < len(srcs); j++ {
		var v float64
		if srcs[j].val == srcs[0].val && srcs[0].val != nil {
			v = sc
		} else {
			var found bool
			if v, found = srcs[j].find(member); !found {
				return 0, false
			}
		}
		zsAggregate(&score, v*srcs[j].weight, agg)
	}
	return score, true
}

func zsInterEntries(srcs []zsSource, agg int) []zset.Entry {
	var es []zset.Entry
	if srcs[0].len() == 0 {
		return nil
	}
	srcs[0].each(func(m string, sc float64) bool {
		if score, ok := zsInterScore(srcs, m, sc, agg); ok {
			es = append(es, zset.Entry{Member: m, Score: score})
		}
		return true
	})
	return es
}

// zsInterCard counts the intersection, stopping at limit (0: no limit).
func zsInterCard(srcs []zsSource, limit int64) int64 {
	var n int64
	if srcs[0].len() == 0 {
		return 0
	}
	srcs[0].each(func(m string, sc float64) bool {
		if _, ok := zsInterScore(srcs, m, sc, zsAggSum); ok {
			n++
		}
		return limit == 0 || n < limit
	})
	return n
}

func zsUnionEntries(srcs []zsSource, agg int) []zset.Entry {
	acc := make(map[string]float64, srcs[len(srcs)-1].len())
	for i := range srcs {
		w := srcs[i].weight
		srcs[i].each(func(m string, sc float64) bool {
			score := w * sc
			if math.IsNaN(score) {
				score = 0
			}
			if cur, ok := acc[m]; ok {
				zsAggregate(&cur, score, agg)
				acc[m] = cur
			} else {
				acc[m] = score
			}
			return true
		})
	}
	es := make([]zset.Entry, 0, len(acc))
	for m, sc := range acc {
		es = append(es, zset.Entry{Member: m, Score: sc})
	}
	return es
}

// zsDiffEntries keeps the members of the first input that no other input
// has, with their own scores (ZDIFF takes no weights).
func zsDiffEntries(srcs []zsSource) []zset.Entry {
	for j := 1; j < len(srcs); j++ {
		if srcs[j].val == srcs[0].val && srcs[0].val != nil {
			return nil // the first input minus itself
		}
	}
	var es []zset.Entry
	srcs[0].each(func(m string, sc float64) bool {
		for j := 1; j < len(srcs); j++ {
			if _, found := srcs[j].find(m); found {
				return true
			}
		}
		es = append(es, zset.Entry{Member: m, Score: sc})
		return true
	})
	return es
}
