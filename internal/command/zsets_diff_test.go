package command_test

// Differential tests of the sorted-set commands: fixed edge cases, sent to
// Abacus and to redis-server 7.0, replies compared byte for byte. Helpers
// are prefixed "zs" so that they cannot collide with other families' test
// helpers in this package.

import (
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// zsDiff starts an Abacus instance and pairs it with the shared
// redis-server, whose zset limits are put back to the defaults before and
// after the test (other tests of the package share it).
func zsDiff(t *testing.T, opts ...servertest.Option) (*servertest.Diff, *servertest.Instance) {
	t.Helper()
	inst := servertest.Start(t, opts...)
	d := servertest.NewDiff(t, inst)
	reset := func() {
		if r := d.R.Do("CONFIG", "SET", "zset-max-listpack-entries", "128", "zset-max-listpack-value", "64"); r != "+OK\r\n" {
			t.Fatalf("resetting redis-server's zset limits: %q", r)
		}
	}
	reset()
	t.Cleanup(func() {
		c := servertest.Dial(t, servertest.Redis(t).Addr)
		c.Do("CONFIG", "SET", "zset-max-listpack-entries", "128", "zset-max-listpack-value", "64")
	})
	return d, inst
}

// zsLimits sets the listpack limits on both servers.
func zsSetLimits(t *testing.T, d *servertest.Diff, entries, value string) {
	t.Helper()
	d.Do("CONFIG", "SET", "zset-max-listpack-entries", entries, "zset-max-listpack-value", value)
}

// zsResp3 switches both connections of d to RESP3 (HELLO's replies differ
// between the servers by nature, so they are not compared).
func zsResp3(t *testing.T, d *servertest.Diff) {
	t.Helper()
	for _, c := range []*servertest.Conn{d.A, d.R} {
		if r := c.Do("HELLO", "3"); !strings.HasPrefix(r, "%") {
			t.Fatalf("HELLO 3: %q", r)
		}
	}
}

func TestZsetDiffZadd(t *testing.T) {
	d, _ := zsDiff(t)
	d.Lines(`
		ZADD z 1 a 2 b 3 c
		ZADD z 1 a
		ZADD z CH 5 a 2 b 7 d
		ZRANGE z 0 -1 WITHSCORES
		ZADD z NX 100 a 9 e
		ZADD z XX 100 a 9 f
		ZADD z XX CH 100 a 9 f
		ZADD z GT 1 a
		ZADD z GT CH 1000 a
		ZADD z LT CH 1000 a
		ZADD z LT CH 1 a
		ZADD z XX GT CH 2 a 3 b 4 nosuch
		ZADD z GT LT 1 a
		ZADD z NX GT 1 a
		ZADD z NX LT 1 a
		ZADD z NX XX 1 a
		ZADD z NX XX GT LT 1 a
		ZADD z INCR 1 a 2 b
		ZADD z INCR 5 a
		ZADD z INCR NX 5 a
		ZADD z INCR XX 5 nosuch
		ZADD z INCR GT -5 a
		ZADD z INCR LT -5 a
		ZADD z INCR LT 5 a
		ZADD z INCR 0 a
		ZADD z incr ch xx 1 a
		ZADD z 1
		ZADD z 1 a 2
		ZADD z nx
		ZADD z x a
		ZADD z nan a
		ZADD z NaN a
		ZADD z 1 a nan b
		ZADD z 1.5.5 a
		ZADD z 1_000 a
		ZADD z 1e400 a
		ZADD z -1e400 a
		ZADD z 1e-400 a
		ZADD z 1e-310 tiny
		ZADD z 0x10 hex 0X1P-2 hexp 0x.8 hexfrac 0xg bad
		ZADD z 0x10 hex 0X1P-2 hexp 0x.8 hexfrac
		ZADD z inf pinf -inf ninf +inf pinf2 Infinity pinf3 -INFINITY ninf2
		ZADD z infinit x
		ZADD z 1e5 e5 -.5 half .5e1 five 5. five2 +3 three
		ZADD z 1e x
		ZADD z 0.1 tenth 0.30000000000000004 third 123456789012345678 big 1e20 huge 1e-20 wee
		ZRANGE z 0 -1 WITHSCORES
		ZSCORE z tenth
		ZSCORE z third
		ZSCORE z big
		ZSCORE z tiny
		ZSCORE z pinf
		ZSCORE z ninf
		ZINCRBY z -inf pinf
		ZINCRBY z inf ninf
		ZADD z INCR -inf pinf
		ZSCORE z pinf
		ZINCRBY z 1 newmember
		ZINCRBY z 2.5 newmember
		ZINCRBY z x newmember
		ZINCRBY z nx newmember
		ZINCRBY z incr newmember
		ZINCRBY z 1e400 newmember
		ZINCRBY z 1 a 2
		ZCARD z
		ZADD z xx 1 nosuchnew
		ZADD newkey XX 1 a
		ZADD newkey XX INCR 1 a
		EXISTS newkey
		ZADD newkey NX GT 1 a
		ZADD newkey GT 1 a
		ZADD newkey GT CH 1 a 2 b
		ZRANGE newkey 0 -1 WITHSCORES
		ZADD newkey2 INCR 3 m
		ZADD newkey2 LT INCR 3 m
		TYPE newkey2
	`)
	// Spaces, NUL bytes and signs in scores: string2d refuses them all.
	for _, score := range []string{" 1", "1 ", "\t1", "1\x00", "", "-", "+", ".", "e5", "0x", "-0x1p3", "  ", "1e+", "1e-5"} {
		d.Do("ZADD", "w", score, "m")
		d.Do("ZSCORE", "w", "m")
	}
	// Binary members.
	d.Do("ZADD", "bin", "1", "a\x00b", "2", "", "3", "\xff\xfe", "4", "a b")
	d.Do("ZRANGE", "bin", "0", "-1", "WITHSCORES")
	d.Do("ZSCORE", "bin", "a\x00b")
	d.Do("ZSCORE", "bin", "")
	d.Do("ZSCORE", "bin", "a")
}

func TestZsetDiffNegativeZero(t *testing.T) {
	d, _ := zsDiff(t)
	for _, limits := range [][2]string{{"128", "64"}, {"0", "64"}, {"3", "64"}} {
		zsSetLimits(t, d, limits[0], limits[1])
		d.Lines(`
			DEL z y s u i r
			ZADD z -0 a
			ZSCORE z a
			ZADD z INCR -0 b
			ZSCORE z b
			ZINCRBY z -0 c
			ZSCORE z c
			ZINCRBY z -0 c
			ZADD z 0 d -0 e 1 f -0 g
			ZRANGE z 0 -1 WITHSCORES
			OBJECT ENCODING z
			ZADD y 5 m
			ZINCRBY y -5 m
			ZSCORE y m
			ZUNIONSTORE u 1 z WEIGHTS -1
			ZRANGE u 0 -1 WITHSCORES
			ZUNION 1 z WEIGHTS -1 WITHSCORES
			ZINTERSTORE i 2 z z WEIGHTS -1 0
			ZRANGE i 0 -1 WITHSCORES
			ZRANGESTORE r z 0 -1
			ZRANGE r 0 -1 WITHSCORES
			ZRANGESTORE r z 0 -1 REV
			ZRANGE r 0 -1 WITHSCORES
		`)
		zsSameScan(t, d, "z")
		d.Do("ZPOPMIN", "z", "10")
	}
}

// TestZsetDiffNegativeZeroStore follows -0 scores through ZRANGESTORE:
// Redis sizes a rank range's destination up front but inserts score and
// lex ranges into a listpack one by one, and listpacks write -0 as 0.
func TestZsetDiffNegativeZeroStore(t *testing.T) {
	d, _ := zsDiff(t)
	zsSetLimits(t, d, "0", "64")
	d.Do("ZADD", "x", "-0", "a", "-0", "b", "-0", "c", "-0", "d", "-0", "e", "1", "f", "-0", "ggggggggg")
	for _, limits := range [][2]string{{"3", "64"}, {"20", "64"}, {"20", "4"}, {"0", "64"}} {
		zsSetLimits(t, d, limits[0], limits[1])
		d.Lines(`
			ZRANGE x 0 -1 WITHSCORES
			ZRANGESTORE r x -inf +inf BYSCORE
			ZRANGE r 0 -1 WITHSCORES
			ZRANGESTORE r x +inf -inf BYSCORE REV
			ZRANGE r 0 -1 WITHSCORES
			ZRANGESTORE r x - + BYLEX
			ZRANGE r 0 -1 WITHSCORES
			ZRANGESTORE r x 0 -1
			ZRANGE r 0 -1 WITHSCORES
			OBJECT ENCODING r
			ZRANGESTORE r x 0 1
			ZRANGE r 0 -1 WITHSCORES
			OBJECT ENCODING r
			ZRANGESTORE r x 0 4 REV
			ZRANGE r 0 -1 WITHSCORES
			ZRANGESTORE r x 2 -1
			ZRANGE r 0 -1 WITHSCORES
			OBJECT ENCODING r
			ZUNIONSTORE r 1 x
			ZRANGE r 0 -1 WITHSCORES
			ZDIFFSTORE r 1 x
			ZRANGE r 0 -1 WITHSCORES
		`)
	}
}

func TestZsetDiffReads(t *testing.T) {
	d, _ := zsDiff(t)
	d.Lines(`
		ZADD z 1 a 1 b 1 c 2 d 2 e 3 f -inf g inf h -1.5 i 0 j
		ZCARD z
		ZCARD nokey
		ZSCORE z a
		ZSCORE z nosuch
		ZSCORE nokey a
		ZMSCORE z a nosuch h g
		ZMSCORE nokey a b
		ZRANK z a
		ZRANK z h
		ZRANK z g
		ZRANK z nosuch
		ZRANK nokey a
		ZREVRANK z a
		ZREVRANK z h
		ZREVRANK z nosuch
		ZCOUNT z -inf +inf
		ZCOUNT z 1 2
		ZCOUNT z (1 2
		ZCOUNT z 1 (2
		ZCOUNT z (1 (2
		ZCOUNT z (1 (1
		ZCOUNT z 1 1
		ZCOUNT z 2 1
		ZCOUNT z (-inf (+inf
		ZCOUNT z -inf -inf
		ZCOUNT z inf inf
		ZCOUNT z x 1
		ZCOUNT z 1 x
		ZCOUNT z nan 1
		ZCOUNT z ((1 2
		ZCOUNT z [1 2
		ZCOUNT z 1e999 1e999
		ZCOUNT z -1e999 1
		ZCOUNT z 0x1 0x2
		ZCOUNT nokey 0 1
		ZCOUNT nokey x 1
		ZLEXCOUNT z - +
		ZLEXCOUNT z + -
		ZLEXCOUNT z a c
		ZLEXCOUNT z [a c
		ZLEXCOUNT z -a +
		ZLEXCOUNT z - ++
		ZADD lex 0 a 0 b 0 c 0 d
		ZLEXCOUNT lex [a [c
		ZLEXCOUNT lex (a [c
		ZLEXCOUNT lex (a (c
		ZLEXCOUNT lex [c [a
		ZLEXCOUNT lex [bb +
		ZLEXCOUNT lex - (bb
		ZLEXCOUNT nokey - +
		ZLEXCOUNT nokey x +
	`)
	// strtod corners of range ends: leading space, empty, NUL-terminated.
	for _, r := range [][2]string{
		{" 1", "2"}, {"", "1"}, {"", ""}, {"(", "("}, {"1\x00junk", "3"}, {"1 ", "3"},
		{"  ", "3"}, {"(\x00", "3"}, {"1e", "3"}, {"-", "3"}, {"0x", "3"}, {"inf", "infinity"},
		{"-infinity", "(INF"}, {"1e-400", "1"}, {"\t-1", "\n2"}, {"nan(123)", "1"},
	} {
		d.Do("ZCOUNT", "z", r[0], r[1])
		d.Do("ZRANGEBYSCORE", "z", r[0], r[1], "WITHSCORES")
	}
	d.Do("ZLEXCOUNT", "z", "+\x00x", "-")
	d.Do("ZLEXCOUNT", "z", "-\x00x", "+")
	d.Do("ZLEXCOUNT", "z", "", "+")
}

func TestZsetDiffRanges(t *testing.T) {
	d, _ := zsDiff(t)
	for _, limits := range [][2]string{{"128", "64"}, {"0", "64"}} {
		zsSetLimits(t, d, limits[0], limits[1])
		d.Lines(`
			DEL z lex
			ZADD z 1 a 1 b 1 c 2 d 2 e 3 f -inf g inf h -1.5 i 0 j 2 aa
			OBJECT ENCODING z
			ZRANGE z 0 -1
			ZRANGE z 0 -1 WITHSCORES
			ZRANGE z 0 -1 withscores withscores
			ZRANGE z 2 4
			ZRANGE z -3 -1
			ZRANGE z -100 100
			ZRANGE z 5 2
			ZRANGE z 100 200
			ZRANGE z -1 -3
			ZRANGE z 0 0 REV
			ZRANGE z 0 2 REV WITHSCORES
			ZRANGE z -2 -1 REV
			ZRANGE z 0 -1 LIMIT 0 1
			ZRANGE z 0 -1 LIMIT 0 -1
			ZRANGE z 0 -1 LIMIT 1 -1
			ZRANGE z 0 -1 LIMIT x 1
			ZRANGE z 0 -1 LIMIT 0
			ZRANGE z x 1
			ZRANGE z 0 x
			ZRANGE z 0 1.5
			ZRANGE z 0 -1 REV REV
			ZRANGE z 0 -1 BYSCORE BYLEX
			ZRANGE z 0 -1 BYSCORE BYSCORE
			ZRANGE z 0 -1 foo
			ZREVRANGE z 0 -1
			ZREVRANGE z 0 1 WITHSCORES
			ZREVRANGE z 0 1 REV
			ZREVRANGE z 0 1 BYSCORE
			ZRANGE z -inf +inf BYSCORE
			ZRANGE z 1 2 BYSCORE WITHSCORES
			ZRANGE z (1 2 BYSCORE
			ZRANGE z 1 (2 BYSCORE
			ZRANGE z 2 1 BYSCORE
			ZRANGE z 2 1 BYSCORE REV
			ZRANGE z +inf -inf BYSCORE REV WITHSCORES
			ZRANGE z +inf -inf BYSCORE REV LIMIT 1 3
			ZRANGE z -inf +inf BYSCORE LIMIT 0 0
			ZRANGE z -inf +inf BYSCORE LIMIT 2 3
			ZRANGE z -inf +inf BYSCORE LIMIT 2 -1
			ZRANGE z -inf +inf BYSCORE LIMIT -1 3
			ZRANGE z -inf +inf BYSCORE LIMIT 10 3
			ZRANGE z -inf +inf BYSCORE LIMIT 11 3
			ZRANGE z -inf +inf BYSCORE LIMIT 100 3
			ZRANGE z -inf +inf BYSCORE LIMIT 1 2 LIMIT 3 4
			ZRANGE z -inf +inf BYSCORE LIMIT 9223372036854775807 1
			ZRANGE z -inf +inf BYSCORE LIMIT 0 9223372036854775807
			ZRANGE z x 1 BYSCORE
			ZRANGE z 1 x BYSCORE
			ZRANGEBYSCORE z -inf +inf
			ZRANGEBYSCORE z 1 2 WITHSCORES LIMIT 1 2
			ZRANGEBYSCORE z 1 2 LIMIT 1 2 WITHSCORES
			ZRANGEBYSCORE z 1 2 LIMIT 1
			ZRANGEBYSCORE z 1 2 REV
			ZRANGEBYSCORE z 1 2 BYLEX
			ZREVRANGEBYSCORE z +inf -inf
			ZREVRANGEBYSCORE z 2 1 WITHSCORES
			ZREVRANGEBYSCORE z (2 (1
			ZREVRANGEBYSCORE z 1 2
			ZREVRANGEBYSCORE z +inf -inf LIMIT 2 2 WITHSCORES
			ZREVRANGEBYSCORE z +inf -inf LIMIT -2 2
			ZADD lex 0 a 0 b 0 c 0 d 0 e 0 foo 0 foobar 0 fop 0 g 0 \xff
			ZRANGE lex - + BYLEX
			ZRANGE lex [b [e BYLEX
			ZRANGE lex (b (e BYLEX
			ZRANGE lex [foo (fop BYLEX
			ZRANGE lex + - BYLEX REV
			ZRANGE lex [e [b BYLEX REV
			ZRANGE lex [e [b BYLEX
			ZRANGE lex - + BYLEX LIMIT 2 3
			ZRANGE lex - + BYLEX LIMIT 2 -1
			ZRANGE lex - + BYLEX LIMIT -1 2
			ZRANGE lex - + BYLEX REV LIMIT 1 2
			ZRANGE lex - + BYLEX WITHSCORES
			ZRANGE lex a b BYLEX
			ZRANGE lex [a b BYLEX
			ZRANGEBYLEX lex - +
			ZRANGEBYLEX lex [c +
			ZRANGEBYLEX lex (c + LIMIT 1 2
			ZRANGEBYLEX lex - + WITHSCORES
			ZRANGEBYLEX lex - + LIMIT 0
			ZREVRANGEBYLEX lex + -
			ZREVRANGEBYLEX lex [e [b
			ZREVRANGEBYLEX lex (e (b LIMIT 1 1
			ZREVRANGEBYLEX lex - +
			ZRANGE nokey 0 -1
			ZRANGE nokey 0 -1 WITHSCORES
			ZRANGE nokey x 1
			ZRANGE nokey 0 -1 LIMIT 0 1
			ZRANGEBYSCORE nokey x 1
			ZRANGEBYLEX nokey x +
		`)
		// Prefix search: "[prefix" to "[prefix\xff".
		d.Do("ZRANGEBYLEX", "lex", "[foo", "[foo\xff")
		d.Do("ZRANGE", "lex", "[f", "[f\xff", "BYLEX")
		d.Do("ZLEXCOUNT", "lex", "[fo", "[fo\xff")
		d.Do("ZRANGEBYLEX", "lex", "(\xff", "+")
		d.Do("ZRANGEBYLEX", "lex", "[\xff", "+")
	}
}

func TestZsetDiffRangestore(t *testing.T) {
	d, _ := zsDiff(t)
	d.Lines(`
		ZADD src 1 a 2 b 3 c 4 d 5 e
		ZRANGESTORE dst src 0 -1
		ZRANGE dst 0 -1 WITHSCORES
		ZRANGESTORE dst src 1 2 REV
		ZRANGE dst 0 -1 WITHSCORES
		ZRANGESTORE dst src (1 4 BYSCORE LIMIT 1 2
		ZRANGE dst 0 -1 WITHSCORES
		ZRANGESTORE dst src + - BYLEX REV
		ZRANGE dst 0 -1 WITHSCORES
		ZRANGESTORE dst src 0 -1 WITHSCORES
		ZRANGESTORE dst src 0 -1 LIMIT 0 1
		ZRANGESTORE dst src 5 10
		EXISTS dst
		ZRANGESTORE dst src 0 0
		ZRANGESTORE dst nokey 0 -1
		EXISTS dst
		ZRANGESTORE dst nokey 0 -1
		SET str v
		ZRANGESTORE dst str 0 -1
		ZRANGESTORE str src 0 1
		TYPE str
		ZRANGE str 0 -1
		EXPIRE str 100
		ZRANGESTORE str src 0 1
		TTL str
		ZRANGESTORE src src 1 -1
		ZRANGE src 0 -1 WITHSCORES
		ZRANGESTORE dst src x 1
		ZRANGESTORE dst src 0 -1 BYLEX
		ZRANGESTORE dst src - + BYLEX
		ZRANGE dst 0 -1 WITHSCORES
	`)
}

func TestZsetDiffRemove(t *testing.T) {
	d, _ := zsDiff(t)
	for _, limits := range [][2]string{{"128", "64"}, {"0", "64"}} {
		zsSetLimits(t, d, limits[0], limits[1])
		d.Lines(`
			DEL z
			ZADD z 1 a 2 b 3 c 4 d 5 e 6 f
			ZREM z a nosuch
			ZREM z nosuch
			ZREM nokey a
			ZREMRANGEBYRANK z 0 0
			ZRANGE z 0 -1
			ZREMRANGEBYRANK z -1 -1
			ZREMRANGEBYRANK z 5 10
			ZREMRANGEBYRANK z 2 1
			ZREMRANGEBYRANK z x 1
			ZREMRANGEBYRANK nokey 0 -1
			ZREMRANGEBYRANK nokey x 1
			ZRANGE z 0 -1 WITHSCORES
			ZREMRANGEBYSCORE z (2 3
			ZREMRANGEBYSCORE z 100 200
			ZREMRANGEBYSCORE z x 1
			ZREMRANGEBYSCORE nokey x 1
			ZRANGE z 0 -1 WITHSCORES
			ZREMRANGEBYSCORE z -inf +inf
			EXISTS z
			ZADD z 0 a 0 b 0 c 0 d
			ZREMRANGEBYLEX z [b (d
			ZREMRANGEBYLEX z a b
			ZREMRANGEBYLEX nokey a b
			ZRANGE z 0 -1
			ZREMRANGEBYLEX z - +
			EXISTS z
			ZADD z 1 a 2 b 3 c
			ZREM z a b c d
			EXISTS z
			ZADD z 1 a 2 b
			ZREMRANGEBYRANK z 0 -1
			EXISTS z
		`)
	}
}

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
