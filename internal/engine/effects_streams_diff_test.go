package engine_test

import (
	"regexp"
	"testing"
)

// The stream commands' effects against redis-server's replication stream:
// XADD's generated id and approximate trims, XREADGROUP's XCLAIM and
// XGROUP forms, XCLAIM and XAUTOCLAIM (deleted entries included), served
// blocked readers.

// autoID matches ids XADD generated from the clock; they differ between
// the servers and are compared as a shape.
var autoID = regexp.MustCompile(`\b1\d{12}-\d+\b`)

func TestStreamEffectsMatchRedis(t *testing.T) {
	r := startEffRedis(t)
	a := startEffAbacus(t)
	r.sync()
	a.sync()
	cases := []effCase{
		effLines("XADD explicit", "XADD s 1-1 a 1\nXADD s 1-* b 2\nXADD s 5 c 3"),
		effLines("XADD auto id", "XADD s * a 1"),
		effLines("XADD MAXLEN exact", "XADD s 1-1 a 1\nXADD s 2-1 a 1\nXADD s MAXLEN 1 3-1 a 1"),
		effLines("XADD MAXLEN ~", "XADD s 1-1 a 1\nXADD s 2-1 a 1\nXADD s MAXLEN ~ 1 3-1 a 1"),
		effLines("XADD MINID ~ LIMIT", "XADD s 1-1 a 1\nXADD s MINID ~ 5 LIMIT 10 3-1 a 1"),
		effLines("XADD NOMKSTREAM missing", "XADD s NOMKSTREAM 1-1 a 1"),
		effLines("XADD errors", "XADD s 1-1 a 1\nXADD s 1-1 a 1\nXADD s 0-0 a 1"),
		effLines("XTRIM", "XADD s 1-1 a 1\nXADD s 2-1 a 1\nXADD s 3-1 a 1\nXTRIM s MAXLEN ~ 0\nXTRIM s MAXLEN 0\nXTRIM s MINID 9"),
		effLines("XTRIM exact", "XADD s 1-1 a 1\nXADD s 2-1 a 1\nXADD s 3-1 a 1\nXTRIM s MAXLEN 1\nXTRIM s MINID = 3-1"),
		effLines("XDEL", "XADD s 1-1 a 1\nXADD s 2-1 a 1\nXDEL s 1-1 9-9\nXDEL s 9-9"),
		effLines("XSETID", "XADD s 1-1 a 1\nXSETID s 5-0 ENTRIESADDED 9 MAXDELETEDID 2-0\nXSETID s 0-1"),
		effLines("XGROUP", `XGROUP CREATE s g $ MKSTREAM
XGROUP CREATE s g2 0 ENTRIESREAD 3
XGROUP SETID s g 0 ENTRIESREAD 1
XGROUP CREATECONSUMER s g c
XGROUP CREATECONSUMER s g c
XGROUP DELCONSUMER s g c
XGROUP DESTROY s g2
XGROUP DESTROY s g2`),
		effLines("XREADGROUP", `XADD s 1-1 a 1
XADD s 2-1 a 1
XADD s 3-1 a 1
XGROUP CREATE s g 0
XREADGROUP GROUP g c1 STREAMS s 0
XREADGROUP GROUP g c2 COUNT 1 STREAMS s >
XREADGROUP GROUP g c3 NOACK COUNT 1 STREAMS s >
XREADGROUP GROUP g c1 NOACK COUNT 1 STREAMS s >
XREADGROUP GROUP g c2 STREAMS s 0
XREADGROUP GROUP g c4 STREAMS s >`),
		effLines("XACK", "XADD s 1-1 a 1\nXGROUP CREATE s g 0\nXREADGROUP GROUP g c STREAMS s >\nXACK s g 1-1 2-2\nXACK s g 1-1"),
		effLines("XCLAIM", `XADD s 1-1 a 1
XADD s 2-1 a 1
XADD s 3-1 a 1
XGROUP CREATE s g 0
XREADGROUP GROUP g c1 STREAMS s >
XDEL s 2-1
XCLAIM s g c2 0 1-1 2-1
XCLAIM s g c2 0 3-1 JUSTID LASTID 9-9
XCLAIM s g c2 0 3-1 RETRYCOUNT 5 IDLE 1000
XCLAIM s g c2 100000 1-1
XCLAIM s g c3 0 3-1 FORCE JUSTID
XADD s 4-1 a 1
XCLAIM s g c3 0 4-1 FORCE
XCLAIM s g c3 0 9-9 LASTID 10-0
XCLAIM s g c3 0 9-9 LASTID 1-0`),
		effLines("XAUTOCLAIM", `XADD s 1-1 a 1
XADD s 2-1 a 1
XADD s 3-1 a 1
XGROUP CREATE s g 0
XREADGROUP GROUP g c1 STREAMS s >
XDEL s 2-1
XAUTOCLAIM s g c2 0 0 COUNT 1
XAUTOCLAIM s g c2 0 0
XAUTOCLAIM s g c3 0 0 JUSTID
XAUTOCLAIM s g c3 100000 0`),
		effServedLater("XREAD served later", []string{"XREAD", "BLOCK", "0", "STREAMS", "s", "$"}, "XADD", "s", "1-1", "a", "1"),
		effServedLater("XREADGROUP served later", []string{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"}, "XADD", "s", "1-1", "a", "1"),
	}
	// The group for the served XREADGROUP.
	cases[len(cases)-1].run = func(run func(s *effSide)) func(s *effSide) {
		return func(s *effSide) {
			s.do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
			run(s)
		}
	}(cases[len(cases)-1].run)
	for _, c := range cases {
		got, want := runEffCase(a, c), runEffCase(r, c)
		got, want = autoID.ReplaceAllString(got, "<auto-id>"), autoID.ReplaceAllString(want, "<auto-id>")
		if got != want {
			t.Errorf("%s\n abacus: %s\n  redis: %s", c.name, got, want)
		} else if testing.Verbose() {
			t.Logf("%s: %s", c.name, got)
		}
	}
}
