package commands_test

import (
	"slices"
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Differential tests of the generic keyspace commands.

func TestKeysDiffBasics(t *testing.T) {
	d, inst := servertest.StartDiff(t)
	skNonString(t, d, inst, 0, "list")
	dc := newSkDirtyCheck(t, d)
	skLines(t, d, `
DEL nokey
MSET a 1 b 2
DEL a b c a
EXISTS a b
SET a 1
EXISTS a a a nokey
UNLINK a nokey a
EXISTS a
DEL
EXISTS
TYPE nokey
SET s v
TYPE s
TYPE list
DEL list
TYPE list
TOUCH s nokey s
TOUCH
DBSIZE
DBSIZE x
RANDOMKEY x
SET a 1
SET b 2
RENAME a b
GET b
EXISTS a
RENAME nokey x
RENAME b b
RENAME nokey nokey
RENAMENX b b
RENAMENX nokey x
RENAMENX nokey nokey
SET c 3
RENAMENX b c
RENAMENX b d
GET d
SET e v EX 100000
RENAME e f
TTL f
TTL e
SET g v
RENAME g f
TTL f
SET h v PX 100000000
RENAME h f
PTTL f
RENAMENX f h
PTTL h
RENAME x
RENAME x y z
`)
	d.Do("SET", "bin\x00", "v")
	d.Do("RENAME", "bin\x00", "bin\x00\x01")
	d.Do("EXISTS", "bin\x00", "bin\x00\x01", "bin")
	d.Do("DEL", "bin\x00\x01", "")
	d.Do("SET", "", "empty-key")
	d.Do("EXISTS", "")
	d.Do("TYPE", "")
	d.Do("RENAME", "", "x")
	d.Do("GET", "x")
	dc.check(t, d, "TestKeysDiffBasics, first part")
	skNonString(t, d, inst, 0, "l1")
	dc = newSkDirtyCheck(t, d)
	skLines(t, d, `
RENAME l1 l2
TYPE l1
TYPE l2
SET s1 v
RENAME s1 l2
TYPE l2
`)
	dc.check(t, d, "TestKeysDiffBasics")
}

func TestKeysDiffMoveCopySwap(t *testing.T) {
	d, inst := servertest.StartDiff(t)
	skNonString(t, d, inst, 1, "list1")
	dc := newSkDirtyCheck(t, d)
	skLines(t, d, `
SET a 1
MOVE a 1
EXISTS a
SELECT 1
GET a
MOVE a 0
MOVE a 1
SELECT 0
MOVE nokey 1
MOVE a 0
MOVE a 16
MOVE a -1
MOVE a 4294967296
MOVE a -2147483649
MOVE a x
MOVE a 1.0
MOVE a
SET a new
MOVE a 1
GET a
SET e v EX 100000
MOVE e 1
SELECT 1
TTL e
MOVE list1 0
SELECT 0
TYPE list1
SET s hello
COPY s s2
GET s2
COPY s s2
COPY s s2 REPLACE
COPY s s
COPY s s DB 0
COPY s s DB 1
SELECT 1
GET s
SELECT 0
COPY s s DB 1
COPY s s DB 1 REPLACE
COPY nokey x
COPY nokey x REPLACE
COPY s x DB 16
COPY s x DB -1
COPY s x DB 4294967296
COPY s x DB x
COPY s x DB
COPY s x FOO
COPY s x REPLACE REPLACE
COPY s x REPLACE FOO
COPY s
SET n 5
COPY n n2
OBJECT ENCODING n2
OBJECT REFCOUNT n
OBJECT REFCOUNT n2
INCR n2
OBJECT REFCOUNT n2
COPY n n3
INCRBY n3 20000
DECRBY n3 20000
OBJECT REFCOUNT n3
SET big 123456789
COPY big big2
OBJECT ENCODING big2
OBJECT REFCOUNT big2
SET em short
COPY em em2
OBJECT ENCODING em2
APPEND em x
COPY em em3
OBJECT ENCODING em3
GET em3
SET t v EX 100000
COPY t t2
TTL t2
SET p v
COPY t p REPLACE
TTL p
COPY p q
TTL q
MSET x 1 y 2
SELECT 1
MSET x 10 z 30
SELECT 0
SWAPDB 0 1
MGET x y z
DBSIZE
SELECT 1
MGET x y z
SWAPDB 1 1
MGET x y z
SELECT 0
SWAPDB 0 16
SWAPDB -1 0
SWAPDB 4294967296 0
SWAPDB x 0
SWAPDB 0 x
SWAPDB 0 4294967296
SWAPDB x y
SWAPDB 0
`)
	dc.check(t, d, "TestKeysDiffMoveCopySwap")
}

func TestKeysDiffFlushAndRandom(t *testing.T) {
	d, _ := servertest.StartDiff(t)
	dc := newSkDirtyCheck(t, d)
	skLines(t, d, `
RANDOMKEY
SET only v
RANDOMKEY
DBSIZE
FLUSHDB
RANDOMKEY
DBSIZE
MSET a 1 b 2
FLUSHDB ASYNC
DBSIZE
MSET a 1 b 2
FLUSHDB sync
DBSIZE
FLUSHDB FOO
FLUSHDB SYNC ASYNC
FLUSHDB ASYNC x
SET a 1
SELECT 1
SET b 2
FLUSHALL FOO
FLUSHALL
DBSIZE
SELECT 0
DBSIZE
SET a 1
FLUSHALL async
DBSIZE
SET a 1
FLUSHALL Sync
FLUSHALL sync async
`)
	d.Do("FLUSHDB", "sync\x00")
	d.Do("FLUSHALL", "async\x00x")
	dc.check(t, d, "TestKeysDiffFlushAndRandom")
}

func TestKeysDiffObject(t *testing.T) {
	d, inst := servertest.StartDiff(t)
	skNonString(t, d, inst, 0, "list")
	dc := newSkDirtyCheck(t, d)
	skLines(t, d, `
OBJECT
OBJECT HELP
OBJECT help
OBJECT HELP x
OBJECT FOO
OBJECT FOO bar
OBJECT ENCODING
OBJECT ENCODING a b
OBJECT ENCODING nokey
OBJECT REFCOUNT nokey
OBJECT IDLETIME nokey
OBJECT FREQ nokey
SET i 12345
OBJECT ENCODING i
SET i -12345
OBJECT ENCODING i
SET i 9223372036854775807
OBJECT ENCODING i
SET i 9223372036854775808
OBJECT ENCODING i
SET i 0
OBJECT ENCODING i
OBJECT REFCOUNT i
SET i 9999
OBJECT REFCOUNT i
SET i 10000
OBJECT REFCOUNT i
SET i -1
OBJECT REFCOUNT i
SET i 01
OBJECT ENCODING i
SET i -0
OBJECT ENCODING i
SET i +1
OBJECT ENCODING i
SET e 12345678901234567890123456789012345678901234
OBJECT ENCODING e
OBJECT REFCOUNT e
SET r 123456789012345678901234567890123456789012345
OBJECT ENCODING r
SET e abc
OBJECT ENCODING e
SET e ""
OBJECT ENCODING e
GETSET g 5
GETSET g 7
OBJECT REFCOUNT g
MSET m1 1 m2 abc
OBJECT ENCODING m1
OBJECT ENCODING m2
SETNX sn 8
OBJECT ENCODING sn
OBJECT REFCOUNT sn
SETEX se 100000 8
OBJECT ENCODING se
OBJECT REFCOUNT se
OBJECT FREQ i
OBJECT IDLETIME list
CONFIG SET maxmemory-policy allkeys-lfu
OBJECT IDLETIME i
OBJECT IDLETIME nokey
CONFIG SET maxmemory-policy noeviction
OBJECT FREQ list
`)
	d.Do("SET", "e", "")
	d.Do("OBJECT", "ENCODING", "e")
	// With maxmemory and an LRU policy Redis stops sharing integers.
	d.Do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	d.Do("CONFIG", "SET", "maxmemory", "1000000000")
	t.Cleanup(func() {
		d.R.Do("CONFIG", "SET", "maxmemory", "0")
		d.R.Do("CONFIG", "SET", "maxmemory-policy", "noeviction")
	})
	d.Do("SET", "i", "5")
	d.Do("OBJECT", "REFCOUNT", "i")
	d.Do("CONFIG", "SET", "maxmemory", "0")
	d.Do("CONFIG", "SET", "maxmemory-policy", "noeviction")
	dc.check(t, d, "TestKeysDiffObject")
}

func TestKeysDiffKeys(t *testing.T) {
	d, _ := servertest.StartDiff(t)
	dc := newSkDirtyCheck(t, d)
	skLines(t, d, `
KEYS *
MSET hello 1 hallo 2 hxllo 3 hllo 4 heeeello 5 Hello 6 h*llo 7 h[llo 8 a 9 ab 10 abc 11
KEYS *
KEYS h?llo
KEYS h*llo
KEYS h[ae]llo
KEYS h[^e]llo
KEYS h[a-b]llo
KEYS h[b-a]llo
KEYS h\*llo
KEYS h\[llo
KEYS h[
KEYS [
KEYS [^
KEYS [a-]
KEYS ??
KEYS ???
KEYS a*
KEYS *c
KEYS *l*o
KEYS **
KEYS ?*
KEYS nomatch
KEYS HELLO
KEYS [H]ello
KEYS *\
KEYS \
KEYS
KEYS a b
`)
	d.Do("SET", "", "e")
	skDo(t, d, "KEYS", "**")
	skDo(t, d, "KEYS", "*")
	skDo(t, d, "KEYS", "")
	d.Do("SET", "k\x00ey", "v")
	skDo(t, d, "KEYS", "k\x00*")
	skDo(t, d, "KEYS", "k?ey")
	dc.check(t, d, "TestKeysDiffKeys")
}

func TestKeysDiffScan(t *testing.T) {
	d, inst := servertest.StartDiff(t)
	skNonString(t, d, inst, 0, "list")
	dc := newSkDirtyCheck(t, d)
	// Errors and the empty database answer identically.
	skLines(t, d, `
SCAN 0
SCAN
SCAN x
SCAN 1.5
SCAN 18446744073709551616
SCAN 0 COUNT
SCAN 0 COUNT 0
SCAN 0 COUNT -1
SCAN 0 COUNT x
SCAN 0 COUNT 4294967296000000000000
SCAN 0 MATCH
SCAN 0 TYPE
SCAN 0 FOO bar
SCAN 0 MATCH * COUNT
SCAN 0 COUNT 10 MATCH
SCAN +
SCAN -
`)
	d.Do("SCAN", " 0")
	d.Do("SCAN", "\t0")
	d.Do("SCAN", "0 ")
	d.Do("SCAN", "0", "COUNT", "5\x00")
	d.Do("SET", "", "empty")
	d.Do("SCAN", "0", "MATCH", "")
	d.Do("SCAN", "0", "TYPE", "")
	d.Do("SCAN", "0", "TYPE", "string\x00x")
	d.Do("DEL", "")
	// Full iterations return the same sets of keys.
	for i := 0; i < 300; i++ {
		d.Do("SET", "key:"+strconv.Itoa(i), strconv.Itoa(i))
	}
	for i := 0; i < 50; i++ {
		d.Do("SET", "other:"+strconv.Itoa(i), "x")
	}
	for _, args := range [][]string{
		nil,
		{"COUNT", "1"},
		{"COUNT", "1000"},
		{"MATCH", "key:1*"},
		{"MATCH", "other:*", "COUNT", "3"},
		{"MATCH", "*"},
		{"TYPE", "string"},
		{"TYPE", "STRING"},
		{"TYPE", "list"},
		{"TYPE", "hash"},
		{"TYPE", "nosuchtype"},
		{"MATCH", "key:2?", "TYPE", "string", "COUNT", "7"},
		{"COUNT", "9223372036854775807"},
	} {
		a := skScanAll(t, d.A, args...)
		r := skScanAll(t, d.R, args...)
		if !slices.Equal(a, r) {
			t.Errorf("SCAN %q: abacus has %d keys, redis %d\n%q\n%q", args, len(a), len(r), a, r)
		}
	}
	// A cursor past the end ("-1" wraps to the largest) ends the scan.
	for _, c := range []string{"-1", "18446744073709551615", "", "+0", "-0", "1\x00x"} {
		v, _ := servertest.Parse(d.A.Do("SCAN", c, "COUNT", "1000"))
		r, _ := servertest.Parse(d.R.Do("SCAN", c, "COUNT", "1000"))
		if v.Kind != '*' || r.Kind != '*' {
			t.Errorf("SCAN %q: %+v / %+v", c, v, r)
		}
	}
	dc.check(t, d, "TestKeysDiffScan")
}

// TestKeysDiffWrongType checks that the string commands refuse other types
// with WRONGTYPE (and MGET answers null), on both servers alike.
func TestKeysDiffWrongType(t *testing.T) {
	d, inst := servertest.StartDiff(t)
	skNonString(t, d, inst, 0, "l")
	dc := newSkDirtyCheck(t, d)
	skLines(t, d, `
GET l
SET l v GET
GETSET l v
GETDEL l
GETEX l
GETEX l PERSIST
APPEND l x
STRLEN l
GETRANGE l 0 -1
SUBSTR l 0 -1
SETRANGE l 0 x
INCR l
DECR l
INCRBY l 1
DECRBY l 1
INCRBYFLOAT l 1
LCS l l
MGET l
TYPE l
EXISTS l
TTL l
EXPIRE l 100000
TTL l
PERSIST l
TTL l
SETNX l v
MSETNX l v
TYPE l
SET l v
TYPE l
`)
	dc.check(t, d, "TestKeysDiffWrongType")
}

// TestKeysDiffStream runs random generic-command streams over two
// databases.
func TestKeysDiffStream(t *testing.T) {
	for _, seed := range []uint64{11, 12, 13} {
		t.Run("seed"+strconv.FormatUint(seed, 10), func(t *testing.T) {
			d, _ := servertest.StartDiff(t)
			g := newSkGen(seed, 6)
			dc := newSkDirtyCheck(t, d)
			for i := 0; i < 2500; i++ {
				g.keysStep(t, d)
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

func (g *skGen) keysStep(t *testing.T, d *servertest.Diff) {
	t.Helper()
	k := g.key()
	switch g.r.IntN(24) {
	case 0, 1, 2:
		args := []string{"SET", k, g.value()}
		if g.r.IntN(4) == 0 {
			args = append(args, "EX", strconv.Itoa(100000+g.r.IntN(100)))
		}
		d.Do(args...)
	case 3:
		d.Do("DEL", k, g.key())
	case 4:
		d.Do("UNLINK", k)
	case 5:
		d.Do("EXISTS", k, g.key(), k)
	case 6:
		d.Do("TYPE", k)
	case 7:
		d.Do("RENAME", k, g.key())
	case 8:
		d.Do("RENAMENX", k, g.key())
	case 9:
		d.Do("MOVE", k, g.pick("0", "1"))
	case 10:
		args := []string{"COPY", k, g.key()}
		if g.r.IntN(2) == 0 {
			args = append(args, "DB", g.pick("0", "1"))
		}
		if g.r.IntN(2) == 0 {
			args = append(args, "REPLACE")
		}
		d.Do(args...)
	case 11:
		d.Do("SELECT", g.pick("0", "1"))
	case 12:
		if g.r.IntN(4) == 0 {
			d.Do("SWAPDB", "0", "1")
		}
	case 13:
		d.Do("TOUCH", k, g.key())
	case 14:
		d.Do("OBJECT", g.pick("ENCODING", "REFCOUNT"), k)
	case 15:
		d.Do("DBSIZE")
	case 16:
		skDo(t, d, "KEYS", g.pick("*", "k*", "?1", "k[0-2]", "k[^0-2]", "x*"))
	case 17:
		args := []string{"MATCH", g.pick("*", "k[1-4]", "k?")}
		if a, r := skScanAll(t, d.A, args...), skScanAll(t, d.R, args...); !slices.Equal(a, r) {
			t.Errorf("SCAN 0 %q: abacus %q, redis %q", args, a, r)
		}
	case 18:
		if n := d.Do("DBSIZE"); n == ":0\r\n" || n == ":1\r\n" {
			d.Do("RANDOMKEY")
		}
	case 19:
		if g.r.IntN(10) == 0 {
			d.Do("FLUSHDB")
		}
	case 20:
		d.Do(g.pick("INCR", "DECR"), k)
	case 21:
		d.Do("APPEND", k, g.pick("1", "x", ""))
	case 22:
		skDo(t, d, g.pick("TTL", "PERSIST"), k)
	default:
		d.Do("EXPIRE", k, strconv.Itoa(100000+g.r.IntN(100)))
	}
}

// TestKeysDiffCommandInfo compares the table entries of this family's
// commands through COMMAND INFO. Not compared: RENAME, RENAMENX and COPY,
// which Redis describes with two key specs (source and destination) where
// the table has one per command, and SET and GETEX, whose key specs carry
// a "notes" text.
func TestKeysDiffCommandInfo(t *testing.T) {
	d, _ := servertest.StartDiff(t)
	for _, n := range []string{
		"get", "getset", "getdel", "setnx", "setex", "psetex", "mset", "msetnx", "mget",
		"append", "strlen", "getrange", "setrange", "substr", "incr", "decr", "incrby", "decrby",
		"incrbyfloat", "lcs", "del", "unlink", "exists", "type", "keys", "scan", "randomkey",
		"dbsize", "flushdb", "flushall", "move", "swapdb", "touch", "object|help",
		"object|encoding", "object|refcount", "object|idletime", "object|freq",
		"expire", "pexpire", "expireat", "pexpireat", "ttl", "pttl", "expiretime",
		"pexpiretime", "persist",
	} {
		d.Do("COMMAND", "INFO", n)
	}
}

// TestKeysDiffRESP3 checks null replies and shapes under RESP3.
func TestKeysDiffRESP3(t *testing.T) {
	d, _ := servertest.StartDiff(t)
	d.A.Do("HELLO", "3")
	d.R.Do("HELLO", "3")
	dc := newSkDirtyCheck(t, d)
	skLines(t, d, `
RANDOMKEY
OBJECT ENCODING nokey
OBJECT REFCOUNT nokey
OBJECT HELP
SCAN 0
KEYS *
TYPE nokey
SET k 1
RANDOMKEY
TYPE k
SCAN 0 MATCH k
KEYS k
EXISTS k
RENAMENX k k
TTL k
`)
	dc.check(t, d, "TestKeysDiffRESP3")
}
