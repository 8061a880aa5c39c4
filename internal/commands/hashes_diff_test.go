package commands_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Differential tests of the hash commands redis-server 7.0 has: fixed edge
// cases, each reply byte-compared (whole-hash replies of hashtable-encoded
// hashes as multisets, see hhDo), and the dirty, hit and miss counters
// compared after each group.

func TestHashesDiffBasics(t *testing.T) {
	d, _ := hhDiff(t)
	dc := newSkDirtyCheck(t, d)
	hhLines(t, d, `
HSET h a 1
HSET h a 2 b 3 c 4
HSET h a 1 b
HSET h
HSET h a
HMSET h x y
HMSET h x
HMSET h2 a 1 a 2 a 3
HGETALL h2
HSET h3 a 1 a 2
HLEN h3
HGETALL h
HKEYS h
HVALS h
HLEN h
HGET h a
HGET h zz
HGET nokey a
HMGET h a zz b x
HMGET nokey a b
HMGET h a
HEXISTS h a
HEXISTS h zz
HEXISTS nokey a
HSTRLEN h a
HSTRLEN h zz
HSTRLEN nokey a
HSETNX h a 9
HSETNX h new 9
HSETNX fresh a 1
HGET h new
HDEL h zz
HDEL h a zz b a
HDEL nokey a
HGETALL h
HDEL h c x new
EXISTS h
HGETALL h
HKEYS h
HVALS h
HLEN h
TYPE h2
OBJECT ENCODING h2
`)
	// Empty fields and values are fields and values.
	for _, c := range [][]string{
		{"HSET", "e", "", ""}, {"HGETALL", "e"}, {"HSTRLEN", "e", ""}, {"HEXISTS", "e", ""},
		{"HSET", "e", "", "x"}, {"HGET", "e", ""}, {"HSETNX", "e", "", "y"}, {"HINCRBY", "e", "", "1"},
		{"HSET", "e", "", ""}, {"HINCRBY", "e", "", "1"}, {"HINCRBYFLOAT", "e", "", "1"},
		{"HDEL", "e", ""}, {"EXISTS", "e"}, {"HMGET", "e", "", ""},
	} {
		hhDo(t, d, c...)
	}
	dc.check(t, d, "basics")
}

func TestHashesDiffWrongType(t *testing.T) {
	d, _ := hhDiff(t)
	dc := newSkDirtyCheck(t, d)
	hhLines(t, d, `
SET s v
HSET s a 1
HMSET s a 1
HSETNX s a 1
HGET s a
HMGET s a b
HGETALL s
HKEYS s
HVALS s
HDEL s a
HLEN s
HEXISTS s a
HSTRLEN s a
HINCRBY s a 1
HINCRBY s a x
HINCRBYFLOAT s a 1
HINCRBYFLOAT s a x
HRANDFIELD s
HRANDFIELD s 2
HRANDFIELD s 2 WITHVALUES
HRANDFIELD s 2 bad
HRANDFIELD s x
HSCAN s 0
HSCAN s x
HSCAN s 0 COUNT 0
GET s
HSET h a 1
GET h
INCR h
`)
	dc.check(t, d, "wrongtype")
}

func TestHashesDiffIncr(t *testing.T) {
	d, _ := hhDiff(t)
	dc := newSkDirtyCheck(t, d)
	hhLines(t, d, `
HINCRBY h a 1
HINCRBY h a -11
HINCRBY h a 0
HINCRBY h a x
HINCRBY h a 1.5
HINCRBY h a 9223372036854775808
HSET h big 9223372036854775807 small -9223372036854775808
HINCRBY h big 1
HINCRBY h big 0
HINCRBY h big -1
HINCRBY h small -1
HINCRBY h small 1
HINCRBY h big -9223372036854775808
HINCRBY h big 9223372036854775807
HSET h t abc sp " 1" z 007 p +5 e 1e3 f 1.0
HINCRBY h t 1
HINCRBY h z 1
HINCRBY h p 1
HINCRBY h e 1
HINCRBY h f 1
HGETALL h
HINCRBYFLOAT h t 1
HINCRBYFLOAT h e 1
HINCRBYFLOAT h f 1
HINCRBYFLOAT h z 1
HINCRBYFLOAT h p 1
HINCRBYFLOAT h big 1
HINCRBYFLOAT h small -1.5
HINCRBYFLOAT h n 1e30
HINCRBYFLOAT h n 1e30
HINCRBYFLOAT h m 0.1
HINCRBYFLOAT h m 0.2
HINCRBYFLOAT h m -0.3
HINCRBYFLOAT h q 3.0e3
HINCRBYFLOAT h q -1.5e-10
HINCRBYFLOAT h q 1e-300
HINCRBYFLOAT h r 1.7976931348623157e308
HINCRBYFLOAT h r 1.7976931348623157e308
HINCRBYFLOAT h r 1e4932
HINCRBYFLOAT h w 1e4933
HINCRBYFLOAT h w 1e-5000
HINCRBYFLOAT h w inf
HINCRBYFLOAT h w -inf
HINCRBYFLOAT h w +inf
HINCRBYFLOAT h w infinity
HINCRBYFLOAT h w nan
HINCRBYFLOAT h w abc
HINCRBYFLOAT h w 1_000
HINCRBYFLOAT h w 0x10
HINCRBYFLOAT h w 1e
HINCRBYFLOAT h w .5
HINCRBYFLOAT h w 5.
HINCRBYFLOAT h w -0
HINCRBYFLOAT h w 1.23456789012345678901234567890
HSET h i inf ni -inf nan nan
HINCRBYFLOAT h i 1
HINCRBYFLOAT h ni 1
HINCRBYFLOAT h nan 1
HINCRBY h i 1
HEXISTS h w
HGET h w
HGET h n
HGET h r
HSTRLEN h r
OBJECT ENCODING h
`)
	// Spaces and binary in operands and stored values.
	for _, v := range []string{"", " 1", "1 ", "\t1", "1\x00", "1e2", "-.5e1"} {
		hhDo(t, d, "HINCRBYFLOAT", "h2", "f", v)
		hhDo(t, d, "HINCRBY", "h2", "g", v)
		hhDo(t, d, "HSET", "h2", "v", v)
		hhDo(t, d, "HINCRBYFLOAT", "h2", "v", "1")
		hhDo(t, d, "HINCRBY", "h2", "v", "1")
	}
	hhDo(t, d, "HGETALL", "h2")
	dc.check(t, d, "incr")
}

// TestHashesDiffIncrFloatStream checks HINCRBYFLOAT's long-double sums and
// their formatting over random operands of every magnitude.
func TestHashesDiffIncrFloatStream(t *testing.T) {
	d, _ := hhDiff(t)
	g := newSkGen(71, 1)
	for i := 0; i < 600; i++ {
		var op string
		switch g.r.IntN(6) {
		case 0:
			op = strconv.Itoa(g.r.IntN(2000) - 1000)
		case 1:
			op = strconv.FormatFloat(g.r.NormFloat64()*1e6, 'g', -1, 64)
		case 2:
			op = strconv.FormatFloat(g.r.Float64(), 'f', g.r.IntN(20), 64)
		case 3:
			op = g.pick("1e30", "-1e30", "1e-30", "3.14159265358979323846", "0.1", "-0.1", "1e17", "123456789012345678")
		case 4:
			op = strconv.FormatFloat(g.r.NormFloat64(), 'e', g.r.IntN(17), 64)
		default:
			op = "-" + strconv.FormatFloat(g.r.ExpFloat64()*1e-5, 'f', 12, 64)
		}
		f := "f" + strconv.Itoa(g.r.IntN(4))
		hhDo(t, d, "HINCRBYFLOAT", "h", f, op)
		if i%50 == 0 {
			hhDo(t, d, "HGET", "h", f)
		}
	}
	hhDo(t, d, "HGETALL", "h")
}

func TestHashesDiffRandfield(t *testing.T) {
	d, _ := hhDiff(t)
	dc := newSkDirtyCheck(t, d)
	hhLines(t, d, `
HRANDFIELD nokey
HRANDFIELD nokey 0
HRANDFIELD nokey 5
HRANDFIELD nokey -5 WITHVALUES
HRANDFIELD nokey 5 x
HRANDFIELD nokey x
HSET h a 1 b 2 c 3
HRANDFIELD h 0
HRANDFIELD h 0 WITHVALUES
HRANDFIELD h 3
HRANDFIELD h 4
HRANDFIELD h 100
HRANDFIELD h 3 WITHVALUES
HRANDFIELD h 100 withvalues
HRANDFIELD h 9223372036854775807
HRANDFIELD h -9223372036854775808
HRANDFIELD h 9223372036854775808
HRANDFIELD h 4611686018427387904 WITHVALUES
HRANDFIELD h -4611686018427387904 WITHVALUES
HRANDFIELD h 4611686018427387903 WITHVALUES
HRANDFIELD h 1 withvalue
HRANDFIELD h 1 WITHVALUES x
HRANDFIELD h 1.5
HSET one only v
HRANDFIELD one
HRANDFIELD one 1
HRANDFIELD one -3
HRANDFIELD one -3 WITHVALUES
HRANDFIELD one 1 WITHVALUES
`)
	// Random picks: the shape is fixed, the elements come from the hash.
	for _, args := range [][]string{{"-5"}, {"2"}, {"-4", "WITHVALUES"}, {"2", "WITHVALUES"}} {
		a := servertest.MustStrings(t, d.A.Do(append([]string{"HRANDFIELD", "h"}, args...)...))
		r := servertest.MustStrings(t, d.R.Do(append([]string{"HRANDFIELD", "h"}, args...)...))
		if len(a) != len(r) {
			t.Errorf("HRANDFIELD h %v: %d elements, redis %d", args, len(a), len(r))
		}
		for i, s := range a {
			if len(args) == 2 && i%2 == 1 {
				continue
			}
			if s != "a" && s != "b" && s != "c" {
				t.Errorf("HRANDFIELD h %v gave %q", args, s)
			}
		}
	}
	dc.check(t, d, "randfield")
}

func TestHashesDiffScan(t *testing.T) {
	d, _ := hhDiff(t)
	dc := newSkDirtyCheck(t, d)
	hhLines(t, d, `
HSCAN nokey 0
HSCAN nokey 0 COUNT 0
HSCAN nokey 0 BAD
HSCAN nokey x
HSET h a 1 b 2 c 3 ab 4 ba 5
HSCAN h 0
HSCAN h 1
HSCAN h 12345
HSCAN h -1
HSCAN h 0x1
HSCAN h 18446744073709551615
HSCAN h 18446744073709551616
HSCAN h 0 MATCH a*
HSCAN h 0 MATCH *a
HSCAN h 0 MATCH * COUNT 1
HSCAN h 0 match [ab] count 100
HSCAN h 0 MATCH zz*
HSCAN h 0 COUNT 0
HSCAN h 0 COUNT -1
HSCAN h 0 COUNT x
HSCAN h 0 COUNT
HSCAN h 0 MATCH
HSCAN h 0 TYPE hash
HSCAN h 0 BAD
HSCAN h 0 COUNT 1 COUNT 2 MATCH a* MATCH b*
`)
	for _, c := range []string{"", " 0", "0 ", "+0", "-0", "0\x00x"} {
		hhDo(t, d, "HSCAN", "h", c)
	}
	hhDo(t, d, "HSCAN", "h", "0", "MATCH", "")
	dc.check(t, d, "scan")
}

// TestHashesDiffEncoding follows OBJECT ENCODING through the listpack to
// hashtable conversion, with small limits set by CONFIG SET on both
// servers: the entry count, long fields and values on every write command,
// limits lowered after the fact (applied at the next write), and the limits
// at zero.
func TestHashesDiffEncoding(t *testing.T) {
	d, _ := hhDiff(t)
	dc := newSkDirtyCheck(t, d)
	hhLimits(t, d, "4", "8")
	hhLines(t, d, `
HSET h a 1 b 2 c 3 d 4
OBJECT ENCODING h
HGETALL h
HSET h d 5
OBJECT ENCODING h
HSET h e 5
OBJECT ENCODING h
HDEL h a b c d
OBJECT ENCODING h
HSET v f 12345678
OBJECT ENCODING v
HSET v g 123456789
OBJECT ENCODING v
HSET k 12345678 x
OBJECT ENCODING k
HSET k 123456789 x
OBJECT ENCODING k
HSET m a 1 b 123456789
OBJECT ENCODING m
HMSET n a 1
HMSET n b 123456789
OBJECT ENCODING n
HSETNX o a 1
HSETNX o a 123456789
OBJECT ENCODING o
HSETNX o b 123456789
OBJECT ENCODING o
HSET p a 1
HINCRBY p a 99999999
OBJECT ENCODING p
HINCRBY p a 1
OBJECT ENCODING p
HSET q a 1
HINCRBY q longfieldname 1
OBJECT ENCODING q
HSET r a 1
HINCRBYFLOAT r a 0.0000001
OBJECT ENCODING r
HGET r a
HSET s a 1 b 2 c 3
HDEL s a
HSET s d 4 e 5
OBJECT ENCODING s
HKEYS s
HSET u a 1
OBJECT ENCODING u
`)
	hhLimits(t, d, "1", "2")
	hhLines(t, d, `
OBJECT ENCODING u
HGET u a
HSET u a 2
OBJECT ENCODING u
HSET u b 2
OBJECT ENCODING u
HSET w ab cd
OBJECT ENCODING w
HSET w ab cde
OBJECT ENCODING w
`)
	hhLimits(t, d, "0", "64")
	for _, c := range [][]string{
		{"HSET", "z0", "a", "1"}, {"OBJECT", "ENCODING", "z0"},
		{"HSET", "z1", "", ""}, {"OBJECT", "ENCODING", "z1"},
	} {
		hhDo(t, d, c...)
	}
	hhLimits(t, d, "128", "0")
	for _, c := range [][]string{
		{"HSET", "y0", "", ""}, {"OBJECT", "ENCODING", "y0"},
		{"HSET", "y0", "", "x"}, {"OBJECT", "ENCODING", "y0"},
		{"HSET", "y1", "a", ""}, {"OBJECT", "ENCODING", "y1"},
	} {
		hhDo(t, d, c...)
	}
	dc.check(t, d, "encoding")
	// A big hash both ways: 1000 fields, then all but a few deleted (the
	// encoding stays hashtable).
	hhLimits(t, d, "512", "64")
	args := []string{"HSET", "big"}
	for i := 0; i < 1000; i++ {
		args = append(args, "field:"+strconv.Itoa(i), strings.Repeat("v", i%70))
	}
	hhDo(t, d, args...)
	hhLines(t, d, `
OBJECT ENCODING big
HLEN big
HGET big field:999
HSTRLEN big field:69
HGETALL big
HKEYS big
HVALS big
HRANDFIELD big 5000
HRANDFIELD big 5000 WITHVALUES
`)
	del := []string{"HDEL", "big"}
	for i := 3; i < 1000; i++ {
		del = append(del, "field:"+strconv.Itoa(i))
	}
	hhDo(t, d, del...)
	hhLines(t, d, `
OBJECT ENCODING big
HGETALL big
HLEN big
`)
	dc.check(t, d, "big")
}

// TestHashesDiffBigValues stores values of 1 KB to 1 MB, binary fields and
// values, and checks they come back whole.
func TestHashesDiffBigValues(t *testing.T) {
	d, _ := hhDiff(t)
	for _, n := range []int{1000, 65535, 65536, 1 << 20} {
		v := strings.Repeat("x", n-1) + "\xff"
		hhDo(t, d, "HSET", "h", "f"+strconv.Itoa(n), v)
		hhDo(t, d, "HSTRLEN", "h", "f"+strconv.Itoa(n))
		hhDo(t, d, "HGET", "h", "f"+strconv.Itoa(n))
	}
	hhDo(t, d, "HSET", "b", "\x00\r\n", "\x00\xfe\r\n", "\xff", "")
	hhDo(t, d, "HGETALL", "b")
	hhDo(t, d, "HSCAN", "b", "0")
	hhDo(t, d, "HMGET", "b", "\x00\r\n", "\xff", "\x00")
	hhDo(t, d, "OBJECT", "ENCODING", "h")
	hhDo(t, d, "OBJECT", "ENCODING", "b")
}

// TestHashesDiffRESP3 checks the RESP3 shapes: HGETALL as a map, nulls,
// HRANDFIELD WITHVALUES as pairs.
func TestHashesDiffRESP3(t *testing.T) {
	d, _ := hhDiff(t)
	d.A.Do("HELLO", "3")
	d.R.Do("HELLO", "3")
	dc := newSkDirtyCheck(t, d)
	hhLines(t, d, `
HGETALL nokey
HKEYS nokey
HGET nokey a
HMGET nokey a b
HRANDFIELD nokey
HRANDFIELD nokey 3 WITHVALUES
HSCAN nokey 0
HSET h a 1 b 2
HGETALL h
HGET h zz
HMGET h a zz
HRANDFIELD h 5 WITHVALUES
HRANDFIELD h 5
HRANDFIELD h 0 WITHVALUES
HRANDFIELD one
HSET one f v
HRANDFIELD one -2 WITHVALUES
HRANDFIELD one 1 WITHVALUES
HINCRBYFLOAT h c 1.5
HSCAN h 0
`)
	dc.check(t, d, "resp3")
}

// TestHashesDiffCommandInfo compares the table entries of the hash commands
// redis-server 7.0 has, through COMMAND INFO.
func TestHashesDiffCommandInfo(t *testing.T) {
	d, _ := hhDiff(t)
	for _, n := range []string{
		"hset", "hsetnx", "hget", "hmget", "hmset", "hgetall", "hdel", "hlen", "hexists",
		"hkeys", "hvals", "hincrby", "hincrbyfloat", "hstrlen", "hrandfield", "hscan",
	} {
		d.Do("COMMAND", "INFO", n)
	}
}

// TestHashesDiffArity checks the argument counts.
func TestHashesDiffArity(t *testing.T) {
	d, _ := hhDiff(t)
	hhLines(t, d, `
HSET
HSET h
HSET h a
HSETNX h a
HGET h
HMGET h
HDEL h
HLEN
HLEN h x
HEXISTS h
HSTRLEN h
HINCRBY h a
HINCRBYFLOAT h a
HRANDFIELD
HSCAN h
HGETALL
HKEYS h x
HVALS
`)
}
