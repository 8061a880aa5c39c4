package engine_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Tests of the blocking commands against an in-process server, with
// several clients. Nothing here depends on speed: a test waits (polling,
// with a generous limit) until the server reports a client as blocked,
// and timeouts run on the manual clock. Helpers start with "bk".

// bkWaitBlocked waits until n clients wait on key (database 0).
func bkWaitBlocked(t *testing.T, inst *servertest.Instance, key string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		inst.Srv.Lock()
		got := inst.Srv.Env.BlockedOn(0, key)
		inst.Srv.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %d clients blocked on %q (have %d)", n, key, got)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// bkBlockedClients is the number of parked clients.
func bkBlockedClients(inst *servertest.Instance) int {
	inst.Srv.Lock()
	defer inst.Srv.Unlock()
	return inst.Srv.Env.BlockedClients()
}

// bkNoReply checks that nothing has arrived on c (a client still waiting).
func bkNoReply(t *testing.T, c *servertest.Conn, who string) {
	t.Helper()
	if r, err := c.ReadErr(20 * time.Millisecond); err == nil {
		t.Fatalf("%s got a reply while it should wait: %q", who, r)
	}
}

func bkArr(items ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(items))
	for _, s := range items {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(s), s)
	}
	return b.String()
}

func bkExpect(t *testing.T, c *servertest.Conn, who, want string) {
	t.Helper()
	if got := c.Read(); got != want {
		t.Fatalf("%s: got %q, want %q", who, got, want)
	}
}

// TestBlockingServedAtOnce: with data present a blocking command is its
// non-blocking form and registers nothing.
func TestBlockingServedAtOnce(t *testing.T) {
	inst := servertest.Start(t)
	g := inst.Client(t)
	g.RPush(servertest.Ctx, "k2", "a", "b")
	got, err := g.BLPop(servertest.Ctx, time.Second, "k1", "k2").Result()
	servertest.MustSlice(t, "BLPOP", got, err, "k2", "a")
	got, err = g.BRPop(servertest.Ctx, 0, "k2").Result()
	servertest.MustSlice(t, "BRPOP", got, err, "k2", "b")
	g.RPush(servertest.Ctx, "src", "x", "y")
	s, err := g.BLMove(servertest.Ctx, "src", "dst", "RIGHT", "LEFT", 0).Result()
	servertest.MustEq(t, "BLMOVE", s, err, "y")
	s, err = g.BRPopLPush(servertest.Ctx, "src", "dst", 0).Result()
	servertest.MustEq(t, "BRPOPLPUSH", s, err, "x")
	key, vals, err := g.BLMPop(servertest.Ctx, 0, "left", 5, "none", "dst").Result()
	if err != nil || key != "dst" || !slices.Equal(vals, []string{"x", "y"}) {
		t.Fatalf("BLMPOP = %q %q %v", key, vals, err)
	}
	if n := bkBlockedClients(inst); n != 0 {
		t.Fatalf("%d clients registered", n)
	}
}

// TestBlockingWakeFIFO: three clients block on one key; one RPUSH of three
// elements serves them in the order they blocked.
func TestBlockingWakeFIFO(t *testing.T) {
	inst := servertest.Start(t)
	var cs []*servertest.Conn
	for i := 0; i < 3; i++ {
		c := inst.Raw(t)
		c.Write(servertest.Encode("BLPOP", "q", "0"))
		bkWaitBlocked(t, inst, "q", i+1)
		cs = append(cs, c)
	}
	if r := inst.Raw(t).Do("RPUSH", "q", "1", "2", "3"); r != ":3\r\n" {
		t.Fatalf("RPUSH: %q", r)
	}
	for i, c := range cs {
		bkExpect(t, c, "client "+strconv.Itoa(i), bkArr("q", strconv.Itoa(i+1)))
	}
	if n := bkBlockedClients(inst); n != 0 {
		t.Fatalf("%d clients still registered", n)
	}
	if r := inst.Raw(t).Do("EXISTS", "q"); r != ":0\r\n" {
		t.Fatalf("q left behind: %q", r)
	}
}

// TestBlockingFIFOKeepsPlace: a client that cannot be served when its key
// becomes ready (the element went to an earlier client) keeps its place
// ahead of clients that block later.
func TestBlockingFIFOKeepsPlace(t *testing.T) {
	inst := servertest.Start(t)
	a, b, c := inst.Raw(t), inst.Raw(t), inst.Raw(t)
	a.Write(servertest.Encode("BLPOP", "q", "0"))
	bkWaitBlocked(t, inst, "q", 1)
	b.Write(servertest.Encode("BRPOP", "q", "0"))
	bkWaitBlocked(t, inst, "q", 2)
	p := inst.Raw(t)
	p.Do("RPUSH", "q", "one")
	bkExpect(t, a, "a", bkArr("q", "one"))
	bkNoReply(t, b, "b")
	c.Write(servertest.Encode("BLPOP", "q", "0"))
	bkWaitBlocked(t, inst, "q", 2)
	p.Do("RPUSH", "q", "two")
	bkExpect(t, b, "b", bkArr("q", "two"))
	bkNoReply(t, c, "c")
	p.Do("LPUSH", "q", "three")
	bkExpect(t, c, "c", bkArr("q", "three"))
}

// TestBlockingSeveralKeys: a client waits on several keys and is served
// from the one that gets data; its registrations on the others go.
func TestBlockingSeveralKeys(t *testing.T) {
	inst := servertest.Start(t)
	a := inst.Raw(t)
	a.Write(servertest.Encode("BRPOP", "k1", "k2", "k3", "0"))
	bkWaitBlocked(t, inst, "k3", 1)
	for _, k := range []string{"k1", "k2"} {
		bkWaitBlocked(t, inst, k, 1)
	}
	inst.Raw(t).Do("RPUSH", "k2", "x", "y")
	bkExpect(t, a, "a", bkArr("k2", "y"))
	for _, k := range []string{"k1", "k2", "k3"} {
		bkWaitBlocked(t, inst, k, 0)
	}
	// A key repeated in one command is one registration.
	a.Write(servertest.Encode("BLPOP", "d", "d", "0"))
	bkWaitBlocked(t, inst, "d", 1)
	inst.Raw(t).Do("RPUSH", "d", "v")
	bkExpect(t, a, "a", bkArr("d", "v"))
}

// TestBlockingTimeout runs on the manual clock: the wait ends with a null
// array (RESP2 *-1, RESP3 _) once the deadline has passed, not before.
func TestBlockingTimeout(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(1_700_000_000_000))
	a, b := inst.Raw(t), inst.Raw(t)
	a.Write(servertest.Encode("BLPOP", "k", "5"))
	bkWaitBlocked(t, inst, "k", 1)
	b.Do("HELLO", "3")
	b.Write(servertest.Encode("BLMOVE", "k", "d", "LEFT", "LEFT", "2.5"))
	bkWaitBlocked(t, inst, "k", 2)
	inst.Clock.Advance(2400 * time.Millisecond)
	bkNoReply(t, b, "b at 2.4 s")
	inst.Clock.Advance(200 * time.Millisecond)
	bkExpect(t, b, "b after 2.6 s (RESP3)", "_\r\n")
	bkNoReply(t, a, "a at 2.6 s")
	inst.Clock.Advance(3 * time.Second)
	bkExpect(t, a, "a after 5.6 s", "*-1\r\n")
	bkWaitBlocked(t, inst, "k", 0)

	// BLMPOP and BRPOPLPUSH time out with a null array too; 0 waits for
	// ever, however far the clock moves.
	a.Write(servertest.Encode("BLMPOP", "0.001", "1", "k", "LEFT"))
	b.Write(servertest.Encode("BRPOPLPUSH", "k", "d", "0"))
	bkWaitBlocked(t, inst, "k", 2)
	inst.Clock.Advance(time.Hour)
	bkExpect(t, a, "BLMPOP", "*-1\r\n")
	bkNoReply(t, b, "BRPOPLPUSH with timeout 0")
	inst.Raw(t).Do("RPUSH", "k", "v")
	bkExpect(t, b, "BRPOPLPUSH served", "$1\r\nv\r\n")
}

// TestBlockingTimeoutErrors: bad timeouts are refused before anything
// else, and a negative one that rounds to zero waits for ever, as on
// redis-server.
func TestBlockingTimeoutErrors(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	c.Do("RPUSH", "k", "a", "b", "c")
	for _, tc := range []struct{ args, want string }{
		{"BLPOP k abc", "-ERR timeout is not a float or out of range\r\n"},
		{"BLPOP k -1", "-ERR timeout is negative\r\n"},
		{"BLPOP k inf", "-ERR timeout is negative\r\n"},
		{"BLPOP k 1e16", "-ERR timeout is negative\r\n"},
		{"BLPOP k nan", "-ERR timeout is not a float or out of range\r\n"},
		{"BRPOPLPUSH k d -1", "-ERR timeout is negative\r\n"},
		{"BLMOVE k d UP LEFT -1", "-ERR syntax error\r\n"},
		{"BLMOVE k d LEFT LEFT x", "-ERR timeout is not a float or out of range\r\n"},
		{"BLMPOP x 0 k LEFT", "-ERR numkeys should be greater than 0\r\n"},
		{"BLMPOP x 1 k LEFT", "-ERR timeout is not a float or out of range\r\n"},
		{"BLPOP k 0.5", bkArr("k", "a")},
	} {
		if got := c.Do(strings.Fields(tc.args)...); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestBlockingWakeByMove: LMOVE and RPOPLPUSH into a key wake its waiters,
// and a served BLMOVE wakes the clients waiting on its destination.
func TestBlockingWakeByMove(t *testing.T) {
	inst := servertest.Start(t)
	a, b := inst.Raw(t), inst.Raw(t)
	a.Write(servertest.Encode("BLPOP", "dst", "0"))
	bkWaitBlocked(t, inst, "dst", 1)
	p := inst.Raw(t)
	p.Do("RPUSH", "src", "x", "y")
	if r := p.Do("LMOVE", "src", "dst", "LEFT", "RIGHT"); r != "$1\r\nx\r\n" {
		t.Fatalf("LMOVE: %q", r)
	}
	bkExpect(t, a, "a", bkArr("dst", "x"))

	// A chain: b waits on dst2, a moves from src2 to dst2 when it can.
	a.Write(servertest.Encode("BLMOVE", "src2", "dst2", "RIGHT", "LEFT", "0"))
	bkWaitBlocked(t, inst, "src2", 1)
	b.Write(servertest.Encode("BLPOP", "dst2", "0"))
	bkWaitBlocked(t, inst, "dst2", 1)
	p.Do("RPOPLPUSH", "src", "src2")
	bkExpect(t, a, "a (BLMOVE)", "$1\r\ny\r\n")
	bkExpect(t, b, "b (BLPOP on the destination)", bkArr("dst2", "y"))
	for _, k := range []string{"src", "src2", "dst2"} {
		if r := p.Do("EXISTS", k); r != ":0\r\n" {
			t.Errorf("%s left behind: %q", k, r)
		}
	}
}

// TestBlockingWakeInPipeline: a push in the middle of another client's
// pipelined batch serves the waiter; the batch's other replies are
// unaffected, and a command after the push already sees the pop.
func TestBlockingWakeInPipeline(t *testing.T) {
	inst := servertest.Start(t)
	a, p := inst.Raw(t), inst.Raw(t)
	a.Write(servertest.Encode("BLPOP", "k", "0"))
	bkWaitBlocked(t, inst, "k", 1)
	var batch []byte
	for _, cmd := range [][]string{{"SET", "x", "1"}, {"RPUSH", "k", "a", "b"}, {"LRANGE", "k", "0", "-1"}, {"GET", "x"}} {
		batch = append(batch, servertest.Encode(cmd...)...)
	}
	p.Write(batch)
	for _, want := range []string{"+OK\r\n", ":2\r\n", bkArr("b"), "$1\r\n1\r\n"} {
		bkExpect(t, p, "pipeline", want)
	}
	bkExpect(t, a, "a", bkArr("k", "a"))
}

// TestBlockingPipelineAfterBlock: commands a client pipelines after its
// blocking command wait with it, and run, in order, once it is served.
func TestBlockingPipelineAfterBlock(t *testing.T) {
	inst := servertest.Start(t)
	a, p := inst.Raw(t), inst.Raw(t)
	var batch []byte
	for _, cmd := range [][]string{{"SET", "before", "1"}, {"BLPOP", "k", "0"}, {"SET", "after", "2"}, {"GET", "after"}} {
		batch = append(batch, servertest.Encode(cmd...)...)
	}
	a.Write(batch)
	bkExpect(t, a, "a before blocking", "+OK\r\n")
	bkWaitBlocked(t, inst, "k", 1)
	if r := p.Do("EXISTS", "before", "after"); r != ":1\r\n" {
		t.Fatalf("the command after BLPOP ran early: EXISTS = %q", r)
	}
	// What the blocked client sends meanwhile is kept for later as well.
	a.Write(servertest.Encode("INCR", "after"))
	bkNoReply(t, a, "a while blocked")
	p.Do("RPUSH", "k", "v")
	for _, want := range []string{bkArr("k", "v"), "+OK\r\n", "$1\r\n2\r\n", ":3\r\n"} {
		bkExpect(t, a, "a after being served", want)
	}
}

// TestBlockingUnblock covers CLIENT UNBLOCK: TIMEOUT gives the timeout
// reply, ERROR the UNBLOCKED error; 0 for clients that do not wait.
func TestBlockingUnblock(t *testing.T) {
	inst := servertest.Start(t)
	a, admin := inst.Raw(t), inst.Raw(t)
	id := strings.TrimSuffix(strings.TrimPrefix(a.Do("CLIENT", "ID"), ":"), "\r\n")
	if r := admin.Do("CLIENT", "UNBLOCK", id); r != ":0\r\n" {
		t.Fatalf("UNBLOCK of a client that does not wait: %q", r)
	}
	a.Write(servertest.Encode("BLPOP", "k", "0"))
	bkWaitBlocked(t, inst, "k", 1)
	if r := admin.Do("CLIENT", "UNBLOCK", id); r != ":1\r\n" {
		t.Fatalf("UNBLOCK: %q", r)
	}
	bkExpect(t, a, "a after UNBLOCK", "*-1\r\n")
	a.Write(servertest.Encode("BLMOVE", "k", "d", "LEFT", "LEFT", "0"))
	bkWaitBlocked(t, inst, "k", 1)
	if r := admin.Do("CLIENT", "UNBLOCK", id, "timeout"); r != ":1\r\n" {
		t.Fatalf("UNBLOCK TIMEOUT: %q", r)
	}
	bkExpect(t, a, "BLMOVE after UNBLOCK TIMEOUT", "*-1\r\n")
	a.Write(servertest.Encode("BRPOP", "k", "0"))
	bkWaitBlocked(t, inst, "k", 1)
	if r := admin.Do("CLIENT", "UNBLOCK", id, "ERROR"); r != ":1\r\n" {
		t.Fatalf("UNBLOCK ERROR: %q", r)
	}
	bkExpect(t, a, "a after UNBLOCK ERROR", "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n")
	if r := admin.Do("CLIENT", "UNBLOCK", id, "ERROR"); r != ":0\r\n" {
		t.Fatalf("second UNBLOCK: %q", r)
	}
	for _, tc := range []struct{ args, want string }{
		{"CLIENT UNBLOCK abc", "-ERR value is not an integer or out of range\r\n"},
		{"CLIENT UNBLOCK abc foo", "-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR\r\n"},
		{"CLIENT UNBLOCK 1 timeout x", "-ERR unknown subcommand or wrong number of arguments for 'unblock'. Try CLIENT HELP.\r\n"},
		{"CLIENT UNBLOCK", "-ERR wrong number of arguments for 'client|unblock' command\r\n"},
	} {
		if got := admin.Do(strings.Fields(tc.args)...); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.args, got, tc.want)
		}
	}
	if n := bkBlockedClients(inst); n != 0 {
		t.Fatalf("%d clients still registered", n)
	}
	// The unblocked client goes on normally.
	if r := a.Do("PING"); r != "+PONG\r\n" {
		t.Fatalf("PING after UNBLOCK: %q", r)
	}
}

// TestBlockingDisconnect: a client that leaves while it waits leaves no
// registration behind, and a later push stays in the list.
func TestBlockingDisconnect(t *testing.T) {
	inst := servertest.Start(t)
	a := inst.Raw(t)
	a.Write(servertest.Encode("BLPOP", "k1", "k2", "0"))
	bkWaitBlocked(t, inst, "k1", 1)
	a.C.Close()
	bkWaitBlocked(t, inst, "k1", 0)
	bkWaitBlocked(t, inst, "k2", 0)
	if n := bkBlockedClients(inst); n != 0 {
		t.Fatalf("%d clients still registered", n)
	}
	p := inst.Raw(t)
	p.Do("RPUSH", "k1", "v")
	if r := p.Do("LRANGE", "k1", "0", "-1"); r != bkArr("v") {
		t.Fatalf("the push went somewhere: %q", r)
	}
	// CLIENT KILL of a waiting client unregisters it too.
	b := inst.Raw(t)
	id := strings.TrimSuffix(strings.TrimPrefix(b.Do("CLIENT", "ID"), ":"), "\r\n")
	b.Write(servertest.Encode("BLPOP", "k3", "0"))
	bkWaitBlocked(t, inst, "k3", 1)
	if r := p.Do("CLIENT", "KILL", "ID", id); r != ":1\r\n" {
		t.Fatalf("CLIENT KILL: %q", r)
	}
	bkWaitBlocked(t, inst, "k3", 0)
}

// TestBlockingKeyTypes: a waiter is served only by a value of its type:
// a string at the key leaves it waiting; a BLMOVE whose destination is
// not a list is served an error.
func TestBlockingKeyTypes(t *testing.T) {
	inst := servertest.Start(t)
	a, b, p := inst.Raw(t), inst.Raw(t), inst.Raw(t)
	a.Write(servertest.Encode("BLPOP", "k", "0"))
	bkWaitBlocked(t, inst, "k", 1)
	p.Do("SET", "k", "str")
	bkNoReply(t, a, "a after SET")
	p.Do("DEL", "k")
	p.Do("RPUSH", "k", "v")
	bkExpect(t, a, "a", bkArr("k", "v"))

	p.Do("SET", "dst", "str")
	b.Write(servertest.Encode("BLMOVE", "src", "dst", "LEFT", "LEFT", "0"))
	bkWaitBlocked(t, inst, "src", 1)
	p.Do("RPUSH", "src", "x")
	bkExpect(t, b, "b", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n")
	if r := p.Do("LRANGE", "src", "0", "-1"); r != bkArr("x") {
		t.Fatalf("src after the failed move: %q", r)
	}
}

// TestBlockingObservability: CLIENT LIST shows flag b and cmd, INFO counts
// blocked_clients, and the idle timeout spares a waiting client.
func TestBlockingObservability(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(1_700_000_000_000), servertest.WithConfig("timeout", "5"))
	a, p := inst.Raw(t), inst.Raw(t)
	id := strings.TrimSuffix(strings.TrimPrefix(a.Do("CLIENT", "ID"), ":"), "\r\n")
	a.Write(servertest.Encode("BLPOP", "k", "0"))
	bkWaitBlocked(t, inst, "k", 1)
	list := p.Do("CLIENT", "LIST", "ID", id)
	if !strings.Contains(list, " flags=b ") || !strings.Contains(list, " cmd=blpop ") {
		t.Fatalf("CLIENT LIST: %q", list)
	}
	if info := p.Do("INFO", "clients"); !strings.Contains(info, "blocked_clients:1\r\n") {
		t.Fatalf("INFO clients: %q", info)
	}
	inst.Clock.Advance(60 * time.Second)
	// p is idle too and goes; a, blocked, stays.
	p.ExpectClosed()
	q := inst.Raw(t)
	q.Do("RPUSH", "k", "v")
	bkExpect(t, a, "a after a minute blocked", bkArr("k", "v"))
	if info := q.Do("INFO", "clients"); !strings.Contains(info, "blocked_clients:0\r\n") {
		t.Fatalf("INFO clients after: %q", info)
	}
}

// TestBlockingRESP3 checks the served replies under RESP3.
func TestBlockingRESP3(t *testing.T) {
	inst := servertest.Start(t)
	a, p := inst.Raw(t), inst.Raw(t)
	a.Do("HELLO", "3")
	a.Write(servertest.Encode("BLMPOP", "0", "2", "k1", "k2", "RIGHT", "COUNT", "3"))
	bkWaitBlocked(t, inst, "k2", 1)
	p.Do("RPUSH", "k2", "a", "b")
	bkExpect(t, a, "BLMPOP", "*2\r\n$2\r\nk2\r\n*2\r\n$1\r\nb\r\n$1\r\na\r\n")
}

// TestBlockingGoRedis drives the blocking commands through go-redis, one
// client blocking while another pushes.
func TestBlockingGoRedis(t *testing.T) {
	inst := servertest.Start(t)
	g, p := inst.Client(t), inst.Client(t)
	type res struct {
		v   []string
		err error
	}
	done := make(chan res, 1)
	go func() {
		v, err := g.BLPop(servertest.Ctx, 0, "gk").Result()
		done <- res{v, err}
	}()
	bkWaitBlocked(t, inst, "gk", 1)
	p.RPush(servertest.Ctx, "gk", "hello")
	r := <-done
	servertest.MustSlice(t, "BLPOP", r.v, r.err, "gk", "hello")

	go func() {
		v, err := g.BLMove(servertest.Ctx, "gsrc", "gdst", "LEFT", "RIGHT", 0).Result()
		done <- res{[]string{v}, err}
	}()
	bkWaitBlocked(t, inst, "gsrc", 1)
	p.LPush(servertest.Ctx, "gsrc", "m")
	r = <-done
	servertest.MustSlice(t, "BLMOVE", r.v, r.err, "m")
	got, err := p.LRange(servertest.Ctx, "gdst", 0, -1).Result()
	servertest.MustSlice(t, "destination", got, err, "m")

	go func() {
		k, v, err := g.BLMPop(servertest.Ctx, 0, "right", 2, "x", "y").Result()
		done <- res{append([]string{k}, v...), err}
	}()
	bkWaitBlocked(t, inst, "y", 1)
	p.RPush(servertest.Ctx, "y", "1", "2", "3")
	r = <-done
	servertest.MustSlice(t, "BLMPOP", r.v, r.err, "y", "3", "2")
}

// TestBlockingServerClose: closing the server ends a wait (the client's
// connection closes) instead of waiting for it.
func TestBlockingServerClose(t *testing.T) {
	inst := servertest.Start(t)
	a := inst.Raw(t)
	a.Write(servertest.Encode("BLPOP", "k", "0"))
	bkWaitBlocked(t, inst, "k", 1)
	done := make(chan struct{})
	go func() {
		inst.Srv.Close()
		close(done)
	}()
	a.ExpectClosed()
	<-done
	if n := bkBlockedClients(inst); n != 0 {
		t.Fatalf("%d clients registered after Close", n)
	}
}

// TestBlockingZsetsGoRedis drives BZPOPMIN, BZPOPMAX and BZMPOP through
// go-redis, served at once and after a wait, in RESP2 and RESP3.
func TestBlockingZsetsGoRedis(t *testing.T) {
	inst := servertest.Start(t)
	for _, proto := range []int{2, 3} {
		g := redis.NewClient(&redis.Options{Addr: inst.Addr, Protocol: proto, DisableIdentity: true, MaxRetries: -1})
		defer g.Close()
		p := inst.Client(t)
		p.FlushAll(servertest.Ctx)
		p.ZAdd(servertest.Ctx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 3, Member: "c"})
		zk, err := g.BZPopMin(servertest.Ctx, 0, "none", "z").Result()
		if err != nil || zk.Key != "z" || zk.Member != "a" || zk.Score != 1 {
			t.Fatalf("RESP%d BZPOPMIN = %+v %v", proto, zk, err)
		}
		zk, err = g.BZPopMax(servertest.Ctx, time.Second, "z").Result()
		if err != nil || zk.Key != "z" || zk.Member != "c" || zk.Score != 3 {
			t.Fatalf("RESP%d BZPOPMAX = %+v %v", proto, zk, err)
		}
		key, zs, err := g.BZMPop(servertest.Ctx, 0, "min", 5, "none", "z").Result()
		if err != nil || key != "z" || len(zs) != 1 || zs[0].Member != "b" || zs[0].Score != 2 {
			t.Fatalf("RESP%d BZMPOP = %q %+v %v", proto, key, zs, err)
		}

		type res struct {
			key string
			zs  []redis.Z
			err error
		}
		done := make(chan res, 1)
		go func() {
			zk, err := g.BZPopMax(servertest.Ctx, 0, "w1", "w2").Result()
			if zk == nil {
				done <- res{err: err}
				return
			}
			done <- res{zk.Key, []redis.Z{zk.Z}, err}
		}()
		bkWaitBlocked(t, inst, "w2", 1)
		p.ZAdd(servertest.Ctx, "w2", redis.Z{Score: 5, Member: "x"}, redis.Z{Score: 7.5, Member: "y"})
		r := <-done
		if r.err != nil || r.key != "w2" || r.zs[0].Member != "y" || r.zs[0].Score != 7.5 {
			t.Fatalf("RESP%d BZPOPMAX after a wait = %+v", proto, r)
		}
		go func() {
			key, zs, err := g.BZMPop(servertest.Ctx, 0, "max", 10, "w3").Result()
			done <- res{key, zs, err}
		}()
		bkWaitBlocked(t, inst, "w3", 1)
		p.ZAdd(servertest.Ctx, "w3", redis.Z{Score: 1, Member: "m"}, redis.Z{Score: 2, Member: "n"})
		r = <-done
		if r.err != nil || r.key != "w3" || len(r.zs) != 2 || r.zs[0].Member != "n" || r.zs[1].Member != "m" {
			t.Fatalf("RESP%d BZMPOP after a wait = %+v", proto, r)
		}
		if n, err := p.Exists(servertest.Ctx, "w3").Result(); err != nil || n != 0 {
			t.Fatalf("w3 left behind: %d %v", n, err)
		}
	}
}
