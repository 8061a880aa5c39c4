package commands_test

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/script"
)

// Differential tests of the paths where the Lua environment reuses values
// from call to call (internal/script/intern.go: the cache of short strings
// made by .. and by redis.call replies, the boxed small integers) and of
// the chunks compiled with kill checkpoints (internal/script/kill.go): the
// values scripts see must be the ones redis-server gives them.

var reuseCases = []luaCase{
	// math.floor and math.ceil, Abacus's own.
	{body: "return {math.floor(3.7), math.ceil(3.2), math.floor(-3.5), math.ceil(-3.5)}"},
	{body: "return tostring(math.ceil(-0.5)) .. tostring(math.floor(-0))"},
	{body: "return math.floor('2.5') + math.ceil('  7.1  ')"},
	{body: "return math.floor()"},
	{body: "return math.floor('x')"},
	{body: "return math.ceil({})"},
	{body: "return {math.floor(1e300) == 1e300, math.floor(-2^63) == -2^63, tostring(math.floor(0/0))}"},
	{body: "return {math.floor(1023.5), math.floor(1024.5), math.ceil(1022.5), math.floor(-1.5)}"},
	// .. results of every length around the cache's limits (64) and the
	// stack buffer's (128), repeated so that the second come from the cache.
	{body: "local t = {} for n = 60, 135 do local s = string.rep('x', n - 3) .. n t[#t + 1] = s t[#t + 1] = string.rep('x', n - 3) .. n end return t"},
	{body: "local t = {} for i = 1, 50 do t[i] = 'k:' .. (i % 7) .. ':' .. i * 1.5 end return t"},
	{body: "local a = 'x' .. 1 local b = 'x' .. 1 return {a == b, a, b, #a}"},
	{body: "local t = {} for i = 1, 20 do t[i] = '' .. '' .. i end return t"},
	{body: "return {'a' .. -0, 'b' .. 0.1, 'c' .. 1e15, 'd' .. 2^53, 'e' .. -1e-5}"},
	// Replies made Lua values: repeated bulks, integers around 1024, negative.
	{body: "redis.call('SET', KEYS[1], 'v') local t = {} for i = 1, 5 do t[i] = redis.call('GET', KEYS[1]) end return t", keys: k("rk")},
	{body: "redis.call('SET', KEYS[1], 1020) local t = {} for i = 1, 8 do t[i] = redis.call('INCR', KEYS[1]) end return t", keys: k("rk")},
	{body: "redis.call('SET', KEYS[1], 3) local t = {} for i = 1, 8 do t[i] = redis.call('DECR', KEYS[1]) end return t", keys: k("rk")},
	{body: "redis.call('SET', KEYS[1], 5) local a = redis.call('INCR', KEYS[1]) local b = redis.call('GET', KEYS[1]) return {type(a), type(b), a + 1, b .. ''}", keys: k("rk")},
	{body: "redis.call('RPUSH', KEYS[1], 'a', 'a', 'b', 'a') return redis.call('LRANGE', KEYS[1], 0, -1)", keys: k("rl")},
	{body: "local t = {} for i = 1, 1100 do t[i] = i end local s = 0 for i, v in ipairs(t) do s = s + i * v end return {s, #t}"},
	{body: "return {tonumber('1023'), tonumber('1024'), tonumber('-1'), tonumber('0x10'), tonumber('1e2'), tonumber(' 5 ')}"},
	// Chunks with checkpoints in every kind of loop and in functions, and
	// without (tight loops): the results are those of plain Lua.
	{body: "local n = 0 while n < 250 do n = n + 1 local s = tostring(n) end return n"},
	{body: "local n = 0 repeat n = n + 1 local s = tostring(n) until n >= 250 return n"},
	{body: "local n = 0 for i = 1, 1001 do n = n + #tostring(i) end return n"},
	{body: "local n = 0 for i = 10, 1, -1 do n = n * 2 + i end return n"},
	{body: "local function f(n) if n == 0 then return 0 end return n + f(n - 1) end return f(300)"},
	{body: "local function f(n, acc) if n == 0 then return acc end return f(n - 1, acc + tonumber(tostring(n))) end return f(500, 0)"},
	{body: "local function sq(v) return v * v end local s = 0 for i = 1, 300 do s = s + sq(i) end return s"},
	{body: "local ok, e = pcall(function() local t = {} for i = 1, 200 do t[i] = tostring(i) end error(#t) end) return {tostring(ok), e}"},
	{body: "local n = 0 for k, v in pairs({a = 1, b = 2, c = 3}) do n = n + v end return n"},
	{body: "local t = {} for i = 1, 150 do table.insert(t, tostring(i)) end table.sort(t, function(a, b) return tonumber(a) > tonumber(b) end) return {t[1], t[150]}"},
	{body: "local co = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(tostring(i)) end end) return {co(), co(), co()}"},
	{body: "local f = loadstring('local n = 0 for i = 1, #ARGV do n = n + tonumber(ARGV[i]) end return n') return f()", args: []string{"1", "2", "39"}},
	// Error positions after code with checkpoints (the VM's own error texts
	// differ from C Lua's: the errors here are raised by functions).
	{body: "local x = 0\nfor i = 1, #ARGV + 3 do\nx = x + i\nend\nerror('x is ' .. x)"},
	{body: "local t = {}\nwhile #t < 3 do\nt[#t + 1] = tostring(#t)\nend\nreturn redis.call('GET')"},
	{body: "local function f(n)\nif n > 3 then\nerror({err = 'deep ' .. n})\nend\nreturn f(n + 1)\nend\nreturn f(1)"},
}

func TestScriptingDiffReuse(t *testing.T) {
	sd := newScriptDiff(t)
	sd.runCorpus(reuseCases, scriptSetup...)
}

// A stream of EVALSHA calls whose strings change from call to call: the
// string cache sees hits, misses and replaced slots, the KEYS and ARGV
// tables keep some strings and get new ones.
func TestScriptingDiffReuseStream(t *testing.T) {
	sd := newScriptDiff(t)
	const body = `
local out = {}
for i = 1, #ARGV do
  local v = redis.call('HINCRBY', KEYS[1], ARGV[i], i)
  local g = redis.call('HGET', KEYS[1], ARGV[i])
  out[#out + 1] = ARGV[i] .. '=' .. v .. '/' .. g
end
out[#out + 1] = redis.call('HLEN', KEYS[1])
return out`
	sha := script.SHA1(body)
	sd.do("SCRIPT", "LOAD", body)
	rng := rand.New(rand.NewSource(11))
	field := func() string {
		n := rng.Intn(140)
		if rng.Intn(2) == 0 {
			n = rng.Intn(8)
		}
		return strings.Repeat(string(rune('a'+rng.Intn(3))), n) + strconv.Itoa(rng.Intn(50))
	}
	for i := 0; i < 2000; i++ {
		args := []string{"EVALSHA", sha, "1", "rh:" + strconv.Itoa(rng.Intn(5))}
		for j := rng.Intn(6); j > 0; j-- {
			args = append(args, field())
		}
		sd.do(args...)
	}
}
