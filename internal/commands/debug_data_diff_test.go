package commands_test

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// DEBUG POPULATE, DIGEST, DIGEST-VALUE, QUICKLIST-PACKED-THRESHOLD and
// HELP against redis-server: the same data gives the same digest.

func TestDebugDigestDiff(t *testing.T) {
	p, _ := svDiffPrivate(t, []string{"--enable-debug-command", "yes"}, servertest.WithConfig("enable-debug-command", "yes"))
	p.Lines(`
DEBUG DIGEST
DEBUG DIGEST-VALUE
DEBUG DIGEST-VALUE nokey
DEBUG DIGEST x
`)
	rng := rand.New(rand.NewSource(7))
	member := func() string {
		switch rng.Intn(4) {
		case 0:
			return strconv.Itoa(rng.Intn(1000) - 500) // integers: intset, listpack ints
		case 1:
			return strings.Repeat("long", 20) + strconv.Itoa(rng.Intn(100))
		}
		return fmt.Sprintf("m%d", rng.Intn(300))
	}
	scores := []string{"0", "-0", "1", "1.5", "0.1", "1e300", "-1e-300", "inf", "-inf", "3.14159265358979", "123456789012345678", "1e17", "1e16", "-2.5e-5"}
	var keys []string
	for db := 0; db < 3; db++ {
		p.Do("SELECT", strconv.Itoa(db))
		for i := 0; i < 60; i++ {
			k := fmt.Sprintf("k:%d:%d", db, i)
			keys = append(keys, k)
			n := 1 + rng.Intn(200) // past the listpack limits now and then
			if rng.Intn(3) > 0 {
				n = 1 + rng.Intn(10)
			}
			switch i % 7 {
			case 0:
				p.Do("SET", k, member())
			case 1:
				for j := 0; j < n; j++ {
					p.Do("RPUSH", k, member())
				}
			case 2:
				for j := 0; j < n; j++ {
					p.Do("SADD", k, member())
				}
			case 3:
				for j := 0; j < n; j++ {
					p.Do("ZADD", k, scores[rng.Intn(len(scores))], member())
				}
			case 4:
				for j := 0; j < n; j++ {
					p.Do("HSET", k, member(), member())
				}
			case 5:
				p.Do("SET", k, strconv.Itoa(rng.Intn(100000)))
				p.Do("APPEND", k, "")
			case 6:
				// Explicit ids: both servers hold the same entries.
				for j := 0; j < n; j++ {
					p.Do("XADD", k, strconv.Itoa(j+1)+"-"+strconv.Itoa(rng.Intn(3)), member(), member())
				}
				p.Do("XDEL", k, "2-0", "2-1")
			}
			if rng.Intn(4) == 0 {
				p.Do("EXPIRE", k, "10000")
			}
		}
		p.Do("DEBUG", "DIGEST")
		args := []string{"DEBUG", "DIGEST-VALUE"}
		for _, k := range keys {
			if strings.HasPrefix(k, fmt.Sprintf("k:%d:", db)) {
				args = append(args, k)
			}
		}
		p.Do(append(args, "missing")...)
	}
	p.Do("SELECT", "0")
	// Order matters in a list, not in a set; a TTL counts.
	p.Lines(`
DEL l1 l2 s1 s2
RPUSH l1 a b c
RPUSH l2 c b a
DEBUG DIGEST-VALUE l1 l2
SADD s1 a b c
SADD s2 c b a
DEBUG DIGEST-VALUE s1 s2
PERSIST k:0:0
DEBUG DIGEST
DEBUG DIGEST-VALUE k:0:0
`)
}

func TestDebugPopulateDiff(t *testing.T) {
	p, _ := svDiffPrivate(t, []string{"--enable-debug-command", "yes"}, servertest.WithConfig("enable-debug-command", "yes"))
	long := strings.Repeat("p", 130)
	p.Lines(`
DEBUG POPULATE
DEBUG POPULATE -1
DEBUG POPULATE x
DEBUG POPULATE 1 a -1
DEBUG POPULATE 1 a x
DEBUG POPULATE 1 a 1 extra
DEBUG POPULATE 0
DEBUG POPULATE 5
DBSIZE
GET key:0
GET key:4
OBJECT ENCODING key:3
SET key:2 mine
DEBUG POPULATE 5
GET key:2
DEBUG POPULATE 3 pre 0
GET pre:2
DEBUG POPULATE 3 sz 3
GET sz:1
DEBUG POPULATE 3 sz2 12
GET sz2:2
STRLEN sz2:2
DEBUG POPULATE 2 big 100
OBJECT ENCODING big:1
DEBUG POPULATE 2 ` + long + `
KEYS ppp*
DEBUG POPULATE 1000 many 20
DBSIZE
DEBUG DIGEST
`)
}

func TestDebugHelpAndThresholdDiff(t *testing.T) {
	p, _ := svDiffPrivate(t, []string{"--enable-debug-command", "yes"}, servertest.WithConfig("enable-debug-command", "yes"))
	p.Lines(`
DEBUG QUICKLIST-PACKED-THRESHOLD
DEBUG QUICKLIST-PACKED-THRESHOLD -1
DEBUG QUICKLIST-PACKED-THRESHOLD 5gb
DEBUG QUICKLIST-PACKED-THRESHOLD 4gb
DEBUG QUICKLIST-PACKED-THRESHOLD 1x
DEBUG QUICKLIST-PACKED-THRESHOLD 0
DEBUG QUICKLIST-PACKED-THRESHOLD 1b
DEBUG QUICKLIST-PACKED-THRESHOLD 1k
DEBUG RELOAD BOGUS
DEBUG DIGEST-VALUE
`)
	// Abacus lists the subcommands it has, with Redis's lines.
	a := servertest.MustStrings(t, p.A.Do("DEBUG", "HELP"))
	r := servertest.MustStrings(t, p.R.Do("DEBUG", "HELP"))
	in := map[string]bool{}
	for _, l := range r {
		in[l] = true
	}
	for _, l := range a[1 : len(a)-2] { // the header and HELP are ReplyHelp's
		if !in[l] {
			t.Errorf("DEBUG HELP line not in Redis's: %q", l)
		}
	}
	for _, want := range []string{"RELOAD [option ...]", "POPULATE <count> [<prefix>] [<size>]", "DIGEST", "DIGEST-VALUE <key> [<key> ...]", "LOADAOF", "CHANGE-REPL-ID", "QUICKLIST-PACKED-THRESHOLD <size>"} {
		found := false
		for _, l := range a {
			found = found || l == want
		}
		if !found {
			t.Errorf("DEBUG HELP lacks %q", want)
		}
	}
}

// TestListsLargeElementsDiff: with a small packed threshold Redis keeps
// large elements in plain quicklist nodes of their own; every list command
// across packed and plain nodes must reply as Redis's.
func TestListsLargeElementsDiff(t *testing.T) {
	p, _ := svDiffPrivate(t, []string{"--enable-debug-command", "yes"}, servertest.WithConfig("enable-debug-command", "yes"))
	p.Do("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100b")
	rng := rand.New(rand.NewSource(3))
	elem := func() string {
		if rng.Intn(2) == 0 {
			return strings.Repeat(string(rune('a'+rng.Intn(3))), 100+rng.Intn(300)) // plain
		}
		return string(rune('a' + rng.Intn(3))) // packed
	}
	for i := 0; i < 1500; i++ {
		k := "ll" + strconv.Itoa(rng.Intn(2))
		switch rng.Intn(12) {
		case 0:
			p.Do("LPUSH", k, elem(), elem())
		case 1:
			p.Do("RPUSH", k, elem())
		case 2:
			p.Do("LPOP", k)
		case 3:
			p.Do("RPOP", k, "2")
		case 4:
			p.Do("LINDEX", k, strconv.Itoa(rng.Intn(20)-10))
		case 5:
			p.Do("LINSERT", k, []string{"BEFORE", "AFTER"}[rng.Intn(2)], elem(), elem())
		case 6:
			p.Do("LTRIM", k, strconv.Itoa(rng.Intn(3)), strconv.Itoa(rng.Intn(40)-5))
		case 7:
			p.Do("LREM", k, strconv.Itoa(rng.Intn(5)-2), elem())
		case 8:
			p.Do("LPOS", k, elem(), "RANK", strconv.Itoa(1+rng.Intn(2)), "COUNT", "0")
		case 9:
			p.Do("LMOVE", k, "ll"+strconv.Itoa(rng.Intn(2)), []string{"LEFT", "RIGHT"}[rng.Intn(2)], []string{"LEFT", "RIGHT"}[rng.Intn(2)])
		case 10:
			p.Do("LSET", k, strconv.Itoa(rng.Intn(10)-5), elem())
		case 11:
			p.Do("LRANGE", k, "0", "-1")
		}
		if i%100 == 0 {
			p.Do("DEBUG", "DIGEST")
		}
	}
	p.Do("LRANGE", "ll0", "0", "-1")
	p.Do("LRANGE", "ll1", "0", "-1")
	p.Do("DEBUG", "DIGEST")
}

// Redis's testing knobs: DEBUG SET-DISABLE-DENY-SCRIPTS lets a script call
// a command flagged noscript; DEBUG PAUSE-CRON stops the periodic work,
// active expiry among it, until it is resumed.
func TestDebugKnobsDiff(t *testing.T) {
	p, _ := svDiffPrivate(t, []string{"--enable-debug-command", "yes"}, servertest.WithConfig("enable-debug-command", "yes"))
	p.Lines(`
EVAL "return redis.call('client', 'getname')" 0
DEBUG SET-DISABLE-DENY-SCRIPTS 1
EVAL "return redis.call('client', 'getname')" 0
DEBUG SET-DISABLE-DENY-SCRIPTS 0
EVAL "return redis.call('client', 'getname')" 0
DEBUG PAUSE-CRON 1
SET k v PX 20
`)
	time.Sleep(300 * time.Millisecond) // several cron periods; nothing expires k meanwhile
	p.Lines(`
DBSIZE
DEBUG PAUSE-CRON 0
`)
	for _, c := range []*servertest.Conn{p.A, p.R} {
		for deadline := time.Now().Add(10 * time.Second); c.Do("DBSIZE") != ":0\r\n"; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: k never expired after PAUSE-CRON 0", c.Addr)
			}
		}
	}
}
