package commands_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// Streamed range replies (zset.Span) against redis-server on a set deep
// enough for inner nodes below the root (20000 members), with scores whose
// formatting is delicate (0.1, 1e-300, -0, 2^53+1, 1.7976931348623157e308,
// long fractions) in both protocols, and the edges the randomized test
// draws rarely: empty ranges inside the set, offsets at and past the
// span's end, exclusive bounds on a score shared by a run across leaves,
// lex bounds "-" and "+" on either side, and a missing key.
func TestZsetDiffSpanDeep(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("resp%d", proto), func(t *testing.T) {
			d, _ := zsDiff(t)
			if proto == 3 {
				zsResp3(t, d)
			}
			odd := []string{"0.1", "1e-300", "-0", "9007199254740993", "1.7976931348623157e308",
				"-1.7976931348623157e308", "3.3333333333333335", "123456.789", "5e-324", "-2.5", "1e21", "+inf", "-inf"}
			r := rand.New(rand.NewPCG(11, 12))
			args := []string{"ZADD", "deep"}
			for _, i := range r.Perm(20000) {
				sc := strconv.Itoa(i/400 - 20) // runs of 400 equal scores: several leaves each
				if i%500 == 7 {
					sc = odd[(i/500)%len(odd)]
				}
				args = append(args, sc, fmt.Sprintf("m%05d", i))
				if len(args) > 1000 {
					d.Do(args...)
					args = args[:2]
				}
			}
			d.Do(args...)
			if got := d.Do("ZCARD", "deep"); got != ":20000\r\n" {
				t.Fatalf("ZCARD deep: %q", got)
			}
			args = []string{"ZADD", "lexdeep"}
			for i := 0; i < 20000; i++ {
				args = append(args, "0", fmt.Sprintf("%05d", i))
				if len(args) > 1000 {
					d.Do(args...)
					args = args[:2]
				}
			}
			d.Do(args...)
			d.Lines(`
				ZRANGEBYSCORE deep 0.1 0.1 WITHSCORES
				ZRANGEBYSCORE deep -inf -1e300 WITHSCORES
				ZRANGEBYSCORE deep 1e300 +inf WITHSCORES
				ZRANGEBYSCORE deep (0 (0.2 WITHSCORES
				ZRANGEBYSCORE deep -0 0 LIMIT 0 3 WITHSCORES
				ZRANGEBYSCORE deep 1e-320 1e-200 WITHSCORES
				ZRANGEBYSCORE deep 9007199254740992 9007199254740994 WITHSCORES
				ZRANGEBYSCORE deep 3 3.1 LIMIT 0 0 WITHSCORES
				ZRANGEBYSCORE deep 3.2 3.9 WITHSCORES
				ZRANGEBYSCORE deep (3 (4 WITHSCORES
				ZRANGEBYSCORE deep (3 4 LIMIT 399 3 WITHSCORES
				ZRANGEBYSCORE deep (3 4 LIMIT 400 3 WITHSCORES
				ZRANGEBYSCORE deep 3 (4 LIMIT 398 5 WITHSCORES
				ZRANGEBYSCORE deep 3 (4 LIMIT 399 5 WITHSCORES
				ZRANGEBYSCORE deep 3 (4 LIMIT 400 5
				ZREVRANGEBYSCORE deep (4 3 LIMIT 398 5 WITHSCORES
				ZREVRANGEBYSCORE deep 4 (3 LIMIT 399 5 WITHSCORES
				ZREVRANGEBYSCORE deep (4 (3 LIMIT 0 2 WITHSCORES
				ZREVRANGEBYSCORE deep (4 (3 LIMIT 397 9 WITHSCORES
				ZREVRANGEBYSCORE deep -1e300 -inf WITHSCORES
				ZRANGE deep (3 (4 BYSCORE LIMIT 390 20 WITHSCORES
				ZRANGE deep (4 (3 BYSCORE REV LIMIT 390 20 WITHSCORES
				ZRANGE deep 5 5 BYSCORE REV LIMIT 0 2 WITHSCORES
				ZRANGEBYSCORE deep -inf +inf LIMIT 19999 5 WITHSCORES
				ZRANGEBYSCORE deep -inf +inf LIMIT 20000 5
				ZRANGEBYSCORE deep -inf +inf LIMIT 25000 5
				ZREVRANGEBYSCORE deep +inf -inf LIMIT 19999 5 WITHSCORES
				ZREVRANGEBYSCORE deep +inf -inf LIMIT 20000 5
				ZRANGEBYSCORE deep -inf +inf LIMIT 8000 3 WITHSCORES
				ZREVRANGEBYSCORE deep +inf -inf LIMIT 8000 3 WITHSCORES
				ZRANGEBYSCORE deep 2 3 LIMIT 0 -1 WITHSCORES
				ZRANGE deep 0 4 WITHSCORES
				ZRANGE deep -5 -1 WITHSCORES
				ZRANGE deep 10000 10004 REV WITHSCORES
				ZRANGE deep 19999 30000 WITHSCORES
				ZRANGE deep 20000 30000
				ZRANGE deep 5 4
				ZRANGE deep -30000 2 WITHSCORES
				ZRANGEBYSCORE missing -inf +inf WITHSCORES
				ZRANGE missing 0 -1 WITHSCORES
				ZRANGEBYLEX missing - +
				ZRANGEBYLEX lexdeep - [00002
				ZRANGEBYLEX lexdeep (19997 +
				ZRANGEBYLEX lexdeep + -
				ZRANGEBYLEX lexdeep - -
				ZRANGEBYLEX lexdeep + +
				ZRANGEBYLEX lexdeep - + LIMIT 19998 5
				ZRANGEBYLEX lexdeep - + LIMIT 20000 5
				ZREVRANGEBYLEX lexdeep + - LIMIT 19998 5
				ZREVRANGEBYLEX lexdeep - + LIMIT 0 5
				ZREVRANGEBYLEX lexdeep [00003 - 
				ZREVRANGEBYLEX lexdeep + (19996
				ZRANGEBYLEX lexdeep (05000 (05001
				ZRANGEBYLEX lexdeep [05000 (05001
				ZRANGEBYLEX lexdeep (05000 [05001
				ZRANGEBYLEX lexdeep [0500 (05003
				ZRANGEBYLEX lexdeep [05000 [05000 LIMIT 1 1
				ZREVRANGEBYLEX lexdeep [05010 (05000 LIMIT 3 4
				ZRANGE lexdeep [1 (10003 BYLEX LIMIT 0 5
				ZRANGE lexdeep (10003 [1 BYLEX REV LIMIT 0 5
				ZRANGESTORE dstd deep (3 (4 BYSCORE LIMIT 395 10
				ZRANGE dstd 0 -1 WITHSCORES
				ZRANGESTORE dstd deep 7 7 BYSCORE LIMIT 400 10
				EXISTS dstd
				ZRANGESTORE dstd lexdeep [05000 + BYLEX REV LIMIT 0 3
				ZRANGE dstd 0 -1 WITHSCORES
			`)
			// The odd scores are in the set and formatted (RESP3 doubles
			// or RESP2 bulk strings), not an empty reply on both sides.
			got := d.Do("ZRANGEBYSCORE", "deep", "0.1", "0.1", "WITHSCORES")
			want := "*8\r\n$6\r\nm00007\r\n$19\r\n0.10000000000000001\r\n$6\r\nm06507\r\n"
			if proto == 3 {
				want = "*4\r\n*2\r\n$6\r\nm00007\r\n,0.10000000000000001\r\n*2\r\n$6\r\nm06507\r\n"
			}
			if !strings.HasPrefix(got, want) {
				t.Fatalf("ZRANGEBYSCORE deep 0.1 0.1: %q, want it to start with %q", got, want)
			}
			// Windows at every offset around a run's edges, both ways.
			for off := 395; off <= 405; off++ {
				o := strconv.Itoa(off)
				d.Do("ZRANGEBYSCORE", "deep", "(9", "+inf", "LIMIT", o, "3", "WITHSCORES")
				d.Do("ZREVRANGEBYSCORE", "deep", "(10", "-inf", "LIMIT", o, "3", "WITHSCORES")
			}
		})
	}
}
