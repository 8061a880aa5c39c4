package commands_test

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Differential tests of the list family: fixed edge cases, then random
// streams under several list-max-listpack-size settings, every reply
// byte-compared with redis-server's.

// lsDiff starts an instance and a differential pair, and puts the shared
// redis-server's list settings back at the end.
func lsDiff(t *testing.T) (*servertest.Diff, *servertest.Instance) {
	t.Helper()
	d, inst := servertest.StartDiff(t)
	t.Cleanup(func() {
		c := servertest.Dial(t, d.R.Addr)
		c.Do("CONFIG", "SET", "list-max-listpack-size", "-2")
	})
	return d, inst
}

// lsLines runs commands one per line through the differential pair and
// returns how many it compared.
func lsLines(t *testing.T, d *servertest.Diff, text string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		d.Do(strings.Fields(line)...)
		n++
	}
	return n
}

const lsPushPopCases = `
LPUSH l a b c
RPUSH l d e
LRANGE l 0 -1
LLEN l
LLEN nokey
TYPE l
OBJECT ENCODING l
LPUSHX nokey a
RPUSHX nokey a b
EXISTS nokey
LPUSHX l x y
RPUSHX l z
LRANGE l 0 -1
LPUSH
LPUSH l
RPUSHX l
LPOP l
RPOP l
LPOP l 2
RPOP l 2
LPOP l 0
RPOP l 0
LPOP l -1
RPOP l -9223372036854775808
LPOP l abc
LPOP l 1.5
LPOP l 1 2
LPOP
LPOP nokey
RPOP nokey
LPOP nokey 2
LPOP nokey 0
LPOP nokey -1
LPOP nokey abc
LRANGE l 0 -1
LPOP l 100
EXISTS l
RPUSH l 1 2 3
RPOP l 9223372036854775807
EXISTS l
LPUSH l 10
LPOP l
EXISTS l
RPUSH l "" "" x
LRANGE l 0 -1
LPOP l 1
RPOP l 1
LLEN l
`

const lsIndexCases = `
RPUSH l a b c d e f g
LINDEX l 0
LINDEX l 3
LINDEX l 6
LINDEX l 7
LINDEX l -1
LINDEX l -7
LINDEX l -8
LINDEX l 9223372036854775807
LINDEX l -9223372036854775808
LINDEX l abc
LINDEX l 1.0
LINDEX nokey 0
LINDEX nokey abc
LRANGE l 0 0
LRANGE l -1 -1
LRANGE l -100 100
LRANGE l 5 2
LRANGE l 100 200
LRANGE l -3 -1
LRANGE l -3 2
LRANGE l 2 -3
LRANGE l 6 6
LRANGE l 7 7
LRANGE l -9223372036854775808 9223372036854775807
LRANGE l 9223372036854775807 -9223372036854775808
LRANGE l abc 1
LRANGE l 1 abc
LRANGE nokey 0 -1
LRANGE nokey abc 1
LSET l 0 A
LSET l -1 G
LSET l 3 D
LSET l 7 x
LSET l -8 x
LSET l abc x
LSET l 9223372036854775807 x
LSET nokey 0 x
LSET nokey abc x
LSET l 1 ""
LRANGE l 0 -1
LINSERT l BEFORE A X
LINSERT l after A Y
LINSERT l AFTER G Z
LINSERT l before nosuch z
LINSERT l middle A z
LINSERT l BEFORE "" empty
LINSERT nokey before a b
LINSERT nokey middle a b
LRANGE l 0 -1
LINSERT l
`

const lsRemTrimCases = `
RPUSH l a b a c a d a
LREM l 1 a
LRANGE l 0 -1
LREM l -1 a
LRANGE l 0 -1
LREM l 0 a
LRANGE l 0 -1
LREM l 0 nosuch
LREM l abc b
LREM nokey 1 a
LREM nokey abc a
LREM l 0 b
LREM l 0 c
LREM l 0 d
EXISTS l
RPUSH l x x x x x
LREM l -9223372036854775808 x
EXISTS l
RPUSH l x y x y x
LREM l 9223372036854775807 y
LRANGE l 0 -1
RPUSH t 0 1 2 3 4 5 6 7 8 9
LTRIM t 1 -2
LRANGE t 0 -1
LTRIM t -3 100
LRANGE t 0 -1
LTRIM t 0 0
LRANGE t 0 -1
LTRIM t abc 1
LTRIM t 1 abc
LTRIM nokey 0 1
LTRIM nokey abc 1
EXISTS nokey
LTRIM t 1 0
EXISTS t
RPUSH t a b c
LTRIM t 5 10
EXISTS t
RPUSH t a b c
LTRIM t -1 -2
EXISTS t
RPUSH t a b c
LTRIM t -100 -100
EXISTS t
RPUSH t a b c
LTRIM t -9223372036854775808 9223372036854775807
LRANGE t 0 -1
`

const lsPosCases = `
RPUSH l a b c a b c a x a
LPOS l a
LPOS l c
LPOS l nosuch
LPOS l a RANK 1
LPOS l a RANK 2
LPOS l a RANK 4
LPOS l a RANK 5
LPOS l a RANK -1
LPOS l a RANK -2
LPOS l a RANK -5
LPOS l a RANK 0
LPOS l a RANK abc
LPOS l a RANK 9223372036854775807
LPOS l a RANK -9223372036854775808
LPOS l a RANK -9223372036854775808 COUNT 2
LPOS l a RANK -9223372036854775808 COUNT 0
LPOS l a COUNT 0
LPOS l a COUNT 1
LPOS l a COUNT 2
LPOS l a COUNT 100
LPOS l nosuch COUNT 0
LPOS l a COUNT -1
LPOS l a COUNT abc
LPOS l a MAXLEN 0
LPOS l a MAXLEN 1
LPOS l c MAXLEN 2
LPOS l c MAXLEN 3
LPOS l a MAXLEN -1
LPOS l a MAXLEN abc
LPOS l a RANK 2 COUNT 2
LPOS l a RANK -2 COUNT 2
LPOS l a RANK -1 COUNT 0 MAXLEN 3
LPOS l a COUNT 0 MAXLEN 4 RANK 2
LPOS l a RANK 1 RANK 2
LPOS l a COUNT 1 COUNT 0
LPOS l a rank 2 count 0 maxlen 0
LPOS l a RANK
LPOS l a COUNT
LPOS l a MAXLEN
LPOS l a FOO 1
LPOS l a RANK 0 FOO
LPOS l a FOO RANK 0
LPOS l a COUNT -1 RANK 0
LPOS l a RANK 0 COUNT -1
LPOS nokey a
LPOS nokey a COUNT 0
LPOS nokey a COUNT 2
LPOS nokey a RANK 0
LPOS nokey a RANK 2
LPOS l
`

const lsMoveCases = `
RPUSH src a b c
LMOVE src dst LEFT RIGHT
LMOVE src dst RIGHT LEFT
LRANGE src 0 -1
LRANGE dst 0 -1
LMOVE src src LEFT RIGHT
LRANGE src 0 -1
LMOVE src src RIGHT LEFT
LRANGE src 0 -1
LMOVE src src left left
LMOVE src src right right
LRANGE src 0 -1
LMOVE src dst UP LEFT
LMOVE src dst LEFT DOWN
LMOVE nokey dst LEFT DOWN
LMOVE nokey dst LEFT RIGHT
LMOVE src dst LEFT LEFT
EXISTS src
LRANGE dst 0 -1
RPOPLPUSH dst dst
LRANGE dst 0 -1
RPOPLPUSH dst other
RPOPLPUSH dst other
RPOPLPUSH dst other
EXISTS dst
RPOPLPUSH dst other
LRANGE other 0 -1
RPUSH one x
RPOPLPUSH one one
LRANGE one 0 -1
LMOVE one one LEFT RIGHT
LRANGE one 0 -1
LMOVE one new RIGHT RIGHT
EXISTS one new
RPUSH m1 a b c d e
RPUSH m2 x y
LMPOP 1 m1 LEFT
LMPOP 1 m1 RIGHT
LMPOP 2 nokey m1 LEFT COUNT 2
LMPOP 2 m1 m2 RIGHT COUNT 10
EXISTS m1
LMPOP 2 m1 m2 left count 1
LMPOP 2 m1 m2 LEFT
LMPOP 2 m1 m2 LEFT
LMPOP 1 nokey LEFT
LMPOP 1 nokey LEFT COUNT 5
LMPOP 0 m1 LEFT
LMPOP -1 m1 LEFT
LMPOP abc m1 LEFT
LMPOP 2 m1 LEFT
LMPOP 3 m1 m2 LEFT
LMPOP 9223372036854775807 m1 LEFT
LMPOP 1 m1 MIDDLE
LMPOP 1 m1 LEFT COUNT 0
LMPOP 1 m1 LEFT COUNT -1
LMPOP 1 m1 LEFT COUNT abc
LMPOP 1 m1 LEFT COUNT 1 COUNT 1
LMPOP 1 m1 LEFT COUNT
LMPOP 1 m1 LEFT FOO
LMPOP 1 m1
LMPOP 1
`

const lsWrongTypeCases = `
SET s str
RPUSH l a b
LPUSH s a
RPUSH s a
LPUSHX s a
RPUSHX s a
LPOP s
RPOP s 2
LPOP s abc
LPOP s -1
LLEN s
LRANGE s 0 -1
LRANGE s abc 1
LINDEX s 0
LINDEX s abc
LSET s 0 x
LSET s abc x
LINSERT s BEFORE a b
LINSERT s middle a b
LREM s 0 a
LREM s abc a
LTRIM s 0 1
LTRIM s abc 1
LPOS s a
LPOS s a RANK 0
LPOS s a COUNT 0
LMOVE s l LEFT RIGHT
LMOVE l s LEFT RIGHT
LRANGE l 0 -1
LMOVE s s LEFT RIGHT
LMOVE nokey s LEFT RIGHT
RPOPLPUSH s l
RPOPLPUSH l s
LRANGE l 0 -1
LMPOP 1 s LEFT
LMPOP 2 nokey s LEFT
LMPOP 2 l s LEFT
LMPOP 2 s l LEFT
LRANGE l 0 -1
GET l
INCR l
TYPE l
`

func TestListsDiffFixed(t *testing.T) {
	d, _ := lsDiff(t)
	n := 0
	for _, cases := range []string{lsPushPopCases, lsIndexCases, lsRemTrimCases, lsPosCases, lsMoveCases, lsWrongTypeCases} {
		d.Do("FLUSHALL")
		n += lsLines(t, d, cases)
	}
	t.Logf("%d fixed list cases compared", n)
}

// TestListsDiffBinary checks binary-safe values, option words cut at a NUL
// byte (Redis compares them as C strings) and integer-looking values.
func TestListsDiffBinary(t *testing.T) {
	d, _ := lsDiff(t)
	cases := [][]string{
		{"RPUSH", "b\x00k", "", "\x00", "a\r\nb", "\xff\xfe", "-0", "007", "12345678901234567890", "-9223372036854775808"},
		{"LRANGE", "b\x00k", "0", "-1"},
		{"LPOS", "b\x00k", "\x00"},
		{"LPOS", "b\x00k", "007", "RANK\x00x", "1"},
		{"LPOS", "b\x00k", "007", "RANK", "1\x00"},
		{"LINSERT", "b\x00k", "BEFORE\x00", "-0", "x"},
		{"LINSERT", "b\x00k", "AFTER", "12345678901234567890", "y"},
		{"LREM", "b\x00k", "0", ""},
		{"LMOVE", "b\x00k", "b\x00k", "LEFT\x00zz", "RIGHT"},
		{"LMPOP", "1", "b\x00k", "RIGHT", "COUNT\x00", "2"},
		{"LSET", "b\x00k", "0", strings.Repeat("v", 10000)},
		{"LINDEX", "b\x00k", "0"},
		{"LRANGE", "b\x00k", "0", "-1"},
		{"OBJECT", "ENCODING", "b\x00k"},
	}
	for _, c := range cases {
		d.Do(c...)
	}
	t.Logf("%d binary list cases compared", len(cases))
}

// TestListsDiffRESP3 compares the null and empty replies under RESP3.
func TestListsDiffRESP3(t *testing.T) {
	d, _ := lsDiff(t)
	d.A.Do("HELLO", "3")
	d.R.Do("HELLO", "3")
	n := lsLines(t, d, `
LPOP nokey
LPOP nokey 2
RPOP nokey 0
LINDEX nokey 0
LPOS nokey a
LPOS nokey a COUNT 0
LMOVE nokey x LEFT LEFT
RPOPLPUSH nokey x
LMPOP 1 nokey LEFT
RPUSH l a b c
LINDEX l 10
LPOS l z
LPOS l z COUNT 0
LPOP l 0
LMPOP 1 l RIGHT COUNT 2
LPOP l 5
`)
	t.Logf("%d RESP3 list cases compared", n)
}

// lsGen draws random list commands over a few keys, with values that mix
// short strings, integers (which listpacks store as numbers) and values
// long enough to fill nodes of a few KiB.
type lsGen struct {
	r    *rand.Rand
	keys []string
}

func (g *lsGen) key() string { return g.keys[g.r.IntN(len(g.keys))] }

func (g *lsGen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

func (g *lsGen) value() string {
	switch g.r.IntN(10) {
	case 0:
		return strconv.Itoa(g.r.IntN(300) - 150)
	case 1:
		return strings.Repeat(g.pick("x", "y"), 100+g.r.IntN(3000))
	case 2:
		return ""
	default:
		return g.pick("a", "b", "c", "d", "e", "f")
	}
}

func (g *lsGen) index() string {
	switch g.r.IntN(8) {
	case 0:
		return g.pick("-9223372036854775808", "9223372036854775807", "abc")
	case 1, 2:
		return strconv.Itoa(-g.r.IntN(30))
	}
	return strconv.Itoa(g.r.IntN(30))
}

func (g *lsGen) where() string { return g.pick("LEFT", "RIGHT", "left", "right") }

func (g *lsGen) next() []string {
	k := g.key()
	switch g.r.IntN(27) {
	case 0, 1, 2, 22, 23, 24:
		args := []string{g.pick("LPUSH", "RPUSH"), k}
		for n := 1 + g.r.IntN(6); n > 0; n-- {
			args = append(args, g.value())
		}
		return args
	case 3:
		return []string{g.pick("LPUSHX", "RPUSHX"), k, g.value(), g.value()}
	case 4:
		return []string{g.pick("LPOP", "RPOP"), k}
	case 5:
		return []string{g.pick("LPOP", "RPOP"), k, strconv.Itoa(g.r.IntN(8) - 1)}
	case 6:
		return []string{"LLEN", k}
	case 7, 8:
		return []string{"LRANGE", k, g.index(), g.index()}
	case 9:
		return []string{"LINDEX", k, g.index()}
	case 10:
		return []string{"LSET", k, g.index(), g.value()}
	case 11:
		return []string{"LINSERT", k, g.pick("BEFORE", "AFTER"), g.value(), g.value()}
	case 12:
		return []string{"LREM", k, strconv.Itoa(g.r.IntN(7) - 3), g.value()}
	case 13:
		if g.r.IntN(3) == 0 {
			return []string{"LTRIM", k, g.index(), g.index()}
		}
		return []string{"LTRIM", k, strconv.Itoa(g.r.IntN(3)), strconv.Itoa(-1 - g.r.IntN(3))}
	case 14:
		args := []string{"LPOS", k, g.value()}
		if g.r.IntN(2) == 0 {
			args = append(args, "RANK", strconv.Itoa(g.r.IntN(9)-4))
		}
		if g.r.IntN(2) == 0 {
			args = append(args, "COUNT", strconv.Itoa(g.r.IntN(4)))
		}
		if g.r.IntN(3) == 0 {
			args = append(args, "MAXLEN", strconv.Itoa(g.r.IntN(10)))
		}
		return args
	case 15:
		return []string{"LMOVE", k, g.key(), g.where(), g.where()}
	case 16:
		return []string{"RPOPLPUSH", k, g.key()}
	case 17:
		args := []string{"LMPOP", "2", k, g.key(), g.where()}
		if g.r.IntN(2) == 0 {
			args = append(args, "COUNT", strconv.Itoa(g.r.IntN(5)))
		}
		return args
	case 18:
		return []string{"OBJECT", "ENCODING", k}
	case 19:
		return []string{g.pick("EXISTS", "TYPE"), k}
	case 20:
		if g.r.IntN(10) == 0 {
			return []string{"SET", k, g.value()}
		}
		return []string{"DEL", k}
	case 21:
		return []string{"COPY", k, g.key(), "REPLACE"}
	default:
		return []string{"LRANGE", k, "0", "-1"}
	}
}

// TestListsDiffRandom runs random streams under node limits counted in
// entries (1, 2, 5) and in bytes (4 KiB, 8 KiB), on both servers, so that
// nodes split, merge and empty in every way; LRANGE 0 -1 of every key
// ends each stream.
func TestListsDiffRandom(t *testing.T) {
	d, _ := lsDiff(t)
	total := 0
	for i, fill := range []string{"1", "2", "5", "-1", "-2"} {
		d.Do("FLUSHALL")
		d.Do("CONFIG", "SET", "list-max-listpack-size", fill)
		d.Do("CONFIG", "RESETSTAT")
		seed := uint64(1000 + i)
		g := &lsGen{r: rand.New(rand.NewPCG(seed, seed*31)), keys: []string{"k0", "k1", "k2"}}
		for n := 0; n < 800; n++ {
			d.Do(g.next()...)
			total++
			if t.Failed() {
				t.Fatalf("stream with list-max-listpack-size %s diverged at command %d (seed %d)", fill, n, seed)
			}
		}
		for _, k := range g.keys {
			d.Do("LRANGE", k, "0", "-1")
			total++
		}
		// Reads count keyspace hits and misses, writes do not, as in Redis.
		a, r := lsStat(t, d.A, "keyspace_hits", "keyspace_misses"), lsStat(t, d.R, "keyspace_hits", "keyspace_misses")
		if a != r {
			t.Errorf("list-max-listpack-size %s: abacus %s, redis %s", fill, a, r)
		}
	}
	t.Logf("%d random list commands compared", total)
}

// lsStat returns the named INFO stats fields of a server, as one string.
func lsStat(t *testing.T, c *servertest.Conn, fields ...string) string {
	t.Helper()
	v, err := servertest.Parse(c.Do("INFO", "stats"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(v.Str, "\r\n") {
		for _, f := range fields {
			if strings.HasPrefix(line, f+":") {
				out = append(out, line)
			}
		}
	}
	return strings.Join(out, " ")
}
