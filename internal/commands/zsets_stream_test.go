package commands_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Randomized differential streams: every sorted-set command whose reply
// is deterministic, mixed over a few keys, sent to Abacus and redis-server
// with fixed seeds, replies compared byte for byte. Each seed runs once
// with the default limits (listpacks, converting as members grow) and once
// with small ones (frequent conversions, skiplists), so both encodings and
// the conversions between them are exercised.

// zsGen makes random sorted-set commands.
type zsGen struct {
	r    *rand.Rand
	pool int // distinct short members
	big  bool
}

var (
	zsKeys = []string{"z1", "z2", "z3"}
	// Scores as arguments: integers, fractions, infinities, -0, large,
	// and a few spellings strtod reads alike.
	zsScores = []string{"0", "1", "2", "3", "-1", "-2", "10", "0.5", "-0.5", "1.25", "0.1", "0.2",
		"0.30000000000000004", "1e-3", "1e18", "-1e18", "4611686018427387904", "inf", "-inf", "+inf",
		"-0", "7", "7.0", "1e1", "3.3333333333333335", "100", "-100", "2.5e-7"}
	zsBad = []string{"x", "nan", "", "1 ", "(", "[a", "1e400"}
)

func (g *zsGen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }
func (g *zsGen) key() string             { return g.pick(zsKeys) }
func (g *zsGen) n(k int) int             { return g.r.IntN(k) }
func (g *zsGen) chance(p float64) bool   { return g.r.Float64() < p }

func (g *zsGen) member() string {
	switch {
	case g.chance(0.05):
		return "member-with-a-long-name-" + fmt.Sprint(g.n(6))
	case g.chance(0.03):
		return ""
	case g.chance(0.03):
		return "\x00bin\xff" + fmt.Sprint(g.n(3))
	}
	return "m" + fmt.Sprint(g.n(g.pool))
}

func (g *zsGen) lexMember() string {
	const letters = "abcdefgh"
	n := 1 + g.n(3)
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[g.n(len(letters))]
	}
	return string(b)
}

func (g *zsGen) score() string {
	if g.chance(0.02) {
		return g.pick(zsBad)
	}
	return g.pick(zsScores)
}

// rangeEnd is a ZRANGEBYSCORE bound: a score, maybe exclusive.
func (g *zsGen) rangeEnd() string {
	if g.chance(0.02) {
		return g.pick(zsBad)
	}
	s := g.pick(zsScores)
	if g.chance(0.3) {
		s = "(" + s
	}
	return s
}

func (g *zsGen) lexEnd() string {
	switch g.n(10) {
	case 0:
		return "-"
	case 1:
		return "+"
	case 2:
		if g.chance(0.2) {
			return g.pick([]string{"x", "", "]a"})
		}
	}
	if g.chance(0.5) {
		return "(" + g.lexMember()
	}
	return "[" + g.lexMember()
}

func (g *zsGen) index() string {
	if g.chance(0.02) {
		return g.pick([]string{"x", "1.5"})
	}
	return fmt.Sprint(g.n(30) - 15)
}

// dest is a *STORE destination: sometimes a source key itself, but not in
// big mode, where the sets must grow.
func (g *zsGen) dest(k string) string {
	if g.big {
		return g.pick([]string{"d1", "d2"})
	}
	return g.pick([]string{"d1", "d2", k})
}

func (g *zsGen) limit(args []string) []string {
	if g.chance(0.3) {
		args = append(args, "LIMIT", fmt.Sprint(g.n(8)-1), fmt.Sprint(g.n(8)-2))
	}
	return args
}

// numkeys returns numkeys and the keys of an algebra command.
func (g *zsGen) sources() []string {
	n := 1 + g.n(3)
	out := []string{fmt.Sprint(n)}
	for i := 0; i < n; i++ {
		if g.chance(0.1) {
			out = append(out, "lx")
		} else {
			out = append(out, g.key())
		}
	}
	return out
}

func (g *zsGen) algebraOpts(n int, weights bool) []string {
	var out []string
	if weights && g.chance(0.3) {
		out = append(out, "WEIGHTS")
		for i := 0; i < n; i++ {
			out = append(out, g.pick([]string{"1", "2", "-1", "0", "0.5", "inf", "-inf", "3"}))
		}
	}
	if weights && g.chance(0.3) {
		out = append(out, "AGGREGATE", g.pick([]string{"SUM", "MIN", "MAX", "min"}))
	}
	return out
}

func (g *zsGen) next() []string {
	k := g.key()
	if g.big && g.chance(0.25) {
		// Grow the sets past the listpack limit and their B+tree past one
		// leaf.
		args := []string{"ZADD", k}
		for i := 0; i < 5+g.n(20); i++ {
			args = append(args, g.pick(zsScores), g.member())
		}
		return args
	}
	switch g.n(40) {
	case 0, 1, 2, 3, 4, 5:
		args := []string{"ZADD", k}
		if g.chance(0.3) {
			args = append(args, g.pick([]string{"NX", "XX", "GT", "LT", "CH", "INCR", "XX CH", "GT CH", "NX CH", "LT XX"}))
			args = append(args[:2], strings.Fields(args[2])...)
		}
		pairs := 1 + g.n(4)
		if g.big {
			pairs = 1 + g.n(12)
		}
		for i := 0; i < pairs; i++ {
			args = append(args, g.score(), g.member())
		}
		return args
	case 6:
		args := []string{"ZADD", "lx"}
		for i := 0; i < 1+g.n(5); i++ {
			args = append(args, "0", g.lexMember())
		}
		return args
	case 7, 8:
		return []string{"ZINCRBY", k, g.score(), g.member()}
	case 9:
		return []string{"ZSCORE", k, g.member()}
	case 10:
		return []string{"ZMSCORE", k, g.member(), g.member(), g.member()}
	case 11:
		return []string{"ZCARD", g.pick([]string{k, "lx"})}
	case 12:
		return []string{"ZCOUNT", k, g.rangeEnd(), g.rangeEnd()}
	case 13:
		return []string{"ZLEXCOUNT", "lx", g.lexEnd(), g.lexEnd()}
	case 14:
		return []string{g.pick([]string{"ZRANK", "ZREVRANK"}), k, g.member()}
	case 15, 16:
		args := []string{"ZRANGE", k, g.index(), g.index()}
		if g.chance(0.3) {
			args = append(args, "REV")
		}
		if g.chance(0.5) {
			args = append(args, "WITHSCORES")
		}
		return args
	case 17, 18:
		args := []string{"ZRANGE", k, g.rangeEnd(), g.rangeEnd(), "BYSCORE"}
		if g.chance(0.4) {
			args = append(args, "REV")
		}
		if g.chance(0.5) {
			args = append(args, "WITHSCORES")
		}
		return g.limit(args)
	case 19:
		args := []string{"ZRANGE", "lx", g.lexEnd(), g.lexEnd(), "BYLEX"}
		if g.chance(0.4) {
			args = append(args, "REV")
		}
		return g.limit(args)
	case 20:
		cmd := g.pick([]string{"ZRANGEBYSCORE", "ZREVRANGEBYSCORE"})
		args := []string{cmd, k, g.rangeEnd(), g.rangeEnd()}
		if g.chance(0.5) {
			args = append(args, "WITHSCORES")
		}
		return g.limit(args)
	case 21:
		cmd := g.pick([]string{"ZRANGEBYLEX", "ZREVRANGEBYLEX"})
		return g.limit([]string{cmd, "lx", g.lexEnd(), g.lexEnd()})
	case 22:
		args := []string{"ZREVRANGE", k, g.index(), g.index()}
		if g.chance(0.5) {
			args = append(args, "WITHSCORES")
		}
		return args
	case 23:
		dst := g.dest(k)
		switch g.n(3) {
		case 0:
			return []string{"ZRANGESTORE", dst, g.key(), g.index(), g.index()}
		case 1:
			return g.limit([]string{"ZRANGESTORE", dst, g.key(), g.rangeEnd(), g.rangeEnd(), "BYSCORE"})
		}
		return g.limit([]string{"ZRANGESTORE", dst, "lx", g.lexEnd(), g.lexEnd(), "BYLEX"})
	case 24, 25:
		if g.big && g.chance(0.7) {
			return []string{"ZSCORE", k, g.member()}
		}
		return []string{"ZREM", k, g.member(), g.member()}
	case 26:
		return []string{"ZREMRANGEBYRANK", k, g.index(), g.index()}
	case 27:
		return []string{"ZREMRANGEBYSCORE", k, g.rangeEnd(), g.rangeEnd()}
	case 28:
		return []string{"ZREMRANGEBYLEX", "lx", g.lexEnd(), g.lexEnd()}
	case 29, 30:
		cmd := g.pick([]string{"ZUNION", "ZINTER", "ZDIFF"})
		src := g.sources()
		args := append([]string{cmd}, src...)
		args = append(args, g.algebraOpts(len(src)-1, cmd != "ZDIFF")...)
		if g.chance(0.7) {
			args = append(args, "WITHSCORES")
		}
		return args
	case 31, 32:
		cmd := g.pick([]string{"ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"})
		src := g.sources()
		args := append([]string{cmd, g.dest(k)}, src...)
		return append(args, g.algebraOpts(len(src)-1, cmd != "ZDIFFSTORE")...)
	case 33:
		args := append([]string{"ZINTERCARD"}, g.sources()...)
		if g.chance(0.5) {
			args = append(args, "LIMIT", fmt.Sprint(g.n(4)))
		}
		return args
	case 34:
		args := []string{g.pick([]string{"ZPOPMIN", "ZPOPMAX"}), k}
		if g.chance(0.6) {
			args = append(args, fmt.Sprint(g.n(5)))
		}
		return args
	case 35:
		args := []string{"ZMPOP", "2", g.pick([]string{"nokey", "d1"}), k, g.pick([]string{"MIN", "MAX"})}
		if g.chance(0.5) {
			args = append(args, "COUNT", fmt.Sprint(1+g.n(4)))
		}
		return args
	case 36:
		return []string{"OBJECT", "ENCODING", g.pick([]string{k, "d1", "d2", "lx"})}
	case 37:
		if g.chance(0.3) && !g.big {
			return []string{"DEL", k}
		}
		return []string{"EXISTS", k, "d1", "d2"}
	case 38:
		// Type errors: the same commands against a string.
		return []string{g.pick([]string{"ZADD", "ZINCRBY"}), "str", "1", "m"}
	}
	// A count above any set's size: the whole set, deterministically.
	return []string{"ZRANDMEMBER", k, fmt.Sprint(g.pool + 20 + g.n(10)), "WITHSCORES"}
}

var zsStreamDebug = false

func TestZsetDiffStream(t *testing.T) {
	const n = 3000
	for _, seed := range []uint64{1, 2, 3} {
		for _, mode := range []struct {
			entries, value string
			pool           int
		}{{"128", "64", 40}, {"6", "5", 40}, {"128", "64", 400}} {
			name := fmt.Sprintf("seed%d-%s-%s-pool%d", seed, mode.entries, mode.value, mode.pool)
			t.Run(name, func(t *testing.T) {
				d, _ := zsDiff(t)
				zsSetLimits(t, d, mode.entries, mode.value)
				d.Do("SET", "str", "v")
				g := &zsGen{r: rand.New(rand.NewPCG(seed, 0x25e7)), pool: mode.pool, big: mode.pool > 100}
				zsRunStream(t, d, g, n)
			})
		}
	}
}

// zsRunStream sends n generated commands to both servers; the first
// difference fails the test with the commands that led to it. Every 100
// commands, a full ZSCAN of each key is compared as a map.
func zsRunStream(t *testing.T, d *servertest.Diff, g *zsGen, n int) {
	t.Helper()
	var history []string
	d.Do("CONFIG", "RESETSTAT")
	for i := 0; i < n; i++ {
		args := g.next()
		req := servertest.Encode(args...)
		d.A.Write(req)
		d.R.Write(req)
		a, r := d.A.Read(), d.R.Read()
		history = append(history, fmt.Sprintf("%q", args))
		if zsStreamDebug {
			t.Logf("%q -> %.80q", args, a)
		}
		if a != r {
			from := max(0, len(history)-25)
			t.Fatalf("command %d differs:\n%s\n abacus: %q\n  redis: %q", i, strings.Join(history[from:], "\n"), a, r)
		}
		if i%100 == 99 {
			// Reads count keyspace hits and misses, writes do not, as in
			// Redis. The full ZSCANs below take a different number of
			// calls on each side, so the counters restart after them.
			a, r := zsStats(t, d.A), zsStats(t, d.R)
			if a != r {
				t.Fatalf("after command %d: hits/misses %v, redis %v\n%s", i, a, r, strings.Join(history[max(0, len(history)-25):], "\n"))
			}
			for _, k := range append(zsKeys, "lx", "d1", "d2") {
				zsSameScan(t, d, k)
				if t.Failed() {
					t.Fatalf("after command %d:\n%s", i, strings.Join(history[max(0, len(history)-25):], "\n"))
				}
			}
			d.Do("CONFIG", "RESETSTAT")
		}
	}
}

// zsStats reads keyspace_hits and keyspace_misses from INFO stats.
func zsStats(t *testing.T, c *servertest.Conn) [2]string {
	t.Helper()
	info := servertest.MustParse(t, c.Do("INFO", "stats")).Str
	var out [2]string
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "keyspace_hits:"); ok {
			out[0] = v
		}
		if v, ok := strings.CutPrefix(line, "keyspace_misses:"); ok {
			out[1] = v
		}
	}
	if out[0] == "" || out[1] == "" {
		t.Fatalf("no keyspace_hits/misses in INFO stats")
	}
	return out
}
