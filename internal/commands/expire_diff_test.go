package commands_test

import (
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Differential tests of the expiry commands. TTL readings go through skDo,
// which allows the clock drift between the servers; absolute expiry times
// (EXPIRETIME after EXPIREAT) must match exactly.

func TestExpireDiffFixed(t *testing.T) {
	d, inst := servertest.StartDiff(t)
	skNonString(t, d, inst, 0, "list")
	dc := newSkDirtyCheck(t, d)
	skLines(t, d, `
EXPIRE nokey 100
EXPIRE nokey abc
EXPIRE nokey 10 FOO
EXPIRE nokey 10 NX XX
SET k v
EXPIRE k 100000
TTL k
PTTL k
EXPIRE k 100000 NX
EXPIRE k 200000 XX
TTL k
EXPIRE k 100 GT
EXPIRE k 300000 GT
TTL k
EXPIRE k 400000 LT
EXPIRE k 100000 LT
TTL k
EXPIRE k 100 NX XX
EXPIRE k 100 NX GT
EXPIRE k 100 NX LT
EXPIRE k 100 XX NX
EXPIRE k 100 GT LT
EXPIRE k 100 LT GT
EXPIRE k 100 NX GT LT
EXPIRE k 100 XX GT
EXPIRE k 100 XX LT
TTL k
EXPIRE k 100 FOO
EXPIRE k 100 nx FOO
EXPIRE k 100 FOO nx xx
EXPIRE k 100 nx nx
EXPIRE k abc
EXPIRE k 1.5
EXPIRE k ""
EXPIRE k
EXPIRE
EXPIRE k 9223372036854775807
EXPIRE k 9223372036854775
EXPIRE k 9223372036854774
EXPIRE k -9223372036854775808
EXPIRE k -9223372036854775807
EXPIRE k -9223372036854775
SET k v
EXPIRE k -9223372036854775
EXISTS k
SET k v
PEXPIRE k 9223372036854775807
PEXPIRE k 9223372036854775000
PEXPIRE k -9223372036854775808
EXISTS k
SET k v
EXPIREAT k 9223372036854775
PEXPIRETIME k
EXPIREAT k 9223372036854776
EXPIREAT k -9223372036854775
PEXPIREAT k 9223372036854775807
PEXPIRETIME k
EXPIRETIME k
SET k v
PERSIST k
EXPIRE k 100 GT
EXPIRE k 100 XX
TTL k
EXPIRE k 100000 LT
TTL k
PERSIST k
PERSIST k
TTL k
PERSIST nokey
PERSIST list
EXPIRE k -1
EXISTS k
SET k v
EXPIRE k 0
EXISTS k
SET k v
PEXPIRE k 0
SET k v
PEXPIRE k -5
SET k v
EXPIREAT k 1
SET k v
PEXPIREAT k 1
SET k v
EXPIREAT k 0
SET k v
PEXPIREAT k -1
EXISTS k
SET k v
EXPIRE k -10 XX
EXPIRE k -10 GT
EXISTS k
EXPIRE k -10 NX
EXISTS k
SET k v
EXPIRE k -10 LT
EXISTS k
SET k v
EXPIREAT k 4102444800
EXPIRE k -10 LT
EXISTS k
SET k v
EXPIREAT k 4102444800
EXPIRE k -10 GT
EXPIRE k -10 XX
EXISTS k
TTL nokey
PTTL nokey
EXPIRETIME nokey
PEXPIRETIME nokey
SET k v
TTL k
PTTL k
EXPIRETIME k
PEXPIRETIME k
EXPIREAT k 4102444800
EXPIRETIME k
PEXPIRETIME k
PEXPIREAT k 4102444800499
EXPIRETIME k
PEXPIRETIME k
PEXPIREAT k 4102444800500
EXPIRETIME k
PEXPIREAT k 4102444800500 NX
PEXPIREAT k 4102444800500 GT
PEXPIREAT k 4102444800501 GT
PEXPIREAT k 4102444800501 LT
PEXPIREAT k 4102444800500 LT
PEXPIRETIME k
EXPIREAT k 4102444801 XX
PEXPIRETIME k
EXPIRE list 100000
TTL list
TYPE list
PERSIST list
TTL list
TTL
TTL a b
PERSIST
SET k v EXAT 4102444800
GET k
SET k v2 KEEPTTL
EXPIRETIME k
SET k v3
EXPIRETIME k
`)
	d.Do("SET", "k", "v")
	d.Do("EXPIRE", "k", "100", "nx\x00")
	d.Do("EXPIRE", "k", "100", "FOO\x00BAR")
	d.Do("EXPIRE", "k", "100", "")
	dc.check(t, d, "TestExpireDiffFixed")
}

// TestExpireDiffStream runs random expiry-heavy streams. Relative expiry
// (EXPIRE, PEXPIRE, SET EX) is never combined with GT or LT, whose
// outcome could then hang on the millisecond the two servers see; the
// absolute forms take every option.
func TestExpireDiffStream(t *testing.T) {
	for _, seed := range []uint64{21, 22, 23} {
		t.Run("seed"+strconv.FormatUint(seed, 10), func(t *testing.T) {
			d, _ := servertest.StartDiff(t)
			g := newSkGen(seed, 5)
			dc := newSkDirtyCheck(t, d)
			for i := 0; i < 2500; i++ {
				g.expireStep(t, d)
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

func (g *skGen) expireStep(t *testing.T, d *servertest.Diff) {
	t.Helper()
	k := g.key()
	opts := func(all bool) []string {
		var o []string
		choices := []string{"NX", "XX"}
		if all {
			choices = append(choices, "GT", "LT")
		}
		for g.r.IntN(3) == 0 {
			o = append(o, choices[g.r.IntN(len(choices))])
		}
		return o
	}
	switch g.r.IntN(20) {
	case 0, 1, 2:
		args := []string{"SET", k, g.value()}
		switch g.r.IntN(5) {
		case 0:
			args = append(args, "EX", strconv.Itoa(100000+g.r.IntN(100)))
		case 1:
			args = append(args, "PXAT", g.farExpireAt(true))
		case 2:
			args = append(args, "KEEPTTL")
		}
		d.Do(args...)
	case 3, 4:
		secs := strconv.Itoa(100000 + g.r.IntN(100))
		if g.r.IntN(6) == 0 {
			secs = strconv.Itoa(-g.r.IntN(100))
		}
		d.Do(append([]string{g.pick("EXPIRE", "PEXPIRE"), k, secs}, opts(false)...)...)
	case 5, 6, 7:
		at := g.farExpireAt(false)
		if g.r.IntN(6) == 0 {
			at = strconv.Itoa(g.r.IntN(1000000))
		}
		d.Do(append([]string{"EXPIREAT", k, at}, opts(true)...)...)
	case 8, 9:
		d.Do(append([]string{"PEXPIREAT", k, g.farExpireAt(true)}, opts(true)...)...)
	case 10:
		d.Do("PERSIST", k)
	case 11, 12:
		skDo(t, d, g.pick("TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"), k)
	case 13:
		switch g.r.IntN(4) {
		case 0:
			d.Do("GETEX", k, "PERSIST")
		case 1:
			d.Do("GETEX", k, "EXAT", g.farExpireAt(false))
		case 2:
			d.Do("GETEX", k, "PXAT", strconv.Itoa(g.r.IntN(1000)))
		default:
			d.Do("GETEX", k, "EX", strconv.Itoa(100000+g.r.IntN(100)))
		}
	case 14:
		d.Do("RENAME", k, g.key())
	case 15:
		d.Do("COPY", k, g.key(), "REPLACE")
	case 16:
		d.Do("DEL", k)
	case 17:
		d.Do("EXISTS", k)
	case 18:
		d.Do("DBSIZE")
	default:
		if g.r.IntN(2) == 0 {
			d.Do("INCR", k)
		} else {
			d.Do("APPEND", k, "1")
		}
	}
}
