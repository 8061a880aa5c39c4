package commands_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// Randomized scripts built from safe command templates (fixed seeds), run
// on Abacus and on redis-server: every reply must be the same, and so
// must the data they leave. The templates stay away from what is
// unordered (SMEMBERS, HGETALL of big hashes, multi-key tables) and from
// the clock (TTL values).

type scriptGen struct {
	rng *rand.Rand
}

func (g *scriptGen) key() string { return fmt.Sprintf("'k%d'", g.rng.Intn(6)) }
func (g *scriptGen) field() string {
	return fmt.Sprintf("'f%d'", g.rng.Intn(4))
}
func (g *scriptGen) val() string {
	switch g.rng.Intn(5) {
	case 0:
		return fmt.Sprintf("%d", g.rng.Intn(200)-100)
	case 1:
		return fmt.Sprintf("'%d'", g.rng.Intn(50))
	case 2:
		return fmt.Sprintf("%d.5", g.rng.Intn(20))
	case 3:
		return "ARGV[1]"
	}
	return fmt.Sprintf("'v%d'", g.rng.Intn(10))
}

// call returns a redis.call or redis.pcall expression on the templates.
func (g *scriptGen) call() string {
	k, f, v := g.key(), g.field(), g.val()
	n := g.rng.Intn(10) - 3
	tmpl := []string{
		"'SET', $K, $V", "'GET', $K", "'INCR', $K", "'INCRBY', $K, $N", "'DECR', $K",
		"'APPEND', $K, $V", "'STRLEN', $K", "'GETSET', $K, $V", "'SETNX', $K, $V",
		"'DEL', $K", "'EXISTS', $K", "'TYPE', $K", "'EXPIRE', $K, 1000", "'PERSIST', $K",
		"'HSET', $K, $F, $V", "'HGET', $K, $F", "'HINCRBY', $K, $F, $N", "'HDEL', $K, $F",
		"'HLEN', $K", "'HEXISTS', $K, $F", "'HMGET', $K, $F, 'f0'",
		"'LPUSH', $K, $V", "'RPUSH', $K, $V", "'LPOP', $K", "'RPOP', $K", "'LRANGE', $K, 0, -1",
		"'LLEN', $K", "'LINDEX', $K, $N",
		"'SADD', $K, $V", "'SREM', $K, $V", "'SCARD', $K", "'SISMEMBER', $K, $V",
		"'ZADD', $K, $N, $V", "'ZINCRBY', $K, 2, $V", "'ZSCORE', $K, $V",
		"'ZRANGE', $K, 0, -1, 'WITHSCORES'", "'ZCARD', $K", "'ZREM', $K, $V",
		"'MGET', $K, 'k0', 'k1'", "'PING'", "'ECHO', $V",
	}
	args := strings.NewReplacer("$K", k, "$F", f, "$V", v, "$N", fmt.Sprint(n)).Replace(tmpl[g.rng.Intn(len(tmpl))])
	if g.rng.Intn(3) == 0 {
		return "redis.call(" + args + ")"
	}
	return "redis.pcall(" + args + ")"
}

// script builds one script body.
func (g *scriptGen) script() string {
	var b strings.Builder
	if g.rng.Intn(6) == 0 {
		b.WriteString("redis.setresp(3)\n")
	}
	b.WriteString("local r = {}\n")
	for i, n := 0, 1+g.rng.Intn(8); i < n; i++ {
		switch g.rng.Intn(8) {
		case 0:
			fmt.Fprintf(&b, "local v = %s\nif type(v) == 'number' and v > %d then r[#r+1] = %s end\n", g.call(), g.rng.Intn(20), g.call())
		case 1:
			fmt.Fprintf(&b, "for i = 1, %d do r[#r+1] = %s end\n", 1+g.rng.Intn(3), g.call())
		case 2:
			fmt.Fprintf(&b, "local ok, e = pcall(function() return %s end)\nr[#r+1] = tostring(ok)\n", g.call())
		case 3:
			fmt.Fprintf(&b, "r[#r+1] = type(%s)\n", g.call())
		case 4:
			fmt.Fprintf(&b, "r[#r+1] = cjson.encode({%s})\n", g.call())
		default:
			fmt.Fprintf(&b, "r[#r+1] = %s\n", g.call())
		}
	}
	switch g.rng.Intn(10) {
	case 0:
		b.WriteString("error('stopped here')\n")
	case 1:
		b.WriteString("return redis.error_reply('ERR custom')\n")
	case 2:
		b.WriteString("return #r\n")
	case 3:
		b.WriteString("return {ok = 'done'}\n")
	default:
		b.WriteString("return r\n")
	}
	return b.String()
}

// dumpScript returns every key with its type and contents, in key order.
const dumpScript = `
local keys = redis.call('KEYS', '*')
table.sort(keys)
local out = {}
for _, k in ipairs(keys) do
  local t = redis.call('TYPE', k).ok
  local v
  if t == 'string' then v = redis.call('GET', k)
  elseif t == 'hash' then
    local h = redis.call('HGETALL', k)
    local p = {}
    for i = 1, #h, 2 do p[#p+1] = h[i] .. '=' .. h[i+1] end
    table.sort(p)
    v = table.concat(p, ',')
  elseif t == 'list' then v = table.concat(redis.call('LRANGE', k, 0, -1), ',')
  elseif t == 'set' then
    local m = redis.call('SMEMBERS', k)
    table.sort(m)
    v = table.concat(m, ',')
  elseif t == 'zset' then v = table.concat(redis.call('ZRANGE', k, 0, -1, 'WITHSCORES'), ',')
  end
  out[#out+1] = k .. ':' .. t .. ':' .. tostring(v) .. ':' .. tostring(redis.call('TTL', k) > 0)
end
return out
`

func TestScriptingDiffRandomScripts(t *testing.T) {
	sd := newScriptDiff(t)
	arrays := 0
	for _, seed := range []int64{1, 2, 3} {
		g := &scriptGen{rng: rand.New(rand.NewSource(seed))}
		sd.Do("FLUSHALL")
		for i := 0; i < 200; i++ {
			body := g.script()
			arg := fmt.Sprintf("%d", g.rng.Intn(30))
			if g.rng.Intn(4) == 0 {
				// EVALSHA of a loaded script, as clients do.
				sha := sd.do("SCRIPT", "LOAD", body)
				sd.do("EVALSHA", strings.Split(sha, "\r\n")[1], "0", arg)
			} else if strings.HasPrefix(sd.do("EVAL", body, "0", arg), "*") {
				arrays++
			}
			if t.Failed() {
				t.Fatalf("seed %d script %d:\n%s", seed, i, body)
			}
		}
		sd.do("EVAL", dumpScript, "0")
	}
	if sd.compared < 600 || arrays < 100 {
		t.Errorf("only %d comparisons, %d scripts returned an array", sd.compared, arrays)
	}
}
