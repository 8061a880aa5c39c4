package command_test

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/script"
)

// The rate limiters Abacus exists for, run the same way on Abacus and on
// redis-server: every decision (and the reply carrying it) must be the
// same. The current time is passed as an argument so that both servers
// see the same clock; without it the scripts read redis.call('TIME').

// fixedWindowLimiter counts requests in fixed windows, one key per
// (subject, window length, window number), over several (duration,
// limit) pairs given as ARGV[2...]: it checks every window before
// counting in any. ARGV[1] is the time in seconds (empty: read TIME).
const fixedWindowLimiter = `
local now = tonumber(ARGV[1])
if not now then now = tonumber(redis.call('TIME')[1]) end
local cost = 1
local keys = {}
for i = 2, #ARGV, 2 do
  local dur, limit = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
  local k = KEYS[1] .. ':' .. dur .. ':' .. math.floor(now / dur)
  local used = tonumber(redis.call('GET', k) or '0')
  if used + cost > limit then
    return {0, dur, used, limit - used}
  end
  keys[#keys + 1] = {k, dur}
end
local counts = {}
for _, kd in ipairs(keys) do
  local c = redis.call('INCR', kd[1])
  if c == 1 then redis.call('EXPIRE', kd[1], kd[2]) end
  counts[#counts + 1] = c
end
return {1, 0, counts}
`

// SlidingWindowLimiter is a sliding-window limiter over several limits
// kept in one hash per subject. Each limit is {window_ms, limit,
// bucket_ms} in the JSON list ARGV[1]; ARGV[2] is the cost, ARGV[3] the
// time in ms (empty: read TIME). Per window the hash holds the running total
// t:<w>, the oldest live bucket o:<w>, and the bucket counts b:<w>:<start>;
// buckets that slid out of the window are subtracted and deleted. Every
// limit is checked before any is counted.
const SlidingWindowLimiter = `
local key = KEYS[1]
local limits = cjson.decode(ARGV[1])
local cost = tonumber(ARGV[2]) or 1
local now = tonumber(ARGV[3])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local state = {}
local maxwin = 0
for i, l in ipairs(limits) do
  local win, limit, bucket = l[1], l[2], l[3]
  if win > maxwin then maxwin = win end
  local cur = math.floor(now / bucket) * bucket
  local oldest = cur - win + bucket
  local total = tonumber(redis.call('HGET', key, 't:' .. win) or '0')
  local o = tonumber(redis.call('HGET', key, 'o:' .. win) or oldest)
  local expired = false
  while o < oldest and total > 0 do
    local f = 'b:' .. win .. ':' .. o
    local c = tonumber(redis.call('HGET', key, f) or '0')
    if c > 0 then
      total = total - c
      redis.call('HDEL', key, f)
    end
    o = o + bucket
    expired = true
  end
  if o < oldest then o = oldest end
  if expired then
    redis.call('HSET', key, 't:' .. win, total)
    redis.call('HSET', key, 'o:' .. win, o)
  end
  if total + cost > limit then
    return {0, i, limit - total}
  end
  state[i] = {win, cur, o, limit - total - cost}
end
local remaining = {}
for i, s in ipairs(state) do
  redis.call('HINCRBY', key, 'b:' .. s[1] .. ':' .. s[2], cost)
  redis.call('HINCRBY', key, 't:' .. s[1], cost)
  redis.call('HSET', key, 'o:' .. s[1], s[3])
  remaining[i] = s[4]
end
redis.call('EXPIRE', key, math.ceil(maxwin / 1000) + 1)
return {1, 0, remaining}
`

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

func TestScriptingDiffSlidingWindowLimiter(t *testing.T) {
	sd := newScriptDiff(t)
	sha := script.SHA1(SlidingWindowLimiter)
	sd.do("SCRIPT", "LOAD", SlidingWindowLimiter)
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
