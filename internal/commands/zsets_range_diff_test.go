package commands_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// Ranges over sorted sets large enough for a B+tree of several levels,
// against redis-server: the replies are streamed from the set (zset.Span),
// and with LIMIT the walk starts from one descent and counts its window in
// the leaves, so offsets and counts that cross leaves, ties of equal
// scores across leaf boundaries, REV, WITHSCORES in RESP2 and RESP3, and
// LIMIT's negative and huge values are what this exercises.

const zsRangeBig = 3000

// zsRangeFill creates "big" (scores in runs of 7 equal ones, from -200,
// plus -inf and +inf members) and "lex" (one score, members that are
// prefixes of one another), inserting in a shuffled order.
func zsRangeFill(t *testing.T, d interface{ Do(...string) string }, r *rand.Rand) {
	t.Helper()
	args := []string{"ZADD", "big"}
	for _, i := range r.Perm(zsRangeBig) {
		args = append(args, strconv.Itoa(i/7-200), fmt.Sprintf("m%05d", i))
		if len(args) > 400 {
			d.Do(args...)
			args = args[:2]
		}
	}
	args = append(args, "-inf", "lowest", "+inf", "highest", "-inf", "lowest2")
	d.Do(args...)
	args = []string{"ZADD", "lex"}
	for _, i := range r.Perm(zsRangeBig) {
		m := strconv.Itoa(i)
		if i%10 == 0 {
			m = m[:len(m)-1] // prefixes: "12" beside "120".."129"
		}
		args = append(args, "0", m)
		if len(args) > 400 {
			d.Do(args...)
			args = args[:2]
		}
	}
	d.Do(args...)
}

type zsRangeGen struct{ r *rand.Rand }

func (g zsRangeGen) score() string {
	switch g.r.IntN(12) {
	case 0:
		return "-inf"
	case 1:
		return "+inf"
	case 2:
		return "(" + strconv.Itoa(g.r.IntN(450)-210)
	case 3:
		return strconv.Itoa(g.r.IntN(450)-210) + ".5"
	}
	return strconv.Itoa(g.r.IntN(450) - 210)
}

// scoreBounds draws min and max, crossed only now and then.
func (g zsRangeGen) scoreBounds() (string, string) {
	lo, hi := g.score(), g.score()
	val := func(b string) float64 {
		v, _ := strconv.ParseFloat(strings.TrimPrefix(b, "("), 64)
		return v
	}
	if val(lo) > val(hi) && g.r.IntN(6) != 0 {
		lo, hi = hi, lo
	}
	return lo, hi
}

// lexBounds is scoreBounds for lex ranges.
func (g zsRangeGen) lexBounds() (string, string) {
	lo, hi := g.lex(), g.lex()
	key := func(b string) string {
		switch b {
		case "-":
			return ""
		case "+":
			return "\xff"
		}
		return b[1:]
	}
	if key(lo) > key(hi) && g.r.IntN(6) != 0 {
		lo, hi = hi, lo
	}
	return lo, hi
}

func (g zsRangeGen) lex() string {
	switch g.r.IntN(10) {
	case 0:
		return "-"
	case 1:
		return "+"
	case 2, 3:
		return "(" + strconv.Itoa(g.r.IntN(zsRangeBig))
	}
	return "[" + strconv.Itoa(g.r.IntN(zsRangeBig))
}

// limit draws LIMIT offset count, or none (when a range may be wide, only
// with a count, to keep replies short).
func (g zsRangeGen) limit(wide bool) []string {
	offsets := []string{"0", "0", "0", "1", strconv.Itoa(g.r.IntN(10)), strconv.Itoa(g.r.IntN(200)),
		strconv.Itoa(g.r.IntN(zsRangeBig + 20)), "-1", "9223372036854775807"}
	counts := []string{"0", "1", "100", strconv.Itoa(g.r.IntN(300)), "9223372036854775807", "-1", "-5"}
	if !wide && g.r.IntN(3) == 0 {
		return nil
	}
	c := counts[g.r.IntN(len(counts))]
	if wide && (c == "-1" || c == "-5" || c == "9223372036854775807") {
		c = "130"
	}
	return []string{"LIMIT", offsets[g.r.IntN(len(offsets))], c}
}

func (g zsRangeGen) command() []string {
	withScores := g.r.IntN(2) == 0
	var cmd []string
	switch g.r.IntN(9) {
	case 0, 1: // ZRANGEBYSCORE / ZREVRANGEBYSCORE
		lo, hi := g.scoreBounds()
		name := "ZRANGEBYSCORE"
		if g.r.IntN(2) == 0 {
			name, lo, hi = "ZREVRANGEBYSCORE", hi, lo
		}
		cmd = append([]string{name, "big", lo, hi}, g.limit(true)...)
	case 2, 3: // ZRANGE ... BYSCORE [REV]
		lo, hi := g.scoreBounds()
		cmd = []string{"ZRANGE", "big", lo, hi, "BYSCORE"}
		if g.r.IntN(2) == 0 {
			cmd = []string{"ZRANGE", "big", hi, lo, "BYSCORE", "REV"}
		}
		cmd = append(cmd, g.limit(true)...)
	case 4: // ranks
		start := g.r.IntN(zsRangeBig+10) - 5
		stop := start + g.r.IntN(150) - 10
		if g.r.IntN(4) == 0 {
			start, stop = -start, -stop+100
		}
		name := "ZRANGE"
		if g.r.IntN(2) == 0 {
			name = "ZREVRANGE"
		}
		cmd = []string{name, "big", strconv.Itoa(start), strconv.Itoa(stop)}
		if name == "ZRANGE" && g.r.IntN(2) == 0 {
			cmd = append(cmd, "REV")
		}
	case 5, 6: // ZRANGEBYLEX / ZREVRANGEBYLEX
		lo, hi := g.lexBounds()
		name := "ZRANGEBYLEX"
		if g.r.IntN(2) == 0 {
			name, lo, hi = "ZREVRANGEBYLEX", hi, lo
		}
		return append([]string{name, "lex", lo, hi}, g.limit(true)...)
	case 7: // ZRANGE ... BYLEX [REV]
		lo, hi := g.lexBounds()
		cmd = []string{"ZRANGE", "lex", lo, hi, "BYLEX"}
		if g.r.IntN(2) == 0 {
			cmd = []string{"ZRANGE", "lex", hi, lo, "BYLEX", "REV"}
		}
		return append(cmd, g.limit(true)...)
	case 8: // ZRANGESTORE, then what it stored
		lo, hi := g.scoreBounds()
		cmd = []string{"ZRANGESTORE", "dst", "big", lo, hi, "BYSCORE"}
		if g.r.IntN(2) == 0 {
			cmd = []string{"ZRANGESTORE", "dst", "big", hi, lo, "BYSCORE", "REV"}
		}
		return append(cmd, g.limit(true)...)
	}
	if withScores {
		cmd = append(cmd, "WITHSCORES")
	}
	return cmd
}

func TestZsetDiffRangeLarge(t *testing.T) {
	for _, proto := range []int{2, 3} {
		for _, seed := range []uint64{1, 2} {
			t.Run(fmt.Sprintf("resp%d-seed%d", proto, seed), func(t *testing.T) {
				d, _ := zsDiff(t)
				if proto == 3 {
					zsResp3(t, d)
				}
				r := rand.New(rand.NewPCG(seed, 0x2a2a))
				zsRangeFill(t, d, r)
				d.Lines(`
					OBJECT ENCODING big
					ZCARD big
					ZCARD lex
				`)
				g := zsRangeGen{r}
				for i := 0; i < 1500; i++ {
					cmd := g.command()
					d.Do(cmd...)
					if cmd[0] == "ZRANGESTORE" {
						d.Do("ZRANGE", "dst", "0", "-1", "WITHSCORES")
					}
					if t.Failed() {
						t.Fatalf("stopped after command %d", i)
					}
				}
			})
		}
	}
}

// TestZsetDiffRangeLargeFixed: the ends of a large set and windows at its
// edges, in both protocols.
func TestZsetDiffRangeLargeFixed(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("resp%d", proto), func(t *testing.T) {
			d, _ := zsDiff(t)
			if proto == 3 {
				zsResp3(t, d)
			}
			zsRangeFill(t, d, rand.New(rand.NewPCG(3, 3)))
			d.Lines(`
				ZRANGEBYSCORE big -inf +inf LIMIT 0 3 WITHSCORES
				ZRANGEBYSCORE big -inf +inf LIMIT 3000 10 WITHSCORES
				ZRANGEBYSCORE big -inf +inf LIMIT 3002 10
				ZRANGEBYSCORE big -inf +inf LIMIT 3003 10
				ZRANGEBYSCORE big (-inf (+inf LIMIT 0 2
				ZRANGEBYSCORE big (-inf (+inf LIMIT 2996 10
				ZRANGEBYSCORE big +inf +inf LIMIT 0 5 WITHSCORES
				ZRANGEBYSCORE big -inf -inf LIMIT 0 5 WITHSCORES
				ZRANGEBYSCORE big -inf -inf LIMIT 1 5
				ZRANGEBYSCORE big 228 +inf LIMIT 0 100 WITHSCORES
				ZRANGEBYSCORE big 10 10 LIMIT 0 100 WITHSCORES
				ZRANGEBYSCORE big (10 10 LIMIT 0 100
				ZRANGEBYSCORE big 10 (11 LIMIT 3 -1 WITHSCORES
				ZRANGEBYSCORE big 11 10 LIMIT 0 100
				ZRANGEBYSCORE big 0 +inf LIMIT 0 0
				ZRANGEBYSCORE big 0 +inf LIMIT -1 10
				ZRANGEBYSCORE big 0 +inf LIMIT 9223372036854775807 9223372036854775807
				ZRANGEBYSCORE big 0 5 LIMIT 0 9223372036854775807 WITHSCORES
				ZREVRANGEBYSCORE big +inf -inf LIMIT 0 3 WITHSCORES
				ZREVRANGEBYSCORE big +inf -inf LIMIT 3000 10 WITHSCORES
				ZREVRANGEBYSCORE big +inf -inf LIMIT 3003 10
				ZREVRANGEBYSCORE big (+inf (-inf LIMIT 2996 10 WITHSCORES
				ZREVRANGEBYSCORE big -inf -inf LIMIT 0 5
				ZREVRANGEBYSCORE big 10 10 LIMIT 2 3 WITHSCORES
				ZREVRANGEBYSCORE big 10 (10 LIMIT 0 3
				ZREVRANGEBYSCORE big -190 -inf LIMIT 60 -1 WITHSCORES
				ZREVRANGEBYSCORE big 5 0 LIMIT 0 9223372036854775807
				ZRANGE big -inf +inf BYSCORE REV LIMIT 1 2 WITHSCORES
				ZRANGE big +inf -inf BYSCORE REV LIMIT 1 2 WITHSCORES
				ZRANGE big 0 -1 REV LIMIT 0 2
				ZRANGE big 0 2 WITHSCORES
				ZRANGE big -3 -1 WITHSCORES
				ZRANGE big 0 2 REV WITHSCORES
				ZREVRANGE big 2998 3005 WITHSCORES
				ZRANGEBYLEX lex - + LIMIT 0 5
				ZRANGEBYLEX lex - + LIMIT 2995 10
				ZRANGEBYLEX lex [12 [13 LIMIT 0 20
				ZRANGEBYLEX lex (12 [13 LIMIT 1 -1
				ZRANGEBYLEX lex [999 + LIMIT 0 100
				ZRANGEBYLEX lex + - LIMIT 0 5
				ZREVRANGEBYLEX lex + - LIMIT 0 5
				ZREVRANGEBYLEX lex + - LIMIT 2995 10
				ZREVRANGEBYLEX lex [13 (12 LIMIT 2 5
				ZREVRANGEBYLEX lex - + LIMIT 0 5
				ZRANGE lex [5 [6 BYLEX REV LIMIT 0 3
				ZRANGE lex - + BYLEX LIMIT 0 3 WITHSCORES
				ZRANGESTORE dst big 0 +inf BYSCORE LIMIT 10 5
				ZRANGE dst 0 -1 WITHSCORES
				ZRANGESTORE dst big +inf 0 BYSCORE REV LIMIT 10 200
				OBJECT ENCODING dst
				ZRANGE dst 0 2 WITHSCORES
			`)
		})
	}
}
