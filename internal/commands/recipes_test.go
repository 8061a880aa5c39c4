package commands_test

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// The recipes of docs/metrics.md ("Events in time windows", "Counters at
// several precisions", "Time boxes", "A rollup store"): each test runs the
// commands the document shows, on Abacus with a manual clock, checks what
// the document says of their replies, and runs the Redis way the document
// shows next to it on redis-server with the same events, comparing counts.

const recT0 = 1_700_000_000_000 // 2023-11-14 22:13:20 UTC, in ms

// recRedis returns a client of the shared redis-server, or nil when
// there is none (see testenv.Have): the Abacus half of a recipe runs
// regardless.
func recRedis(t *testing.T) *redis.Client {
	t.Helper()
	if testenv.Have(t, "redis-server") == "" {
		return nil
	}
	return servertest.NewClient(t, servertest.Redis(t).Addr)
}

func recDo(t *testing.T, c *redis.Client, args ...any) any {
	t.Helper()
	v, err := c.Do(servertest.Ctx, args...).Result()
	if err != nil && err != redis.Nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

func recInt(t *testing.T, c *redis.Client, args ...any) int64 {
	t.Helper()
	v, ok := recDo(t, c, args...).(int64)
	if !ok {
		t.Fatalf("%v: not an integer reply", args)
	}
	return v
}

// recSamples reads a RESP2 range reply [[ts, "value"], ...] as ts -> value.
func recSamples(t *testing.T, reply any) map[int64]float64 {
	t.Helper()
	out := map[int64]float64{}
	for _, s := range reply.([]any) {
		p := s.([]any)
		v, err := strconv.ParseFloat(p[1].(string), 64)
		if err != nil {
			t.Fatalf("sample %v: %v", p, err)
		}
		out[p[0].(int64)] = v
	}
	return out
}

func recEq(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// TestRecipeEventsInWindows: events counted in time windows. Redis: one
// sorted-set member per event (unique ids), preened to the hour, ZCOUNT per
// window. Abacus: a series with RETENTION 1 h, TS.ADD * 1 per event (SUM
// merges events of the same millisecond), TS.RANGE ... AGGREGATION sum.
func TestRecipeEventsInWindows(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(recT0))
	c := inst.Client(t)
	rc := recRedis(t)
	const hour, minute = 3_600_000, 60_000

	recEq(t, "TS.CREATE", recDo(t, c, "TS.CREATE", "events:login", "RETENTION", hour, "DUPLICATE_POLICY", "SUM"), "OK")
	recEq(t, "TYPE", recDo(t, c, "TYPE", "events:login"), "TSDB-TYPE")
	recEq(t, "OBJECT ENCODING", recDo(t, c, "OBJECT", "ENCODING", "events:login"), "raw")

	// The document's small example: three logins, two in one millisecond.
	now := int64(recT0)
	recEq(t, "TS.ADD", recInt(t, c, "TS.ADD", "events:login", "*", 1), now)
	recEq(t, "TS.ADD same ms", recInt(t, c, "TS.ADD", "events:login", "*", 1), now)
	inst.Clock.Advance(20 * time.Second)
	recEq(t, "TS.ADD later", recInt(t, c, "TS.ADD", "events:login", "*", 1), now+20000)
	now += 20000
	recEq(t, "last minute", recSamples(t, recDo(t, c, "TS.RANGE", "events:login", now-59999, "+", "AGGREGATION", "sum", minute, "ALIGN", "-")),
		map[int64]float64{now - 59999: 3})
	recEq(t, "count counts milliseconds", recSamples(t, recDo(t, c, "TS.RANGE", "events:login", now-59999, "+", "AGGREGATION", "count", minute, "ALIGN", "-")),
		map[int64]float64{now - 59999: 2})
	// A minute later with no events the window is empty: no bucket at all.
	recEq(t, "empty window", recSamples(t, recDo(t, c, "TS.RANGE", "events:login", now+minute+1-59999, "+", "AGGREGATION", "sum", minute, "ALIGN", "-")),
		map[int64]float64{})
	recDo(t, c, "DEL", "events:login")
	recDo(t, c, "TS.CREATE", "events:login", "RETENTION", hour, "DUPLICATE_POLICY", "SUM")

	// The same random stream both ways; the running-total variant
	// (TS.INCRBY) rides along.
	rng := rand.New(rand.NewSource(6))
	var id int
	check := func() {
		t.Helper()
		// The last minute, ten minutes and hour.
		for _, w := range []int64{minute, 10 * minute, hour} {
			got := recSamples(t, recDo(t, c, "TS.RANGE", "events:login", now-w+1, "+", "AGGREGATION", "sum", w, "ALIGN", "-"))[now-w+1]
			// The running total: its value now minus its value before the window.
			total := recSamples(t, []any{recDo(t, c, "TS.GET", "events:total")})[now]
			before := 0.0
			if b := recDo(t, c, "TS.REVRANGE", "events:total", "-", now-w, "COUNT", 1).([]any); len(b) == 1 {
				before = recSamples(t, b)[b[0].([]any)[0].(int64)]
			}
			if w < hour && total-before != got {
				t.Fatalf("window %d at %d: running total says %v, TS.RANGE %v", w, now, total-before, got)
			}
			if rc != nil {
				want := recInt(t, rc, "ZCOUNT", "events:login", now-w+1, now)
				if int64(got) != want {
					t.Fatalf("window %d at %d: Abacus %v, Redis ZCOUNT %d", w, now, got, want)
				}
			}
		}
		// Per minute over the retained hour, bucket by bucket.
		hist := recSamples(t, recDo(t, c, "TS.RANGE", "events:login", "-", "+", "AGGREGATION", "sum", minute))
		if rc != nil {
			n := 0
			for b := (now - hour) / minute * minute; b <= now; b += minute {
				want := recInt(t, rc, "ZCOUNT", "events:login", b, b+minute-1)
				if int64(hist[b]) != want {
					t.Fatalf("minute %d at %d: Abacus %v, Redis %d", b, now, hist[b], want)
				}
				if want > 0 {
					n++
				}
			}
			recEq(t, "non-empty minutes", len(hist), n)
		}
	}
	for i := 0; i < 3000; i++ {
		switch r := rng.Intn(10); {
		case r < 3: // same millisecond
		case r < 9:
			inst.Clock.Advance(time.Duration(rng.Intn(5000)) * time.Millisecond)
		default:
			inst.Clock.Advance(time.Duration(rng.Intn(20)) * time.Minute)
		}
		now = inst.Clock.NowMs()
		recDo(t, c, "TS.ADD", "events:login", "*", 1)
		recDo(t, c, "TS.INCRBY", "events:total", 1, "TIMESTAMP", "*", "RETENTION", hour)
		if rc != nil {
			id++
			_, err := rc.TxPipelined(servertest.Ctx, func(p redis.Pipeliner) error {
				p.Do(servertest.Ctx, "ZADD", "events:login", now, fmt.Sprintf("%d:%d", now, id))
				p.Do(servertest.Ctx, "ZREMRANGEBYSCORE", "events:login", "-inf", fmt.Sprintf("(%d", now-hour))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if i%50 == 49 {
			check()
		}
	}
	// Retention bounds the series to the hour before its newest sample.
	for ts := range recSamples(t, recDo(t, c, "TS.RANGE", "events:login", "-", "+")) {
		if ts < now-hour {
			t.Fatalf("sample %d kept, older than an hour before %d", ts, now)
		}
	}
}

// The precisions of the multi-precision counters, in seconds, and how
// many slices of each are kept.
var recPrecisions = []int64{1, 5, 60, 300, 3600, 18000, 86400}

const recKeep = 120

// TestRecipeMultiPrecisionCounters: hits counted in slices of 1 s to 1
// day, 120 slices of each kept. Redis: HINCRBY per precision and a cleanup
// pass. Abacus: one raw series with a compaction rule per precision, each
// compaction with its own RETENTION; or hashes with per-field expiry.
func TestRecipeMultiPrecisionCounters(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(recT0))
	c := inst.Client(t)
	rc := recRedis(t)
	ctx := servertest.Ctx

	// The raw series keeps a day, the longest bucket: two hits in one
	// millisecond update its latest sample, and the compactions' open
	// buckets are then rebuilt from the raw samples it still holds.
	recEq(t, "raw", recDo(t, c, "TS.CREATE", "hits", "RETENTION", 86_400_000, "DUPLICATE_POLICY", "SUM"), "OK")
	for _, p := range recPrecisions {
		dst := fmt.Sprintf("hits:%d", p)
		recEq(t, dst, recDo(t, c, "TS.CREATE", dst, "RETENTION", recKeep*p*1000), "OK")
		recEq(t, dst+" rule", recDo(t, c, "TS.CREATERULE", "hits", dst, "AGGREGATION", "sum", p*1000), "OK")
	}

	hit := func(now int64) {
		t.Helper()
		recDo(t, c, "TS.ADD", "hits", "*", 1)
		// The hash way: a field per slice, expiring 120 slices after its start.
		_, err := c.Pipelined(ctx, func(pp redis.Pipeliner) error {
			for _, p := range recPrecisions {
				slice := now / 1000 / p * p
				key := fmt.Sprintf("count:%d", p)
				pp.HIncrBy(ctx, key, strconv.FormatInt(slice, 10), 1)
				pp.Do(ctx, "HEXPIREAT", key, slice+recKeep*p, "FIELDS", 1, slice)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if rc == nil {
			return
		}
		_, err = rc.Pipelined(ctx, func(pp redis.Pipeliner) error {
			for _, p := range recPrecisions {
				pp.HIncrBy(ctx, fmt.Sprintf("count:%d", p), strconv.FormatInt(now/1000/p*p, 10), 1)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The Redis way's cleanup daemon: drop the slices that started more
	// than 120 slices ago.
	cleanup := func(now int64) {
		for _, p := range recPrecisions {
			key := fmt.Sprintf("count:%d", p)
			for _, f := range rc.HKeys(ctx, key).Val() {
				if s, _ := strconv.ParseInt(f, 10, 64); s < now/1000-recKeep*p {
					rc.HDel(ctx, key, f)
				}
			}
		}
	}
	hashSlices := func(cl *redis.Client, p int64) map[int64]float64 {
		out := map[int64]float64{}
		for f, v := range cl.HGetAll(ctx, fmt.Sprintf("count:%d", p)).Val() {
			s, _ := strconv.ParseInt(f, 10, 64)
			n, _ := strconv.ParseFloat(v, 64)
			out[s*1000] = n
		}
		return out
	}
	check := func(now int64) {
		t.Helper()
		for _, p := range recPrecisions {
			key := fmt.Sprintf("hits:%d", p)
			got := recSamples(t, recDo(t, c, "TS.RANGE", key, "-", "+", "LATEST"))
			// Retention keeps 120 slices before the newest closed one;
			// LATEST adds the open one.
			if len(got) > recKeep+2 {
				t.Fatalf("%s holds %d slices, more than %d", key, len(got), recKeep+2)
			}
			hashes := hashSlices(c, p)
			if len(hashes) > recKeep {
				t.Fatalf("count:%d holds %d fields, more than %d", p, len(hashes), recKeep)
			}
			var redisWay map[int64]float64
			if rc != nil {
				cleanup(now)
				redisWay = hashSlices(rc, p)
			}
			// The last 100 slices are in all three, equal.
			from := (now/1000/p - 100) * p * 1000
			for s := from; s <= now; s += p * 1000 {
				if got[s] != hashes[s] {
					t.Fatalf("%s slice %d at %d: series %v, hash with field expiry %v", key, s, now, got[s], hashes[s])
				}
				if rc != nil && got[s] != redisWay[s] {
					t.Fatalf("%s slice %d at %d: Abacus %v, Redis %v", key, s, now, got[s], redisWay[s])
				}
			}
		}
	}

	// The document's example: three hits in two seconds of one minute.
	inst.Clock.Set(1_700_000_040_000) // 22:14:00
	hit(1_700_000_040_000)
	inst.Clock.Set(1_700_000_040_300)
	hit(1_700_000_040_300)
	inst.Clock.Set(1_700_000_041_500)
	hit(1_700_000_041_500)
	recEq(t, "1 s slices", recSamples(t, recDo(t, c, "TS.RANGE", "hits:1", "-", "+", "LATEST")),
		map[int64]float64{1_700_000_040_000: 2, 1_700_000_041_000: 1})
	recEq(t, "1 s closed only", recSamples(t, recDo(t, c, "TS.RANGE", "hits:1", "-", "+")),
		map[int64]float64{1_700_000_040_000: 2})
	recEq(t, "1 min slices", recSamples(t, recDo(t, c, "TS.RANGE", "hits:60", "-", "+", "LATEST")),
		map[int64]float64{1_700_000_040_000: 3})
	recEq(t, "1 min slices, hash", hashSlices(c, 60), map[int64]float64{1_700_000_040_000: 3})
	check(1_700_000_041_500)

	// A random stream over weeks: bursts, pauses of minutes, and of hours.
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 3000; i++ {
		switch r := rng.Intn(20); {
		case r < 14:
			inst.Clock.Advance(time.Duration(rng.Intn(1500)) * time.Millisecond)
		case r < 19:
			inst.Clock.Advance(time.Duration(rng.Intn(60000)) * time.Millisecond)
		default:
			inst.Clock.Advance(time.Duration(rng.Intn(6*3600)) * time.Second)
		}
		now := inst.Clock.NowMs()
		hit(now)
		if i%100 == 99 {
			check(now)
		}
	}
}

// The Redis way of a time box: two sorted sets kept in step by a script
// (points by member, last activity by member); members whose last
// activity is stay ms old or more leave both.
const recBoxLua = `
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1] - ARGV[2])
for _, m in ipairs(old) do
  redis.call('ZREM', KEYS[1], m)
  redis.call('ZREM', KEYS[2], m)
end
if ARGV[3] then
  redis.call('ZADD', KEYS[2], ARGV[1], ARGV[3])
  return redis.call('ZINCRBY', KEYS[1], ARGV[4], ARGV[3])
end
return redis.call('ZCARD', KEYS[1])
`

// TestRecipeTimeBox: players with their points, each leaving the box ten
// minutes after their last activity. Abacus: one hash, HINCRBY and
// HEXPIRE in one transaction; HLEN and HGETALL read the box.
func TestRecipeTimeBox(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(recT0))
	c := inst.Client(t)
	rc := recRedis(t)
	ctx := servertest.Ctx
	const stay = 600 // seconds

	score := func(player string, pts int) int64 {
		t.Helper()
		var incr *redis.IntCmd
		var exp *redis.Cmd
		_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			incr = p.HIncrBy(ctx, "box:players", player, int64(pts))
			exp = p.Do(ctx, "HEXPIRE", "box:players", stay, "FIELDS", 1, player)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		recEq(t, "HEXPIRE reply", exp.Val(), []any{int64(1)})
		if rc != nil {
			now := inst.Clock.NowMs()
			r, err := rc.Eval(ctx, recBoxLua, []string{"box:pts", "box:seen"}, now, stay*1000, player, pts).Result()
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := strconv.ParseInt(r.(string), 10, 64); n != incr.Val() {
				t.Fatalf("%s at %d: Abacus %d points, Redis %d", player, now, incr.Val(), n)
			}
		}
		return incr.Val()
	}
	box := func() map[string]float64 {
		t.Helper()
		out := map[string]float64{}
		for f, v := range c.HGetAll(ctx, "box:players").Val() {
			out[f], _ = strconv.ParseFloat(v, 64)
		}
		if n := c.HLen(ctx, "box:players").Val(); n != int64(len(out)) {
			t.Fatalf("HLEN %d, HGETALL %d fields", n, len(out))
		}
		if rc != nil {
			now := inst.Clock.NowMs()
			n, err := rc.Eval(ctx, recBoxLua, []string{"box:pts", "box:seen"}, now, stay*1000).Int64()
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]float64{}
			for _, z := range rc.ZRangeWithScores(ctx, "box:pts", 0, -1).Val() {
				want[z.Member.(string)] = z.Score
			}
			if n != int64(len(want)) || !reflect.DeepEqual(out, want) {
				t.Fatalf("box at %d: Abacus %v, Redis (%d) %v", now, out, n, want)
			}
		}
		return out
	}

	// The document's example.
	recEq(t, "alice", score("alice", 5), int64(5))
	inst.Clock.Advance(4 * time.Minute)
	recEq(t, "bob", score("bob", 3), int64(3))
	inst.Clock.Advance(4 * time.Minute)
	recEq(t, "alice again", score("alice", 2), int64(7))
	recEq(t, "HTTL", c.Do(ctx, "HTTL", "box:players", "FIELDS", 2, "alice", "bob").Val(), []any{int64(600), int64(360)})
	recEq(t, "box", box(), map[string]float64{"alice": 7, "bob": 3})
	inst.Clock.Advance(6 * time.Minute) // bob's ten minutes are up
	recEq(t, "box", box(), map[string]float64{"alice": 7})
	inst.Clock.Advance(4 * time.Minute) // and alice's
	recEq(t, "empty box", box(), map[string]float64{})
	recEq(t, "the key goes with its last field", c.Exists(ctx, "box:players").Val(), int64(0))
	// A fixed value per member: HSETEX, one command.
	recEq(t, "HSETEX", recDo(t, c, "HSETEX", "box:last", "EX", 600, "FIELDS", 1, "alice", 5), int64(1))
	recEq(t, "HSETEX TTL", recDo(t, c, "HTTL", "box:last", "FIELDS", 1, "alice"), []any{int64(600)})
	recDo(t, c, "DEL", "box:last")

	// A random stream: 40 players, activity at random gaps.
	rng := rand.New(rand.NewSource(8))
	sizes := map[int]bool{}
	for i := 0; i < 3000; i++ {
		inst.Clock.Advance(time.Duration(rng.Intn(40000)) * time.Millisecond)
		score(fmt.Sprintf("p%d", rng.Intn(40)), 1+rng.Intn(9))
		if i%20 == 0 {
			sizes[len(box())] = true
		}
	}
	if len(sizes) < 5 {
		t.Fatalf("the box's size hardly moved: %v", sizes)
	}
}

// TestRecipeRollupStore: request counts per service and region, rolled up
// to minutes and hours, queried across series by label. Redis: a hash per
// series and rollup (field = bucket), HINCRBY on each, merged by the
// client. Abacus: labelled series with compaction rules, TS.MRANGE FILTER
// GROUPBY REDUCE.
func TestRecipeRollupStore(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(recT0))
	c := inst.Client(t)
	rc := recRedis(t)
	ctx := servertest.Ctx
	services, regions := []string{"api", "web", "worker"}, []string{"eu", "us"}
	rollups := []struct {
		name string
		ms   int64
		keep int64
	}{{"1m", 60_000, 86_400_000}, {"1h", 3_600_000, 30 * 86_400_000}}

	for _, s := range services {
		for _, r := range regions {
			raw := "req:" + s + ":" + r
			recEq(t, raw, recDo(t, c, "TS.CREATE", raw, "RETENTION", 3_600_000, "DUPLICATE_POLICY", "SUM",
				"LABELS", "metric", "requests", "service", s, "region", r), "OK")
			for _, ru := range rollups {
				recEq(t, raw+":"+ru.name, recDo(t, c, "TS.CREATE", raw+":"+ru.name, "RETENTION", ru.keep,
					"LABELS", "metric", "requests", "service", s, "region", r, "rollup", ru.name), "OK")
				recEq(t, "rule", recDo(t, c, "TS.CREATERULE", raw, raw+":"+ru.name, "AGGREGATION", "sum", ru.ms), "OK")
			}
		}
	}
	recEq(t, "QUERYINDEX", recDo(t, c, "TS.QUERYINDEX", "service=api", "rollup=1h"), []any{"req:api:eu:1h", "req:api:us:1h"})

	// The model: counts by (service, region, rollup, bucket).
	type cell struct {
		s, r, ru string
		b        int64
	}
	model := map[cell]float64{}
	record := func(s, r string, n int) {
		t.Helper()
		now := inst.Clock.NowMs()
		recDo(t, c, "TS.ADD", "req:"+s+":"+r, "*", n)
		for _, ru := range rollups {
			model[cell{s, r, ru.name, now / ru.ms * ru.ms}] += float64(n)
		}
		if rc != nil {
			_, err := rc.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, ru := range rollups {
					p.HIncrBy(ctx, "req:"+s+":"+r+":"+ru.name, strconv.FormatInt(now/ru.ms*ru.ms, 10), int64(n))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	// grouped reads TS.MRANGE ... GROUPBY label REDUCE sum as
	// group -> bucket -> value.
	grouped := func(args ...any) map[string]map[int64]float64 {
		t.Helper()
		out := map[string]map[int64]float64{}
		for _, g := range recDo(t, c, append([]any{"TS.MRANGE"}, args...)...).([]any) {
			e := g.([]any)
			out[e[0].(string)] = recSamples(t, e[2])
		}
		return out
	}
	// redisGroups is the Redis way's client-side merge: HGETALL each
	// series' hash of rollup ru, sum by label value, buckets in [from, to].
	redisGroups := func(ru, by string, from, to int64, keep func(s, r string) bool) map[string]map[int64]float64 {
		out := map[string]map[int64]float64{}
		for _, s := range services {
			for _, r := range regions {
				if !keep(s, r) {
					continue
				}
				g := "service=" + s
				if by == "region" {
					g = "region=" + r
				}
				for f, v := range rc.HGetAll(ctx, "req:"+s+":"+r+":"+ru).Val() {
					b, _ := strconv.ParseInt(f, 10, 64)
					n, _ := strconv.ParseFloat(v, 64)
					if b < from || b > to {
						continue
					}
					if out[g] == nil {
						out[g] = map[int64]float64{}
					}
					out[g][b] += n
				}
			}
		}
		return out
	}
	all := func(s, r string) bool { return true }

	// The document's example: three services' requests in two minutes.
	inst.Clock.Set(1_700_000_040_000) // 22:14:00
	record("api", "eu", 3)
	record("api", "us", 4)
	record("web", "eu", 5)
	inst.Clock.Set(1_700_000_100_000) // 22:15:00
	record("api", "eu", 1)
	// Without LATEST a minute shows once a later sample of the same
	// series closes it: only api:eu's has been closed.
	recEq(t, "by service, minutes", grouped("-", "+", "FILTER", "metric=requests", "rollup=1m", "GROUPBY", "service", "REDUCE", "sum"),
		map[string]map[int64]float64{"service=api": {1_700_000_040_000: 3}, "service=web": {}, "service=worker": {}})
	recEq(t, "by service, minutes, LATEST", grouped("-", "+", "LATEST", "FILTER", "metric=requests", "rollup=1m", "GROUPBY", "service", "REDUCE", "sum"),
		map[string]map[int64]float64{"service=api": {1_700_000_040_000: 7, 1_700_000_100_000: 1}, "service=web": {1_700_000_040_000: 5}, "service=worker": {}})
	recEq(t, "eu by hour from the raw series", grouped("-", "+", "AGGREGATION", "sum", 3_600_000, "FILTER", "metric=requests", "rollup=", "region=eu", "GROUPBY", "region", "REDUCE", "sum"),
		map[string]map[int64]float64{"region=eu": {1_699_999_200_000: 9}})
	recEq(t, "WITHLABELS", recDo(t, c, "TS.MRANGE", "-", "+", "WITHLABELS", "FILTER", "metric=requests", "rollup=", "region=eu", "GROUPBY", "region", "REDUCE", "sum"),
		[]any{[]any{"region=eu", []any{[]any{"region", "eu"}, []any{"__reducer__", "sum"}, []any{"__source__", "req:api:eu,req:web:eu,req:worker:eu"}},
			[]any{[]any{int64(1_700_000_040_000), "8"}, []any{int64(1_700_000_100_000), "1"}}}})
	if rc != nil {
		recEq(t, "Redis way, by service", redisGroups("1m", "service", 0, 1_700_000_040_000, all),
			map[string]map[int64]float64{"service=api": {1_700_000_040_000: 7}, "service=web": {1_700_000_040_000: 5}})
	}

	// A random stream over two days, checked against the model and Redis.
	rng := rand.New(rand.NewSource(9))
	check := func() {
		t.Helper()
		now := inst.Clock.NowMs()
		for _, ru := range rollups {
			for _, by := range []string{"service", "region"} {
				got := grouped("-", "+", "LATEST", "FILTER", "metric=requests", "rollup="+ru.name, "GROUPBY", by, "REDUCE", "sum")
				// Retention keeps the buckets within ru.keep of the newest.
				from := (now - ru.keep) / ru.ms * ru.ms
				want := map[string]map[int64]float64{}
				for k, v := range model {
					if k.ru != ru.name || k.b <= from {
						continue
					}
					g := "service=" + k.s
					if by == "region" {
						g = "region=" + k.r
					}
					if want[g] == nil {
						want[g] = map[int64]float64{}
					}
					want[g][k.b] += v
				}
				for g, bs := range got {
					for b := range bs {
						if b <= from {
							delete(bs, b)
						}
					}
					if len(bs) == 0 {
						delete(got, g)
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("rollup %s by %s at %d: got %v, want %v", ru.name, by, now, got, want)
				}
				if rc != nil {
					if rw := redisGroups(ru.name, by, from+1, now, all); !reflect.DeepEqual(rw, want) {
						t.Fatalf("rollup %s by %s at %d: Redis way %v, want %v", ru.name, by, now, rw, want)
					}
				}
			}
		}
		// One service's hourly totals per region, from the minutes.
		got := grouped("-", "+", "LATEST", "AGGREGATION", "sum", 3_600_000, "FILTER", "metric=requests", "rollup=1m", "service=web", "GROUPBY", "region", "REDUCE", "sum")
		if rc != nil {
			from := (now - 86_400_000) / 60_000 * 60_000
			hours := map[string]map[int64]float64{}
			for g, bs := range redisGroups("1m", "region", from+1, now, func(s, r string) bool { return s == "web" }) {
				hours[g] = map[int64]float64{}
				for b, v := range bs {
					hours[g][b/3_600_000*3_600_000] += v
				}
			}
			// The oldest hour may be cut by the minutes' retention on
			// both sides alike; compare the hours after it.
			for _, m := range []map[string]map[int64]float64{got, hours} {
				for _, bs := range m {
					for b := range bs {
						if b <= from {
							delete(bs, b)
						}
					}
				}
			}
			if !reflect.DeepEqual(got, hours) {
				t.Fatalf("web hourly at %d: Abacus %v, Redis way %v", now, got, hours)
			}
		}
	}
	for i := 0; i < 3000; i++ {
		inst.Clock.Advance(time.Duration(rng.Intn(120_000)) * time.Millisecond)
		record(services[rng.Intn(len(services))], regions[rng.Intn(len(regions))], 1+rng.Intn(20))
		if i%100 == 99 {
			check()
		}
	}
	var groups []string
	for g := range grouped("-", "+", "FILTER", "metric=requests", "rollup=1h", "GROUPBY", "service", "REDUCE", "sum") {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	recEq(t, "groups", groups, []string{"service=api", "service=web", "service=worker"})
}

// The Redis way of a lock's renewal and release (docs/metrics.md, "Locks
// with fencing tokens"): compare the owner, then act.
const (
	recRenewLua   = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end return false`
	recReleaseLua = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`
)

// TestRecipeRateLimitsAndLocks runs the examples of the rate-limit and
// lock recipes as docs/metrics.md shows them.
func TestRecipeRateLimitsAndLocks(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(recT0))
	c := inst.Client(t)
	rc := recRedis(t)
	ctx := servertest.Ctx
	five := []any{int64(0), int64(16), int64(15), int64(-1), int64(2)}

	recEq(t, "CL.THROTTLE", recDo(t, c, "CL.THROTTLE", "user:123", 15, 30, 60), five)
	recEq(t, "CL.THROTTLE TTL", recInt(t, c, "PTTL", "user:123"), int64(2000))
	recDo(t, c, "DEL", "user:123")
	recEq(t, "GCRA", recDo(t, c, "GCRA", "user:123", 15, 30, 60), five)
	recDo(t, c, "DEL", "user:123")
	recEq(t, "RATELIMIT.SLIDING", recDo(t, c, "RATELIMIT.SLIDING", 2, "user:123", "ip:10.0.0.7", "LIMITS", 3, 1, 10, 0.1, 60, 100, 5, 3600, 1000, 60),
		[]any{int64(0), int64(9), int64(0), int64(99), int64(0), int64(999), int64(0)})
	recEq(t, "RATELIMIT.SLIDING keeps a hash", recDo(t, c, "TYPE", "ip:10.0.0.7"), "hash")

	// INCREX as a fixed window: the 17th request of the window.
	incr := []any{"INCREX", "ratelimit:user:123", "BYINT", 1, "UBOUND", 100, "EX", 60, "ENX"}
	for i := 1; i <= 16; i++ {
		recDo(t, c, incr...)
		inst.Clock.Advance(time.Second)
	}
	recEq(t, "INCREX 17th", recDo(t, c, incr...), []any{int64(17), int64(1)})
	recEq(t, "ENX did not extend the window", recInt(t, c, "TTL", "ratelimit:user:123"), int64(44))
	for i := 18; i <= 100; i++ {
		recDo(t, c, incr...)
	}
	recEq(t, "INCREX at the cap", recDo(t, c, incr...), []any{int64(100), int64(0)})
	inst.Clock.Advance(44 * time.Second)
	recEq(t, "a new window", recDo(t, c, incr...), []any{int64(1), int64(1)})

	// Locks: acquire with a token, renew, a stranger cannot renew or
	// release, release; the Redis way's scripts give the same outcomes.
	acquire := func(owner string) (bool, int64) {
		var set *redis.StatusCmd
		var tok *redis.IntCmd
		_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			set = p.SetArgs(ctx, "lock:report", owner, redis.SetArgs{Mode: "NX", TTL: 30 * time.Second})
			tok = p.Incr(ctx, "fence:report")
			return nil
		})
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		return set.Val() == "OK", tok.Val()
	}
	renew := func(owner string) bool {
		ok := c.Do(ctx, "SET", "lock:report", owner, "IFEQ", owner, "PX", 30000).Val() == "OK"
		if rc != nil {
			r, _ := rc.Eval(ctx, recRenewLua, []string{"lock:report"}, owner, 30000).Result()
			if (r == "OK") != ok {
				t.Fatalf("renew by %s: Abacus %v, Redis script %v", owner, ok, r)
			}
		}
		return ok
	}
	release := func(owner string, delifeq bool) int64 {
		var n int64
		if delifeq {
			n = recInt(t, c, "DELIFEQ", "lock:report", owner)
		} else {
			n = recInt(t, c, "DELEX", "lock:report", "IFEQ", owner)
		}
		if rc != nil {
			if r := rc.Eval(ctx, recReleaseLua, []string{"lock:report"}, owner).Val(); r != n {
				t.Fatalf("release by %s: Abacus %d, Redis script %v", owner, n, r)
			}
		}
		return n
	}
	lockBoth := func(owner string) {
		if rc != nil {
			rc.SetNX(ctx, "lock:report", owner, 30*time.Second)
		}
	}
	ok, tok := acquire("A")
	lockBoth("A")
	recEq(t, "A acquires", []any{ok, tok}, []any{true, int64(1)})
	ok, _ = acquire("B")
	recEq(t, "B waits", ok, false)
	recEq(t, "A renews", renew("A"), true)
	recEq(t, "B cannot renew", renew("B"), false)
	recEq(t, "IFEQ never creates", c.Do(ctx, "SET", "nolock", "x", "IFEQ", "x").Err(), redis.Nil)
	recEq(t, "B cannot release", release("B", false), int64(0))
	recEq(t, "A releases", release("A", false), int64(1))
	ok, tok = acquire("B")
	lockBoth("B")
	recEq(t, "B acquires after", []any{ok, tok}, []any{true, int64(3)})
	recEq(t, "B releases (DELIFEQ)", release("B", true), int64(1))

	// The compare-and-set write carrying the token, and the largest token seen.
	recDo(t, c, "SET", "report", "41:old")
	recEq(t, "CAS", recDo(t, c, "SET", "report", "42:new", "IFEQ", "41:old"), "OK")
	recEq(t, "CAS lost", c.Do(ctx, "SET", "report", "43:x", "IFEQ", "41:old").Err(), redis.Nil)
	dig := c.Do(ctx, "DIGEST", "report").Val().(string)
	recEq(t, "CAS by digest", recDo(t, c, "SET", "report", "43:newer", "IFDEQ", dig), "OK")
	recDo(t, c, "SET", "maxtoken:report", 40)
	recEq(t, "max token raised", recDo(t, c, "INCREX", "maxtoken:report", "BYINT", 0, "LBOUND", 42, "SATURATE"), []any{int64(42), int64(2)})
	recEq(t, "max token kept", recDo(t, c, "INCREX", "maxtoken:report", "BYINT", 0, "LBOUND", 41, "SATURATE"), []any{int64(42), int64(0)})
}
