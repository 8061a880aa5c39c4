package commands_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// go-redis tests of the sorted-set commands, each run with a RESP2 and a
// RESP3 client: go-redis must decode both shapes (flat WITHSCORES arrays in
// RESP2, [member, double] pairs in RESP3) to the same values.

func zsClients(t *testing.T) map[string]*redis.Client {
	t.Helper()
	inst := servertest.Start(t)
	out := map[string]*redis.Client{}
	for _, proto := range []int{2, 3} {
		c := redis.NewClient(&redis.Options{Addr: inst.Addr, MaxRetries: -1, DisableIdentity: true, Protocol: proto})
		t.Cleanup(func() { c.Close() })
		out[map[int]string{2: "resp2", 3: "resp3"}[proto]] = c
	}
	return out
}

// zsEach runs f with a RESP2 and a RESP3 client on a fresh database.
func zsEach(t *testing.T, f func(t *testing.T, c *redis.Client)) {
	for name, c := range zsClients(t) {
		t.Run(name, func(t *testing.T) {
			if err := c.FlushAll(servertest.Ctx).Err(); err != nil {
				t.Fatal(err)
			}
			f(t, c)
		})
	}
}

// zsOK fails the test when a go-redis command failed (redis.Nil
// included) and returns it for its Val.
func zsOK[C interface{ Err() error }](t *testing.T, c C) C {
	t.Helper()
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

func zsWantErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

func zsEqualZ(t *testing.T, got, want []redis.Z) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestZsetZaddAndScores(t *testing.T) {
	zsEach(t, func(t *testing.T, c *redis.Client) {
		ctx := servertest.Ctx
		if n := zsOK(t, c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"})).Val(); n != 2 {
			t.Fatalf("ZADD = %d", n)
		}
		if n := zsOK(t, c.ZAddArgs(ctx, "z", redis.ZAddArgs{Ch: true, Members: []redis.Z{{Score: 5, Member: "a"}, {Score: 3, Member: "c"}}})).Val(); n != 2 {
			t.Fatalf("ZADD CH = %d", n)
		}
		if n := zsOK(t, c.ZAddNX(ctx, "z", redis.Z{Score: 100, Member: "a"})).Val(); n != 0 {
			t.Fatalf("ZADD NX existing = %d", n)
		}
		if n := zsOK(t, c.ZAddXX(ctx, "z", redis.Z{Score: 100, Member: "nosuch"})).Val(); n != 0 {
			t.Fatalf("ZADD XX missing = %d", n)
		}
		if n := zsOK(t, c.ZAddArgs(ctx, "z", redis.ZAddArgs{GT: true, Ch: true, Members: []redis.Z{{Score: 1, Member: "a"}, {Score: 9, Member: "b"}}})).Val(); n != 1 {
			t.Fatalf("ZADD GT CH = %d", n)
		}
		if n := zsOK(t, c.ZAddArgs(ctx, "z", redis.ZAddArgs{LT: true, Ch: true, Members: []redis.Z{{Score: 1, Member: "a"}}})).Val(); n != 1 {
			t.Fatalf("ZADD LT CH = %d", n)
		}
		if v := zsOK(t, c.ZScore(ctx, "z", "a")).Val(); v != 1 {
			t.Fatalf("ZSCORE a = %v", v)
		}
		if _, err := c.ZScore(ctx, "z", "nosuch").Result(); err != redis.Nil {
			t.Fatalf("ZSCORE missing: %v", err)
		}
		if v := zsOK(t, c.ZIncrBy(ctx, "z", 2.5, "a")).Val(); v != 3.5 {
			t.Fatalf("ZINCRBY = %v", v)
		}
		if v := zsOK(t, c.ZAddArgsIncr(ctx, "z", redis.ZAddArgs{Members: []redis.Z{{Score: -0.5, Member: "a"}}})).Val(); v != 3 {
			t.Fatalf("ZADD INCR = %v", v)
		}
		if _, err := c.ZAddArgsIncr(ctx, "z", redis.ZAddArgs{NX: true, Members: []redis.Z{{Score: 1, Member: "a"}}}).Result(); err != redis.Nil {
			t.Fatalf("ZADD NX INCR on existing: %v", err)
		}
		got := zsOK(t, c.ZMScore(ctx, "z", "a", "nosuch", "b")).Val()
		if !slices.Equal(got, []float64{3, 0, 9}) {
			t.Fatalf("ZMSCORE = %v", got)
		}
		if n := zsOK(t, c.ZCard(ctx, "z")).Val(); n != 3 {
			t.Fatalf("ZCARD = %d", n)
		}
		if n := zsOK(t, c.ZCard(ctx, "nokey")).Val(); n != 0 {
			t.Fatalf("ZCARD missing = %d", n)
		}
		c.ZAdd(ctx, "inf", redis.Z{Score: math.Inf(1), Member: "p"}, redis.Z{Score: math.Inf(-1), Member: "n"})
		if v := zsOK(t, c.ZScore(ctx, "inf", "p")).Val(); !math.IsInf(v, 1) {
			t.Fatalf("ZSCORE inf = %v", v)
		}
		_, err := c.ZIncrBy(ctx, "inf", math.Inf(-1), "p").Result()
		zsWantErr(t, err, "ERR resulting score is not a number (NaN)")
		_, err = c.Do(ctx, "ZADD", "z", "nan", "x").Result()
		zsWantErr(t, err, "ERR value is not a valid float")
		_, err = c.Do(ctx, "ZADD", "z", "NX", "XX", "1", "x").Result()
		zsWantErr(t, err, "ERR XX and NX options at the same time are not compatible")
		_, err = c.Do(ctx, "ZADD", "z", "GT", "LT", "1", "x").Result()
		zsWantErr(t, err, "ERR GT, LT, and/or NX options at the same time are not compatible")
		_, err = c.Do(ctx, "ZADD", "z", "INCR", "1", "x", "2", "y").Result()
		zsWantErr(t, err, "ERR INCR option supports a single increment-element pair")
		c.Set(ctx, "str", "v", 0)
		_, err = c.ZAdd(ctx, "str", redis.Z{Score: 1, Member: "a"}).Result()
		zsWantErr(t, err, "WRONGTYPE Operation against a key holding the wrong kind of value")
	})
}

func TestZsetCountsAndRanks(t *testing.T) {
	zsEach(t, func(t *testing.T, c *redis.Client) {
		ctx := servertest.Ctx
		c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 2, Member: "c"}, redis.Z{Score: 3, Member: "d"})
		for _, tc := range []struct {
			min, max string
			want     int64
		}{{"-inf", "+inf", 4}, {"2", "2", 2}, {"(2", "3", 1}, {"(1", "(3", 2}, {"4", "1", 0}} {
			if n := zsOK(t, c.ZCount(ctx, "z", tc.min, tc.max)).Val(); n != tc.want {
				t.Errorf("ZCOUNT %s %s = %d, want %d", tc.min, tc.max, n, tc.want)
			}
		}
		c.ZAdd(ctx, "lex", redis.Z{Member: "a"}, redis.Z{Member: "b"}, redis.Z{Member: "c"})
		if n := zsOK(t, c.ZLexCount(ctx, "lex", "(a", "+")).Val(); n != 2 {
			t.Errorf("ZLEXCOUNT = %d", n)
		}
		if r := zsOK(t, c.ZRank(ctx, "z", "c")).Val(); r != 2 {
			t.Errorf("ZRANK = %d", r)
		}
		if r := zsOK(t, c.ZRevRank(ctx, "z", "c")).Val(); r != 1 {
			t.Errorf("ZREVRANK = %d", r)
		}
		if _, err := c.ZRank(ctx, "z", "nosuch").Result(); err != redis.Nil {
			t.Errorf("ZRANK missing: %v", err)
		}
		rs := zsOK(t, c.ZRankWithScore(ctx, "z", "d")).Val()
		if rs.Rank != 3 || rs.Score != 3 {
			t.Errorf("ZRANK WITHSCORE = %+v", rs)
		}
		rs = zsOK(t, c.ZRevRankWithScore(ctx, "z", "a")).Val()
		if rs.Rank != 3 || rs.Score != 1 {
			t.Errorf("ZREVRANK WITHSCORE = %+v", rs)
		}
		if _, err := c.ZRankWithScore(ctx, "z", "nosuch").Result(); err != redis.Nil {
			t.Errorf("ZRANK WITHSCORE missing: %v", err)
		}
		if _, err := c.ZRankWithScore(ctx, "nokey", "a").Result(); err != redis.Nil {
			t.Errorf("ZRANK WITHSCORE missing key: %v", err)
		}
		_, err := c.Do(ctx, "ZRANK", "z", "a", "WITHSCORES").Result()
		zsWantErr(t, err, "ERR syntax error")
		_, err = c.Do(ctx, "ZRANK", "z", "a", "WITHSCORE", "x").Result()
		zsWantErr(t, err, "ERR wrong number of arguments for 'zrank' command")
	})
}

func TestZsetRanges(t *testing.T) {
	zsEach(t, func(t *testing.T, c *redis.Client) {
		ctx := servertest.Ctx
		c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 2, Member: "c"},
			redis.Z{Score: 3.5, Member: "d"}, redis.Z{Score: math.Inf(1), Member: "e"})
		if got := zsOK(t, c.ZRange(ctx, "z", 1, -2)).Val(); !slices.Equal(got, []string{"b", "c", "d"}) {
			t.Errorf("ZRANGE = %v", got)
		}
		zsEqualZ(t, zsOK(t, c.ZRangeWithScores(ctx, "z", -2, -1)).Val(),
			[]redis.Z{{Score: 3.5, Member: "d"}, {Score: math.Inf(1), Member: "e"}})
		zsEqualZ(t, zsOK(t, c.ZRevRangeWithScores(ctx, "z", 0, 1)).Val(),
			[]redis.Z{{Score: math.Inf(1), Member: "e"}, {Score: 3.5, Member: "d"}})
		got := zsOK(t, c.ZRangeArgs(ctx, redis.ZRangeArgs{Key: "z", Start: "(1", Stop: "+inf", ByScore: true, Offset: 1, Count: 2})).Val()
		if !slices.Equal(got, []string{"c", "d"}) {
			t.Errorf("ZRANGE BYSCORE LIMIT = %v", got)
		}
		zsEqualZ(t, zsOK(t, c.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: "z", Start: "3.5", Stop: "-inf", ByScore: true, Rev: true})).Val(),
			[]redis.Z{{Score: 3.5, Member: "d"}, {Score: 2, Member: "c"}, {Score: 2, Member: "b"}, {Score: 1, Member: "a"}})
		zsEqualZ(t, zsOK(t, c.ZRangeByScoreWithScores(ctx, "z", &redis.ZRangeBy{Min: "2", Max: "2"})).Val(),
			[]redis.Z{{Score: 2, Member: "b"}, {Score: 2, Member: "c"}})
		if got := zsOK(t, c.ZRevRangeByScore(ctx, "z", &redis.ZRangeBy{Max: "+inf", Min: "(2", Count: 1})).Val(); !slices.Equal(got, []string{"e"}) {
			t.Errorf("ZREVRANGEBYSCORE = %v", got)
		}
		c.ZAdd(ctx, "lex", redis.Z{Member: "apple"}, redis.Z{Member: "apricot"}, redis.Z{Member: "banana"}, redis.Z{Member: "cherry"})
		if got := zsOK(t, c.ZRangeByLex(ctx, "lex", &redis.ZRangeBy{Min: "[ap", Max: "[ap\xff"})).Val(); !slices.Equal(got, []string{"apple", "apricot"}) {
			t.Errorf("ZRANGEBYLEX prefix = %v", got)
		}
		if got := zsOK(t, c.ZRevRangeByLex(ctx, "lex", &redis.ZRangeBy{Max: "+", Min: "(apricot"})).Val(); !slices.Equal(got, []string{"cherry", "banana"}) {
			t.Errorf("ZREVRANGEBYLEX = %v", got)
		}
		if got := zsOK(t, c.ZRangeArgs(ctx, redis.ZRangeArgs{Key: "lex", Start: "-", Stop: "+", ByLex: true, Offset: 1, Count: 2})).Val(); !slices.Equal(got, []string{"apricot", "banana"}) {
			t.Errorf("ZRANGE BYLEX LIMIT = %v", got)
		}
		if n := zsOK(t, c.ZRangeStore(ctx, "dst", redis.ZRangeArgs{Key: "z", Start: 0, Stop: 1, Rev: true})).Val(); n != 2 {
			t.Errorf("ZRANGESTORE = %d", n)
		}
		zsEqualZ(t, zsOK(t, c.ZRangeWithScores(ctx, "dst", 0, -1)).Val(),
			[]redis.Z{{Score: 3.5, Member: "d"}, {Score: math.Inf(1), Member: "e"}})
		if n := zsOK(t, c.ZRangeStore(ctx, "dst", redis.ZRangeArgs{Key: "z", Start: 10, Stop: 20})).Val(); n != 0 {
			t.Errorf("empty ZRANGESTORE = %d", n)
		}
		if n := zsOK(t, c.Exists(ctx, "dst")).Val(); n != 0 {
			t.Errorf("empty ZRANGESTORE left the destination")
		}
		_, err := c.Do(ctx, "ZRANGE", "z", "0", "-1", "LIMIT", "0", "1").Result()
		zsWantErr(t, err, "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		_, err = c.Do(ctx, "ZRANGE", "z", "-", "+", "BYLEX", "WITHSCORES").Result()
		zsWantErr(t, err, "ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		_, err = c.Do(ctx, "ZRANGE", "z", "x", "1", "BYSCORE").Result()
		zsWantErr(t, err, "ERR min or max is not a float")
		_, err = c.Do(ctx, "ZRANGE", "z", "x", "+", "BYLEX").Result()
		zsWantErr(t, err, "ERR min or max not valid string range item")
	})
}

func TestZsetRemovals(t *testing.T) {
	zsEach(t, func(t *testing.T, c *redis.Client) {
		ctx := servertest.Ctx
		c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 3, Member: "c"}, redis.Z{Score: 4, Member: "d"})
		if n := zsOK(t, c.ZRem(ctx, "z", "a", "nosuch")).Val(); n != 1 {
			t.Errorf("ZREM = %d", n)
		}
		if n := zsOK(t, c.ZRemRangeByRank(ctx, "z", -1, -1)).Val(); n != 1 {
			t.Errorf("ZREMRANGEBYRANK = %d", n)
		}
		if n := zsOK(t, c.ZRemRangeByScore(ctx, "z", "(2", "+inf")).Val(); n != 1 {
			t.Errorf("ZREMRANGEBYSCORE = %d", n)
		}
		c.ZAdd(ctx, "lex", redis.Z{Member: "a"}, redis.Z{Member: "b"})
		if n := zsOK(t, c.ZRemRangeByLex(ctx, "lex", "-", "+")).Val(); n != 2 {
			t.Errorf("ZREMRANGEBYLEX = %d", n)
		}
		if n := zsOK(t, c.ZRem(ctx, "z", "b")).Val(); n != 1 {
			t.Errorf("last ZREM = %d", n)
		}
		if n := zsOK(t, c.Exists(ctx, "z", "lex")).Val(); n != 0 {
			t.Errorf("emptied sets still exist: %d", n)
		}
	})
}

func TestZsetAlgebra(t *testing.T) {
	zsEach(t, func(t *testing.T, c *redis.Client) {
		ctx := servertest.Ctx
		c.ZAdd(ctx, "a", redis.Z{Score: 1, Member: "x"}, redis.Z{Score: 2, Member: "y"})
		c.ZAdd(ctx, "b", redis.Z{Score: 10, Member: "y"}, redis.Z{Score: 20, Member: "z"})
		zsEqualZ(t, zsOK(t, c.ZUnionWithScores(ctx, redis.ZStore{Keys: []string{"a", "b"}, Weights: []float64{2, 1}})).Val(),
			[]redis.Z{{Score: 2, Member: "x"}, {Score: 14, Member: "y"}, {Score: 20, Member: "z"}})
		if got := zsOK(t, c.ZUnion(ctx, redis.ZStore{Keys: []string{"a", "b"}, Aggregate: "MAX"})).Val(); !slices.Equal(got, []string{"x", "y", "z"}) {
			t.Errorf("ZUNION = %v", got)
		}
		zsEqualZ(t, zsOK(t, c.ZInterWithScores(ctx, &redis.ZStore{Keys: []string{"a", "b"}, Aggregate: "MIN"})).Val(),
			[]redis.Z{{Score: 2, Member: "y"}})
		zsEqualZ(t, zsOK(t, c.ZDiffWithScores(ctx, "b", "a")).Val(), []redis.Z{{Score: 20, Member: "z"}})
		if n := zsOK(t, c.ZInterCard(ctx, 0, "a", "b")).Val(); n != 1 {
			t.Errorf("ZINTERCARD = %d", n)
		}
		if n := zsOK(t, c.ZUnionStore(ctx, "u", &redis.ZStore{Keys: []string{"a", "b"}})).Val(); n != 3 {
			t.Errorf("ZUNIONSTORE = %d", n)
		}
		if n := zsOK(t, c.ZInterStore(ctx, "i", &redis.ZStore{Keys: []string{"a", "b"}, Weights: []float64{math.Inf(1), 0}})).Val(); n != 1 {
			t.Errorf("ZINTERSTORE = %d", n)
		}
		// inf*0 is NaN, which Redis turns into 0 before summing.
		if v := zsOK(t, c.ZScore(ctx, "i", "y")).Val(); v != math.Inf(1) {
			t.Errorf("inf*2 + 0*10 = %v", v)
		}
		if n := zsOK(t, c.ZDiffStore(ctx, "d", "a", "a")).Val(); n != 0 {
			t.Errorf("ZDIFFSTORE a a = %d", n)
		}
		_, err := c.Do(ctx, "ZUNIONSTORE", "u", "0", "a").Result()
		zsWantErr(t, err, "ERR at least 1 input key is needed for 'zunionstore' command")
		_, err = c.Do(ctx, "ZUNION", "1", "a", "WEIGHTS", "x").Result()
		zsWantErr(t, err, "ERR weight value is not a float")
	})
}

func TestZsetPops(t *testing.T) {
	zsEach(t, func(t *testing.T, c *redis.Client) {
		ctx := servertest.Ctx
		c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 3, Member: "c"}, redis.Z{Score: 4, Member: "d"})
		zsEqualZ(t, zsOK(t, c.ZPopMin(ctx, "z")).Val(), []redis.Z{{Score: 1, Member: "a"}})
		zsEqualZ(t, zsOK(t, c.ZPopMax(ctx, "z", 2)).Val(), []redis.Z{{Score: 4, Member: "d"}, {Score: 3, Member: "c"}})
		key, zs := zsOK(t, c.ZMPop(ctx, "min", 5, "nokey", "z")).Val()
		if key != "z" {
			t.Errorf("ZMPOP key %q", key)
		}
		zsEqualZ(t, zs, []redis.Z{{Score: 2, Member: "b"}})
		if n := zsOK(t, c.Exists(ctx, "z")).Val(); n != 0 {
			t.Errorf("popped-empty set still exists")
		}
		if _, _, err := c.ZMPop(ctx, "max", 1, "z").Result(); err != redis.Nil {
			t.Errorf("ZMPOP on nothing: %v", err)
		}
		if got := zsOK(t, c.ZPopMin(ctx, "z")).Val(); len(got) != 0 {
			t.Errorf("ZPOPMIN on nothing = %v", got)
		}
		_, err := c.Do(ctx, "ZPOPMIN", "z", "-1").Result()
		zsWantErr(t, err, "ERR value is out of range, must be positive")
		_, err = c.Do(ctx, "ZMPOP", "0", "z", "MIN").Result()
		zsWantErr(t, err, "ERR numkeys should be greater than 0")
		_, err = c.Do(ctx, "ZMPOP", "1", "z", "MIN", "COUNT", "0").Result()
		zsWantErr(t, err, "ERR count should be greater than 0")
	})
}

func TestZsetRandmember(t *testing.T) {
	zsEach(t, func(t *testing.T, c *redis.Client) {
		ctx := servertest.Ctx
		var zs []redis.Z
		score := map[string]float64{}
		for i := 0; i < 300; i++ {
			m := "m" + zsItoa(int64(i))
			zs = append(zs, redis.Z{Score: float64(i) / 4, Member: m})
			score[m] = float64(i) / 4
		}
		c.ZAdd(ctx, "big", zs...)
		c.ZAdd(ctx, "small", zs[:20]...)
		for _, key := range []string{"small", "big"} {
			n := int(zsOK(t, c.ZCard(ctx, key)).Val())
			for _, count := range []int{1, 5, n / 3, n/3 + 1, n - 1, n, n + 7} {
				got := zsOK(t, c.ZRandMemberWithScores(ctx, key, count)).Val()
				if len(got) != min(count, n) {
					t.Fatalf("%s count %d: %d entries", key, count, len(got))
				}
				seen := map[string]bool{}
				for _, z := range got {
					m := z.Member.(string)
					if seen[m] {
						t.Fatalf("%s count %d: %q twice", key, count, m)
					}
					seen[m] = true
					if s, ok := score[m]; !ok || s != z.Score {
						t.Fatalf("%s count %d: %q with score %v (member of the set: %v)", key, count, m, z.Score, ok)
					}
				}
			}
			// Negative counts repeat members and return exactly -count.
			got := zsOK(t, c.ZRandMember(ctx, key, -(3*n))).Val()
			if len(got) != 3*n {
				t.Fatalf("%s negative count: %d members", key, len(got))
			}
			distinct := map[string]int{}
			for _, m := range got {
				if _, ok := score[m]; !ok {
					t.Fatalf("%q is not a member", m)
				}
				distinct[m]++
			}
			if len(distinct) == len(got) {
				t.Fatalf("%s: %d draws from %d members never repeated", key, len(got), n)
			}
			// Uniformity, coarsely: 3n draws hit over half of the members
			// (the expectation is 95%).
			if len(distinct) < n/2 {
				t.Fatalf("%s: %d draws hit only %d of %d members", key, len(got), len(distinct), n)
			}
			one := zsOK(t, c.ZRandMember(ctx, key, 1)).Val()
			if _, ok := score[one[0]]; len(one) != 1 || !ok {
				t.Fatalf("count 1: %v", one)
			}
			m := zsOK(t, c.Do(ctx, "ZRANDMEMBER", key)).Val().(string)
			if _, ok := score[m]; !ok {
				t.Fatalf("ZRANDMEMBER = %q", m)
			}
		}
		// A positive count at least the size returns the whole set,
		// highest first (Redis walks the set from its tail).
		got := zsOK(t, c.ZRandMember(ctx, "small", 100)).Val()
		want := []string{}
		for i := 19; i >= 0; i-- {
			want = append(want, "m"+zsItoa(int64(i)))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("whole set: %v", got)
		}
		if _, err := c.Do(ctx, "ZRANDMEMBER", "nokey").Result(); err != redis.Nil {
			t.Fatalf("ZRANDMEMBER missing key: %v", err)
		}
	})
}

// TestZsetScanLarge checks the skiplist cursor: every member present for
// the whole scan comes back exactly once, while members are added and
// removed between calls, and runs of equal scores are never split.
func TestZsetScanLarge(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := servertest.Ctx
	var zs []redis.Z
	for i := 0; i < 2000; i++ {
		// Runs of equal scores, of varying length.
		zs = append(zs, redis.Z{Score: float64(i / (1 + i%7)), Member: "m" + zsItoa(int64(i))})
	}
	c.ZAdd(ctx, "z", zs...)
	if enc := zsOK(t, c.ObjectEncoding(ctx, "z")).Val(); enc != "skiplist" {
		t.Fatalf("encoding %s", enc)
	}
	stable := map[string]bool{}
	for i := 0; i < 2000; i++ {
		if i%5 != 0 {
			stable["m"+zsItoa(int64(i))] = true
		}
	}
	seen := map[string]int{}
	var cursor uint64
	calls := 0
	for {
		keys, next, err := c.ZScan(ctx, "z", cursor, "", 25).Result()
		if err != nil {
			t.Fatal(err)
		}
		calls++
		for i := 0; i < len(keys); i += 2 {
			seen[keys[i]]++
		}
		// Churn: remove the members i%5==0 bit by bit, add new ones
		// everywhere in the order.
		for j := 0; j < 10; j++ {
			k := (calls*10 + j) * 5 % 2000
			c.ZRem(ctx, "z", "m"+zsItoa(int64(k)))
			c.ZAdd(ctx, "z", redis.Z{Score: float64((calls*37 + j*101) % 1000), Member: "new" + zsItoa(int64(calls*10+j))})
		}
		cursor = next
		if cursor == 0 {
			break
		}
		if calls > 10000 {
			t.Fatal("scan does not end")
		}
	}
	for m := range stable {
		if seen[m] != 1 {
			t.Fatalf("%s seen %d times", m, seen[m])
		}
	}
	for m, n := range seen {
		if n != 1 {
			t.Fatalf("%s seen %d times", m, n)
		}
	}
	if calls < 2000/25/2 {
		t.Fatalf("only %d calls for 2000 members with COUNT 25", calls)
	}
	// MATCH filters members; a made-up cursor past +inf ends the scan.
	keys, _, err := c.ZScan(ctx, "z", 0, "m1*", 5000).Result()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(keys); i += 2 {
		if keys[i][:2] != "m1" {
			t.Fatalf("MATCH m1* returned %q", keys[i])
		}
	}
	keys, next, err := c.ZScan(ctx, "z", math.MaxUint64, "", 10).Result()
	if err != nil || next != 0 || len(keys) != 0 {
		t.Fatalf("cursor past the end: %v %d %v", keys, next, err)
	}
	// A set whose members all share a score comes back in one call.
	var lex []redis.Z
	for i := 0; i < 500; i++ {
		lex = append(lex, redis.Z{Member: "w" + zsItoa(int64(i))})
	}
	c.ZAdd(ctx, "lex", lex...)
	keys, next, err = c.ZScan(ctx, "lex", 0, "", 10).Result()
	if err != nil || next != 0 || len(keys) != 1000 {
		t.Fatalf("equal scores: %d items, cursor %d, %v", len(keys), next, err)
	}
}

// TestZsetKeyspace covers what the zset family owes the rest of the
// server: TYPE, OBJECT ENCODING, MEMORY USAGE, COPY, WATCH and the keys of
// movable-key commands.
func TestZsetKeyspace(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := servertest.Ctx
	c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"})
	if typ := zsOK(t, c.Type(ctx, "z")).Val(); typ != "zset" {
		t.Errorf("TYPE = %s", typ)
	}
	small := zsOK(t, c.MemoryUsage(ctx, "z")).Val()
	var zs []redis.Z
	for i := 0; i < 1000; i++ {
		zs = append(zs, redis.Z{Score: float64(i), Member: "member:" + zsItoa(int64(i))})
	}
	c.ZAdd(ctx, "big", zs...)
	big := zsOK(t, c.MemoryUsage(ctx, "big")).Val()
	if small <= 0 || big < 1000*20 || big > 1000*400 {
		t.Errorf("MEMORY USAGE small %d, big %d", small, big)
	}
	if ok := zsOK(t, c.Copy(ctx, "big", "big2", 0, false)).Val(); ok != 1 {
		t.Fatalf("COPY = %d", ok)
	}
	c.ZRem(ctx, "big", "member:1")
	if n := zsOK(t, c.ZCard(ctx, "big2")).Val(); n != 1000 {
		t.Errorf("the copy changed with its source: %d", n)
	}
	if enc := zsOK(t, c.ObjectEncoding(ctx, "big2")).Val(); enc != "skiplist" {
		t.Errorf("copy encoding %s", enc)
	}
	if enc := zsOK(t, c.ObjectEncoding(ctx, "z")).Val(); enc != "listpack" {
		t.Errorf("encoding %s", enc)
	}

	// WATCH sees in-place changes.
	for _, change := range [][]any{
		{"ZADD", "z", "5", "a"}, {"ZINCRBY", "z", "1", "b"}, {"ZREM", "z", "a"}, {"ZPOPMIN", "z"},
		{"ZREMRANGEBYSCORE", "z", "-inf", "+inf"}, {"ZUNIONSTORE", "z", "1", "big"},
	} {
		c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 3, Member: "c"})
		err := c.Watch(ctx, func(tx *redis.Tx) error {
			if err := c.Do(ctx, change...).Err(); err != nil {
				return err
			}
			_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, "x", "1", 0)
				return nil
			})
			return err
		}, "z")
		if !errors.Is(err, redis.TxFailedErr) {
			t.Errorf("%v did not touch the watched key: %v", change, err)
		}
	}

	keys := zsOK(t, c.CommandGetKeys(ctx, "ZUNIONSTORE", "dst", "2", "a", "b", "WEIGHTS", "1", "2")).Val()
	if !slices.Equal(keys, []string{"dst", "a", "b"}) {
		t.Errorf("ZUNIONSTORE keys %v", keys)
	}
	keys = zsOK(t, c.CommandGetKeys(ctx, "ZMPOP", "2", "a", "b", "MIN")).Val()
	if !slices.Equal(keys, []string{"a", "b"}) {
		t.Errorf("ZMPOP keys %v", keys)
	}
	keys = zsOK(t, c.CommandGetKeys(ctx, "ZRANGESTORE", "dst", "src", "0", "-1")).Val()
	if !slices.Equal(keys, []string{"dst", "src"}) {
		t.Errorf("ZRANGESTORE keys %v", keys)
	}
	if _, err := c.CommandGetKeys(ctx, "ZINTER", "3", "a", "b").Result(); err == nil {
		t.Errorf("ZINTER with too few keys has keys")
	}
	info := zsOK(t, c.Command(ctx)).Val()
	if zu := info["zunionstore"]; zu == nil || !slices.Contains(zu.Flags, "movablekeys") || zu.FirstKeyPos != 1 {
		t.Errorf("COMMAND INFO zunionstore %+v", zu)
	}
	if za := info["zadd"]; za == nil || za.Arity != -4 || !slices.Contains(za.ACLFlags, "@sortedset") {
		t.Errorf("COMMAND INFO zadd %+v", za)
	}
}
