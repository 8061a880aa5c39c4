package commands_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Differential tests of the bitmap family against redis-server: fixed edge
// cases here, random streams in bitmaps_stream_test.go. Every reply is
// byte-compared; GET and OBJECT ENCODING after writes compare the values
// and their encodings, INFO deltas the dirty counter and hit statistics.

// bmDiff starts an Abacus instance and pairs it with the shared
// redis-server, restoring the settings these tests depend on there.
func bmDiff(t *testing.T, opts ...servertest.Option) (*servertest.Diff, *servertest.Instance) {
	t.Helper()
	inst := servertest.Start(t, opts...)
	d := servertest.NewDiff(t, inst)
	if r := d.R.Do("CONFIG", "SET", "proto-max-bulk-len", "536870912", "hll-sparse-max-bytes", "3000"); r != "+OK\r\n" {
		t.Fatalf("resetting redis-server's config: %q", r)
	}
	return d, inst
}

// bmInfoField returns one numeric field of INFO from a raw connection.
func bmInfoField(t *testing.T, c *servertest.Conn, field string) int64 {
	t.Helper()
	reply := c.Do("INFO", "all")
	for _, line := range strings.Split(reply, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %q", field, v)
			}
			return n
		}
	}
	t.Fatalf("INFO has no %s", field)
	return 0
}

// bmCounters are the INFO fields whose changes must agree.
var bmCounters = []string{"rdb_changes_since_last_save", "keyspace_hits", "keyspace_misses"}

// bmSnap reads bmCounters on both servers.
func bmSnap(t *testing.T, d *servertest.Diff) (a, r []int64) {
	t.Helper()
	for _, f := range bmCounters {
		a = append(a, bmInfoField(t, d.A, f))
		r = append(r, bmInfoField(t, d.R, f))
	}
	return a, r
}

// bmCheckDeltas fails when a counter moved differently on the two servers
// since the snapshot.
func bmCheckDeltas(t *testing.T, d *servertest.Diff, what string, a0, r0 []int64) {
	t.Helper()
	a1, r1 := bmSnap(t, d)
	for i, f := range bmCounters {
		if da, dr := a1[i]-a0[i], r1[i]-r0[i]; da != dr {
			t.Errorf("%s: %s moved by %d on abacus, %d on redis", what, f, da, dr)
		}
	}
}

// bmLinesCounted runs each line through the diff and also checks that
// each line moves the dirty counter and the hit statistics as Redis does.
func bmLinesCounted(t *testing.T, d *servertest.Diff, text string) {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		a0, r0 := bmSnap(t, d)
		d.Do(strings.Fields(line)...)
		bmCheckDeltas(t, d, line, a0, r0)
	}
}

func TestBitmapsDiffSetGetBit(t *testing.T) {
	d, _ := bmDiff(t)
	bmLinesCounted(t, d, `
SETBIT k 7 1
GET k
OBJECT ENCODING k
SETBIT k 7 1
SETBIT k 7 0
SETBIT k 7 0
SETBIT k 100 0
STRLEN k
GET k
SETBIT k 0 1
GETBIT k 0
GETBIT k 1
GETBIT k 7
GETBIT k 100
GETBIT k 101
GETBIT k 1000000
GETBIT missing 0
GETBIT missing 4294967295
SETBIT k 3 2
SETBIT k 3 -1
SETBIT k 3 01
SETBIT k 3 +1
SETBIT k 3 1.0
SETBIT k 3 abc
SETBIT k 3
SETBIT k -1 1
SETBIT k abc 1
SETBIT k 1.5 1
SETBIT k 4294967296 1
SETBIT k 9223372036854775807 1
SETBIT k 99999999999999999999 1
GETBIT k -1
GETBIT k 4294967296
GETBIT k x
SETBIT k -1 2
GETBIT missing -1
SET n 123
SETBIT n 0 0
OBJECT ENCODING n
GET n
SET n2 -5
SETBIT n2 7 0
GET n2
OBJECT ENCODING n2
SET n3 42
GETBIT n3 2
GETBIT n3 3
OBJECT ENCODING n3
SETBIT n3 2 0
GET n3
OBJECT ENCODING n3
SET e abc
SETBIT e 6 1
GET e
OBJECT ENCODING e
SET e2 abc
SETBIT e2 2 1
OBJECT ENCODING e2
SET e3 abcdefghij
SETBIT e3 100 1
GET e3
STRLEN e3
SET e4 ""
SETBIT e4 0 0
GET e4
SET ttl v EXAT 4102444800
SETBIT ttl 1 1
EXPIRETIME ttl
`)
}

func TestBitmapsDiffSetbitLimit(t *testing.T) {
	d, _ := bmDiff(t)
	// Offsets are limited by proto-max-bulk-len; with its minimum (1 MB)
	// the boundary is cheap to reach.
	d.Lines(`
CONFIG SET proto-max-bulk-len 1048576
SETBIT big 8388608 1
SETBIT big 8388607 1
STRLEN big
GETBIT big 8388607
GETBIT big 8388608
BITCOUNT big
BITPOS big 1
BITFIELD big GET u8 8388607
BITFIELD big GET u8 8388608
BITFIELD big SET u8 8388607 255
STRLEN big
BITFIELD big SET i64 #131071 -1
BITFIELD big SET i64 #131072 -1
BITFIELD big GET u8 #1048575
BITFIELD big GET u8 #1048576
CONFIG SET proto-max-bulk-len 536870912
`)
}

func TestBitmapsDiffBitcount(t *testing.T) {
	d, _ := bmDiff(t)
	bmLinesCounted(t, d, `
SET s foobar
BITCOUNT s
BITCOUNT s 0 0
BITCOUNT s 1 1
BITCOUNT s 0 -1
BITCOUNT s -1 -1
BITCOUNT s -2 -1
BITCOUNT s -1 -2
BITCOUNT s -100 -1
BITCOUNT s -100 -200
BITCOUNT s 0 100
BITCOUNT s 5 100
BITCOUNT s 6 100
BITCOUNT s 100 200
BITCOUNT s 3 1
BITCOUNT s -1 0
BITCOUNT s 0 -100
BITCOUNT s 1 -100
BITCOUNT s -100 100
BITCOUNT s 0 0 BYTE
BITCOUNT s 0 0 byte
BITCOUNT s 0 0 BIT
BITCOUNT s 1 1 bit
BITCOUNT s 5 30 BIT
BITCOUNT s 0 47 BIT
BITCOUNT s 0 48 BIT
BITCOUNT s -1 -1 BIT
BITCOUNT s -8 -1 BIT
BITCOUNT s -9 -3 BIT
BITCOUNT s -3 -9 BIT
BITCOUNT s -100 -1 BIT
BITCOUNT s 7 7 BIT
BITCOUNT s 9 14 BIT
BITCOUNT s 47 47 BIT
BITCOUNT s 48 48 BIT
BITCOUNT s 0 9223372036854775807 BIT
BITCOUNT s -9223372036854775808 9223372036854775807 BIT
BITCOUNT s -9223372036854775808 -9223372036854775808
BITCOUNT s 0 0 BITS
BITCOUNT s 0 0 foo
BITCOUNT s -1 -5 foo
BITCOUNT s 0
BITCOUNT s 0 1 BIT extra
BITCOUNT s a 1
BITCOUNT s 1 a
BITCOUNT s 1.5 2
BITCOUNT missing
BITCOUNT missing 0
BITCOUNT missing 0 1 BIT
BITCOUNT missing a b
BITCOUNT missing 0 1 foo bar
SET n 1234567
BITCOUNT n
BITCOUNT n 1 2
BITCOUNT n 3 20 BIT
OBJECT ENCODING n
SET empty ""
BITCOUNT empty
BITCOUNT empty 0 0
BITCOUNT empty 0 -1 BIT
BITCOUNT empty -1 -1
`)
}

func TestBitmapsDiffBitpos(t *testing.T) {
	d, _ := bmDiff(t)
	// ones is all ones, z all zeros; s mixes.
	d.Do("SET", "ones", "\xff\xff\xff")
	d.Do("SET", "z", "\x00\x00\x00")
	d.Do("SET", "s", "\x00\xff\xf0")
	d.Do("SET", "t", "\xff\xf0\x00")
	bmLinesCounted(t, d, `
BITPOS ones 0
BITPOS ones 1
BITPOS ones 0 0
BITPOS ones 0 1
BITPOS ones 0 -1
BITPOS ones 0 0 -1
BITPOS ones 0 0 2
BITPOS ones 0 0 100
BITPOS ones 0 1 1
BITPOS ones 0 0 -1 BIT
BITPOS ones 0 0 23 BIT
BITPOS ones 0 3 BIT
BITPOS ones 0 100
BITPOS ones 0 100 BIT
BITPOS ones 1 100
BITPOS ones 0 -100
BITPOS ones 0 2 1
BITPOS ones 0 -1 -2
BITPOS z 1
BITPOS z 0
BITPOS z 1 0 -1
BITPOS z 1 1
BITPOS z 0 2
BITPOS z 0 2 2
BITPOS z 0 5 9 BIT
BITPOS s 1
BITPOS s 0
BITPOS s 1 2
BITPOS s 0 1
BITPOS s 0 1 1
BITPOS s 0 1 -1
BITPOS s 1 0 0
BITPOS s 1 -1
BITPOS s 1 -2 -2
BITPOS s 0 -2 -1
BITPOS s 1 7 15 BIT
BITPOS s 1 9 15 BIT
BITPOS s 0 9 15 BIT
BITPOS s 0 9 BIT
BITPOS s 0 8 19 BIT
BITPOS s 0 8 20 BIT
BITPOS s 0 8 23 BIT
BITPOS s 1 20 23 BIT
BITPOS s 1 -4 -1 BIT
BITPOS s 0 -4 -1 BIT
BITPOS s 0 -4 BIT
BITPOS s 1 -100 -1 BIT
BITPOS s 1 -100 -90 BIT
BITPOS s 0 -100 -90
BITPOS s 1 10 5 BIT
BITPOS s 1 3 1
BITPOS s 0 0 0 byte
BITPOS s 0 0 0 Bit
BITPOS s 1 0 0 bits
BITPOS s 1 0 0 BIT extra
BITPOS s 1 x
BITPOS s 1 0 x
BITPOS s 1 0 x BIT
BITPOS s 1 x 0 nope
BITPOS s 1 0 0 nope
BITPOS s 2
BITPOS s -1
BITPOS s x
BITPOS s 1.0
BITPOS t 0
BITPOS t 0 0
BITPOS t 0 1
BITPOS t 0 0 0
BITPOS t 0 0 11 BIT
BITPOS t 0 0 12 BIT
BITPOS t 0 0 -1 BIT
BITPOS t 1 12 BIT
BITPOS missing 0
BITPOS missing 1
BITPOS missing 0 5
BITPOS missing 1 5 10 BIT
BITPOS missing 1 x y z
BITPOS missing 1 1 2 3 4 5
BITPOS missing 2
BITPOS missing x
SET n 10
BITPOS n 1
BITPOS n 0
BITPOS n 1 1
BITPOS n 0 8 BIT
OBJECT ENCODING n
SET empty ""
BITPOS empty 0
BITPOS empty 1
BITPOS empty 0 0
BITPOS empty 0 0 0 BIT
`)
}

func TestBitmapsDiffBitop(t *testing.T) {
	d, _ := bmDiff(t)
	d.Do("SET", "a", "\xf0\x0f\xaa\x55")
	d.Do("SET", "b", "\xff\x00")
	d.Do("SET", "c", "\x3c\x3c\x3c\x3c\x3c\x3c")
	d.Do("SET", "long", strings.Repeat("\x5a\xa5\x0f", 40))
	d.Do("SET", "long2", strings.Repeat("\x33\xcc\x77\x01", 33))
	bmLinesCounted(t, d, `
BITOP AND d a b
GET d
OBJECT ENCODING d
BITOP OR d a b
GET d
BITOP XOR d a b c
GET d
BITOP NOT d a
GET d
BITOP and d a c
GET d
BITOP Or d a missing
GET d
BITOP XOR d missing a
GET d
BITOP AND d a missing
GET d
BITOP AND d a
GET d
BITOP NOT d missing
EXISTS d
BITOP OR d missing missing2
EXISTS d
BITOP OR d missing
BITOP AND d a long long2
GET d
BITOP OR d long long2 a b c
GET d
BITOP XOR d long2 long
GET d
BITOP NOT d long
GET d
BITOP AND d long long2
GET d
BITOP NOT d a b
BITOP NOT d
BITOP NAND d a b
BITOP d a b
BITOP ANDX d a
BITOP AND d
BITOP AND a a a
GET a
SET n 255
BITOP AND d n a
GET d
BITOP NOT d n
GET d
OBJECT ENCODING n
SET empty ""
BITOP OR d empty
EXISTS d
BITOP AND d empty a
GET d
SET d x
BITOP OR d empty
EXISTS d
SET d x EXAT 4102444800
BITOP OR d a
EXPIRETIME d
`)
}

func TestBitmapsDiffBitfield(t *testing.T) {
	d, _ := bmDiff(t)
	bmLinesCounted(t, d, `
BITFIELD k
BITFIELD k GET u8 0
EXISTS k
BITFIELD k SET u8 0 255
GET k
OBJECT ENCODING k
BITFIELD k GET u8 0 GET i8 0 GET u4 0 GET i4 4 GET u1 7 GET i1 7
BITFIELD k SET i8 0 -128 GET u8 0 GET i8 0
BITFIELD k INCRBY u8 0 1 INCRBY u8 0 -1 INCRBY u8 0 0
BITFIELD k SET u8 0 5 SET u8 0 5
BITFIELD k INCRBY u8 0 0
BITFIELD k SET u8 100 0
BITFIELD k SET u8 100 0
STRLEN k
BITFIELD k GET u8 1000
BITFIELD k GET i64 0 GET u63 1 GET i64 3 GET u63 7
BITFIELD k SET i64 5 -1 GET u63 6 GET i64 5 GET u63 5
BITFIELD k SET u63 70 9223372036854775807 GET u63 70 GET i64 69
GET k
BITFIELD k GET u8 #1 GET u8 #2 SET u8 #3 200 GET u8 24
BITFIELD k GET i5 #3 GET u3 #7
BITFIELD k GET u8 #
BITFIELD k GET u8 #-1
BITFIELD k GET u8 ##1
BITFIELD k GET u8 #9223372036854775807
BITFIELD k GET u8 #1152921504606846977
BITFIELD k GET i64 #144115188075855873
BITFIELD k GET u8 1#
BITFIELD k GET u8 -1
BITFIELD k GET u8 x
BITFIELD k GET u8 1.5
BITFIELD k GET u64 0
BITFIELD k GET i65 0
BITFIELD k GET i0 0
BITFIELD k GET u0 0
BITFIELD k GET x8 0
BITFIELD k GET I8 0
BITFIELD k GET U8 0
BITFIELD k GET u 0
BITFIELD k GET i 0
BITFIELD k GET u08 0
BITFIELD k GET u+8 0
BITFIELD k GET u-8 0
BITFIELD k GET u8
BITFIELD k GET
BITFIELD k SET u8 0
BITFIELD k INCRBY u8 0
BITFIELD k SET u8 0 x
BITFIELD k INCRBY u8 0 1.5
BITFIELD k SET u8 0 99999999999999999999
BITFIELD k FOO u8 0
BITFIELD k GET u8 0 FOO
BITFIELD k OVERFLOW
BITFIELD k OVERFLOW BAD GET u8 0
BITFIELD k OVERFLOW wrap
BITFIELD k OVERFLOW SAT GET u8 0
BITFIELD k GET u8 0 OVERFLOW FAIL
BITFIELD k SET u8 0 1 GET u64 0
BITFIELD k SET u8 0 1 GET u8 0 OVERFLOW nope
GET k
BITFIELD_RO k
BITFIELD_RO k GET u8 0 GET i16 3
BITFIELD_RO k SET u8 0 1
BITFIELD_RO k GET u8 0 INCRBY u8 0 1
BITFIELD_RO k OVERFLOW FAIL GET u8 0
BITFIELD_RO k OVERFLOW FAIL
BITFIELD_RO k GET u8 0 FOO
BITFIELD_RO k SET u8 0 x
BITFIELD_RO k SET u64 0 1
BITFIELD_RO missing GET u8 0
BITFIELD_RO missing SET u8 0 1
EXISTS missing
SET n 1234
BITFIELD n GET u8 0 GET i16 4
OBJECT ENCODING n
BITFIELD_RO n GET u32 0
OBJECT ENCODING n
BITFIELD n SET u8 0 57
GET n
OBJECT ENCODING n
SET n2 99
BITFIELD n2 OVERFLOW FAIL SET u2 0 7
OBJECT ENCODING n2
GET n2
BITFIELD f OVERFLOW FAIL SET u8 100 300
GET f
BITFIELD f OVERFLOW FAIL SET u8 100 300 SET u8 0 1 INCRBY u8 0 1
BITFIELD g INCRBY u8 0 0
BITFIELD g INCRBY u8 0 0 INCRBY u8 0 0
BITFIELD h SET u8 0 0 SET u8 8 0 GET u8 0
`)
}

func TestBitmapsDiffBitfieldOverflow(t *testing.T) {
	d, _ := bmDiff(t)
	// Each overflow mode on signed and unsigned fields of several widths at
	// odd offsets that straddle bytes, with SET and INCRBY crossing both
	// ends of the range, and values already out of range for the field.
	var lines []string
	for _, mode := range []string{"WRAP", "SAT", "FAIL"} {
		for _, typ := range []string{"u1", "i1", "u3", "i3", "u7", "i8", "u13", "i17", "u31", "i32", "u63", "i63", "i64"} {
			for _, off := range []string{"0", "5", "13", "#3"} {
				key := "ov:" + mode + ":" + typ + ":" + off
				for _, v := range []string{"0", "1", "-1", "3", "-4", "100", "-100", "127", "-128", "255",
					"65535", "-65536", "2147483647", "-2147483648", "4294967295",
					"9223372036854775807", "-9223372036854775808", "-9223372036854775807", "4611686018427387904"} {
					lines = append(lines,
						"BITFIELD "+key+" OVERFLOW "+mode+" SET "+typ+" "+off+" "+v+" GET "+typ+" "+off,
						"BITFIELD "+key+" OVERFLOW "+mode+" INCRBY "+typ+" "+off+" "+v,
						"BITFIELD "+key+" OVERFLOW "+mode+" INCRBY "+typ+" "+off+" "+v+" INCRBY "+typ+" "+off+" "+v)
				}
				lines = append(lines, "GET "+key)
			}
		}
	}
	// The mode applies to the operations after it, until changed.
	lines = append(lines,
		"BITFIELD m SET u8 0 250 INCRBY u8 0 10 OVERFLOW SAT INCRBY u8 0 300 OVERFLOW FAIL INCRBY u8 0 1 OVERFLOW WRAP INCRBY u8 0 1",
		"BITFIELD m OVERFLOW FAIL SET i4 3 8 SET i4 3 7 OVERFLOW SAT SET i4 3 8 SET u4 3 -1 OVERFLOW WRAP SET u4 3 -1",
		"GET m")
	a0, r0 := bmSnap(t, d)
	for _, l := range lines {
		d.Do(strings.Fields(l)...)
	}
	bmCheckDeltas(t, d, "overflow table", a0, r0)
	t.Logf("%d overflow cases", len(lines))
}

func TestBitmapsDiffMisc(t *testing.T) {
	d, _ := bmDiff(t)
	// Arity, case and NUL handling in option words.
	d.Lines(`
SETBIT
SETBIT k
SETBIT k 1
SETBIT k 1 1 1
GETBIT k
GETBIT k 1 1
BITCOUNT
BITPOS k
BITOP
BITOP AND
BITOP AND d
BITFIELD
BITFIELD_RO
setbit K 1 1
GeTbIt K 1
BiTcOuNt K 0 -1 bIt
`)
	d.Do("SET", "s", "abc")
	d.Do("BITCOUNT", "s", "0", "-1", "bit\x00junk")
	d.Do("BITCOUNT", "s", "0", "-1", "bi\x00t")
	d.Do("BITPOS", "s", "1", "0", "-1", "byte\x00")
	d.Do("BITOP", "and\x00x", "d", "s")
	d.Do("GET", "d")
	d.Do("BITOP", "\x00", "d", "s")
	d.Do("BITFIELD", "s", "get\x00", "u8", "0")
	d.Do("BITFIELD", "s", "GET", "u8\x00junk", "0")
	d.Do("BITFIELD", "s", "GET", "u8", "0\x00")
	d.Do("BITFIELD", "s", "OVERFLOW", "sat\x00x", "INCRBY", "u8", "0", "1000")
	d.Do("SETBIT", "s", "1\x00", "1")
	d.Do("SETBIT", "s", "1", "1\x00")
	d.Do("BITOP", "\u017fne", "d", "s") // U+017F folds to s in Unicode, not in ASCII
}

func TestBitmapsDiffBitop82(t *testing.T) {
	// DIFF, DIFF1, ANDOR and ONE came with Redis 8.2; redis-server 7.0
	// answers them with a syntax error, so they are checked against a
	// model of Redis 8.2's documented definitions instead (see
	// bitmaps_test.go for the computed results). Here: only the error
	// texts Redis 8.2 gives before looking at any key.
	inst := servertest.Start(t)
	c := inst.Raw(t)
	for _, tc := range []struct{ cmd, want string }{
		{"BITOP DIFF d a", "-ERR BITOP DIFF must be called with at least two source keys.\r\n"},
		{"BITOP diff1 d a", "-ERR BITOP DIFF1 must be called with at least two source keys.\r\n"},
		{"BITOP AndOr d a", "-ERR BITOP ANDOR must be called with at least two source keys.\r\n"},
		{"BITOP ONE d a", ":0\r\n"},
		{"BITOP ONE d", "-ERR wrong number of arguments for 'bitop' command\r\n"},
		{"BITOP NOT d a b", "-ERR BITOP NOT must be called with a single source key.\r\n"},
		{"BITOP DIFF2 d a b", "-ERR syntax error\r\n"},
	} {
		if got := c.Do(strings.Fields(tc.cmd)...); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

func TestBitmapsDiffWrongType(t *testing.T) {
	d, _ := bmDiff(t)
	bmLinesCounted(t, d, `
RPUSH l a
HSET h f v
SADD set a
SET s abc
SET bad notanhll
SETBIT l 0 1
SETBIT l x 1
GETBIT l 0
BITCOUNT h
BITCOUNT h 0 1
BITCOUNT h x y
BITPOS set 0
BITPOS set 1 x
BITPOS set 2
BITOP AND d s l
BITOP AND d l s
BITOP AND d missing l
BITOP AND l s
TYPE l
GET l
BITFIELD h GET u8 0
BITFIELD h SET u8 0 1
BITFIELD h
BITFIELD_RO h GET u8 0
BITFIELD_RO h
BITFIELD h SET u8 0 x
BITFIELD h FOO
PFADD h a
PFADD h
PFCOUNT h
PFCOUNT h bad
PFCOUNT bad h
PFCOUNT missing h
PFMERGE h
PFMERGE d h
PFMERGE bad h
PFMERGE h bad
`)
}

// TestBitmapsDiffCommandInfo: the table entries of the commands whose key
// spec the table can express (one spec, no notes) answer COMMAND INFO as
// redis-server does; the others are checked for their keys.
func TestBitmapsDiffCommandInfo(t *testing.T) {
	d, _ := bmDiff(t)
	for _, name := range []string{"setbit", "getbit", "bitcount", "bitpos", "bitfield_ro", "pfadd"} {
		d.Do("COMMAND", "INFO", name)
	}
	d.Lines(`
COMMAND GETKEYS bitop and d a b c
COMMAND GETKEYS bitfield k get u8 0
COMMAND GETKEYS pfcount a b c
COMMAND GETKEYS pfmerge d a b
COMMAND GETKEYSANDFLAGS setbit k 1 1
COMMAND GETKEYSANDFLAGS bitcount k
COMMAND GETKEYSANDFLAGS pfadd k a
`)
}
