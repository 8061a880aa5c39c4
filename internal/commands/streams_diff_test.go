package commands_test

import (
	"fmt"
	"math/rand"
	"regexp"
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Differential tests of the stream commands against redis-server 7.0:
// fixed cases for every command's options and errors, and long random
// command streams with several groups and consumers, trims, deletes and
// claims. Ids are explicit; what depends on the clock (idle times,
// delivery and seen times) is masked.

var (
	// XPENDING's extended entries: [id, consumer, idle, count].
	pendIdle = regexp.MustCompile(`(\*4\r\n\$\d+\r\n\d+-\d+\r\n\$\d+\r\n[^\r]*\r\n):\d+\r\n`)
	// XINFO CONSUMERS' idle.
	infoIdle = regexp.MustCompile(`(\$4\r\nidle\r\n):\d+\r\n`)
	// Absolute times (delivery, seen-time) in XINFO STREAM FULL.
	absTime = regexp.MustCompile(`:1\d{12}\r\n`)
	// Ids XADD * made from each server's clock.
	clockID = regexp.MustCompile(`\$\d+\r\n1\d{12}-\d+\r\n`)
)

func streamMask(s string) string {
	s = pendIdle.ReplaceAllString(s, "$1:IDLE\r\n")
	s = infoIdle.ReplaceAllString(s, "$1:IDLE\r\n")
	s = clockID.ReplaceAllString(s, "$$ID\r\n")
	return absTime.ReplaceAllString(s, ":TIME\r\n")
}

func streamDiff(t *testing.T) *servertest.Diff {
	t.Helper()
	d, _ := servertest.StartDiff(t)
	d.Mask = streamMask
	return d
}

func TestStreamDiffBasics(t *testing.T) {
	d := streamDiff(t)
	d.Lines(`
XADD s 1-1 a 1
XADD s 1-1 a 1
XADD s 0-0 a 1
XADD s 1-* b 2
XADD s 1 c 3
XADD s 2-5 f1 v1 f2 v2
XADD s 3-0 f1 x f2 y
XADD s 4-0 f1 1 f2 2 f3 3
XADD s maxlen -1 5-0 a 1
XADD s limit 10 5-0 a 1
XADD s maxlen 10 limit 10 5-0 a 1
XADD s maxlen 1 minid 1 5-0 a 1
XADD s badid a 1
XADD s 5-0 a
XADD s +
XADD s - a 1
XADD s 18446744073709551615-18446744073709551615 a 1
XADD s 18446744073709551616-0 a 1
XADD s -1-0 a 1
XADD nokey nomkstream 1-1 a 1
EXISTS nokey
XADD s nomkstream 6-0 a 1
TYPE s
OBJECT ENCODING s
XLEN s
XLEN nokey
XRANGE s - +
XRANGE s - + COUNT 2
XRANGE s - + COUNT 0
XRANGE s - + COUNT -1
XRANGE s - + COUNT
XRANGE s - + FOO 1
XRANGE s (1-1 +
XRANGE s (1-2 (3-0
XRANGE s 2 3
XRANGE s (- +
XRANGE s - (+
XRANGE s (18446744073709551615-18446744073709551615 +
XRANGE s - (0-0
XRANGE nokey - +
XREVRANGE s + -
XREVRANGE s + - COUNT 3
XREVRANGE s (4-0 (1-1
XREVRANGE s 3 2
XDEL s 2-5 9-9
XDEL s 2-5
XDEL s bad
XDEL nokey 1-1
XRANGE s - +
XLEN s
XINFO STREAM s
XTRIM s
XTRIM s foo 1
XTRIM s maxlen 100
XTRIM s maxlen ~ 2
XTRIM s minid 1-2
XRANGE s - +
XTRIM s maxlen 0
XINFO STREAM s
XLEN s
XSETID s 0-1
XSETID s 99-0
XSETID s 99-0 entriesadded -1
XSETID s 100-0 entriesadded 50 maxdeletedid 10-0
XSETID s 100-0 maxdeletedid 101-0
XSETID s 1-0
XSETID nokey 1-1
XSETID s 100-0 foo
XINFO STREAM s
XADD s * a 1
XTRIM s maxlen 0
SET str x
XADD str 1-1 a 1
XLEN str
XRANGE str - +
XINFO STREAM str
XREAD STREAMS str 0
`)
}

func TestStreamDiffGroups(t *testing.T) {
	d := streamDiff(t)
	d.Lines(`
XGROUP CREATE s g $
XGROUP CREATE s g $ MKSTREAM
XGROUP CREATE s g $ MKSTREAM
XGROUP CREATE s g2 0 ENTRIESREAD 3
XGROUP CREATE s g3 0 ENTRIESREAD -2
XGROUP CREATE s g3 0 FOO
XGROUP CREATE s g3 bad
XGROUP FOO s g
XGROUP HELP
XGROUP CREATE s
XGROUP SETID s nog 0
XGROUP SETID s g 0 FOO 1
XGROUP SETID s g 0 ENTRIESREAD 1 2
XADD s 1-1 a 1
XADD s 2-1 b 2
XADD s 3-1 c 3
XADD s 4-1 d 4
XADD s 5-1 e 5
XINFO GROUPS s
XREADGROUP GROUP g c1 STREAMS s >
XGROUP SETID s g 0
XINFO GROUPS s
XREADGROUP GROUP g c1 COUNT 2 STREAMS s >
XREADGROUP GROUP g c2 COUNT 1 STREAMS s >
XREADGROUP GROUP g c3 NOACK COUNT 1 STREAMS s >
XINFO GROUPS s
XREADGROUP GROUP g c1 STREAMS s 0
XREADGROUP GROUP g c1 COUNT 1 STREAMS s 0
XREADGROUP GROUP g c4 STREAMS s 0
XREADGROUP GROUP g c1 STREAMS s $
XREADGROUP GROUP nog c1 STREAMS s >
XREADGROUP GROUP g c1 STREAMS nokey >
XREADGROUP GROUP g c1 STREAMS s
XREADGROUP GROUP g c1 STREAMS s 0 s
XREADGROUP c1 STREAMS s >
XREADGROUP GROUP g c1 FOO STREAMS s >
XREAD GROUP g c STREAMS s 0
XREAD NOACK STREAMS s 0
XREAD STREAMS s >
XREAD STREAMS s $
XREAD COUNT 2 STREAMS s 0
XREAD COUNT 2 STREAMS s nokey 0 0
XREAD STREAMS s 5-1
XREAD BLOCK -1 STREAMS s 0
XREAD BLOCK x STREAMS s 0
XINFO CONSUMERS s g
XINFO CONSUMERS s nog
XINFO CONSUMERS nokey g
XINFO GROUPS nokey
XINFO FOO s
XINFO STREAM s FOO
XINFO STREAM s FULL COUNT
XPENDING s g
XPENDING s g - + 10
XPENDING s g - + 10 c1
XPENDING s g - + 10 nocons
XPENDING s g IDLE 0 - + 10
XPENDING s g IDLE 0 - + 10 c2
XPENDING s g IDLE 100000 - + 10
XPENDING s g (1-1 + 1
XPENDING s g - + -1
XPENDING s g - +
XPENDING s g IDLE 1 - +
XPENDING s nog
XPENDING nokey g
XACK s g 1-1 2-1 9-9
XACK s g bad
XACK s nog bad
XACK nokey g 1-1
XPENDING s g
XDEL s 4-1
XCLAIM s g c5 0 4-1 5-1 3-1
XCLAIM s g c5 0 2-1 JUSTID
XCLAIM s g c5 0 1-1 FORCE JUSTID RETRYCOUNT 7
XCLAIM s g c5 0 1-1 FORCE RETRYCOUNT 7 LASTID 9-0
XINFO GROUPS s
XCLAIM s g c5 0 1-1 FOO
XCLAIM s g c5 x 1-1
XCLAIM s g c5 0 1-1 IDLE x
XCLAIM s g c5 0 1-1 TIME x
XCLAIM s g c5 0 1-1 RETRYCOUNT x
XCLAIM s g c5 0 1-1 LASTID x
XCLAIM s nog c5 0 1-1
XCLAIM s g c5 100000 1-1
XPENDING s g - + 10
XADD s 6-1 f 6
XADD s 7-1 f 7
XREADGROUP GROUP g2 c1 STREAMS s >
XDEL s 6-1
XAUTOCLAIM s g2 c9 0 0
XAUTOCLAIM s g2 c9 0 0 COUNT 1
XAUTOCLAIM s g2 c9 0 0 COUNT 1 JUSTID
XAUTOCLAIM s g2 c9 0 (2-1 COUNT 2
XAUTOCLAIM s g2 c9 0 0 COUNT 0
XAUTOCLAIM s g2 c9 0 0 FOO
XAUTOCLAIM s g2 c9 x 0
XAUTOCLAIM s nog c9 0 0
XAUTOCLAIM nokey g c9 0 0
XAUTOCLAIM s g2 c9 100000 0
XINFO CONSUMERS s g2
XINFO GROUPS s
XINFO STREAM s
XINFO STREAM s FULL
XINFO STREAM s FULL COUNT 1
XINFO STREAM s FULL COUNT 0
XGROUP CREATECONSUMER s g c1
XGROUP CREATECONSUMER s g newc
XGROUP CREATECONSUMER s nog newc
XGROUP DELCONSUMER s g c5
XGROUP DELCONSUMER s g nocons
XGROUP DELCONSUMER s nog c5
XGROUP DESTROY s g2
XGROUP DESTROY s g2
XGROUP DESTROY nokey g2
XINFO GROUPS s
XTRIM s MAXLEN 0
XINFO GROUPS s
XADD s 10-1 a 1
XINFO GROUPS s
`)
	d.Do("EVAL", "return redis.pcall('xreadgroup','group','g','c','block','0','streams','s','>')", "0")
	d.Do("EVAL", "return redis.pcall('XREAD','BLOCK','0','STREAMS','s','0')", "0")
	d.Do("EVAL", "return redis.pcall('xread','streams','s','0')", "0")
}

// TestStreamDiffTrimApprox checks that approximate trimming keeps the
// entries redis-server keeps: node boundaries follow Redis's listpack
// sizes.
func TestStreamDiffTrimApprox(t *testing.T) {
	d := streamDiff(t)
	for _, cfg := range [][2]string{{"4096", "100"}, {"100", "5"}, {"0", "7"}, {"300", "0"}} {
		d.Do("CONFIG", "SET", "stream-node-max-bytes", cfg[0], "stream-node-max-entries", cfg[1])
		d.Do("DEL", "s")
		r := rand.New(rand.NewSource(1))
		for i := 1; i <= 700; i++ {
			args := []string{"XADD", "s"}
			if i%50 == 0 {
				args = append(args, "MAXLEN", "~", strconv.Itoa(100+r.Intn(200)))
			}
			args = append(args, fmt.Sprintf("%d-%d", i, r.Intn(3)))
			for f := 0; f < 1+r.Intn(3); f++ {
				args = append(args, fmt.Sprintf("f%d", f), strconv.Itoa(r.Intn(100000)-5000))
			}
			if r.Intn(5) == 0 {
				args = append(args, "long", fmt.Sprintf("%0*d", r.Intn(80), 7))
			}
			d.Do(args...)
			if i%97 == 0 {
				d.Do("XDEL", "s", fmt.Sprintf("%d-0", i-r.Intn(50)), fmt.Sprintf("%d-1", i-r.Intn(50)))
			}
		}
		d.Do("XLEN", "s")
		d.Do("XINFO", "STREAM", "s")
		d.Do("XTRIM", "s", "MAXLEN", "~", "250")
		d.Do("XTRIM", "s", "MINID", "~", "500")
		d.Do("XTRIM", "s", "MAXLEN", "~", "10", "LIMIT", "20")
		d.Do("XINFO", "STREAM", "s")
		d.Do("XRANGE", "s", "-", "+", "COUNT", "5")
	}
	d.Do("CONFIG", "SET", "stream-node-max-bytes", "4096", "stream-node-max-entries", "100")
}

// TestStreamDiffRandom runs long random command streams on a few streams
// with several groups and consumers.
func TestStreamDiffRandom(t *testing.T) {
	d := streamDiff(t)
	for seed := int64(1); seed <= 4; seed++ {
		r := rand.New(rand.NewSource(seed))
		d.Do("FLUSHALL")
		keys := []string{"s1", "s2"}
		groups := []string{"g1", "g2", "g3"}
		cons := []string{"c1", "c2", "c3", "c4"}
		ms := []int{1, 1}
		id := func() string {
			k := r.Intn(len(keys))
			return fmt.Sprintf("%d-%d", 1+r.Intn(ms[k]+1), r.Intn(3))
		}
		for op := 0; op < 1500; op++ {
			ki := r.Intn(len(keys))
			k := keys[ki]
			g := groups[r.Intn(len(groups))]
			c := cons[r.Intn(len(cons))]
			var args []string
			switch n := r.Intn(20); {
			case n < 6:
				ms[ki] += r.Intn(2)
				idArg := fmt.Sprintf("%d-%d", ms[ki], r.Intn(4))
				if r.Intn(4) == 0 {
					idArg = fmt.Sprintf("%d-*", ms[ki])
				}
				args = []string{"XADD", k}
				switch r.Intn(8) {
				case 0:
					args = append(args, "MAXLEN", "~", strconv.Itoa(r.Intn(40)))
				case 1:
					args = append(args, "MAXLEN", strconv.Itoa(10+r.Intn(40)))
				case 2:
					args = append(args, "MINID", id())
				}
				args = append(args, idArg, "f", strconv.Itoa(op))
				if r.Intn(3) == 0 {
					args = append(args, "g", "x")
				}
			case n < 7:
				args = []string{"XDEL", k, id(), id()}
			case n < 8:
				args = []string{"XGROUP", "CREATE", k, g, []string{"0", "$", id()}[r.Intn(3)]}
				if r.Intn(2) == 0 {
					args = append(args, "MKSTREAM")
				}
			case n < 11:
				args = []string{"XREADGROUP", "GROUP", g, c, "COUNT", strconv.Itoa(1 + r.Intn(4))}
				if r.Intn(4) == 0 {
					args = append(args, "NOACK")
				}
				args = append(args, "STREAMS", k, []string{">", ">", "0", id()}[r.Intn(4)])
			case n < 13:
				args = []string{"XACK", k, g, id(), id()}
			case n < 14:
				args = []string{"XCLAIM", k, g, c, "0", id(), id()}
				if r.Intn(2) == 0 {
					args = append(args, "JUSTID")
				}
			case n < 15:
				args = []string{"XAUTOCLAIM", k, g, c, "0", "0", "COUNT", strconv.Itoa(1 + r.Intn(5))}
			case n < 16:
				args = []string{"XPENDING", k, g, "-", "+", "10"}
				if r.Intn(2) == 0 {
					args = append(args, c)
				}
			case n < 17:
				args = []string{"XINFO", []string{"GROUPS", "STREAM"}[r.Intn(2)], k}
			case n < 18:
				args = []string{"XTRIM", k, "MAXLEN", strconv.Itoa(r.Intn(30))}
			case n < 19:
				args = []string{"XRANGE", k, id(), "+", "COUNT", "5"}
			default:
				args = []string{"XREAD", "COUNT", "3", "STREAMS", k, id()}
			}
			d.Do(args...)
			if t.Failed() {
				t.Fatalf("seed %d op %d", seed, op)
			}
		}
		for _, k := range keys {
			d.Do("XINFO", "STREAM", k, "FULL", "COUNT", "0")
			for _, g := range groups {
				d.Do("XPENDING", k, g)
				d.Do("XINFO", "CONSUMERS", k, g)
			}
		}
	}
}

func TestStreamDiffIntrospection(t *testing.T) {
	d := streamDiff(t)
	d.Lines(`
XINFO HELP
COMMAND INFO xrange xrevrange xlen xdel xtrim xsetid xack xpending xclaim xautoclaim
COMMAND INFO xgroup|create xgroup|setid xgroup|destroy xgroup|createconsumer xgroup|delconsumer xgroup|help
COMMAND INFO xinfo|stream xinfo|groups xinfo|consumers xinfo|help
COMMAND INFO xread xreadgroup
COMMAND GETKEYS XREAD COUNT 2 STREAMS a b 0 0
COMMAND GETKEYS XREADGROUP GROUP g c STREAMS a b 0 0
COMMAND GETKEYS XGROUP CREATE k g $
`)
}

// TestStreamDiffDumpCopy: DUMP payloads are Redis's bytes (listpacks,
// tombstones, groups), each side RESTOREs the other's, and COPY copies
// groups and PELs.
func TestStreamDiffDumpCopy(t *testing.T) {
	d := streamDiff(t)
	// LZF output differs between implementations: payloads are compared
	// uncompressed (the cross restores below read compressed ones).
	d.Do("CONFIG", "SET", "stream-node-max-entries", "5", "rdbcompression", "no")
	for i := 1; i <= 40; i++ {
		d.Do("XADD", "s", fmt.Sprintf("%d-%d", i, i%4), "a", strconv.Itoa(i), "b", fmt.Sprintf("v%d", i*7919))
	}
	d.Do("XADD", "s", "41-0", "other", "fields")
	d.Do("XDEL", "s", "3-3", "10-2", "41-0")
	d.Do("XTRIM", "s", "MINID", "4")
	d.Do("XGROUP", "CREATE", "s", "g", "7-3", "ENTRIESREAD", "6")
	d.Do("XGROUP", "CREATE", "s", "h", "0")
	d.Do("DUMP", "s")
	d.Do("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM")
	d.Do("DUMP", "e")
	d.Do("CONFIG", "SET", "rdbcompression", "yes")
	// Cross restores: each side gets the other's payload.
	pa, pr := d.A.Do("DUMP", "s"), d.R.Do("DUMP", "s")
	body := func(p string) string { return p[indexCRLF(p)+2 : len(p)-2] }
	if r := d.A.Do("RESTORE", "fromredis", "0", body(pr)); r != "+OK\r\n" {
		t.Fatalf("abacus RESTORE of redis's payload: %q", r)
	}
	if r := d.R.Do("RESTORE", "fromredis", "0", body(pa)); r != "+OK\r\n" {
		t.Fatalf("redis RESTORE of abacus's payload: %q", r)
	}
	d.Do("XINFO", "STREAM", "fromredis", "FULL")
	d.Do("XREADGROUP", "GROUP", "h", "c", "COUNT", "3", "STREAMS", "s", ">")
	d.Do("COPY", "s", "c")
	d.Do("XINFO", "STREAM", "c", "FULL")
	d.Do("XACK", "c", "h", "4-0")
	d.Do("XPENDING", "s", "h")
	d.Do("XPENDING", "c", "h")
	d.Do("OBJECT", "ENCODING", "c")
	d.Do("CONFIG", "SET", "stream-node-max-entries", "100")
}

func indexCRLF(s string) int {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '\r' && s[i+1] == '\n' {
			return i
		}
	}
	return -1
}
