package commands_test

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
		EXPIREAT str 4102444800
		ZRANGESTORE str src 0 1
		EXPIRETIME str
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
