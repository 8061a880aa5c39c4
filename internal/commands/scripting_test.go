package commands_test

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/script"
	"github.com/abacusdb/abacus/internal/servertest"
)

// go-redis and raw RESP tests of the scripting commands on Abacus alone.

var ctx = servertest.Ctx

func TestScriptingGoRedis(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)

	v, err := c.Eval(ctx, "return {KEYS[1], ARGV[1], 3, {ok='fine'}}", []string{"k"}, "a").Result()
	if err != nil {
		t.Fatal(err)
	}
	got, ok := v.([]any)
	if !ok || len(got) != 4 || got[0] != "k" || got[1] != "a" || got[2] != int64(3) || got[3] != "fine" {
		t.Fatalf("EVAL: %#v", v)
	}
	if n, err := c.Eval(ctx, "return redis.call('INCRBY', KEYS[1], ARGV[1])", []string{"n"}, 5).Int(); err != nil || n != 5 {
		t.Fatalf("EVAL INCRBY: %v %v", n, err)
	}
	_, err = c.Eval(ctx, "return redis.call('NOSUCH')", nil).Result()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR Unknown Redis command called from script script: ") {
		t.Fatalf("unknown command: %v", err)
	}
	if _, err := c.Eval(ctx, "return nil", nil).Result(); err != redis.Nil {
		t.Fatalf("nil reply: %v", err)
	}

	body := "return redis.call('GET', KEYS[1])"
	sha, err := c.ScriptLoad(ctx, body).Result()
	if err != nil || sha != script.SHA1(body) {
		t.Fatalf("SCRIPT LOAD: %q %v", sha, err)
	}
	c.Set(ctx, "g", "value", 0)
	if s, err := c.EvalSha(ctx, sha, []string{"g"}).Text(); err != nil || s != "value" {
		t.Fatalf("EVALSHA: %q %v", s, err)
	}
	if s, err := c.EvalShaRO(ctx, strings.ToUpper(sha), []string{"g"}).Text(); err != nil || s != "value" {
		t.Fatalf("EVALSHA_RO: %q %v", s, err)
	}
	if s, err := c.EvalRO(ctx, body, []string{"g"}).Text(); err != nil || s != "value" {
		t.Fatalf("EVAL_RO: %q %v", s, err)
	}
	if _, err := c.EvalRO(ctx, "return redis.call('SET', 'x', 'y')", nil).Result(); err == nil ||
		!strings.HasPrefix(err.Error(), "ERR Write commands are not allowed from read-only scripts.") {
		t.Fatalf("EVAL_RO write: %v", err)
	}
	exists, err := c.ScriptExists(ctx, sha, "0000000000000000000000000000000000000000").Result()
	if err != nil || len(exists) != 2 || !exists[0] || exists[1] {
		t.Fatalf("SCRIPT EXISTS: %v %v", exists, err)
	}
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.EvalSha(ctx, sha, []string{"g"}).Result(); err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		t.Fatalf("EVALSHA after flush: %v", err)
	}
	if err := c.ScriptKill(ctx).Err(); err == nil || err.Error() != "NOTBUSY No scripts in execution right now." {
		t.Fatalf("SCRIPT KILL: %v", err)
	}

	// go-redis's Script: EVALSHA, and EVAL when the script is not cached.
	s := redis.NewScript("return redis.call('INCR', KEYS[1])")
	for want := int64(1); want <= 3; want++ {
		if n, err := s.Run(ctx, c, []string{"counter"}).Int64(); err != nil || n != want {
			t.Fatalf("Script.Run: %v %v", n, err)
		}
	}
}

func TestScriptingGoRedisRESP3(t *testing.T) {
	inst := servertest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: inst.Addr, Protocol: 3, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	c.HSet(ctx, "h", "f", "v")
	v, err := c.Eval(ctx, "redis.setresp(3) return redis.call('HGETALL', KEYS[1])", []string{"h"}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := v.(map[any]any); !ok || m["f"] != "v" {
		t.Fatalf("RESP3 map: %#v", v)
	}
	if b, err := c.Eval(ctx, "redis.setresp(3) return true", nil).Bool(); err != nil || !b {
		t.Fatalf("RESP3 true: %v %v", b, err)
	}
	if f, err := c.Eval(ctx, "return {double=1.5}", nil).Result(); err != nil || f != 1.5 {
		t.Fatalf("RESP3 double: %#v %v", f, err)
	}
}

func TestFunctionsGoRedis(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	lib := "#!lua name=golib\n" +
		"redis.register_function('setget', function(keys, args) redis.call('SET', keys[1], args[1]) return redis.call('GET', keys[1]) end)\n" +
		"redis.register_function{function_name='reader', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}, description='reads'}"
	if name, err := c.FunctionLoad(ctx, lib).Result(); err != nil || name != "golib" {
		t.Fatalf("FUNCTION LOAD: %q %v", name, err)
	}
	if err := c.FunctionLoad(ctx, lib).Err(); err == nil || err.Error() != "ERR Library 'golib' already exists" {
		t.Fatalf("FUNCTION LOAD again: %v", err)
	}
	if name, err := c.FunctionLoadReplace(ctx, lib).Result(); err != nil || name != "golib" {
		t.Fatalf("FUNCTION LOAD REPLACE: %q %v", name, err)
	}
	if s, err := c.FCall(ctx, "setget", []string{"k"}, "v1").Text(); err != nil || s != "v1" {
		t.Fatalf("FCALL: %q %v", s, err)
	}
	if s, err := c.FCallRO(ctx, "reader", []string{"k"}).Text(); err != nil || s != "v1" {
		t.Fatalf("FCALL_RO: %q %v", s, err)
	}
	if err := c.FCallRO(ctx, "setget", []string{"k"}, "v2").Err(); err == nil ||
		err.Error() != "ERR Can not execute a script with write flag using *_ro command." {
		t.Fatalf("FCALL_RO of a writer: %v", err)
	}
	libs, err := c.FunctionList(ctx, redis.FunctionListQuery{WithCode: true}).Result()
	if err != nil || len(libs) != 1 || libs[0].Name != "golib" || libs[0].Engine != "LUA" || libs[0].Code != lib || len(libs[0].Functions) != 2 {
		t.Fatalf("FUNCTION LIST: %+v %v", libs, err)
	}
	for _, f := range libs[0].Functions {
		if f.Name == "reader" && (f.Description != "reads" || len(f.Flags) != 1 || f.Flags[0] != "no-writes") {
			t.Errorf("reader: %+v", f)
		}
	}
	stats, err := c.FunctionStats(ctx).Result()
	if err != nil || stats.Running() {
		t.Fatalf("FUNCTION STATS: %+v %v", stats, err)
	}
	dump, err := c.FunctionDump(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.FunctionFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.FCall(ctx, "setget", []string{"k"}, "x").Err(); err == nil || err.Error() != "ERR Function not found" {
		t.Fatalf("FCALL after flush: %v", err)
	}
	if err := c.FunctionRestore(ctx, dump).Err(); err != nil {
		t.Fatal(err)
	}
	if s, err := c.FCall(ctx, "setget", []string{"k"}, "v3").Text(); err != nil || s != "v3" {
		t.Fatalf("FCALL after restore: %q %v", s, err)
	}
	if err := c.FunctionDelete(ctx, "golib").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.FunctionFlushAsync(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.FunctionKill(ctx).Err(); err == nil || err.Error() != "NOTBUSY No scripts in execution right now." {
		t.Fatalf("FUNCTION KILL: %v", err)
	}
}

// Raw RESP: exact bytes of replies go-redis would hide.
func TestScriptingRaw(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"EVAL", "return {1, 'a', {err='E x'}, {ok='O'}, true, false}", "0"}, "*6\r\n:1\r\n$1\r\na\r\n-E x\r\n+O\r\n:1\r\n$-1\r\n"},
		{[]string{"EVAL", "return 1", "1"}, "-ERR Number of keys can't be greater than number of args\r\n"},
		{[]string{"EVAL", "return 1", "-1"}, "-ERR Number of keys can't be negative\r\n"},
		{[]string{"EVALSHA", "nope", "0"}, "-NOSCRIPT No matching script. Please use EVAL.\r\n"},
		{[]string{"EVAL", "#!lua flags=no-writes\nreturn redis.call('DEL', 'x')", "0"},
			"-ERR Write commands are not allowed from read-only scripts. script: " + script.SHA1("#!lua flags=no-writes\nreturn redis.call('DEL', 'x')") + ", on @user_script:2.\r\n"},
		{[]string{"EVAL", "#!lua flags=transactional\nreturn 1", "0"}, ":1\r\n"},
		{[]string{"EVAL", "return redis.call('TIME')[1] > '0'", "0"}, ":1\r\n"},
		{[]string{"SCRIPT", "DEBUG", "YES"}, "-ERR Abacus has no Lua debugger: SCRIPT DEBUG YES and SYNC are not supported\r\n"},
		{[]string{"HELLO", "3"}, ""},
		{[]string{"EVAL", "return {map={a=1}}", "0"}, "%1\r\n$1\r\na\r\n:1\r\n"},
		{[]string{"EVAL", "return nil", "0"}, "_\r\n"},
		{[]string{"EVAL", "return {double=0.5}", "0"}, ",0.5\r\n"},
	} {
		got := c.Do(tc.args...)
		if tc.want != "" && got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.args, got, tc.want)
		}
	}
}

// A script's clock stands still: keys do not expire during it, and the
// manual clock drives TIME.
func TestScriptingClock(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(1_700_000_000_000))
	c := inst.Raw(t)
	c.Do("SET", "k", "v", "PX", "100")
	servertest.ExpectReply(t, c.Do("EVAL", "return redis.call('TIME')", "0"), "*2\r\n$10\r\n1700000000\r\n$1\r\n0\r\n")
	inst.Clock.Advance(50 * time.Millisecond)
	servertest.ExpectReply(t, c.Do("EVAL", "return {redis.call('GET', 'k'), redis.call('PTTL', 'k')}", "0"), "*2\r\n$1\r\nv\r\n:50\r\n")
	inst.Clock.Advance(60 * time.Millisecond)
	servertest.ExpectReply(t, c.Do("EVAL", "return redis.call('GET', 'k')", "0"), "$-1\r\n")
}

// redis.log writes to the server log at the level asked.
func TestScriptingLog(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("loglevel", "debug"))
	c := inst.Raw(t)
	servertest.ExpectReply(t, c.Do("EVAL", "redis.log(redis.LOG_WARNING, 'from a script', 42)", "0"), "$-1\r\n")
	if !strings.Contains(inst.Logs.String(), "from a script 42") {
		t.Errorf("the line is not in the log: %s", inst.Logs.String())
	}
}

// SELECT in a script changes the script's database only; MONITOR shows
// the script's commands after EVAL, as the lua client, each with the
// database it ran in (after SELECT, its new one, as Redis shows).
func TestScriptingSelectAndMonitor(t *testing.T) {
	inst := servertest.Start(t)
	c, m := inst.Raw(t), inst.Raw(t)
	servertest.ExpectReply(t, m.Do("MONITOR"), "+OK\r\n")
	servertest.ExpectReply(t, c.Do("EVAL", "redis.call('SELECT', 3) return redis.call('SET', 'in3', 'x')", "0"), "+OK\r\n")
	servertest.ExpectReply(t, c.Do("EXISTS", "in3"), ":0\r\n")
	servertest.ExpectReply(t, c.Do("SELECT", "3"), "+OK\r\n")
	servertest.ExpectReply(t, c.Do("EXISTS", "in3"), ":1\r\n")
	var lines []string
	for i := 0; i < 3; i++ {
		lines = append(lines, m.Read())
	}
	if !strings.Contains(lines[0], `"EVAL"`) || !strings.Contains(lines[1], `[3 lua] "SELECT" "3"`) ||
		!strings.Contains(lines[2], `[3 lua] "SET" "in3" "x"`) {
		t.Errorf("MONITOR lines: %q", lines)
	}
}
