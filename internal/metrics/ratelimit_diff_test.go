package metrics_test

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/script"
	"github.com/abacusdb/abacus/internal/servertest"
)

// The rate-limit commands against their Lua equivalents run on
// redis-server (bench/ratelimitbench/*.lua, the scripts the benchmark
// measures): for the same (time, weight) sequences they must decide the
// same and reply the same, and RATELIMIT.SLIDING must leave the same hash.

func rlScript(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "recipes", "lua", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sortedHGetAll is HGETALL's reply as "field=value" lines in field order.
func sortedHGetAll(c *servertest.Conn, key string) string {
	r := c.Do("HGETALL", key)
	lines := strings.Split(strings.TrimSuffix(r, "\r\n"), "\r\n")
	var vals []string
	for i := 2; i < len(lines); i += 2 { // skip "*N", then "$len", value
		vals = append(vals, lines[i])
	}
	var pairs []string
	for i := 0; i+1 < len(vals); i += 2 {
		pairs = append(pairs, vals[i]+"="+vals[i+1])
	}
	sort.Strings(pairs)
	return strings.Join(pairs, " ")
}

// slidingPair starts Abacus and redis-server with sliding.lua loaded.
func slidingPair(t *testing.T) (a, r *servertest.Conn, sha string) {
	t.Helper()
	red := servertest.Redis(t)
	inst := servertest.Start(t)
	a, r = inst.Raw(t), servertest.Dial(t, red.Addr)
	lua := rlScript(t, "sliding.lua")
	sha = script.SHA1(lua)
	if got := r.Do("SCRIPT", "LOAD", lua); !strings.Contains(got, sha) {
		t.Fatalf("SCRIPT LOAD: %q", got)
	}
	return a, r, sha
}

func TestSlidingSameAsLua(t *testing.T) {
	a, r, sha := slidingPair(t)
	// Limit sets: windows long enough that no key's TTL runs out in real
	// time during the test (time moves through NOW); several precisions,
	// a fixed window, a sub-second window next to a long one.
	limitSets := [][]string{
		{"60", "10", "1"},
		{"60", "20", "5", "600", "50", "60", "3600", "200", "3600"},
		{"1", "3", "0.1", "120", "30", "7.5"},
		{"90", "4", "90"},
	}
	for seed := int64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewSource(seed))
		prefix := fmt.Sprintf("rlsw:%d:%d:", seed, rng.Int63())
		lims := limitSets[seed-1]
		n := strconv.Itoa(len(lims) / 3)
		now := 1_700_000_000_000 + rng.Int63n(1_000_000)
		allowed, denied := 0, 0
		for i := 0; i < 1500; i++ {
			switch x := rng.Intn(100); {
			case x < 60:
				now += rng.Int63n(500)
			case x < 90:
				now += rng.Int63n(10_000)
			case x < 97:
				now += rng.Int63n(200_000)
			default:
				now -= rng.Int63n(30_000) // a request from the past
			}
			var keys []string // distinct: the script would count a repeated key twice
			for _, k := range rng.Perm(4)[:1+rng.Intn(3)] {
				keys = append(keys, prefix+strconv.Itoa(k))
			}
			weight := strconv.Itoa([]int{0, 1, 1, 1, 1, 2, 3, 7}[rng.Intn(8)])
			nowS := strconv.FormatFloat(float64(now)/1000, 'f', 3, 64)
			cmd := append([]string{"RATELIMIT.SLIDING", strconv.Itoa(len(keys))}, keys...)
			cmd = append(append(append(cmd, "LIMITS", n), lims...), "WEIGHT", weight, "NOW", nowS)
			ev := append([]string{"EVALSHA", sha, strconv.Itoa(len(keys))}, keys...)
			ev = append(append(ev, weight, nowS), lims...)
			ga, gr := a.Do(cmd...), r.Do(ev...)
			if ga != gr {
				t.Fatalf("seed %d step %d: %v\n abacus: %q\n    lua: %q", seed, i, cmd, ga, gr)
			}
			if strings.HasPrefix(ga, "*") && strings.Contains(ga, "\r\n:0\r\n") && strings.Index(ga, "\r\n:0\r\n") == strings.Index(ga, "\r\n") {
				allowed++
			} else {
				denied++
			}
			if i%50 == 0 {
				for k := 0; k < 4; k++ {
					key := prefix + strconv.Itoa(k)
					if ha, hr := sortedHGetAll(a, key), sortedHGetAll(r, key); ha != hr {
						t.Fatalf("seed %d step %d: hash %s\n abacus: %s\n    lua: %s", seed, i, key, ha, hr)
					}
				}
			}
		}
		if allowed < 100 || denied < 100 {
			t.Errorf("seed %d: %d allowed, %d denied: the stream does not exercise both", seed, allowed, denied)
		}
		for k := 0; k < 4; k++ {
			key := prefix + strconv.Itoa(k)
			if ha, hr := sortedHGetAll(a, key), sortedHGetAll(r, key); ha != hr {
				t.Errorf("seed %d end: hash %s\n abacus: %s\n    lua: %s", seed, key, ha, hr)
			}
			ta, tr := a.Do("TTL", key), r.Do("TTL", key)
			if ta != tr && !strings.HasPrefix(ta, ":") {
				t.Errorf("TTL %s: abacus %q, redis %q", key, ta, tr)
			}
		}
	}
}

// TestClThrottleSameAsLua: CL.THROTTLE on the manual clock against the
// GCRA script on redis-server given the same times, for parameters whose
// emission interval is a whole number of milliseconds (where redis-cell's
// nanoseconds and the script's microseconds agree exactly).
func TestClThrottleSameAsLua(t *testing.T) {
	red := servertest.Redis(t)
	now := int64(1_700_000_000_000)
	inst := servertest.Start(t, servertest.WithManualClock(now))
	a, r := inst.Raw(t), servertest.Dial(t, red.Addr)
	lua := rlScript(t, "gcra.lua")
	sha := script.SHA1(lua)
	if got := r.Do("SCRIPT", "LOAD", lua); !strings.Contains(got, sha) {
		t.Fatalf("SCRIPT LOAD: %q", got)
	}
	params := [][3]string{{"4", "1", "1"}, {"9", "10", "1"}, {"0", "3", "3"}, {"2", "20", "60"}, {"14", "30", "60"}}
	rng := rand.New(rand.NewSource(5))
	prefix := fmt.Sprintf("rlgc:%d:", rng.Int63())
	limited := 0
	for i := 0; i < 3000; i++ {
		now += []int64{0, 1, 10, 100, 250, 999, 1000, 3000}[rng.Intn(8)]
		inst.Clock.Set(now)
		pi := rng.Intn(len(params))
		p := params[pi]
		key := prefix + strconv.Itoa(pi)
		qty := strconv.Itoa([]int{0, 1, 1, 1, 2, 3, 20}[rng.Intn(7)])
		ga := a.Do("CL.THROTTLE", key, p[0], p[1], p[2], qty)
		gr := r.Do("EVALSHA", sha, "1", key, p[0], p[1], p[2], qty, strconv.FormatInt(now, 10))
		if ga != gr {
			t.Fatalf("step %d: CL.THROTTLE %s %v %s at %d\n abacus: %q\n    lua: %q", i, key, p, qty, now, ga, gr)
		}
		if strings.HasPrefix(ga, "*5\r\n:1") {
			limited++
		}
	}
	if limited < 200 || limited > 2800 {
		t.Errorf("%d of 3000 limited: the stream does not exercise both outcomes", limited)
	}
}

// TestSlidingSubMillisecondSameAsLua: NOW with fractions of a millisecond,
// many of them a hair below a second's boundary (where rounding and
// truncating disagree), against the script on redis-server: decisions,
// replies and hashes equal over a random stream.
func TestSlidingSubMillisecondSameAsLua(t *testing.T) {
	a, r, sha := slidingPair(t)
	lims := []string{"3", "4", "1", "10", "9", "2", "1", "2", "0.25"}
	for seed := int64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewSource(seed))
		key := fmt.Sprintf("rlsub:%d:%d", seed, rng.Int63())
		sec := int64(1_700_000_000) + rng.Int63n(1000)
		boundary := 0
		for i := 0; i < 600; i++ {
			var nowS string
			switch x := rng.Intn(4); x {
			case 0: // just below the next second: .9999998 and the like
				sec += rng.Int63n(2)
				nowS = fmt.Sprintf("%d.%s", sec, []string{"9999998", "9999", "99999", "999999"}[rng.Intn(4)])
				boundary++
			case 1: // just below a quarter second
				nowS = fmt.Sprintf("%d.%s", sec, []string{"2499996", "7499999", "4999997"}[rng.Intn(3)])
				boundary++
			default: // any sub-millisecond time within the second
				nowS = fmt.Sprintf("%d.%07d", sec, rng.Int63n(10_000_000))
			}
			if rng.Intn(5) == 0 {
				sec++
			}
			weight := strconv.Itoa([]int{0, 1, 1, 1, 2}[rng.Intn(5)])
			cmd := append([]string{"RATELIMIT.SLIDING", "1", key, "LIMITS", "3"}, lims...)
			cmd = append(cmd, "WEIGHT", weight, "NOW", nowS)
			ev := append([]string{"EVALSHA", sha, "1", key, weight, nowS}, lims...)
			if ga, gr := a.Do(cmd...), r.Do(ev...); ga != gr {
				t.Fatalf("seed %d step %d: %v\n abacus: %q\n    lua: %q", seed, i, cmd, ga, gr)
			}
			if i%25 == 0 {
				if ha, hr := sortedHGetAll(a, key), sortedHGetAll(r, key); ha != hr {
					t.Fatalf("seed %d step %d: hash\n abacus: %s\n    lua: %s", seed, i, ha, hr)
				}
			}
		}
		if ha, hr := sortedHGetAll(a, key), sortedHGetAll(r, key); ha != hr {
			t.Errorf("seed %d end: hash\n abacus: %s\n    lua: %s", seed, ha, hr)
		}
		if boundary < 100 {
			t.Errorf("seed %d: only %d times near a boundary", seed, boundary)
		}
	}
}
