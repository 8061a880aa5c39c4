package commands_test

// Differential tests of SORT and SORT_RO: fixed edge cases sent to Abacus
// and to redis-server 7.0, replies compared byte for byte. Helpers are
// prefixed "so" so that they cannot collide with other families' helpers.

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// soDiff starts an instance paired with the shared redis-server, whose
// list, set and zset limits are put back to the defaults first (the
// server is shared by every test of the package).
func soDiff(t *testing.T, opts ...servertest.Option) (*servertest.Diff, *servertest.Instance) {
	t.Helper()
	inst := servertest.Start(t, opts...)
	d := servertest.NewDiff(t, inst)
	if r := d.R.Do("CONFIG", "SET", "zset-max-listpack-entries", "128", "zset-max-listpack-value", "64",
		"set-max-intset-entries", "512", "list-max-listpack-size", "-2"); r != "+OK\r\n" {
		t.Fatalf("resetting redis-server's limits: %q", r)
	}
	return d, inst
}

// soLines runs commands one per line (split on spaces) through d with
// soDo and returns how many it compared.
func soLines(t *testing.T, d *servertest.Diff, text string) int {
	t.Helper()
	n, multi := 0, false
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		args := strings.Fields(line)
		switch strings.ToUpper(args[0]) {
		case "MULTI":
			multi = true
		case "EXEC", "DISCARD":
			multi = false
		}
		if multi {
			d.Do(args...) // a command sent now would be queued
		} else {
			soDo(t, d, args...)
		}
		n++
	}
	return n
}

// soDo compares one command and then clears errno in redis-server.
//
// Redis 7.0's SORT tests errno for ERANGE after strtod without clearing it
// first, so once any strtod in the server has set ERANGE (a SORT weight
// such as 1e-310, a ZADD of a subnormal score) every later numeric SORT of
// a non-integer string fails, until some other call happens to change
// errno, which depends on timing. Abacus judges each SORT on its own
// weights; the tests make redis-server do the same by running a command
// that sets errno to 0 (INCRBYFLOAT parses with errno = 0 first) on a
// scratch key, which is deleted again, on the redis-server side only.
func soDo(t *testing.T, d *servertest.Diff, args ...string) string {
	t.Helper()
	a := d.Do(args...)
	soClearErrno(t, d)
	return a
}

func soClearErrno(t *testing.T, d *servertest.Diff) {
	t.Helper()
	d.R.Write(servertest.Encode("INCRBYFLOAT", "__so_errno__", "0"))
	d.R.Write(servertest.Encode("DEL", "__so_errno__"))
	if r := d.R.Read(); r != "$1\r\n0\r\n" {
		t.Fatalf("clearing errno: INCRBYFLOAT replied %q", r)
	}
	if r := d.R.Read(); r != ":1\r\n" {
		t.Fatalf("clearing errno: DEL replied %q", r)
	}
}

func TestSortDiffNumericAndAlpha(t *testing.T) {
	d, _ := soDiff(t)
	n := soLines(t, d, `
		RPUSH nl 3 1 2 10 -5 1.5 +7 0x10 inf -inf 1e3 .5 5. 00 -0 0
		SORT nl
		SORT nl DESC
		SORT nl ASC
		SORT nl asc desc
		SORT nl desc asc
		SORT nl ALPHA
		SORT nl alpha DESC
		SORT nl LIMIT 0 3
		SORT nl LIMIT 2 3
		SORT nl LIMIT -1 3
		SORT nl LIMIT -5 -3
		SORT nl LIMIT 0 -1
		SORT nl LIMIT 0 0
		SORT nl LIMIT 15 1
		SORT nl LIMIT 16 1
		SORT nl LIMIT 100 5
		SORT nl LIMIT 3 100
		SORT nl LIMIT 9223372036854775807 9223372036854775807
		SORT nl LIMIT -9223372036854775808 -9223372036854775808
		SORT nl LIMIT 1 9223372036854775807
		SORT nl LIMIT 2 9223372036854775807
		SORT nl LIMIT 0 1 LIMIT 3 2
		SORT nl DESC LIMIT 1 2
		SORT nl ALPHA LIMIT 1 2
		SORT nl ALPHA DESC LIMIT 5 100
		SORT nl LIMIT a 1
		SORT nl LIMIT 1 b
		SORT nl LIMIT 1.5 2
		SORT nl LIMIT 01 2
		SORT nl LIMIT +1 2
		SORT nl LIMIT -0 2
		SORT nl LIMIT 1 -0
		SORT nl LIMIT 1 +2
		SORT nl LIMIT 9223372036854775808 1
		SORT nl LIMIT 1
		SORT nl LIMIT
		SORT nl foo
		SORT nl BY
		SORT nl GET
		SORT nl STORE
		SORT nl DESC foo LIMIT x y
		SORT nl LIMIT x y foo
		SORT_RO nl
		SORT_RO nl DESC LIMIT 1 2 ALPHA
		SORT_RO nl STORE dst
		SORT_RO nl LIMIT 0 2 STORE dst
		SORT
		SORT_RO
		EXISTS dst
		RPUSH dup 2 1 2 1 10 01 1.0
		SORT dup
		SORT dup DESC
		SORT dup ALPHA
		SORT dup ALPHA DESC LIMIT 1 3
		RPUSH sl banana apple cherry Apple 10 9 apple
		SORT sl ALPHA
		SORT sl ALPHA DESC
		SORT sl ALPHA LIMIT 0 1
		SORT sl
		SORT sl DESC
		SORT sl LIMIT 0 1
		SORT sl LIMIT 0 0
		SORT sl STORE dst
		EXISTS dst
		SORT_RO sl
		SORT sl ALPHA STORE dst
		LRANGE dst 0 -1
		RPUSH bad 1 2 nan
		SORT bad
		SORT bad ALPHA
		RPUSH bad2 1 infinity -Infinity INF 2 infinit
		SORT bad2
		RPUSH big 1e308 1.7976931348623157e308 1e309
		SORT big
		RPUSH tiny 1e-310 1
		SORT tiny
		RPUSH tiny2 0x1p-1074 2.2250738585072014e-308 2.2250738585072013e-308 0e-999 0x1p-1022
		SORT tiny2
		SORT tiny2 DESC
		RPUSH tiny3 2.2250738585072011e-308
		SORT tiny3
		RPUSH tiny4 0x1p-1075
		SORT tiny4
		RPUSH hex 0x 0x1
		SORT hex
		RPUSH hex2 0x1p 0X1P3 0x.8 0x1.8p1 0xAbC 0x1P-2
		SORT hex2
		SORT hex2 DESC LIMIT 1 3
		RPUSH dec 1e 1e+ 1e+1
		SORT dec
		RPUSH dec2 . 1
		SORT dec2
		RPUSH dec3 .e1
		SORT dec3
		RPUSH dec4 1_0
		SORT dec4
		RPUSH dec5 +5 -.5e1 5.e-1 1E2 0001
		SORT dec5
	`)
	// Values with spaces, empties and NULs.
	cases := [][]string{
		{"RPUSH", "ws", " 12", "\t3", "\n\v\f\r7", "", "1"},
		{"SORT", "ws"},
		{"SORT", "ws", "DESC"},
		{"RPUSH", "ws2", "12 "},
		{"SORT", "ws2"},
		{"RPUSH", "ws3", "  "},
		{"SORT", "ws3"},
		{"RPUSH", "ws4", "+"},
		{"SORT", "ws4"},
		{"RPUSH", "ws5", " -"},
		{"SORT", "ws5"},
		{"RPUSH", "nul", "3\x00abc", "1", "\x00x", "2\x00"},
		{"SORT", "nul"},
		{"SORT", "nul", "DESC"},
		{"RPUSH", "nulalpha", "a\x00b", "a\x00a", "a", "a\x00", "\x00z", "", "b\x00", "b"},
		{"SORT", "nulalpha", "ALPHA"},
		{"SORT", "nulalpha", "ALPHA", "DESC"},
		{"SORT", "nulalpha", "ALPHA", "LIMIT", "1", "3"},
		{"SORT", "nulalpha", "ALPHA", "STORE", "dst"},
		{"LRANGE", "dst", "0", "-1"},
		{"SORT", "nulalpha", "ALPHA", "DESC", "STORE", "dst"},
		{"LRANGE", "dst", "0", "-1"},
		{"RPUSH", "hi", "\xff", "\x80", "a", "\xc3\xa9", "e", "Z", "\xe2\x82\xac", "\x01"},
		{"SORT", "hi", "ALPHA"},
		{"SORT", "hi", "ALPHA", "DESC"},
		// Option names are compared as C strings.
		{"SORT", "nl", "DESC\x00junk"},
		{"SORT", "nl", "limit\x00", "1", "2"},
		{"SORT", "sl", "alpha\x00x", "desc\x00"},
		{"SORT", "nl", "DESCX"},
		{"SORT", "nl", "STORE\x00", "dst"},
		{"LRANGE", "dst", "0", "-1"},
		{"SORT_RO", "nl", "STORE\x00", "dst"},
	}
	for _, c := range cases {
		soDo(t, d, c...)
	}
	t.Logf("%d differential cases", n+len(cases))
}

func TestSortDiffByAndGet(t *testing.T) {
	d, _ := soDiff(t)
	n := soLines(t, d, `
		RPUSH nl 3 1 2 10 4
		MSET w_1 30 w_2 20 w_3 10 w_10 5
		SORT nl BY w_*
		SORT nl BY w_* DESC
		SORT nl BY w_* LIMIT 1 2
		SORT nl BY w_* LIMIT 0 2 DESC
		SORT nl BY w_* ALPHA
		SORT nl BY w_* ALPHA DESC
		SORT nl BY w_* ALPHA LIMIT 0 3
		SORT nl BY w_* ALPHA LIMIT 1 3 DESC
		SORT nl BY missing_*
		SORT nl BY missing_* DESC
		SORT nl BY missing_* LIMIT 1 2
		SORT nl BY missing_* ALPHA
		SORT nl BY missing_* ALPHA DESC
		SORT nl BY missing_* ALPHA LIMIT 1 3
		SORT nl BY nosort
		SORT nl BY nosort DESC
		SORT nl BY nosort LIMIT 1 2
		SORT nl BY nosort DESC LIMIT 1 2
		SORT nl BY nosort LIMIT 4 100
		SORT nl BY nosort DESC LIMIT 4 100
		SORT nl BY nosort LIMIT 5 1
		SORT nl BY nosort LIMIT 0 0
		SORT nl BY nosort LIMIT -3 2
		SORT nl BY nosort ALPHA
		SORT nl BY nosort BY w_*
		SORT nl BY w_* BY nosort
		SORT nl BY w_* BY w_*
		SORT nl BY *
		SORT nl BY ***
		SORT nl BY w_*_x
		MSET 1_x 5 2_x 4 3_x 3 4_x 2 10_x 1
		SORT nl BY *_x
		SORT nl BY *_x GET *_x
		HSET obj_1 weight 3 name one
		HSET obj_2 weight 1 name two
		HSET obj_3 weight 2
		HSET obj_10 weight abc name ten
		SORT nl BY obj_*->weight
		SORT nl BY obj_*->weight ALPHA
		SORT nl BY obj_*->weight ALPHA GET obj_*->name
		SORT nl BY obj_*->name ALPHA GET obj_*->name GET #
		SORT nl BY obj_*->name ALPHA DESC LIMIT 1 3 GET obj_*->name GET #
		SORT nl BY obj_*->missing
		SORT nl BY obj_*->missing ALPHA LIMIT 1 2
		SORT nl BY obj_*->
		SORT nl BY obj_*->weight->x
		SORT nl BY w_*->weight
		SORT nl GET obj_*->name
		SORT nl GET obj_*->
		SORT nl GET obj_*->name GET # GET w_* GET missing_* GET nostar GET #
		SORT nl GET nostar
		SORT nl GET #
		SORT nl GET # GET #
		SORT nl GET ##
		SORT nl GET *#
		SORT nl GET w_* LIMIT 1 2 DESC
		SORT nl BY w_* GET w_* GET # LIMIT 1 2 DESC
		SORT nl BY nosort GET w_* GET obj_*->name
		SORT nl BY nosort DESC LIMIT 1 3 GET # GET w_*
		RPUSH lst_1 a
		ZADD lst_2 1 a
		SORT nl GET lst_*
		SORT nl GET lst_*->f
		SORT nl BY lst_*
		SORT nl BY lst_*->f ALPHA
		SET obj_4 plain
		SORT nl GET obj_*->name
		SET x*y 1
		SORT nl BY w_* GET x*y
		HSET h*1 f 9
		SORT nl GET h*1->f
		SORT nl GET h*->f
		HSET h3 f->g 1
		SORT nl GET h*->f->g
		MSET w_1 abc
		SORT nl BY w_*
		SORT nl BY w_* ALPHA
		SORT nl BY w_* GET w_*
		MSET w_1 1e400
		SORT nl BY w_*
		MSET w_1 -inf w_2 inf w_3 0x10 w_10 -0
		SORT nl BY w_*
		SORT nl BY w_* DESC
		MSET w_1 5 w_2 5 w_3 5 w_10 5
		SORT nl BY w_*
		SORT nl BY w_* DESC
		SORT nl BY w_* ALPHA
		SORT nl BY w_* ALPHA LIMIT 1 3
		SORT nl BY w_* ALPHA STORE dst
		LRANGE dst 0 -1
	`)
	cases := [][]string{
		{"MSET", "w_1", " 5", "w_2", "", "w_3", "\t-1"},
		{"SORT", "nl", "BY", "w_*"},
		{"SORT", "nl", "BY", "w_*", "DESC"},
		{"SORT", "nl", "BY", "w_*", "LIMIT", "0", "1"},
		{"SORT", "nl", "BY", "w_*", "ALPHA"},
		{"SET", "w\x00_1", "9"},
		{"SORT", "nl", "BY", "w\x00_*"},
		{"SORT", "nl", "BY", "w\x00_*", "DESC"},
		{"SORT", "nl", "GET", "w\x00_*"},
		{"SET", "1\x00tail", "t1"},
		{"SORT", "nl", "GET", "*\x00tail"},
		{"SORT", "nl", "GET", "#\x00tail"},
		{"SORT", "nl", "GET", "#\x00"},
		{"HSET", "hh_1", "f\x00x", "nulfield", "f", "plainfield"},
		{"SORT", "nl", "GET", "hh_*->f\x00x"},
		{"SORT", "nl", "GET", "hh_*->f"},
		{"SORT", "nl", "GET", "hh_*-\x00>f"},
		{"HSET", "hh_2", "", "emptyfield"},
		{"SORT", "nl", "GET", "hh_*->"},
		{"SORT", "nl", "GET", "hh_*->\x00"},
		{"RPUSH", "nk", "a\x00b", "c"},
		{"SET", "k_a\x00b", "bin"},
		{"SORT", "nk", "ALPHA", "GET", "k_*"},
	}
	for _, c := range cases {
		soDo(t, d, c...)
	}
	t.Logf("%d differential cases", n+len(cases))
}

func TestSortDiffStore(t *testing.T) {
	d, _ := soDiff(t)
	n := soLines(t, d, `
		RPUSH nl 3 1 2
		MSET w_1 3 w_2 2 w_3 1
		SORT nl STORE dst
		LRANGE dst 0 -1
		TYPE dst
		OBJECT ENCODING dst
		SORT nl DESC STORE dst
		LRANGE dst 0 -1
		SORT nl BY w_* GET # GET w_* GET missing_* STORE dst
		LRANGE dst 0 -1
		LLEN dst
		SORT nl LIMIT 0 0 STORE dst
		EXISTS dst
		SORT nl LIMIT 0 0 STORE dst
		SORT nokey STORE dst
		SET dst x
		SORT nokey STORE dst
		EXISTS dst
		SET dst x
		EXPIREAT dst 4102444800
		SORT nl STORE dst
		EXPIRETIME dst
		TYPE dst
		SORT nl STORE dst STORE dst2
		EXISTS dst dst2
		LRANGE dst2 0 -1
		SORT nl STORE nl
		LRANGE nl 0 -1
		SORT nl DESC STORE nl
		LRANGE nl 0 -1
		SORT nl BY nosort DESC STORE dst
		LRANGE dst 0 -1
		SORT nl BY nosort LIMIT 1 1 STORE dst
		LRANGE dst 0 -1
		RPUSH sl b a
		SORT sl STORE dst
		LRANGE dst 0 -1
		SORT sl ALPHA STORE dst
		LRANGE dst 0 -1
		SET str v
		SORT str STORE dst
		LRANGE dst 0 -1
		ZADD z 2 b 1 a 3 c
		SORT z ALPHA STORE zdst
		LRANGE zdst 0 -1
		SORT z BY nosort STORE zdst
		LRANGE zdst 0 -1
		SORT z BY nosort DESC LIMIT 0 2 STORE zdst
		LRANGE zdst 0 -1
		SORT z ALPHA DESC STORE z
		TYPE z
		LRANGE z 0 -1
	`)
	t.Logf("%d differential cases", n)
}

func TestSortDiffZsetsAndSets(t *testing.T) {
	d, _ := soDiff(t)
	n := soLines(t, d, `
		ZADD z 3 c 1 a 2 b 1 aa 5 e 4 d
		OBJECT ENCODING z
		SORT z BY nosort
		OBJECT ENCODING z
		SORT z BY nosort DESC
		SORT z BY nosort LIMIT 1 2
		SORT z BY nosort DESC LIMIT 1 2
		SORT z BY nosort LIMIT 5 10
		SORT z BY nosort DESC LIMIT 5 10
		SORT z BY nosort LIMIT 6 1
		SORT z BY nosort LIMIT 0 0
		SORT z BY nosort DESC LIMIT -1 -1
		SORT z BY nosort GET # GET w_*
		SORT z ALPHA
		SORT z ALPHA DESC LIMIT 1 3
		SORT z
		ZADD z2 1 x
		SORT_RO z2 BY nosort
		OBJECT ENCODING z2
		ZADD z3 1 x
		SORT z3 LIMIT 0 0
		OBJECT ENCODING z3
		ZADD z4 1 x
		SORT z4 foo
		OBJECT ENCODING z4
		ZADD zn 1 10 2 3 3 7 4 -1
		SORT zn
		SORT zn DESC
		SORT zn LIMIT 1 2
		SORT zn BY nosort
		SORT zn BY nosort GET # GET w_*
		MSET w_10 1 w_3 2 w_7 3 w_-1 4
		SORT zn BY w_*
		SORT zn BY w_* DESC LIMIT 1 2
		SORT zn BY w_* GET w_* GET #
		SADD si 5 3 9 1 -2 100 0
		SORT si
		SORT si DESC
		SORT si ALPHA
		SORT si LIMIT 2 3
		SORT si BY nosort
		SORT si BY nosort DESC
		SORT si BY nosort LIMIT 1 2
		SORT si BY nosort GET # GET w_*
		SORT si BY nosort STORE dst
		LRANGE dst 0 -1
		SORT si BY nosort DESC LIMIT 1 4 STORE dst
		LRANGE dst 0 -1
		SORT si BY w_*
		SORT si BY w_* DESC
		SORT si BY missing_* ALPHA
		SORT si BY missing_* ALPHA LIMIT 2 3
		SORT si BY missing_* ALPHA DESC LIMIT 1 3
		SADD ss banana apple cherry 10 2
		SORT ss ALPHA
		SORT ss ALPHA DESC LIMIT 1 2
		SORT ss
		SORT ss BY nosort STORE dst
		LRANGE dst 0 -1
		SORT ss BY nosort DESC STORE dst
		LRANGE dst 0 -1
		SORT ss BY nosort LIMIT 1 2 STORE dst
		LRANGE dst 0 -1
		SORT ss BY nosort ALPHA LIMIT 0 0
		SORT ss BY nosort LIMIT 0 0 STORE dst
		EXISTS dst
		SET str x
		SORT str
		SORT str BY nosort
		SORT str STORE dst
		SORT str foo
		SORT str LIMIT a b
		SORT_RO str
		HSET h f v
		SORT h
		SORT h BY nosort ALPHA
		SORT_RO h GET #
	`)
	t.Logf("%d differential cases", n)
}

// TestSortDiffTransactionsAndScripts: SORT queued in MULTI, and SORT of a
// set BY a constant from a script, which Redis sorts (ALPHA) so that the
// script's effects replicate deterministically.
func TestSortDiffTransactionsAndScripts(t *testing.T) {
	d, _ := soDiff(t)
	n := soLines(t, d, `
		SADD ss banana apple cherry
		RPUSH l 3 1 2
		MULTI
		SORT l
		SORT l DESC STORE dst
		SORT l foo
		LRANGE dst 0 -1
		EXEC
	`)
	scripts := [][]string{
		{"EVAL", "return redis.call('sort',KEYS[1],'by','nosort')", "1", "ss"},
		{"EVAL", "return redis.call('sort_ro',KEYS[1],'by','nosort','desc')", "1", "ss"},
		{"EVAL", "return redis.call('sort',KEYS[1],'by','nosort','limit','1','1')", "1", "ss"},
		{"EVAL", "return redis.call('sort',KEYS[1],'by','nosort','desc')", "1", "l"},
		{"EVAL", "return redis.call('sort',KEYS[1],'alpha','by','w_*')", "1", "l"},
		{"EVAL", "return redis.call('sort',KEYS[1],'by','nosort','store','dst')", "1", "ss"},
		{"LRANGE", "dst", "0", "-1"},
	}
	for _, c := range scripts {
		soDo(t, d, c...)
	}
	n += len(scripts)
	t.Logf("%d differential cases", n)
}

// TestSortDiffNumberSyntax feeds random near-numbers to numeric SORT (as
// elements and as BY weights) and compares with redis-server, whose
// strtod decides what is a number, what overflows or underflows.
func TestSortDiffNumberSyntax(t *testing.T) {
	d, _ := soDiff(t)
	r := rand.New(rand.NewPCG(21, 22))
	pieces := []string{"0", "1", "9", "5", "00", ".", "e", "E", "p", "P", "x", "X", "0x", "+", "-", " ", "\t",
		"inf", "INF", "inity", "nan", "_", "a", "f", "F", "308", "309", "324", "1022", "1074", "1075", "\x00", "9999999999999999999"}
	n, numbers := 0, 0
	for i := 0; i < 600 && !t.Failed(); i++ {
		var b strings.Builder
		for k := 1 + r.IntN(6); k > 0; k-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		v := b.String()
		soDo(t, d, "DEL", "l", "w_x", "m")
		soDo(t, d, "RPUSH", "l", "2", v, "-1.5")
		if !strings.HasPrefix(soDo(t, d, "SORT", "l"), "-") {
			numbers++
		}
		soDo(t, d, "SET", "w_x", v)
		soDo(t, d, "RPUSH", "m", "x", "y")
		soDo(t, d, "SORT", "m", "BY", "w_*", "DESC")
		n += 6
	}
	t.Logf("%d differential cases; %d of the strings were numbers", n, numbers)
}
