package commands_test

import (
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/script"
)

// The rate limiters Abacus exists for, run the same way on Abacus and on
// redis-server: every decision (and the reply carrying it) must be the
// same. The current time is passed as an argument so that both servers
// see the same clock; without it the scripts read redis.call('TIME').

// The limiters are the ones bench/scriptbench measures: see the comments
// at the top of each file.
var (
	fixedWindowLimiter   = readLua("fixed_window.lua")
	slidingWindowLimiter = readLua("sliding_window.lua")
)

func readLua(name string) string {
	b, err := os.ReadFile(filepath.Join("..", "..", "bench", "scriptbench", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// sortedCounters returns the keys matching ARGV[1] with their values,
// sorted.
const sortedCounters = `
local ks = redis.call('KEYS', ARGV[1])
table.sort(ks)
local out = {}
for _, k in ipairs(ks) do out[#out + 1] = k .. '=' .. redis.call('GET', k) end
return out
`

// sortedHash is a script returning a hash's fields and values sorted, to
// compare hashes independently of their encoding's order.
const sortedHash = `
local t = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #t, 2 do out[#out + 1] = t[i] .. '=' .. t[i + 1] end
table.sort(out)
return out
`

func TestScriptingDiffFixedWindowLimiter(t *testing.T) {
	sd := newScriptDiff(t)
	sha := script.SHA1(fixedWindowLimiter)
	sd.do("SCRIPT", "LOAD", fixedWindowLimiter)
	rng := rand.New(rand.NewSource(7))
	limits := []string{"10", "5", "60", "20", "3600", "100"}
	now := int64(1_700_000_000)
	allowed, denied := 0, 0
	for i := 0; i < 3000; i++ {
		now += int64(rng.Intn(3)) // several requests a second, windows roll over
		if rng.Intn(200) == 0 {
			now += 30
		}
		subject := "fw:" + strconv.Itoa(rng.Intn(4))
		args := append([]string{"EVALSHA", sha, "1", subject, strconv.FormatInt(now, 10)}, limits...)
		r := sd.do(args...)
		if strings.HasPrefix(r, "*3\r\n:1\r\n") {
			allowed++
		} else {
			denied++
		}
	}
	if allowed < 100 || denied < 100 {
		t.Errorf("the stream did not exercise both outcomes: %d allowed, %d denied", allowed, denied)
	}
	// The counters left, in name order (KEYS answers in hash order).
	for s := 0; s < 4; s++ {
		sd.do("EVAL", sortedCounters, "0", "fw:"+strconv.Itoa(s)+":*")
	}
	// Without an explicit time the script reads TIME; one long window
	// makes the decision independent of the moment.
	sd.do("EVAL", fixedWindowLimiter, "1", "fwtime", "", "86400000", "2")
	sd.do("EVAL", fixedWindowLimiter, "1", "fwtime", "", "86400000", "2")
	sd.do("EVAL", fixedWindowLimiter, "1", "fwtime", "", "86400000", "2")
}

func TestScriptingDiffslidingWindowLimiter(t *testing.T) {
	sd := newScriptDiff(t)
	sha := script.SHA1(slidingWindowLimiter)
	sd.do("SCRIPT", "LOAD", slidingWindowLimiter)
	limits := `[[1000,5,100],[10000,20,1000],[60000,50,5000]]`
	rng := rand.New(rand.NewSource(11))
	now := int64(1_700_000_000_000)
	allowed, denied := 0, 0
	for i := 0; i < 4000; i++ {
		now += int64(rng.Intn(120))
		if rng.Intn(300) == 0 {
			now += int64(rng.Intn(70000))
		}
		subject := "sw:" + strconv.Itoa(rng.Intn(3))
		cost := "1"
		if rng.Intn(10) == 0 {
			cost = strconv.Itoa(1 + rng.Intn(4))
		}
		r := sd.do("EVALSHA", sha, "1", subject, limits, cost, strconv.FormatInt(now, 10))
		if strings.HasPrefix(r, "*3\r\n:1\r\n") {
			allowed++
		} else {
			denied++
		}
		if i%500 == 0 {
			sd.do("EVAL", sortedHash, "1", subject)
		}
	}
	if allowed < 100 || denied < 100 {
		t.Errorf("the stream did not exercise both outcomes: %d allowed, %d denied", allowed, denied)
	}
	for s := 0; s < 3; s++ {
		sd.do("EVAL", sortedHash, "1", "sw:"+strconv.Itoa(s))
	}
	// Bad limits: cjson's error, the same on both.
	sd.do("EVALSHA", sha, "1", "bad", "[[1000,5,100],", "1", "1")
	sd.do("EVALSHA", sha, "1", "bad", "not json", "1", "1")
	// With TIME: a long window, the decisions do not depend on the moment.
	for i := 0; i < 4; i++ {
		sd.do("EVALSHA", sha, "1", "swtime", `[[1000000000000,3,1000000000000]]`, "1", "")
	}
	sd.do("EVAL", sortedHash, "1", "swtime")
}
