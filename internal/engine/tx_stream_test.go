package engine_test

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// Randomized transactions, byte-compared with redis-server: MULTI blocks
// of random string and key commands (some refused while queuing, some
// failing when they run), DISCARDs, WATCHes raced by a second client,
// misplaced MULTI/EXEC/DISCARD/WATCH.

type txGen struct {
	r    *rand.Rand
	keys []string
}

func (g *txGen) key() string { return g.keys[g.r.IntN(len(g.keys))] }

func (g *txGen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

func (g *txGen) val() string {
	switch g.r.IntN(5) {
	case 0:
		return strconv.Itoa(g.r.IntN(200) - 100)
	case 1:
		return g.pick("", "x", "hello", "12abc", "1.5", "-0", "9223372036854775807")
	case 2:
		return strconv.FormatFloat(g.r.Float64()*100, 'f', 2, 64)
	default:
		return strconv.Itoa(g.r.IntN(1000))
	}
}

// cmd returns a random command; about one in twelve is refused while
// queuing (unknown command, wrong number of arguments).
func (g *txGen) cmd() []string {
	k := g.key()
	switch g.r.IntN(40) {
	case 0:
		return []string{"NOSUCHCMD", k}
	case 1:
		return []string{g.pick("GET", "INCR", "STRLEN", "TYPE")}
	case 2:
		return []string{"SET", k}
	case 3:
		return []string{"SET", k, g.val()}
	case 4:
		return []string{"SET", k, g.val(), g.pick("NX", "XX", "GET", "KEEPTTL", "BADOPT")}
	case 5, 6:
		return []string{"GET", k}
	case 7, 8:
		return []string{"INCR", k}
	case 9:
		return []string{"INCRBY", k, g.val()}
	case 10:
		return []string{"DECR", k}
	case 11:
		return []string{"APPEND", k, g.val()}
	case 12:
		return []string{"STRLEN", k}
	case 13:
		return []string{"GETRANGE", k, strconv.Itoa(g.r.IntN(6) - 2), strconv.Itoa(g.r.IntN(6) - 2)}
	case 14:
		return []string{"SETRANGE", k, strconv.Itoa(g.r.IntN(5)), g.val()}
	case 15:
		return []string{"MSET", k, g.val(), g.key(), g.val()}
	case 16:
		return []string{"MGET", k, g.key(), g.key()}
	case 17:
		return []string{"DEL", k, g.key()}
	case 18:
		return []string{"EXISTS", k, g.key()}
	case 19:
		return []string{"TYPE", k}
	case 20:
		return []string{"RENAME", k, g.key()}
	case 21:
		return []string{"RENAMENX", k, g.key()}
	case 22:
		return []string{"GETSET", k, g.val()}
	case 23:
		return []string{"GETDEL", k}
	case 24:
		return []string{"SETNX", k, g.val()}
	case 25:
		return []string{"LPUSH", k, g.val()}
	case 26:
		return []string{"LLEN", k}
	case 27:
		return []string{"INCRBYFLOAT", k, g.val()}
	case 28:
		return []string{"EXPIRE", k, strconv.Itoa(1000 + g.r.IntN(1000))}
	case 29:
		return []string{"PERSIST", k}
	case 30:
		return []string{"COPY", k, g.key(), g.pick("REPLACE", "DB", "")}
	case 31:
		return []string{"SELECT", g.pick("0", "1", "x")}
	case 32:
		return []string{"DECRBY", k, g.val()}
	case 33:
		return []string{"MSETNX", k, g.val(), g.key(), g.val()}
	case 34:
		return []string{"PING"}
	case 35:
		return []string{"ECHO", g.val()}
	case 36:
		return []string{"DBSIZE"}
	case 37:
		return []string{"SETEX", k, g.pick("100", "0", "x"), g.val()}
	case 38:
		return []string{"UNWATCH"}
	default:
		return []string{"EXPIRE", k, g.pick("0", "-1")} // deletes
	}
}

// TestTxDiffStream runs 1200 random transaction blocks over three seeds.
func TestTxDiffStream(t *testing.T) {
	_, ps := txPairs(t, 2)
	c1, c2 := ps[0], ps[1]
	blocks, execs, watched := 0, 0, 0
	for _, seed := range []uint64{1, 2, 3} {
		c1.Do("FLUSHALL")
		c1.Do("SELECT", "0")
		c2.Do("SELECT", "0")
		g := &txGen{r: rand.New(rand.NewPCG(seed, 0x7478)), keys: []string{"a", "b", "c", "d", "e"}}
		for i := 0; i < 400 && !t.Failed(); i++ {
			blocks++
			// Some traffic from the other client.
			for j := g.r.IntN(3); j > 0; j-- {
				c2.Do(g.cmd()...)
			}
			// A watch, raced or not by the other client.
			if g.r.IntN(3) == 0 {
				watched++
				args := []string{"WATCH"}
				for j := 1 + g.r.IntN(3); j > 0; j-- {
					args = append(args, g.key())
				}
				c1.Do(args...)
				if g.r.IntN(2) == 0 {
					c2.Do(g.cmd()...)
				}
				if g.r.IntN(10) == 0 {
					c1.Do(g.cmd()...) // the watching client's own command
				}
			}
			// Misplaced commands now and then.
			switch g.r.IntN(30) {
			case 0:
				c1.Do("EXEC")
			case 1:
				c1.Do("DISCARD")
			case 2:
				c1.Do("EXEC", "extra")
			}
			c1.Do("MULTI")
			for j := g.r.IntN(9); j > 0; j-- {
				switch g.r.IntN(60) {
				case 0:
					c1.Do("MULTI")
				case 1:
					c1.Do("WATCH", g.key())
				default:
					c1.Do(g.cmd()...)
				}
				if g.r.IntN(12) == 0 {
					c2.Do(g.cmd()...) // interleaved while queuing
				}
			}
			switch g.r.IntN(12) {
			case 0:
				c1.Do("DISCARD")
			case 1:
				c1.Do("EXEC", "extra") // refused EXEC: EXECABORT
			default:
				c1.Do("EXEC")
				execs++
			}
		}
		// The end state must agree too.
		for _, db := range []string{"0", "1"} {
			c1.Do("SELECT", db)
			for _, k := range g.keys {
				c1.Do("TYPE", k)
				c1.Do("GET", k)
				c1.Do("LRANGE", k, "0", "-1")
				c1.Do("PERSIST", k) // whether it had a TTL
			}
		}
	}
	t.Logf("%d blocks (%d EXECs, %d with WATCH), %d commands compared", blocks, execs, watched, c1.N+c2.N)
}
