package commands_test

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestZsetDiffFloatSyntax feeds random number-like strings to both servers
// where Redis reads doubles its two ways: as a ZADD score (string2d) and as
// a ZCOUNT/ZRANGEBYSCORE bound (strtod up to the end of the C string).
// The replies show what each side parsed, and to which value.
func TestZsetDiffFloatSyntax(t *testing.T) {
	d, _ := zsDiff(t)
	r := rand.New(rand.NewPCG(7, 11))
	parts := []string{"0", "1", "7", "9", "00", "123", ".", ".", "e", "E", "+", "-", "x", "X", "p", "P",
		"a", "f", "F", "inf", "INF", "infinity", "nan", "NaN", " ", "\t", "\x00", "_", "(", "e308", "e-308",
		"e400", "e-400", "0x", "0X1", "ff", "1e", "e+", "e-", "5", "99999999999999999999", "0.000000001"}
	gen := func() string {
		var b strings.Builder
		for n := 1 + r.IntN(5); n > 0; n-- {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		return b.String()
	}
	d.Do("ZADD", "z", "-1e300", "lo", "-1", "m1", "0", "zero", "1e-300", "tiny", "0.5", "half", "1", "one", "16", "sixteen", "1e300", "hi", "inf", "top", "-inf", "bottom")
	for i := 0; i < 1500; i++ {
		s := gen()
		d.Do("ZADD", "w", s, "m")
		d.Do("ZSCORE", "w", "m")
		d.Do("ZCOUNT", "z", s, "+inf")
		d.Do("ZCOUNT", "z", "-inf", "("+s)
		d.Do("ZRANGEBYSCORE", "z", s, s, "WITHSCORES")
		if t.Failed() {
			t.Fatalf("after %q", s)
		}
	}
}

// TestZsetDiffRecipePrefixSearch is the autocomplete recipe: words in a
// zset with one score, looked up by prefix with ZRANGEBYLEX "[prefix"
// "[prefix\xff" and a LIMIT.
func TestZsetDiffRecipePrefixSearch(t *testing.T) {
	d, _ := zsDiff(t)
	words := strings.Fields(`apple apricot april apron apt banana band bandana bane bang
		can canal candle candy cane car card care cart carton cat catalog cater
		dog dot dote doting dove zebra zero zest zeta zip`)
	args := []string{"ZADD", "words"}
	for _, w := range words {
		args = append(args, "0", w)
	}
	d.Do(args...)
	for _, prefix := range []string{"a", "ap", "apr", "ban", "band", "c", "ca", "car", "cart", "cartoon", "do", "z", "ze", "x", ""} {
		d.Do("ZRANGEBYLEX", "words", "["+prefix, "["+prefix+"\xff")
		d.Do("ZRANGEBYLEX", "words", "["+prefix, "["+prefix+"\xff", "LIMIT", "0", "3")
		d.Do("ZRANGE", "words", "["+prefix, "["+prefix+"\xff", "BYLEX", "LIMIT", "1", "2")
		d.Do("ZLEXCOUNT", "words", "["+prefix, "["+prefix+"\xff")
		d.Do("ZREVRANGEBYLEX", "words", "["+prefix+"\xff", "["+prefix, "LIMIT", "0", "2")
	}
	// Past the listpack limit the same queries run on the skiplist.
	for i := 0; i < 200; i++ {
		d.Do("ZADD", "words", "0", "filler"+zsItoa(int64(i)))
	}
	d.Do("OBJECT", "ENCODING", "words")
	for _, prefix := range []string{"ca", "filler1", "filler19", "z"} {
		d.Do("ZRANGEBYLEX", "words", "["+prefix, "["+prefix+"\xff", "LIMIT", "0", "5")
		d.Do("ZLEXCOUNT", "words", "["+prefix, "["+prefix+"\xff")
	}
	d.Do("ZREMRANGEBYLEX", "words", "[filler", "[filler\xff")
	d.Do("ZCARD", "words")
}
