package commands

import (
	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/ds/zset"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// ZRANGE and its older forms (ZREVRANGE, Z[REV]RANGEBYSCORE,
// Z[REV]RANGEBYLEX) and ZRANGESTORE share one implementation, as in
// Redis's zrangeGenericCommand: the older commands fix the range type and
// direction, ZRANGE takes them from BYSCORE, BYLEX and REV.

type zrangeBy uint8

const (
	zrAuto zrangeBy = iota
	zrRank
	zrScore
	zrLex
)

type zrangeDir uint8

const (
	zdAuto zrangeDir = iota
	zdForward
	zdReverse
)

func cmdZrange(c *engine.Ctx)           { zrangeGeneric(c, 1, false, zrAuto, zdAuto) }
func cmdZrangestore(c *engine.Ctx)      { zrangeGeneric(c, 2, true, zrAuto, zdAuto) }
func cmdZrevrange(c *engine.Ctx)        { zrangeGeneric(c, 1, false, zrRank, zdReverse) }
func cmdZrangebyscore(c *engine.Ctx)    { zrangeGeneric(c, 1, false, zrScore, zdForward) }
func cmdZrevrangebyscore(c *engine.Ctx) { zrangeGeneric(c, 1, false, zrScore, zdReverse) }
func cmdZrangebylex(c *engine.Ctx)      { zrangeGeneric(c, 1, false, zrLex, zdForward) }
func cmdZrevrangebylex(c *engine.Ctx)   { zrangeGeneric(c, 1, false, zrLex, zdReverse) }

// zsReplySpan writes a range as zsReplyEntries would, streaming it from
// the set into the reply: the span knows its length before the walk, so
// no slice of entries is built on the way.
func zsReplySpan(c *engine.Ctx, sp *zset.Span, withScores bool) {
	r := zsStartReply(c, sp.Len(), withScores)
	sp.Walk(func(m string, sc float64) bool {
		r.entry(m, sc)
		return true
	})
}

// zrangeGeneric parses "<src> <min> <max> [BYSCORE|BYLEX] [REV]
// [WITHSCORES] [LIMIT offset count]" from argument argStart on and replies
// with the range, or stores it at argument 1 when store is set.
func zrangeGeneric(c *engine.Ctx, argStart int, store bool, by zrangeBy, dir zrangeDir) {
	args := c.Args
	minIdx, maxIdx := argStart+1, argStart+2
	var offset int64
	limit := int64(-1)
	withScores := false
	for j := argStart + 3; j < len(args); j++ {
		left := len(args) - j - 1
		switch a := args[j]; {
		case !store && ascii.OptIs(a, "withscores"):
			withScores = true
		case ascii.OptIs(a, "limit") && left >= 2:
			var ok bool
			if offset, ok = c.Int(j + 1); !ok {
				return
			}
			if limit, ok = c.Int(j + 2); !ok {
				return
			}
			j += 2
		case dir == zdAuto && ascii.OptIs(a, "rev"):
			dir = zdReverse
		case by == zrAuto && ascii.OptIs(a, "bylex"):
			by = zrLex
		case by == zrAuto && ascii.OptIs(a, "byscore"):
			by = zrScore
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	if dir == zdAuto {
		dir = zdForward
	}
	if by == zrAuto {
		by = zrRank
	}
	// LIMIT with count -1 is indistinguishable from no LIMIT, as in Redis.
	if limit != -1 && by == zrRank {
		c.Error(errZrangeLimit)
		return
	}
	if withScores && by == zrLex {
		c.Error(errZrangeLexScores)
		return
	}
	reverse := dir == zdReverse
	if reverse && by != zrRank {
		minIdx, maxIdx = maxIdx, minIdx // given as max, min
	}

	var start, stop int64
	var sr zset.ScoreRange
	var lr zset.LexRange
	var ok bool
	switch by {
	case zrRank:
		if start, ok = c.Int(minIdx); !ok {
			return
		}
		if stop, ok = c.Int(maxIdx); !ok {
			return
		}
	case zrScore:
		if sr, ok = zsScoreRange(c, minIdx, maxIdx); !ok {
			return
		}
	case zrLex:
		if lr, ok = zsLexRange(c, minIdx, maxIdx); !ok {
			return
		}
	}

	s, ok := zsRead(c, c.Key(argStart))
	if !ok {
		return
	}
	var sp zset.Span // empty for a missing key
	if s != nil {
		switch by {
		case zrRank:
			if lo, hi, ok := zsRank(start, stop, s.Len()); ok {
				sp = s.SpanByRank(lo, hi, reverse)
			}
		case zrScore:
			sp = s.SpanByScore(sr, reverse, int(offset), int(limit))
		case zrLex:
			sp = s.SpanByLex(lr, reverse, int(offset), int(limit))
		}
	}
	if !store {
		zsReplySpan(c, &sp, withScores)
		return
	}
	es := make([]zset.Entry, 0, sp.Len())
	sp.Walk(func(m string, sc float64) bool {
		es = append(es, zset.Entry{Member: m, Score: sc})
		return true
	})
	// Redis creates the destination for the length of a rank range, as a
	// listpack for the others, and inserts one entry at a time.
	hint := 0
	if by == zrRank {
		hint = len(es)
	}
	zsStoreResult(c, c.Key(1), es, hint)
}

// zsStoreResult writes a *STORE result to dst, or deletes dst when the
// result is empty, and replies with the result's size.
//
// The encoding and -0 scores follow how Redis builds the result. The
// algebra (sizeHint < 0) builds a skiplist and converts it to a listpack
// when it fits, which writes every -0 as 0. ZRANGESTORE creates a listpack
// when sizeHint entries fit (or a skiplist) and inserts the entries one at
// a time, so a -0 inserted before the set converts becomes 0 and one
// inserted after stays -0.
func zsStoreResult(c *engine.Ctx, dst string, es []zset.Entry, sizeHint int) {
	if len(es) == 0 {
		c.W.Int(0)
		if c.DB.Delete(dst) {
			c.Dirty(1)
			c.Notify(engine.NotifyGeneric, "del", c.Args[1])
		}
		return
	}
	lim := engine.ZSetLimits(c)
	if sizeHint >= 0 {
		compact := sizeHint <= lim.MaxEntries
		for i := range es {
			if compact && (i+1 > lim.MaxEntries || len(es[i].Member) > lim.MaxValue) {
				compact = false
			}
			if compact && es[i].Score == 0 {
				es[i].Score = 0 // -0 becomes 0
			}
		}
	}
	s := zsFromEntries(es, lim)
	c.DB.Set(dst, keyspace.NewValue(keyspace.TypeZSet, s), false)
	c.Dirty(1)
	// zunionstore, zinterstore, zdiffstore or zrangestore: the command's
	// name, with dst at argument 1.
	c.Notify(engine.NotifyZset, c.Cmd.Name, c.Args[1])
	c.W.Int(int64(s.Len()))
}
