package commands_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Differential tests of the string family: fixed edge cases, then random
// streams, each reply byte-compared with redis-server's.

func TestStringsDiffSet(t *testing.T) {
	d, _ := servertest.StartDiff(t)
	dc := newSkDirtyCheck(t, d)
	skLines(t, d, `
SET k v
GET k
SET k v NX
SET k v2 XX
GET k
SET k2 v XX
SET k2 v NX
SET k2 v NX
SET k v nx xx
SET k v XX NX
SET k v NX NX
SET k v xx XX
SET k v GET
SET k v2 GET NX
SET k v3 NX GET
SET k v4 XX GET
GET k
SET nokey v XX GET
EXISTS nokey
SET nokey2 v NX GET
GET nokey2
SET k v GET GET
SET k v EX
SET k v PX
SET k v EXAT
SET k v PXAT
SET k v EX 0
SET k v EX -1
SET k v PX 0
SET k v PX -100
SET k v EXAT 0
SET k v PXAT -5
SET k v EX abc
SET k v EX 1.5
SET k v EX 10abc
SET k v EX 9223372036854775
SET k v EX 9223372036854776
SET k v EX 9223372036854775807
SET k v PX 9223372036854775807
SET k v PX 9223372036854775000
SET k v EXAT 9223372036854776
SET k v PXAT 9223372036854775807
PEXPIRETIME k
SET k v EXAT 9223372036854775
PEXPIRETIME k
SET k v EX 10 PX 10
SET k v PX 10 EX 10
SET k v EXAT 10 PXAT 10
SET k v EX 10 EXAT 10
SET k v EX 10 KEEPTTL
SET k v KEEPTTL EX 10
SET k v KEEPTTL PXAT 10
SET k v EX 100000 EX 200000
TTL k
SET k v PX 100000000 PX 5000000
PTTL k
SET k v KEEPTTL
PTTL k
SET k v KEEPTTL KEEPTTL
PTTL k
SET k v
TTL k
SET k v EXAT 4102444800
EXPIRETIME k
SET k v PXAT 4102444800123
PEXPIRETIME k
SET k v keepttl
PEXPIRETIME k
SET k v EX 100000 GET
SET k v PERSIST
SET k v FOO
SET k v EX 10 FOO
SET k
SET
SET k v ex 100 nx
SET k v ex 100 xx get
TTL k
SET k v Px 100000 Nx GeT
`)
	// Binary-safe keys and values, the empty string, embedded NULs in
	// option names (Redis compares options as C strings).
	d.Do("SET", "", "")
	d.Do("GET", "")
	d.Do("SET", "bin\x00key", "bin\x00\r\nvalue\xff")
	d.Do("GET", "bin\x00key")
	d.Do("SET", "k", "v", "nx\x00zz")
	d.Do("SET", "k", "v", "NX\x00")
	d.Do("SET", "k", "v", "x\x00")
	d.Do("SET", "newk", "v", "keepttl\x00")
	d.Do("SET", "k", "v", "EX", "100\x00")
	d.Do("SET", "k", "v", "EX", "")
	dc.check(t, d, "TestStringsDiffSet")
}

func TestStringsDiffGetFamily(t *testing.T) {
	d, inst := servertest.StartDiff(t)
	skNonString(t, d, inst, 0, "list")
	dc := newSkDirtyCheck(t, d)
	skLines(t, d, `
GET nokey
GET list
GETSET nokey v
GETSET nokey v2
GETSET list v
GETSET nokey
GETDEL nokey
GETDEL nokey
GETDEL list
SET n 12
GETDEL n
EXISTS n
SET k v EX 100000
GETSET k v2
TTL k
SET k v
GETEX k
GETEX missing
GETEX list
GETEX k EX 100000
TTL k
GETEX k PX 200000000
PTTL k
GETEX k EXAT 4102444800
EXPIRETIME k
GETEX k PXAT 4102444800999
PEXPIRETIME k
GETEX k PERSIST
TTL k
GETEX k PERSIST
GETEX k EX 0
GETEX k EX -1
GETEX k PX 0
GETEX k EX abc
GETEX k EX 9223372036854776
GETEX k PX 9223372036854775807
GETEX missing EX abc
GETEX missing EX 0
GETEX k EX
GETEX k PERSIST EX 10
GETEX k EX 10 PERSIST
GETEX k EX 10 PX 10
GETEX k KEEPTTL
GETEX k NX
GETEX k XX
GETEX k GET
GETEX k FOO
GETEX k EX 100 EX 200
TTL k
GETEX k EXAT 1
EXISTS k
SET k v
GETEX k PXAT 1
EXISTS k
SET k v
GETEX k persist persist
GETEX list PERSIST EX 10
SETNX k v
SETNX nk v
GET nk
SETNX list v
SETEX sk 100000 v
TTL sk
SETEX sk 0 v
SETEX sk -5 v
SETEX sk abc v
SETEX sk 9223372036854776 v
SETEX sk 9223372036854775 v
SETEX list 100 v
TYPE list
PSETEX pk 100000000 v
PTTL pk
PSETEX pk 0 v
PSETEX pk 9223372036854775807 v
PSETEX pk 1.5 v
GET pk
MSET a 1 b 2 c 3
MGET a b c d list
MSET a 1 b
MSET a
MSET a 1 a 2
GET a
MSETNX a 1 x 2
EXISTS x
MSETNX x 1 y 2
MGET x y
MSETNX z 1 z 2
GET z
MSETNX list 1
MSETNX q
MSETNX q 1 r
MGET
`)
	d.Do("MSET", "e", "", "bin", "\x00\xff")
	d.Do("MGET", "e", "bin", "")
	dc.check(t, d, "TestStringsDiffGetFamily")
}

func TestStringsDiffAppendRange(t *testing.T) {
	d, inst := servertest.StartDiff(t)
	skNonString(t, d, inst, 0, "list")
	dc := newSkDirtyCheck(t, d)
	skLines(t, d, `
APPEND a hello
OBJECT ENCODING a
APPEND a world
GET a
OBJECT ENCODING a
STRLEN a
APPEND list x
STRLEN list
STRLEN nokey
SET n 123
OBJECT ENCODING n
APPEND n 4
GET n
OBJECT ENCODING n
INCR n
OBJECT ENCODING n
SET n 5
APPEND n 6
OBJECT ENCODING n
OBJECT REFCOUNT n
APPEND fresh 12
OBJECT ENCODING fresh
OBJECT REFCOUNT fresh
APPEND fresh2 123456789012345678901234567890123456789012345
OBJECT ENCODING fresh2
SET s Hello,World
GETRANGE s 0 4
GETRANGE s -5 -1
GETRANGE s -1 -5
GETRANGE s 5 3
GETRANGE s 0 -1
GETRANGE s 0 100
GETRANGE s -100 -1
GETRANGE s -100 -50
GETRANGE s 100 200
GETRANGE s -1 -1
GETRANGE s 3 -100
GETRANGE s 11 11
GETRANGE s 10 10
GETRANGE s -9223372036854775808 9223372036854775807
GETRANGE s 0 x
GETRANGE s x 0
GETRANGE nokey 0 -1
GETRANGE nokey x 1
GETRANGE list 0 -1
GETRANGE list x 0
SUBSTR s 1 3
SUBSTR s -3 -1
SET i 123456
GETRANGE i 1 3
GETRANGE i -2 -1
SET neg -42
GETRANGE neg 0 0
SETRANGE s 0 J
GET s
OBJECT ENCODING s
SETRANGE s 15 tail
GET s
STRLEN s
SETRANGE s -1 x
SETRANGE s x y
SETRANGE s 1.5 y
SETRANGE nk 0 abc
OBJECT ENCODING nk
SETRANGE nk2 5 x
GET nk2
OBJECT ENCODING nk2
SETRANGE list 0 x
SETRANGE i 0 9
GET i
OBJECT ENCODING i
SET i 77
SETRANGE i 5 x
GET i
SETRANGE s 536870911 xx
SETRANGE nokey 536870912 x
SETRANGE nokey 9223372036854775807 x
SETRANGE s 9223372036854775807 x
SETRANGE s -9223372036854775808 x
`)
	// Empty values: no change, no key created, no conversion.
	d.Do("SETRANGE", "nokey", "0", "")
	d.Do("SETRANGE", "nokey", "536870912", "")
	d.Do("SETRANGE", "nokey", "-1", "")
	d.Do("EXISTS", "nokey")
	d.Do("SET", "i", "55")
	d.Do("SETRANGE", "i", "3", "")
	d.Do("OBJECT", "ENCODING", "i")
	d.Do("SETRANGE", "list", "0", "")
	d.Do("APPEND", "i", "")
	d.Do("OBJECT", "ENCODING", "i")
	d.Do("APPEND", "emptyk", "")
	d.Do("EXISTS", "emptyk")
	d.Do("OBJECT", "ENCODING", "emptyk")
	d.Do("APPEND", "b", "\x00\xff\r\n")
	d.Do("SETRANGE", "b", "2", "\x00")
	d.Do("GET", "b")
	d.Do("GETRANGE", "b", "1", "2")
	dc.check(t, d, "TestStringsDiffAppendRange")
}

func TestStringsDiffCounters(t *testing.T) {
	d, inst := servertest.StartDiff(t)
	skNonString(t, d, inst, 0, "list")
	dc := newSkDirtyCheck(t, d)
	skLines(t, d, `
INCR n
INCR n
OBJECT ENCODING n
OBJECT REFCOUNT n
DECR n
DECR n
DECR n
INCRBY n 10
INCRBY n -20
DECRBY n 5
DECRBY n -5
INCRBY n x
INCRBY n 1.5
INCRBY n 9223372036854775808
DECRBY n -9223372036854775808
DECRBY n 9223372036854775807
DECRBY n 9223372036854775807
SET n 9223372036854775806
INCR n
INCR n
GET n
INCRBY n 0
SET n -9223372036854775807
DECR n
DECR n
DECRBY n 1
INCRBY n -1
INCRBY n 9223372036854775807
GET n
SET t abc
INCR t
DECR t
SET t 12a
INCR t
SET t 007
INCR t
SET t +5
INCR t
SET t -0
INCR t
SET t 1.0
INCR t
SET t 12345678901234567890
INCR t
INCR list
DECRBY list 1
INCRBY list x
APPEND r 99
OBJECT ENCODING r
INCR r
OBJECT ENCODING r
GET r
SET big 9999
INCR big
OBJECT REFCOUNT big
DECR big
OBJECT REFCOUNT big
SET m 10000
OBJECT REFCOUNT m
SET m -1
OBJECT REFCOUNT m
SET e v EX 100000
INCR e
SET e 5 EX 100000
INCR e
TTL e
INCRBYFLOAT e 1.5
TTL e
INCRBYFLOAT f 1
OBJECT ENCODING f
OBJECT REFCOUNT f
GET f
INCRBYFLOAT f 0.1
INCRBYFLOAT f -1.1
INCRBYFLOAT f 10.5e3
INCRBYFLOAT f 3.0e3
INCRBYFLOAT f 5.0e-3
INCRBYFLOAT f -5.0e-3
INCRBYFLOAT f 1e20
INCRBYFLOAT f 1e-20
INCRBYFLOAT f abc
INCRBYFLOAT f 1abc
INCRBYFLOAT f nan
INCRBYFLOAT f inf
INCRBYFLOAT f -inf
INCRBYFLOAT f +inf
INCRBYFLOAT f Infinity
INCRBYFLOAT f 1e5000
INCRBYFLOAT f 1e-5000
INCRBYFLOAT f 1e-4940
INCRBYFLOAT f 1_000
INCRBYFLOAT f 0b101
INCRBYFLOAT f 0o7
INCRBYFLOAT f 0x
INCRBYFLOAT f 0x10
INCRBYFLOAT f 0x1p3
INCRBYFLOAT f 0X1P-2
INCRBYFLOAT f 0x1.8
INCRBYFLOAT f 0x.8p1
INCRBYFLOAT f 0x1.p1
INCRBYFLOAT f 0x1p
INCRBYFLOAT f 1e
INCRBYFLOAT f 1e+
INCRBYFLOAT f .5
INCRBYFLOAT f 5.
INCRBYFLOAT f .
INCRBYFLOAT f +5
INCRBYFLOAT f -0
INCRBYFLOAT f 00012
INCRBYFLOAT f 1E2
INCRBYFLOAT f 1i
INCRBYFLOAT g -0.0
GET g
INCRBYFLOAT g 1e4932
INCRBYFLOAT g 1e4932
INCRBYFLOAT g -1e4932
SET g 1e4932
INCRBYFLOAT g 1.1e4932
SET g inf
INCRBYFLOAT g 1
SET g -inf
INCRBYFLOAT g 0
SET g nan
INCRBYFLOAT g 0
SET g 1.5
INCRBYFLOAT g 2.5
OBJECT ENCODING g
INCR g
SET h 0.1
INCRBYFLOAT h 0.2
INCRBYFLOAT h 1e308
INCRBYFLOAT h -1e308
INCRBYFLOAT list 1
INCRBYFLOAT i x
INCRBYFLOAT i 123456789012345678901234567890123456789012345678
OBJECT ENCODING i
SET z 12
INCRBYFLOAT z 0
OBJECT ENCODING z
`)
	d.Do("SET", "s", " 1")
	d.Do("INCRBYFLOAT", "s", "1")
	d.Do("INCR", "s")
	d.Do("SET", "s", "1 ")
	d.Do("INCRBYFLOAT", "s", "1")
	d.Do("INCRBYFLOAT", "s2", " 1")
	d.Do("INCRBYFLOAT", "s2", "")
	d.Do("INCRBYFLOAT", "s2", "1\x00")
	d.Do("INCRBY", "s2", "")
	// string2ld refuses strings of 5120 bytes or more.
	d.Do("INCRBYFLOAT", "s3", "0."+strings.Repeat("0", 5116)+"1") // underflows
	d.Do("INCRBYFLOAT", "s3", "1."+strings.Repeat("0", 5117))     // 5119 bytes
	d.Do("INCRBYFLOAT", "s3", "1."+strings.Repeat("0", 5118))     // 5120 bytes
	d.Do("SET", "s4", "2."+strings.Repeat("0", 5117))
	d.Do("INCRBYFLOAT", "s4", "1")
	d.Do("SET", "s4", "2."+strings.Repeat("0", 5118))
	d.Do("INCRBYFLOAT", "s4", "1")
	dc.check(t, d, "TestStringsDiffCounters")
}

// TestStringsDiffFloatStream adds random decimal and hexadecimal numbers
// with INCRBYFLOAT: the long double sums and their "%.17Lf" text must
// match redis-server's digit for digit.
func TestStringsDiffFloatStream(t *testing.T) {
	d, _ := servertest.StartDiff(t)
	dc := newSkDirtyCheck(t, d)
	g := newSkGen(99, 1)
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + g.r.IntN(10))
		}
		return string(b)
	}
	for i := 0; i < 1500; i++ {
		var v string
		switch g.r.IntN(6) {
		case 0:
			v = "0x" + strconv.FormatInt(int64(g.r.IntN(1<<20)), 16) + g.pick("", "p-3", "p7", ".8")
		case 1:
			v = g.pick("", "-", "+") + digits(1+g.r.IntN(3)) + "e" + strconv.Itoa(g.r.IntN(60)-30)
		case 2:
			v = g.pick("", "-") + "0." + digits(1+g.r.IntN(25))
		default:
			v = g.pick("", "-") + digits(1+g.r.IntN(8)) + "." + digits(g.r.IntN(12))
		}
		key := "f" + strconv.Itoa(g.r.IntN(3))
		if g.r.IntN(40) == 0 {
			d.Do("SET", key, v)
		}
		d.Do("INCRBYFLOAT", key, v)
	}
	dc.check(t, d, "TestStringsDiffFloatStream")
}

func TestStringsDiffLCS(t *testing.T) {
	d, inst := servertest.StartDiff(t)
	skNonString(t, d, inst, 0, "list")
	dc := newSkDirtyCheck(t, d)
	skLines(t, d, `
MSET key1 ohmytext key2 mynewtext
LCS key1 key2
LCS key1 key2 LEN
LCS key1 key2 IDX
LCS key1 key2 IDX MINMATCHLEN 4
LCS key1 key2 IDX MINMATCHLEN 4 WITHMATCHLEN
LCS key1 key2 IDX WITHMATCHLEN
LCS key1 key2 IDX MINMATCHLEN -5
LCS key1 key2 IDX MINMATCHLEN x
LCS key1 key2 IDX MINMATCHLEN
LCS key1 key2 LEN IDX
LCS key1 key2 IDX LEN
LCS key1 key2 FOO
LCS key1 key2 LEN LEN
LCS key1 nokey
LCS nokey key2 IDX
LCS nokey nokey2 IDX WITHMATCHLEN
LCS nokey nokey2 LEN
LCS key1 list
LCS list key1 FOO
LCS key1
LCS key1 key1 IDX
MSET a abcabcabc b cbacbacba
LCS a b
LCS a b IDX WITHMATCHLEN
MSET a 1234567 b 7654321
LCS a b IDX
MSET a aaaaaaaa b aaaa
LCS a b IDX WITHMATCHLEN
LCS b a IDX WITHMATCHLEN
`)
	g := newSkGen(42, 1)
	for i := 0; i < 200; i++ {
		a := randomText(g, 1+g.r.IntN(30))
		b := randomText(g, 1+g.r.IntN(30))
		d.Do("MSET", "x", a, "y", b)
		d.Do("LCS", "x", "y")
		d.Do("LCS", "x", "y", "IDX", "WITHMATCHLEN")
		d.Do("LCS", "y", "x", "IDX", "MINMATCHLEN", strconv.Itoa(g.r.IntN(4)))
	}
	// RESP3 replies LCS IDX as a map.
	d.A.Do("HELLO", "3")
	d.R.Do("HELLO", "3")
	d.Do("LCS", "key1", "key2", "IDX", "WITHMATCHLEN")
	d.Do("LCS", "nokey", "nokey2", "IDX")
	d.Do("LCS", "key1", "key2")
	d.Do("LCS", "key1", "key2", "LEN")
	dc.check(t, d, "TestStringsDiffLCS")
}

func randomText(g *skGen, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = "abcd"[g.r.IntN(4)]
	}
	return string(b)
}

// TestStringsDiffRESP3 checks the null and reply shapes under RESP3.
func TestStringsDiffRESP3(t *testing.T) {
	d, inst := servertest.StartDiff(t)
	skNonString(t, d, inst, 0, "list")
	d.A.Do("HELLO", "3")
	d.R.Do("HELLO", "3")
	dc := newSkDirtyCheck(t, d)
	skLines(t, d, `
GET nokey
SET k v
SET k v NX
SET k v NX GET
SET nk v XX GET
SET nk v XX
MGET k nokey list
GETDEL nokey
GETEX nokey
GETSET nokey v
INCRBYFLOAT f 1.5
GETRANGE nokey 0 1
`)
	dc.check(t, d, "TestStringsDiffRESP3")
}

// TestStringsDiffStream sends random string-family commands over a small
// key space to both servers.
func TestStringsDiffStream(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run("seed"+strconv.FormatUint(seed, 10), func(t *testing.T) {
			d, _ := servertest.StartDiff(t)
			g := newSkGen(seed, 6)
			dc := newSkDirtyCheck(t, d)
			for i := 0; i < 2500; i++ {
				args := g.stringCommand()
				skDo(t, d, args...)
				if i%50 == 49 {
					dc.check(t, d, "commands up to "+strconv.Itoa(i))
				}
				if t.Failed() {
					t.Fatalf("stopped after command %d", i)
				}
			}
		})
	}
}

func (g *skGen) stringCommand() []string {
	k := g.key()
	switch g.r.IntN(24) {
	case 0, 1:
		args := []string{"SET", k, g.value()}
		for _, o := range []string{"NX", "XX", "GET", "KEEPTTL"} {
			if g.r.IntN(5) == 0 {
				args = append(args, o)
			}
		}
		switch g.r.IntN(6) {
		case 0:
			args = append(args, "EX", strconv.Itoa(100000+g.r.IntN(1000)))
		case 1:
			args = append(args, "PX", strconv.Itoa(100000000+g.r.IntN(1000)))
		case 2:
			args = append(args, "EXAT", g.farExpireAt(false))
		case 3:
			args = append(args, "PXAT", g.farExpireAt(true))
		}
		return args
	case 2:
		return []string{"GET", k}
	case 3:
		return []string{"GETSET", k, g.value()}
	case 4:
		return []string{"GETDEL", k}
	case 5:
		switch g.r.IntN(4) {
		case 0:
			return []string{"GETEX", k, "PERSIST"}
		case 1:
			return []string{"GETEX", k, "EX", strconv.Itoa(100000 + g.r.IntN(1000))}
		case 2:
			return []string{"GETEX", k, "PXAT", g.farExpireAt(true)}
		}
		return []string{"GETEX", k}
	case 6:
		return []string{"SETNX", k, g.value()}
	case 7:
		return []string{"SETEX", k, strconv.Itoa(100000 + g.r.IntN(100)), g.value()}
	case 8:
		return []string{"MSET", k, g.value(), g.key(), g.value()}
	case 9:
		return []string{"MSETNX", k, g.value(), g.key(), g.value()}
	case 10:
		return []string{"MGET", k, g.key(), g.key()}
	case 11:
		return []string{"APPEND", k, g.pick("x", "12", "", "\x00", "-3", g.value())}
	case 12:
		return []string{"STRLEN", k}
	case 13:
		return []string{g.pick("GETRANGE", "SUBSTR"), k, strconv.Itoa(g.r.IntN(20) - 10), strconv.Itoa(g.r.IntN(20) - 10)}
	case 14:
		return []string{"SETRANGE", k, g.intn(12), g.pick("", "x", "12", "abc", "\x00\x01")}
	case 15:
		return []string{g.pick("INCR", "DECR"), k}
	case 16:
		return []string{g.pick("INCRBY", "DECRBY"), k, g.pick("1", "-1", "100", "-9999", "9223372036854775807", "-9223372036854775808", "x")}
	case 17:
		return []string{"INCRBYFLOAT", k, g.pick("0.1", "-0.25", "1e3", "3", "-1.5e-2", "7.0", "abc", "1e400")}
	case 18:
		args := []string{"LCS", k, g.key()}
		switch g.r.IntN(4) {
		case 0:
			args = append(args, "LEN")
		case 1:
			args = append(args, "IDX", "WITHMATCHLEN")
		case 2:
			args = append(args, "IDX", "MINMATCHLEN", g.intn(3))
		}
		return args
	case 19:
		return []string{"OBJECT", "ENCODING", k}
	case 20:
		return []string{"TTL", k}
	case 21:
		return []string{"DEL", k}
	case 22:
		return []string{"EXISTS", k}
	}
	return []string{"TYPE", k}
}
