package commands

import (
	"fmt"
	"math"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/ds/zset"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/glob"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
)

// ZPOPMIN, ZPOPMAX, ZMPOP, ZRANDMEMBER and ZSCAN.

func cmdZpopmin(c *engine.Ctx) { zpopMinMax(c, false) }
func cmdZpopmax(c *engine.Ctx) { zpopMinMax(c, true) }

// zpopMinMax is "ZPOPMIN|ZPOPMAX key [count]". Without a count the reply
// is a flat [member, score] in both protocols; with one, RESP3 nests the
// pairs.
func zpopMinMax(c *engine.Ctx, max bool) {
	if len(c.Args) > 3 {
		c.Error(engine.ErrSyntax)
		return
	}
	count := int64(-1)
	if len(c.Args) == 3 {
		// getPositiveLongFromObjectOrReply: one error for both.
		v, ok := num.ParseInt(c.Args[2])
		if !ok || v < 0 {
			c.Error(engine.ErrPositive)
			return
		}
		count = v
	}
	nested := c.W.Proto > 2 && count != -1
	zpopGeneric(c, c.Args[1:2], max, count, false, nested, false)
}

// zpopGeneric is Redis's genericZpopCommand, the one pop that ZPOPMIN,
// ZPOPMAX and ZMPOP use and that the blocking BZPOPMIN, BZPOPMAX and
// BZMPOP are meant to call once a key is ready:
//
//   - keys are tried in order; the first that exists is popped from, and
//     a WRONGTYPE there ends the command (later keys are not checked);
//   - count is how many to pop, or -1 for a plain single pop;
//   - emitKey puts the key name in the reply (BZPOP*, ZMPOP, BZMPOP);
//   - nested replies [member, score] pairs (RESP3 ZPOP* with a count,
//     ZMPOP and BZMPOP always), flat otherwise;
//   - nilWhenEmpty replies a null array when no key exists (ZMPOP),
//     an empty array otherwise.
//
// The reply shapes: flat [m, s, ...]; nested [[m, s], ...]; with emitKey
// and flat [key, m, s]; with emitKey and nested [key, [[m, s], ...]].
// It reports whether anything was popped; the key is deleted when it
// empties.
func zpopGeneric(c *engine.Ctx, keys [][]byte, max bool, count int64, emitKey, nested, nilWhenEmpty bool) bool {
	var key string
	var kb []byte
	var o *keyspace.Object
	for _, k := range keys {
		key, kb = string(k), k
		if o = c.DB.Lookup(key); o == nil {
			continue
		}
		if o.Type != keyspace.TypeZSet {
			c.Error(engine.ErrWrongType)
			return false
		}
		break
	}
	if o == nil {
		if nilWhenEmpty {
			c.W.NullArray()
		} else {
			c.W.Array(0)
		}
		return false
	}
	if count == 0 {
		c.W.Array(0)
		return false
	}
	countless := count == -1
	if countless {
		count = 1
	}
	c.DB.Touch(o) // lookupKeyWrite touches the key too
	s := o.Val().(*zset.Set)
	n := int(min(count, int64(s.Len())))
	if emitKey {
		// ZMPOP and the blocking pops replay as ZPOPMIN/ZPOPMAX of the
		// key they popped from, with the number popped (BZPOP* none).
		pop := []byte("ZPOPMIN")
		if max {
			pop = []byte("ZPOPMAX")
		}
		if countless {
			c.Rewrite(pop, []byte(key))
		} else {
			c.Rewrite(pop, []byte(key), engine.MsArg(int64(n)))
		}
	}
	switch {
	case !nested && !emitKey:
		c.W.Array(2 * n)
	case nested && !emitKey:
		c.W.Array(n)
	case !nested && emitKey:
		c.W.Array(2*n + 1)
		c.W.BulkString(key)
	default:
		c.W.Array(2)
		c.W.BulkString(key)
		c.W.Array(n)
	}
	var es []zset.Entry
	if max {
		es = s.PopMax(n)
	} else {
		es = s.PopMin(n)
	}
	for _, e := range es {
		if nested {
			c.W.Array(2)
		}
		c.W.BulkString(e.Member)
		c.W.Double(e.Score)
	}
	c.Dirty(int64(len(es)))
	c.Notify(engine.NotifyZset, cond2(max, "zpopmax", "zpopmin"), kb)
	if s.Len() == 0 {
		c.DB.Delete(key)
		c.Notify(engine.NotifyGeneric, "del", kb)
	} else {
		c.DB.Modified(key)
	}
	return len(es) > 0
}

// cmdZmpop is "ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]".
func cmdZmpop(c *engine.Ctx) {
	keys, max, count, ok := zmpopArgs(c, 1)
	if !ok {
		return
	}
	zpopGeneric(c, keys, max, count, true, true, true)
}

// zmpopArgs parses ZMPOP's arguments from numkeys at numIdx on (BZMPOP
// has a timeout before numkeys): the keys, MIN or MAX, and COUNT (1 when
// absent).
func zmpopArgs(c *engine.Ctx, numIdx int) (keys [][]byte, max bool, count int64, ok bool) {
	args := c.Args
	const numkeysErr = "ERR numkeys should be greater than 0"
	numkeys, isInt := num.ParseInt(args[numIdx])
	if !isInt || numkeys < 1 {
		c.Error(numkeysErr)
		return nil, false, 0, false
	}
	if numkeys >= int64(len(args)-numIdx-1) {
		c.Error(engine.ErrSyntax)
		return nil, false, 0, false
	}
	whereIdx := numIdx + int(numkeys) + 1
	switch {
	case ascii.OptIs(args[whereIdx], "min"):
	case ascii.OptIs(args[whereIdx], "max"):
		max = true
	default:
		c.Error(engine.ErrSyntax)
		return nil, false, 0, false
	}
	count = -1
	for j := whereIdx + 1; j < len(args); j++ {
		if count == -1 && ascii.OptIs(args[j], "count") && j+1 < len(args) {
			j++
			v, isInt := num.ParseInt(args[j])
			if !isInt || v < 1 {
				c.Error("ERR count should be greater than 0")
				return nil, false, 0, false
			}
			count = v
			continue
		}
		c.Error(engine.ErrSyntax)
		return nil, false, 0, false
	}
	if count == -1 {
		count = 1
	}
	return args[numIdx+1 : whereIdx], max, count, true
}

// cmdZrandmember is "ZRANDMEMBER key [count [WITHSCORES]]".
func cmdZrandmember(c *engine.Ctx) {
	args := c.Args
	if len(args) >= 3 {
		l, ok := c.Int(2)
		if !ok {
			return
		}
		if l == math.MinInt64 {
			c.Errorf("ERR value is out of range, value must between %d and %d", -math.MaxInt64, math.MaxInt64)
			return
		}
		if len(args) > 4 || (len(args) == 4 && !ascii.OptIs(args[3], "withscores")) {
			c.Error(engine.ErrSyntax)
			return
		}
		withScores := len(args) == 4
		// Redis 7.0.8's guard: the reply length (2*count) must not overflow.
		if withScores && (l < -math.MaxInt64/2 || l > math.MaxInt64/2) {
			c.Error("ERR value is out of range")
			return
		}
		zrandmemberCount(c, l, withScores)
		return
	}
	s, ok := zsRead(c, c.Key(1))
	if !ok {
		return
	}
	if s == nil {
		c.W.Null()
		return
	}
	e, _ := s.RandomEntry(c.Env.KS.Rand())
	c.W.BulkString(e.Member)
}

// zrandmemberCount answers ZRANDMEMBER with a count: a negative count
// draws with repetition, a positive one without; a count at least the
// set's size returns the whole set, highest score first as Redis walks it.
func zrandmemberCount(c *engine.Ctx, l int64, withScores bool) {
	s, ok := zsRead(c, c.Key(1))
	if !ok {
		return
	}
	if s == nil || l == 0 {
		c.W.Array(0)
		return
	}
	rng := c.Env.KS.Rand()
	nested := withScores && c.W.Proto > 2
	header := func(n int64) {
		if withScores && !nested {
			n *= 2
		}
		c.W.Array(int(n))
	}
	write := func(e zset.Entry) {
		if nested {
			c.W.Array(2)
		}
		c.W.BulkString(e.Member)
		if withScores {
			c.W.Double(e.Score)
		}
	}
	size := int64(s.Len())
	if l < 0 || l == 1 {
		count := l
		if count < 0 {
			count = -count
		}
		header(count)
		for ; count > 0; count-- {
			e, _ := s.RandomEntry(rng)
			write(e)
		}
		return
	}
	if l >= size {
		header(size)
		for m, sc := range s.RangeByRank(0, int(size)-1, true) {
			write(zset.Entry{Member: m, Score: sc})
		}
		return
	}
	header(l)
	for _, e := range s.RandomEntries(rng, int(l), true) {
		write(e)
	}
}

// cmdZscan is "ZSCAN key cursor [MATCH pattern] [COUNT count]".
//
// A listpack set is returned whole, cursor 0, whatever the cursor says,
// as Redis does. For a skiplist set the cursor is the last score returned,
// mapped to an unsigned integer that keeps the order of scores
// (zsScanCursor); a call resumes at the first score above it and returns
// at least COUNT entries and then the rest of the run of the last score,
// so a run of equal scores is never split. Every member present for the
// whole scan with an unchanged score is therefore returned exactly once,
// whatever is added or removed in between. The prices: a run longer than
// COUNT comes back in one call (a set whose members all share one score,
// as lexicographic sets do, is returned whole, like a listpack), and a
// member whose score changes mid-scan may be missed or repeated, which
// Redis's scan of its member hash table avoids (see docs/design.md).
func cmdZscan(c *engine.Ctx) {
	cursor, ok := scanCursorArg(c, 2)
	if !ok {
		return
	}
	s, ok := zsRead(c, c.Key(1))
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
	add := func(m string, score string) {
		if opts.pattern != nil && !glob.Match(opts.pattern, m, false) {
			return
		}
		items = append(items, m, score)
	}
	if s.Encoding() == zset.Listpack {
		for m, sc := range s.All() {
			add(m, zsListpackScore(sc))
		}
		replyScan(c, 0, items)
		return
	}
	n := s.Len()
	lo := 0
	if cursor != 0 {
		from, past := zsScanFrom(cursor)
		if past {
			replyScan(c, 0, nil)
			return
		}
		lo = s.CountByScore(zset.ScoreRange{Min: math.Inf(-1), Max: from})
	}
	var taken int64
	var last float64
	next := uint64(0)
	for m, sc := range s.RangeByRank(lo, n-1, false) {
		if taken >= opts.count && sc != last {
			next = zsScanCursor(last)
			break
		}
		add(m, string(num.AppendDouble(nil, sc)))
		taken++
		last = sc
	}
	replyScan(c, next, items)
}

// zsScanCursor maps a score to a nonzero cursor that orders as the score
// does: the IEEE bits with the sign flipped for positives and all bits
// flipped for negatives. -0 and +0 share a cursor. Only NaNs would map to
// 0 or to the ranges below -inf and above +inf, and scores are never NaN.
func zsScanCursor(score float64) uint64 {
	if score == 0 {
		score = 0
	}
	b := math.Float64bits(score)
	if b>>63 == 0 {
		return b | 1<<63
	}
	return ^b
}

// zsScanFrom decodes a cursor: the scan resumes after the entries scoring
// at most from. A cursor no score maps to (made up by a client) counts
// from the start when below -inf, and as finished when above +inf.
func zsScanFrom(cursor uint64) (from float64, past bool) {
	var b uint64
	if cursor>>63 != 0 {
		b = cursor &^ (1 << 63)
	} else {
		b = ^cursor
	}
	from = math.Float64frombits(b)
	if math.IsNaN(from) {
		if cursor>>63 != 0 {
			return 0, true
		}
		return math.Inf(-1), false
	}
	return from, false
}

// zsListpackScore formats a score as a listpack stores it and ZSCAN
// returns it (Redis's d2string and listpack integer encoding): integral
// values within ±2^62 as integers (so 1e18 is "1000000000000000000" where
// ZSCORE says "1e+18"), -0 as "0", the rest in %.17g.
func zsListpackScore(v float64) string {
	if v == 0 {
		return "0"
	}
	if v >= -(1<<62) && v <= 1<<62 && v == math.Trunc(v) {
		return fmt.Sprint(int64(v))
	}
	return string(num.AppendDouble(nil, v))
}
