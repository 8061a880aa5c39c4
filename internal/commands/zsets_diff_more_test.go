package commands_test

// More differential tests of the sorted-set commands (see
// zsets_diff_test.go): the multi-key algebra, pops, random members, ZSCAN,
// encodings, type and arity errors, RESP3, and the recipes.

import (
	"strings"
	"testing"
)

func TestZsetDiffAlgebra(t *testing.T) {
	d, _ := zsDiff(t)
	for _, limits := range [][2]string{{"128", "64"}, {"2", "64"}} {
		zsSetLimits(t, d, limits[0], limits[1])
		d.Lines(`
			FLUSHALL
			ZADD a 1 x 2 y 3 z
			ZADD b 10 y 20 z 30 w
			ZADD c 100 z 200 q
			ZADD inf inf x -inf y 0 z
			ZUNION 2 a b
			ZUNION 2 a b WITHSCORES
			ZUNION 3 a b c WITHSCORES
			ZUNION 3 a b c WEIGHTS 1 2 3 WITHSCORES
			ZUNION 3 a b c WEIGHTS 1 2 3 AGGREGATE MIN WITHSCORES
			ZUNION 3 a b c WEIGHTS 1 2 3 AGGREGATE MAX WITHSCORES
			ZUNION 3 a b c AGGREGATE max WEIGHTS 1 2 3 withscores
			ZUNION 2 a b WEIGHTS 1 2 WEIGHTS 3 4 WITHSCORES
			ZUNION 2 a b AGGREGATE MIN AGGREGATE MAX WITHSCORES
			ZUNION 2 a b WITHSCORES WITHSCORES
			ZUNION 2 a b WEIGHTS 1
			ZUNION 2 a b WEIGHTS 1 x
			ZUNION 2 a b WEIGHTS 1 nan
			ZUNION 2 a b WEIGHTS 1 1e400 WITHSCORES
			ZUNION 2 a b WEIGHTS 1 1e-400 WITHSCORES
			ZUNION 2 a b WEIGHTS 0x10 -0X1P-1 WITHSCORES
			ZUNION 2 a b WEIGHTS 1 1_0 WITHSCORES
			ZUNION 2 a b AGGREGATE
			ZUNION 2 a b AGGREGATE avg
			ZUNION 2 a b foo
			ZUNION 0 a
			ZUNION -1 a
			ZUNION x a
			ZUNION 3 a b
			ZUNION 1 nokey
			ZUNION 2 a nokey WITHSCORES
			ZUNION 2 inf inf WITHSCORES
			ZUNION 2 inf a WEIGHTS 0 1 WITHSCORES
			ZUNION 2 inf inf WEIGHTS 1 -1 WITHSCORES
			ZUNION 2 inf inf WEIGHTS 1 -1 AGGREGATE MIN WITHSCORES
			ZUNION 2 inf inf WEIGHTS 0 0 AGGREGATE MAX WITHSCORES
			ZUNION 1 a WEIGHTS inf WITHSCORES
			ZUNION 1 a WEIGHTS -inf WITHSCORES
			ZINTER 2 a b
			ZINTER 2 a b WITHSCORES
			ZINTER 3 a b c WITHSCORES
			ZINTER 2 a b WEIGHTS 2 3 AGGREGATE MIN WITHSCORES
			ZINTER 2 a b WEIGHTS 2 3 AGGREGATE MAX WITHSCORES
			ZINTER 2 a a WEIGHTS 2 3 WITHSCORES
			ZINTER 2 a nokey WITHSCORES
			ZINTER 2 inf inf WEIGHTS 0 1 WITHSCORES
			ZINTER 2 inf inf WEIGHTS 1 0 AGGREGATE MIN WITHSCORES
			ZINTER 2 inf inf WEIGHTS 1 0 AGGREGATE MAX WITHSCORES
			ZINTER 2 inf a WEIGHTS 0 0 WITHSCORES
			ZINTER 0 a
			ZDIFF 2 a b
			ZDIFF 2 a b WITHSCORES
			ZDIFF 2 b a WITHSCORES
			ZDIFF 3 b a c WITHSCORES
			ZDIFF 2 a a
			ZDIFF 1 a WITHSCORES
			ZDIFF 2 nokey a
			ZDIFF 2 a nokey
			ZDIFF 2 a b WEIGHTS 1 2
			ZDIFF 2 a b AGGREGATE SUM
			ZDIFF 0 a
			ZINTERCARD 2 a b
			ZINTERCARD 2 a b LIMIT 1
			ZINTERCARD 2 a b LIMIT 0
			ZINTERCARD 2 a b LIMIT 5
			ZINTERCARD 2 a b LIMIT -1
			ZINTERCARD 2 a b LIMIT x
			ZINTERCARD 2 a b LIMIT 1 LIMIT 2
			ZINTERCARD 2 a b WITHSCORES
			ZINTERCARD 2 a b WEIGHTS 1 2
			ZINTERCARD 1 nokey
			ZINTERCARD 0 a
			ZINTERCARD 3 a b
			ZUNIONSTORE d 2 a b
			ZRANGE d 0 -1 WITHSCORES
			OBJECT ENCODING d
			ZUNIONSTORE d 2 a b WEIGHTS 1 -1 AGGREGATE MIN
			ZRANGE d 0 -1 WITHSCORES
			ZUNIONSTORE d 2 a b WITHSCORES
			ZINTERSTORE d 2 a b
			ZRANGE d 0 -1 WITHSCORES
			OBJECT ENCODING d
			ZINTERSTORE d 2 a c
			EXISTS d
			ZINTERSTORE d 2 a c
			ZDIFFSTORE d 2 a b
			ZRANGE d 0 -1 WITHSCORES
			ZDIFFSTORE d 2 a a
			EXISTS d
			ZDIFFSTORE a 2 a b
			ZRANGE a 0 -1 WITHSCORES
			ZUNIONSTORE a 2 a a
			ZRANGE a 0 -1 WITHSCORES
			ZUNIONSTORE d 0 a
			ZINTERSTORE d 0 a
			ZDIFFSTORE d 0 a
			ZUNIONSTORE d x a
			ZUNIONSTORE d 2 a
			SET str v
			ZUNION 2 a str
			ZUNION 2 str a WEIGHTS x
			ZINTER 2 a str
			ZINTER 2 nokey str
			ZDIFF 2 a str
			ZINTERCARD 2 a str
			ZUNIONSTORE d 1 str
			ZUNIONSTORE str 1 a
			TYPE str
		`)
	}
}

func TestZsetDiffAlgebraWithSets(t *testing.T) {
	d, inst := zsDiff(t)
	zsAddSet(t, d, inst, "ints", "1", "2", "3", "10")
	zsAddSet(t, d, inst, "strs", "x", "y", "1", "q")
	d.Lines(`
		ZADD z 5 1 6 2 7 x 8 nope
		ZUNION 2 z ints WITHSCORES
		ZUNION 3 z ints strs WEIGHTS 1 2 3 WITHSCORES
		ZINTER 2 z ints WITHSCORES
		ZINTER 2 ints z WITHSCORES
		ZINTER 2 ints strs WITHSCORES
		ZINTER 3 ints strs z AGGREGATE MAX WITHSCORES
		ZDIFF 2 ints z WITHSCORES
		ZDIFF 2 z ints WITHSCORES
		ZDIFF 2 strs ints WITHSCORES
		ZINTERCARD 2 ints strs
		ZINTERCARD 2 z ints LIMIT 1
		ZUNIONSTORE d 2 ints strs
		ZRANGE d 0 -1 WITHSCORES
		ZINTERSTORE d 2 ints z WEIGHTS inf 0
		ZRANGE d 0 -1 WITHSCORES
		ZDIFFSTORE d 2 ints strs
		ZRANGE d 0 -1 WITHSCORES
	`)
}

func TestZsetDiffPop(t *testing.T) {
	d, _ := zsDiff(t)
	d.Lines(`
		ZADD z 1 a 2 b 3 c 4 d 5 e
		ZPOPMIN z
		ZPOPMAX z
		ZPOPMIN z 2
		ZPOPMAX z 0
		ZPOPMIN z -1
		ZPOPMIN z x
		ZPOPMIN z 1 2
		ZPOPMAX z 10
		EXISTS z
		ZPOPMIN z
		ZPOPMIN z 3
		ZPOPMAX nokey
		ZPOPMAX nokey 0
		ZADD z 1 a 2 b 3 c
		ZADD y 10 m 20 n
		ZMPOP 1 z MIN
		ZMPOP 2 nokey y MAX
		ZMPOP 2 nokey y MAX COUNT 10
		EXISTS y
		ZMPOP 2 nokey y MIN
		ZMPOP 1 z MIN COUNT 1 COUNT 2
		ZMPOP 1 z MIN COUNT 0
		ZMPOP 1 z MIN COUNT -1
		ZMPOP 1 z MIN COUNT x
		ZMPOP 1 z MIN COUNT
		ZMPOP 1 z MIDDLE
		ZMPOP 1 z
		ZMPOP 2 z
		ZMPOP 0 z MIN
		ZMPOP -1 z MIN
		ZMPOP x z MIN
		ZMPOP 9223372036854775807 z MIN
		ZMPOP 1 z min count 5
		SET str v
		ZPOPMIN str
		ZPOPMIN str 0
		ZMPOP 2 nokey str MIN
		ZADD z 1 a
		ZMPOP 2 z str MIN
		ZMPOP 2 str z MIN
		ZPOPMIN z
	`)
}

func TestZsetDiffRandmember(t *testing.T) {
	d, _ := zsDiff(t)
	// Deterministic cases only: a single member, counts covering the whole
	// set (Redis returns it highest first), errors and missing keys.
	d.Lines(`
		ZADD one 1.5 m
		ZRANDMEMBER one
		ZRANDMEMBER one 1
		ZRANDMEMBER one 1 WITHSCORES
		ZRANDMEMBER one -3
		ZRANDMEMBER one -3 WITHSCORES
		ZRANDMEMBER one 5 WITHSCORES
		ZRANDMEMBER one 0
		ZRANDMEMBER one 0 WITHSCORES
		ZADD z 1 a 2 b 3 c 0.5 d
		ZRANDMEMBER z 4
		ZRANDMEMBER z 10 WITHSCORES
		ZRANDMEMBER z 9223372036854775807
		ZRANDMEMBER z 1 WITHSCORES WITHSCORES
		ZRANDMEMBER z 1 foo
		ZRANDMEMBER z x
		ZRANDMEMBER z 1.5
		ZRANDMEMBER z -9223372036854775808
		ZRANDMEMBER z -9223372036854775808 WITHSCORES
		ZRANDMEMBER z 9223372036854775807 WITHSCORES
		ZRANDMEMBER z -4611686018427387904 WITHSCORES
		ZRANDMEMBER z 4611686018427387904 WITHSCORES
		ZRANDMEMBER z 4611686018427387903 WITHSCORES
		ZRANDMEMBER nokey
		ZRANDMEMBER nokey 5
		ZRANDMEMBER nokey -5 WITHSCORES
		ZRANDMEMBER nokey x
		SET str v
		ZRANDMEMBER str
		ZRANDMEMBER str 1
	`)
	zsSetLimits(t, d, "0", "64")
	d.Lines(`
		ZADD big 1 a 2 b 3 c
		OBJECT ENCODING big
		ZRANDMEMBER big 3 WITHSCORES
		ZRANDMEMBER big 30
		ZADD bigone 7 x
		ZRANDMEMBER bigone -2 WITHSCORES
	`)
}

func TestZsetDiffScanListpack(t *testing.T) {
	d, _ := zsDiff(t)
	d.Lines(`
		ZADD z 1 a 2 b 0.1 c 1e18 d 1e20 e -0 f 4611686018427387904 g 4611686018427387905 h -4611686018427387904 i inf j -inf k 123456789012345678 l 2.5e-7 m
		ZSCAN z 0
		ZSCAN z 17
		ZSCAN z 0 COUNT 1
		ZSCAN z 0 MATCH a*
		ZSCAN z 0 MATCH *
		ZSCAN z 0 MATCH
		ZSCAN z 0 COUNT 0
		ZSCAN z 0 COUNT x
		ZSCAN z 0 FOO bar
		ZSCAN z x
		ZSCAN z -1
		ZSCAN z 18446744073709551616
		ZSCAN nokey 0
		ZSCAN nokey 0 COUNT 0
		ZSCAN nokey x
		SET str v
		ZSCAN str 0
		ZSCAN str 0 COUNT 0
	`)
}

func TestZsetDiffEncoding(t *testing.T) {
	d, _ := zsDiff(t)
	zsSetLimits(t, d, "3", "4")
	d.Lines(`
		ZADD z 1 a 2 b 3 c
		OBJECT ENCODING z
		ZADD z 4 d
		OBJECT ENCODING z
		ZREM z a b c
		OBJECT ENCODING z
		ZADD y 1 abcd
		OBJECT ENCODING y
		ZADD y 1 abcde
		OBJECT ENCODING y
		ZADD x 1 abcde
		OBJECT ENCODING x
		ZADD w 1 a 2 b 3 c 4 d
		OBJECT ENCODING w
		ZADD v XX 1 a
		ZINCRBY u 1 abcdefgh
		OBJECT ENCODING u
		ZADD t 1 a 2 b 3 c
		ZUNIONSTORE s 1 t
		OBJECT ENCODING s
		ZUNIONSTORE s 2 t w
		OBJECT ENCODING s
		ZINTERSTORE s 2 t w
		OBJECT ENCODING s
		ZDIFFSTORE s 2 w t
		OBJECT ENCODING s
		ZRANGESTORE s w 0 -1
		OBJECT ENCODING s
		ZRANGESTORE s w 0 1
		OBJECT ENCODING s
		ZRANGESTORE s y 0 -1
		OBJECT ENCODING s
		COPY w wcopy
		OBJECT ENCODING wcopy
		ZRANGE wcopy 0 -1 WITHSCORES
		COPY t tcopy
		OBJECT ENCODING tcopy
	`)
	// CONFIG SET reaches an existing set at its next insert.
	zsSetLimits(t, d, "128", "64")
	d.Lines(`
		ZADD t 4 d 5 e
		OBJECT ENCODING t
		ZADD r 1 a 2 b 3 c 4 d 5 e
		OBJECT ENCODING r
	`)
	zsSetLimits(t, d, "2", "64")
	d.Lines(`
		ZADD r 1 a
		OBJECT ENCODING r
		ZADD r 1 f
		OBJECT ENCODING r
	`)
	zsSetLimits(t, d, "0", "0")
	d.Lines(`
		ZADD q 1 a
		OBJECT ENCODING q
		ZUNIONSTORE p 1 q
		OBJECT ENCODING p
	`)
}

func TestZsetDiffWrongType(t *testing.T) {
	d, _ := zsDiff(t)
	d.Lines(`
		SET s v
		ZADD s 1 a
		ZADD s XX 1 a
		ZADD s x a
		ZINCRBY s 1 a
		ZSCORE s a
		ZMSCORE s a
		ZCARD s
		ZCOUNT s 0 1
		ZCOUNT s x 1
		ZLEXCOUNT s - +
		ZRANK s a
		ZREVRANK s a
		ZRANGE s 0 -1
		ZRANGE s x 1
		ZRANGEBYSCORE s 0 1
		ZREVRANGEBYSCORE s 1 0
		ZRANGEBYLEX s - +
		ZREVRANGEBYLEX s + -
		ZREVRANGE s 0 -1
		ZREM s a
		ZREMRANGEBYRANK s 0 1
		ZREMRANGEBYSCORE s 0 1
		ZREMRANGEBYLEX s - +
		ZPOPMIN s
		ZPOPMAX s 2
		ZRANDMEMBER s
		ZRANDMEMBER s 2
		ZSCAN s 0
		GET s
	`)
}

func TestZsetDiffArity(t *testing.T) {
	d, _ := zsDiff(t)
	d.Lines(`
		ZADD
		ZADD z
		ZADD z 1
		ZINCRBY z 1
		ZINCRBY z 1 a b
		ZSCORE z
		ZSCORE z a b
		ZMSCORE z
		ZCARD
		ZCARD z z
		ZCOUNT z 1
		ZLEXCOUNT z -
		ZRANK z
		ZRANGE z 0
		ZRANGESTORE d z 0
		ZREVRANGE z 0
		ZRANGEBYSCORE z 0
		ZREVRANGEBYSCORE z 0
		ZRANGEBYLEX z -
		ZREVRANGEBYLEX z -
		ZREM z
		ZREMRANGEBYRANK z 0
		ZREMRANGEBYSCORE z 0
		ZREMRANGEBYLEX z -
		ZUNION 1
		ZINTER 1
		ZDIFF 1
		ZUNIONSTORE d 1
		ZINTERSTORE d 1
		ZDIFFSTORE d 1
		ZINTERCARD 1
		ZPOPMIN
		ZPOPMAX
		ZMPOP 1 z
		ZRANDMEMBER
		ZSCAN z
	`)
}

func TestZsetDiffResp3(t *testing.T) {
	d, _ := zsDiff(t)
	zsResp3(t, d)
	d.Lines(`
		ZADD z 1 a 2.5 b inf c -inf d 0.1 e
		ZSCORE z b
		ZSCORE z c
		ZSCORE z d
		ZSCORE z nosuch
		ZSCORE nokey a
		ZMSCORE z a nosuch c
		ZINCRBY z 1.5 a
		ZADD z INCR 1 a
		ZADD z INCR NX 1 a
		ZRANK z a
		ZRANK z nosuch
		ZRANGE z 0 -1
		ZRANGE z 0 -1 WITHSCORES
		ZRANGE z 0 -1 REV WITHSCORES
		ZRANGE z -inf +inf BYSCORE WITHSCORES LIMIT 1 2
		ZRANGE nokey 0 -1 WITHSCORES
		ZRANGEBYSCORE z -inf +inf WITHSCORES
		ZREVRANGEBYSCORE z +inf -inf WITHSCORES
		ZREVRANGE z 0 1 WITHSCORES
		ZUNION 1 z WITHSCORES
		ZINTER 1 z WITHSCORES
		ZDIFF 1 z WITHSCORES
		ZUNION 1 z
		ZSCAN z 0
		ZRANDMEMBER z 10 WITHSCORES
		ZRANDMEMBER nokey
		ZRANDMEMBER nokey 1
		ZPOPMIN z
		ZPOPMAX z
		ZPOPMIN z 1
		ZPOPMAX z 5
		ZPOPMIN z 0
		ZPOPMIN nokey
		ZMPOP 1 nokey MIN
		ZADD z 1 a 2 b
		ZMPOP 1 z MAX COUNT 5
	`)
}

func TestZsetDiffEventsWindow(t *testing.T) {
	// The recipe: events in a zset scored by timestamp, counted in a
	// sliding window, old ones preened with ZREMRANGEBYSCORE.
	d, _ := zsDiff(t)
	ts := int64(1_700_000_000_000)
	for i := 0; i < 400; i++ {
		ts += int64(137 + (i*7919)%1000)
		id := "ev:" + strings.Repeat("x", i%3) + zsItoa(int64(i))
		d.Do("ZADD", "events", zsItoa(ts), id)
		if i%10 == 9 {
			d.Do("ZCOUNT", "events", "("+zsItoa(ts-5000), zsItoa(ts))
			d.Do("ZRANGEBYSCORE", "events", zsItoa(ts-2000), "+inf", "WITHSCORES", "LIMIT", "0", "3")
			d.Do("ZREMRANGEBYSCORE", "events", "-inf", "("+zsItoa(ts-30000))
			d.Do("ZCARD", "events")
			d.Do("OBJECT", "ENCODING", "events")
		}
	}
	d.Do("ZREMRANGEBYSCORE", "events", "-inf", "+inf")
	d.Do("EXISTS", "events")
}

func TestZsetDiffMultiColumnSort(t *testing.T) {
	// The recipe: sort users by level, then by score, then by name,
	// combining per-column zsets with ZINTERSTORE WEIGHTS.
	d, inst := zsDiff(t)
	type user struct {
		name         string
		level, score int
	}
	users := []user{{"ann", 3, 50}, {"bob", 3, 70}, {"cid", 1, 99}, {"dee", 2, 70}, {"eve", 3, 50}, {"fay", 2, 10}}
	for _, u := range users {
		d.Do("ZADD", "by:level", zsItoa(int64(u.level)), u.name)
		d.Do("ZADD", "by:score", zsItoa(int64(u.score)), u.name)
	}
	names := []string{}
	for _, u := range users {
		names = append(names, u.name)
	}
	zsAddSet(t, d, inst, "users", names...)
	d.Lines(`
		ZINTERSTORE sorted 2 by:level by:score WEIGHTS 1000 1
		ZRANGE sorted 0 -1 WITHSCORES
		ZREVRANGE sorted 0 2 WITHSCORES
		ZINTERSTORE sorted 2 by:level by:score WEIGHTS -1000 1
		ZRANGE sorted 0 -1 WITHSCORES
		ZINTERSTORE sorted 3 by:level by:score users WEIGHTS 1000 1 0
		ZRANGE sorted 0 -1 WITHSCORES
		ZRANGE sorted 0 -1 BYSCORE LIMIT 1 2
	`)
}
