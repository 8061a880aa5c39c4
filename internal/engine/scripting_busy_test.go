package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/script"
	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// BUSY, SCRIPT KILL, FUNCTION KILL, UNKILLABLE and SHUTDOWN NOSAVE with a
// script that never ends, seen from a second client. The threshold is
// small; nothing here asserts on time: the other client's commands wait
// for the threshold, then get their answer.

const busyThreshold = "20"

// startLooping sends a never-ending script from a and waits until the
// server runs it.
func startLooping(t *testing.T, inst *servertest.Instance, a *servertest.Conn, args ...string) {
	t.Helper()
	a.Write(servertest.Encode(args...))
	deadline := time.Now().Add(10 * time.Second)
	for !inst.Srv.Env.ScriptRunning() {
		if time.Now().After(deadline) {
			t.Fatal("the script did not start")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestScriptBusyAndKill(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("busy-reply-threshold", busyThreshold))
	a, b := inst.Raw(t), inst.Raw(t)
	body := "local i = 0\nwhile true do i = i + 1 end"
	sha := script.SHA1(body)
	startLooping(t, inst, a, "EVAL", body, "0")

	busy := "-" + "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE." + "\r\n"
	servertest.ExpectReply(t, b.Do("GET", "x"), busy)
	servertest.ExpectReply(t, b.Do("PING"), busy)
	servertest.ExpectReply(t, b.Do("EVAL", "return 1", "0"), busy)
	// Refused before the busy check, as in Redis.
	servertest.ExpectReply(t, b.Do("NOSUCHCMD"), "-ERR unknown command 'NOSUCHCMD', with args beginning with: \r\n")
	servertest.ExpectReply(t, b.Do("GET"), "-ERR wrong number of arguments for 'get' command\r\n")
	// Killing a script with the other kind's command, and FUNCTION STATS,
	// answer BUSY for an EVAL script.
	servertest.ExpectReply(t, b.Do("FUNCTION", "KILL"), busy)
	servertest.ExpectReply(t, b.Do("FUNCTION", "STATS"), busy)
	servertest.ExpectReply(t, b.Do("SHUTDOWN"), busy)
	// A transaction queued meanwhile is doomed.
	servertest.ExpectReply(t, b.Do("MULTI"), "+OK\r\n")
	servertest.ExpectReply(t, b.Do("SET", "x", "1"), busy)
	servertest.ExpectReply(t, b.Do("SCRIPT", "KILL"), "+OK\r\n")
	servertest.ExpectReply(t, a.Read(), "-ERR Script killed by user with SCRIPT KILL... script: "+sha+", on @user_script:2.\r\n")
	servertest.ExpectReply(t, b.Do("EXEC"), "-EXECABORT Transaction discarded because of previous errors.\r\n")
	servertest.ExpectReply(t, b.Do("SCRIPT", "KILL"), "-NOTBUSY No scripts in execution right now.\r\n")
	servertest.ExpectReply(t, b.Do("FUNCTION", "KILL"), "-NOTBUSY No scripts in execution right now.\r\n")
	servertest.ExpectReply(t, a.Do("EVAL", "return redis.call('SET', 'x', 'after')", "0"), "+OK\r\n")
	servertest.ExpectReply(t, b.Do("GET", "x"), "$5\r\nafter\r\n")
	if !strings.Contains(inst.Logs.String(), "Lua script killed by user with SCRIPT KILL.") {
		t.Errorf("the kill was not logged: %s", inst.Logs.String())
	}
	// A script that catches errors with pcall cannot catch its kill.
	body = "while true do pcall(function() while true do end end) end"
	startLooping(t, inst, a, "EVAL", body, "0")
	servertest.ExpectReply(t, b.Do("SCRIPT", "KILL"), "+OK\r\n")
	if r := a.Read(); !strings.HasPrefix(r, "-ERR Script killed by user with SCRIPT KILL... script: "+script.SHA1(body)) {
		t.Fatalf("pcall caught the kill: %q", r)
	}
}

// An EXEC that arrives while a script is busy is refused at once with the
// BUSY text and ends the transaction (Redis's execCommandAbort); its
// watched keys are forgotten too.
func TestScriptBusyExec(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("busy-reply-threshold", busyThreshold))
	a, b := inst.Raw(t), inst.Raw(t)
	servertest.ExpectReply(t, b.Do("WATCH", "w"), "+OK\r\n")
	servertest.ExpectReply(t, b.Do("MULTI"), "+OK\r\n")
	servertest.ExpectReply(t, b.Do("INCR", "x"), "+QUEUED\r\n")
	startLooping(t, inst, a, "EVAL", "while true do end", "0")
	abort := "-EXECABORT Transaction discarded because of: BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
	servertest.ExpectReply(t, b.Do("EXEC"), abort)
	// Out of MULTI now, and EXEC alone is refused the same way.
	servertest.ExpectReply(t, b.Do("EXEC"), abort)
	servertest.ExpectReply(t, b.Do("SCRIPT", "KILL"), "+OK\r\n")
	if r := a.Read(); !strings.HasPrefix(r, "-ERR Script killed") {
		t.Fatalf("the script's caller got %q", r)
	}
	servertest.ExpectReply(t, b.Do("GET", "x"), "$-1\r\n")
	// w's watch went with the transaction: a write to it does not fail
	// b's next one.
	servertest.ExpectReply(t, a.Do("SET", "w", "changed"), "+OK\r\n")
	servertest.ExpectReply(t, b.Do("MULTI"), "+OK\r\n")
	servertest.ExpectReply(t, b.Do("INCR", "x"), "+QUEUED\r\n")
	servertest.ExpectReply(t, b.Do("EXEC"), "*1\r\n:1\r\n")
}

func TestScriptUnkillableAndShutdownNosave(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("busy-reply-threshold", busyThreshold))
	a, b := inst.Raw(t), inst.Raw(t)
	startLooping(t, inst, a, "EVAL", "redis.call('SET', 'x', '1') while true do end", "0")
	unkillable := "-UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.\r\n"
	servertest.ExpectReply(t, b.Do("SCRIPT", "KILL"), unkillable)
	servertest.ExpectReply(t, b.Do("FUNCTION", "KILL"), unkillable)
	servertest.ExpectReply(t, b.Do("SHUTDOWN", "SAVE"), "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n")
	// SHUTDOWN NOSAVE stops the server with the script: the client gets no
	// reply, the server is asked to exit.
	b.Write(servertest.Encode("SHUTDOWN", "NOSAVE"))
	b.ExpectClosed()
	select {
	case <-inst.Srv.ShutdownRequested:
	case <-time.After(10 * time.Second):
		t.Fatal("no shutdown requested")
	}
	// The script's caller gets no reply either: the server exits under
	// the script, as redis-server 7.0 does (cmd/abacus tests what persists).
	a.ExpectClosed()
}

func TestFunctionBusyAndKill(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("busy-reply-threshold", busyThreshold))
	a, b := inst.Raw(t), inst.Raw(t)
	lib := "#!lua name=looplib\nredis.register_function('loop', function()\n  while true do end\nend)"
	servertest.ExpectReply(t, a.Do("FUNCTION", "LOAD", lib), "$7\r\nlooplib\r\n")
	startLooping(t, inst, a, "FCALL", "loop", "0")
	busy := "-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n"
	servertest.ExpectReply(t, b.Do("GET", "x"), busy)
	servertest.ExpectReply(t, b.Do("SCRIPT", "KILL"), busy)
	stats := b.Do("FUNCTION", "STATS")
	for _, want := range []string{"running_script", "$4\r\nname\r\n$4\r\nloop\r\n", "*3\r\n$5\r\nFCALL\r\n$4\r\nloop\r\n$1\r\n0\r\n",
		"duration_ms", "libraries_count\r\n:1\r\n", "functions_count\r\n:1\r\n"} {
		if !strings.Contains(stats, want) {
			t.Errorf("FUNCTION STATS while busy lacks %q: %q", want, stats)
		}
	}
	servertest.ExpectReply(t, b.Do("FUNCTION", "KILL"), "+OK\r\n")
	servertest.ExpectReply(t, a.Read(), "-ERR Script killed by user with SCRIPT KILL... script: loop, on @user_function:3.\r\n")
	servertest.ExpectReply(t, b.Do("FUNCTION", "STATS"),
		"*4\r\n$14\r\nrunning_script\r\n$-1\r\n$7\r\nengines\r\n*2\r\n$3\r\nLUA\r\n*4\r\n$15\r\nlibraries_count\r\n:1\r\n$15\r\nfunctions_count\r\n:1\r\n")
}

// The same sequence against redis-server: the texts of BUSY, the kill
// error, UNKILLABLE, and FUNCTION STATS while a function runs.
func TestScriptBusyDiff(t *testing.T) {
	testenv.NeedRedis(t)
	r, err := servertest.StartRedis("--busy-reply-threshold", busyThreshold)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	inst := servertest.Start(t, servertest.WithConfig("busy-reply-threshold", busyThreshold))
	type side struct {
		a, b *servertest.Conn
		wait func()
	}
	var sides []side
	aa, ab := inst.Raw(t), inst.Raw(t)
	sides = append(sides, side{aa, ab, func() {
		for !inst.Srv.Env.ScriptRunning() {
			time.Sleep(time.Millisecond)
		}
	}})
	ra, rb, rc := servertest.Dial(t, r.Addr), servertest.Dial(t, r.Addr), servertest.Dial(t, r.Addr)
	// redis-server runs the script once a third client's PING gets BUSY;
	// a fixed sleep is not enough on a loaded machine, where a's EVAL and
	// b's first command can reach it in one event-loop turn and b's be
	// served first.
	sides = append(sides, side{ra, rb, func() {
		for !strings.HasPrefix(rc.Do("PING"), "-BUSY") {
			time.Sleep(time.Millisecond)
		}
	}})
	var got [2][]string
	for i, s := range sides {
		s.b.Do("FUNCTION", "LOAD", "#!lua name=busylib\nredis.register_function('spin', function() while true do end end)")
		// The kill that succeeds comes last: what a server answers just
		// after a kill depends, on redis-server, on whether the script
		// has reached its next hook yet.
		scriptFirst := [][]string{{"GET", "c"}, {"FUNCTION", "KILL"}, {"SCRIPT", "KILL"}}
		functionFirst := [][]string{{"GET", "c"}, {"SCRIPT", "KILL"}, {"FUNCTION", "KILL"}}
		for _, sc := range []struct {
			args  []string
			kills [][]string
		}{
			{[]string{"EVAL", "while true do end", "0"}, scriptFirst},
			{[]string{"FCALL", "spin", "0"}, functionFirst},
			{[]string{"EVAL", "redis.call('INCR', 'c')\nwhile true do end", "0"}, functionFirst},
		} {
			s.a.Write(servertest.Encode(sc.args...))
			s.wait()
			for _, cmd := range sc.kills {
				got[i] = append(got[i], s.b.Do(cmd...))
			}
			if strings.Contains(sc.args[1], "INCR") {
				break // unkillable: it runs until the server goes
			}
			got[i] = append(got[i], s.a.Read())
		}
	}
	if strings.Join(got[0], "|") != strings.Join(got[1], "|") {
		t.Errorf("busy replies differ\n abacus: %q\n  redis: %q", got[0], got[1])
	}
	// Both servers still run the unkillable script: the private
	// redis-server is killed, Abacus stops it when it closes.
}
