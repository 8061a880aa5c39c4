package engine_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// All-or-nothing scripts: a script that fails after writing leaves nothing
// behind when it is transactional (flag or config), and behaves exactly as
// on redis-server when it is not.

// undoDump renders every key of databases 0 and 1: type, exact expiry and
// value, in an order that does not depend on hash order. With exact (an
// Abacus-only comparison) it adds encodings and hash field TTLs, which
// redis-server 7.0 reports differently or lacks.
func undoDump(t *testing.T, c *servertest.Conn, exact bool) string {
	t.Helper()
	var out []string
	for db := 0; db < 2; db++ {
		c.Do("SELECT", fmt.Sprint(db))
		keys := servertest.MustParse(t, c.Do("KEYS", "*")).Strings()
		sort.Strings(keys)
		for _, k := range keys {
			typ := c.Do("TYPE", k)
			var val string
			switch strings.TrimSpace(typ) {
			case "+string":
				val = c.Do("GET", k)
			case "+list":
				val = c.Do("LRANGE", k, "0", "-1")
			case "+hash":
				v := servertest.MustParse(t, c.Do("HGETALL", k)).Strings()
				var pairs []string
				for i := 0; i+1 < len(v); i += 2 {
					p := v[i] + "=" + v[i+1]
					if exact {
						p += "@" + c.Do("HPEXPIRETIME", k, "FIELDS", "1", v[i])
					}
					pairs = append(pairs, p)
				}
				sort.Strings(pairs)
				val = strings.Join(pairs, ",")
			case "+zset":
				val = c.Do("ZRANGE", k, "0", "-1", "WITHSCORES")
			case "+set":
				v := servertest.MustParse(t, c.Do("SMEMBERS", k)).Strings()
				sort.Strings(v)
				val = strings.Join(v, ",")
			}
			enc, exp := "", strings.TrimSpace(c.Do("PEXPIRETIME", k))
			if exact {
				enc = strings.TrimSpace(c.Do("OBJECT", "ENCODING", k))
			} else if exp != ":-1" {
				exp = "ttl" // relative TTLs differ by the servers' clock skew
			}
			out = append(out, fmt.Sprintf("db%d %s %s %s %s %s", db, k, strings.TrimSpace(typ),
				enc, exp, val))
		}
	}
	c.Do("SELECT", "0")
	return strings.Join(out, "\n")
}

// undoSetup puts one key of every type in place, some with TTLs.
func undoSetup(c *servertest.Conn) {
	c.Do("FLUSHALL")
	c.Do("SET", "s1", "hello")
	c.Do("SET", "n1", "41")
	c.Do("PEXPIREAT", "n1", "99999999999999")
	c.Do("RPUSH", "l1", "a", "b", "c")
	c.Do("HSET", "h1", "f1", "1", "f2", "two")
	c.Do("ZADD", "z1", "1", "m1", "2.5", "m2")
	c.Do("SADD", "t1", "1", "2", "3")
	c.Do("SADD", "t2", "x", "y")
	c.Do("RPUSH", "fixedlist", "x") // never written by the random scripts
	c.Do("SELECT", "1")
	c.Do("SET", "s1", "db1")
	c.Do("SELECT", "0")
}

// Write templates a random script draws from: {k} is a key, {n} a number.
var undoWrites = []string{
	"redis.call('SET', '{k}', 'v{n}')",
	"redis.call('APPEND', 's1', 'x{n}')",
	"redis.call('INCRBY', 'n1', {n})",
	"redis.call('DEL', '{k}')",
	"redis.call('RPUSH', 'l1', 'p{n}')",
	"redis.call('LPOP', 'l1')",
	"redis.call('HSET', 'h1', 'f{n}', 'v')",
	"redis.call('HINCRBY', 'h1', 'c', {n})",
	"redis.call('ZADD', 'z1', {n}, 'm{n}')",
	"redis.call('ZINCRBY', 'z1', {n}, 'm1')",
	"redis.call('SADD', 't1', '{n}')",
	"redis.call('SREM', 't2', 'x')",
	"redis.call('EXPIRE', '{k}', {n})",
	"redis.call('PERSIST', 'n1')",
	"redis.call('RENAME', 't2', 'renamed{n}')",
	"redis.call('SELECT', 1) redis.call('SET', 's1', 'in-db1-{n}') redis.call('SELECT', 0)",
	"redis.call('COPY', 'l1', 'copy{n}')",
	"redis.call('SINTERSTORE', 'inter{n}', 't1', 't1')",
	"redis.call('MOVE', '{k}', 1)",
}

var undoKeys = []string{"s1", "n1", "l1", "h1", "z1", "t1", "new1", "new2"}

// Ways a script fails after its writes.
var undoFailures = []string{
	"error('boom')",
	"redis.call('INCR', 'fixedlist')",     // WRONGTYPE raised by redis.call
	"redis.call('NOSUCHCOMMAND')",         // refused by redis.call
	"redis.call('GET', 'a', 'b')",         // wrong arity
	"return redis.error_reply('refused')", // an error reply returned
}

func randomUndoScript(r *rand.Rand, fail bool) string {
	var b strings.Builder
	for i, n := 0, 1+r.IntN(8); i < n; i++ {
		w := undoWrites[r.IntN(len(undoWrites))]
		w = strings.ReplaceAll(w, "{k}", undoKeys[r.IntN(len(undoKeys))])
		w = strings.ReplaceAll(w, "{n}", fmt.Sprint(1+r.IntN(20)))
		// pcall: a write that meets the wrong type (APPEND to a key a SET
		// replaced...) does not end the script early.
		b.WriteString("pcall(function() " + w + " end)\n")
	}
	if fail {
		f := undoFailures[r.IntN(len(undoFailures))]
		b.WriteString(f + "\n")
		if strings.Contains(f, "return") {
			return b.String()
		}
	}
	b.WriteString("return 'done'\n")
	return b.String()
}

// TestScriptUndoRandom: random write sequences that end in an error leave
// the keyspace exactly as it was with the flag; without it, the partial
// writes stay exactly as redis-server leaves them; and a transactional
// script that succeeds has the same effect as on redis-server.
func TestScriptUndoRandom(t *testing.T) {
	inst := servertest.Start(t)
	d := servertest.NewDiff(t, inst)
	a, rd := d.A, d.R
	r := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 150; i++ {
		fail := i%3 != 2
		body := randomUndoScript(r, fail)
		undoSetup(a)
		undoSetup(rd)
		before := undoDump(t, a, true)
		hitsBefore := servertest.InfoField(a.Do("INFO", "stats"), "keyspace_hits")

		// Transactional: compare with the state before.
		tbody := "#!lua flags=transactional\n" + body
		ra := a.Do("EVAL", tbody, "0")
		if fail != strings.HasPrefix(ra, "-") {
			t.Fatalf("script %d: reply %q (fail=%v)\n%s", i, ra, fail, tbody)
		}
		if fail {
			if got := servertest.InfoField(a.Do("INFO", "stats"), "keyspace_hits"); got != hitsBefore {
				t.Fatalf("script %d: keyspace_hits moved from %s to %s across an undone script", i, hitsBefore, got)
			}
			if after := undoDump(t, a, true); after != before {
				t.Fatalf("script %d left writes behind:\n%s\nbefore:\n%s\nafter:\n%s", i, tbody, before, after)
			}
		} else {
			// Success: the same effect as the plain script on redis-server.
			rd.Do("EVAL", body, "0")
			if ga, gr := undoDump(t, a, false), undoDump(t, rd, false); ga != gr {
				t.Fatalf("script %d: successful transactional script differs from redis-server:\n%s\nabacus:\n%s\nredis:\n%s", i, body, ga, gr)
			}
			continue
		}

		// Plain: the partial writes stay, exactly as on redis-server.
		undoSetup(a)
		undoSetup(rd)
		d.Do("EVAL", body, "0")
		if ga, gr := undoDump(t, a, false), undoDump(t, rd, false); ga != gr {
			t.Fatalf("script %d without the flag differs from redis-server:\n%s\nabacus:\n%s\nredis:\n%s", i, body, ga, gr)
		}
	}
}

// TestScriptUndoFieldTTL: hash field TTLs (Redis 7.4) come back with an
// undone script, and fields it added disappear.
func TestScriptUndoFieldTTL(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	c.Do("HSET", "h", "a", "1", "b", "2")
	c.Do("HPEXPIREAT", "h", "99999999999999", "FIELDS", "1", "a")
	before := undoDump(t, c, true)
	body := "#!lua flags=transactional\n" +
		"redis.call('HPERSIST', 'h', 'FIELDS', 1, 'a') redis.call('HSET', 'h', 'c', '3') " +
		"redis.call('HPEXPIRE', 'h', 1000, 'FIELDS', 1, 'b') redis.call('HINCRBY', 'h', 'a', 5) error('boom')"
	if got := c.Do("EVAL", body, "0"); !strings.HasPrefix(got, "-") {
		t.Fatalf("EVAL: %q", got)
	}
	if after := undoDump(t, c, true); after != before {
		t.Fatalf("field TTLs not restored:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestScriptUndoConfig: script-transactional yes makes every script
// all-or-nothing; the default leaves Redis's behaviour.
func TestScriptUndoConfig(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	body := "redis.call('SET', 'k', 'partial') error('boom')"
	c.Do("EVAL", body, "0")
	if got := c.Do("GET", "k"); got != "$7\r\npartial\r\n" {
		t.Fatalf("default: GET k = %q, want the partial write", got)
	}
	c.Do("DEL", "k")
	if got := c.Do("CONFIG", "SET", "script-transactional", "yes"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", got)
	}
	if got := c.Do("EVAL", body, "0"); !strings.HasPrefix(got, "-ERR user_script:1: boom") {
		t.Fatalf("EVAL: %q", got)
	}
	if got := c.Do("EXISTS", "k"); got != ":0\r\n" {
		t.Fatalf("script-transactional yes: EXISTS k = %q, want 0", got)
	}
}

// TestScriptUndoWatch: a client watching a key an undone script wrote can
// still EXEC; one watching a key a committed script wrote cannot.
func TestScriptUndoWatch(t *testing.T) {
	inst := servertest.Start(t)
	w, s := inst.Raw(t), inst.Raw(t)
	w.Do("SET", "k", "1")
	for _, tc := range []struct {
		body string
		exec string
	}{
		{"#!lua flags=transactional\nredis.call('SET', 'k', '2') error('boom')", "*1\r\n+PONG\r\n"},
		{"#!lua flags=transactional\nredis.call('SET', 'k', '3') return 1", "*-1\r\n"},
	} {
		w.Do("WATCH", "k")
		s.Do("EVAL", tc.body, "0")
		w.Do("MULTI")
		w.Do("PING")
		if got := w.Do("EXEC"); got != tc.exec {
			t.Fatalf("%s: EXEC = %q, want %q", tc.body, got, tc.exec)
		}
	}
}

// TestScriptUndoFunction: the function flag "transactional".
func TestScriptUndoFunction(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	lib := "#!lua name=undolib\n" +
		"redis.register_function{function_name='tx', flags={'transactional'}, callback=function(keys, args) redis.call('SET', keys[1], 'x') redis.call('RPUSH', keys[2], 'y') error('boom') end}\n" +
		"redis.register_function{function_name='plain', callback=function(keys, args) redis.call('SET', keys[1], 'x') error('boom') end}"
	if got := c.Do("FUNCTION", "LOAD", lib); got != "$7\r\nundolib\r\n" {
		t.Fatalf("FUNCTION LOAD: %q", got)
	}
	if got := c.Do("FCALL", "tx", "2", "a", "b"); !strings.HasPrefix(got, "-") {
		t.Fatalf("FCALL tx: %q", got)
	}
	if got := c.Do("EXISTS", "a", "b"); got != ":0\r\n" {
		t.Fatalf("after an undone function: EXISTS a b = %q", got)
	}
	c.Do("FCALL", "plain", "1", "a")
	if got := c.Do("EXISTS", "a"); got != ":1\r\n" {
		t.Fatalf("a plain function keeps its partial write: EXISTS a = %q", got)
	}
}

// TestScriptUndoKill: a transactional script that has written can be
// killed with SCRIPT KILL (its writes are undone), where a plain one is
// UNKILLABLE.
func TestScriptUndoKill(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("busy-reply-threshold", "20"))
	a, b := inst.Raw(t), inst.Raw(t)
	b.Do("SET", "k", "before")
	body := "#!lua flags=transactional\nredis.call('SET', 'k', 'during') redis.call('DEL', 'other') while true do end"
	a.Write(servertest.Encode("EVAL", body, "0"))
	deadline := time.Now().Add(10 * time.Second)
	for !inst.Srv.Env.ScriptRunning() {
		if time.Now().After(deadline) {
			t.Fatal("the script did not start")
		}
		time.Sleep(time.Millisecond)
	}
	// SCRIPT KILL waits for busy-reply-threshold, then answers.
	if got := b.Do("SCRIPT", "KILL"); got != "+OK\r\n" {
		t.Fatalf("SCRIPT KILL of a transactional script that wrote: %q", got)
	}
	if r := a.Read(); !strings.HasPrefix(r, "-ERR Script killed by user with SCRIPT KILL") {
		t.Fatalf("killed script replied %q", r)
	}
	if got := b.Do("GET", "k"); got != "$6\r\nbefore\r\n" {
		t.Fatalf("GET k after the kill = %q: the write was not undone", got)
	}
}

// BenchmarkScriptUndo measures what the undo journal costs a script of 10
// INCRs on distinct keys: compare the plain and transactional sub-benchmarks.
func BenchmarkScriptUndo(b *testing.B) {
	for _, flags := range []string{"", "#!lua flags=transactional\n"} {
		name := "plain"
		if flags != "" {
			name = "transactional"
		}
		b.Run(name, func(b *testing.B) {
			inst := servertest.Start(b)
			c := inst.Raw(b)
			sha := strings.TrimSpace(strings.Split(c.Do("SCRIPT", "LOAD", flags+"for i=1,10 do redis.call('INCR', KEYS[i]) end return 1"), "\r\n")[1])
			req := servertest.Encode("EVALSHA", sha, "10", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10")
			var batch []byte
			for i := 0; i < 32; i++ {
				batch = append(batch, req...)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i += 32 {
				c.Write(batch)
				for j := 0; j < 32; j++ {
					if r := c.Read(); r != ":1\r\n" {
						b.Fatalf("EVALSHA: %q", r)
					}
				}
			}
		})
	}
}
