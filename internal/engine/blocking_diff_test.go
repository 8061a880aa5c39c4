package engine_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/servertest"
)

// A differential test of blocking commands with several clients: the same
// scenario runs against Abacus and redis-server, one connection per role
// on each, and every reply each connection receives is byte-compared.
// Steps wait until both servers report the expected number of blocked
// clients before going on, so the order in which clients block is the
// same on both.

type bkDiff struct {
	t    *testing.T
	inst *servertest.Instance
	a, r []*servertest.Conn
	// admin connections that watch INFO, never blocked
	adminR *servertest.Conn
	n      int // replies compared
}

func newBkDiff(t *testing.T, conns int) *bkDiff {
	d0, inst := servertest.StartDiff(t)
	d := &bkDiff{t: t, inst: inst, adminR: d0.R}
	for i := 0; i < conns; i++ {
		d.a = append(d.a, inst.Raw(t))
		d.r = append(d.r, servertest.Dial(t, d0.R.Addr))
	}
	return d
}

// send writes a command to connection i of both servers, reading nothing.
func (d *bkDiff) send(i int, args ...string) {
	d.t.Helper()
	req := servertest.Encode(args...)
	d.a[i].Write(req)
	d.r[i].Write(req)
}

// recv reads the next reply of connection i on both and compares them.
func (d *bkDiff) recv(i int, what string) string {
	d.t.Helper()
	a, r := d.a[i].Read(), d.r[i].Read()
	d.n++
	if a != r {
		d.t.Errorf("%s (connection %d)\n abacus: %q\n  redis: %q", what, i, a, r)
	}
	return a
}

func (d *bkDiff) do(i int, args ...string) string {
	d.t.Helper()
	d.send(i, args...)
	return d.recv(i, strings.Join(args, " "))
}

// blocked waits until both servers have n clients blocked.
func (d *bkDiff) blocked(n int) {
	d.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ra := bkBlockedClients(d.inst)
		info := d.adminR.Do("INFO", "clients")
		rr := strings.Contains(info, "blocked_clients:"+strconv.Itoa(n)+"\r\n")
		if ra == n && rr {
			return
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("waiting for %d blocked clients: abacus has %d, redis: %q", n, ra, info)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// ids returns the CLIENT ID of connection i on each server.
func (d *bkDiff) ids(i int) (a, r string) {
	trim := func(s string) string { return strings.TrimSuffix(strings.TrimPrefix(s, ":"), "\r\n") }
	return trim(d.a[i].Do("CLIENT", "ID")), trim(d.r[i].Do("CLIENT", "ID"))
}

func TestBlockingDiffScenario(t *testing.T) {
	d := newBkDiff(t, 5)
	const p = 0 // the producer: never blocks

	// FIFO: three clients on one key, served in the order they blocked;
	// BRPOP takes from the tail of what the others left.
	d.send(1, "BLPOP", "q", "0")
	d.blocked(1)
	d.send(2, "BLPOP", "q", "0")
	d.blocked(2)
	d.send(3, "BRPOP", "q", "0")
	d.blocked(3)
	d.do(p, "RPUSH", "q", "a", "b", "c", "d")
	d.recv(1, "BLPOP q (first)")
	d.recv(2, "BLPOP q (second)")
	d.recv(3, "BRPOP q (third)")
	d.blocked(0)
	d.do(p, "LRANGE", "q", "0", "-1")

	// Several keys: served from the one that gets data.
	d.send(1, "BLPOP", "k1", "k2", "k3", "0")
	d.blocked(1)
	d.do(p, "RPUSH", "k3", "x")
	d.recv(1, "BLPOP k1 k2 k3")

	// LMOVE into a key wakes its waiter; a served BLMOVE wakes the waiters
	// of its destination in turn.
	d.send(1, "BLMOVE", "s1", "d1", "RIGHT", "LEFT", "0")
	d.blocked(1)
	d.send(2, "BLPOP", "d1", "0")
	d.blocked(2)
	d.do(p, "RPUSH", "src", "m1", "m2")
	d.do(p, "LMOVE", "src", "s1", "LEFT", "RIGHT")
	d.recv(1, "BLMOVE s1 d1")
	d.recv(2, "BLPOP d1 after BLMOVE")
	d.send(1, "BRPOPLPUSH", "s2", "s2", "0")
	d.blocked(1)
	d.do(p, "RPOPLPUSH", "src", "s2")
	d.recv(1, "BRPOPLPUSH s2 s2")
	d.do(p, "LRANGE", "s2", "0", "-1")

	// A push inside a pipelined batch serves the waiter at once; the
	// command after it in the batch sees the list already popped.
	d.send(1, "BLPOP", "pk", "0")
	d.blocked(1)
	d.send(p, "SET", "x", "1")
	d.send(p, "RPUSH", "pk", "u", "v")
	d.send(p, "LRANGE", "pk", "0", "-1")
	d.send(p, "GET", "x")
	for _, what := range []string{"SET", "RPUSH", "LRANGE", "GET"} {
		d.recv(p, "pipelined "+what)
	}
	d.recv(1, "BLPOP pk")

	// The commands a client pipelines after its blocking command wait for
	// it, and run once it is served.
	d.send(1, "SET", "before", "1")
	d.send(1, "BLPOP", "w", "0")
	d.send(1, "SET", "after", "2")
	d.send(1, "GET", "after")
	d.recv(1, "SET before")
	d.blocked(1)
	d.do(p, "EXISTS", "before", "after")
	d.do(p, "RPUSH", "w", "y")
	d.recv(1, "BLPOP w")
	d.recv(1, "SET after")
	d.recv(1, "GET after")

	// A string at the key leaves the waiter waiting; a list later serves
	// it. A served BLMOVE whose destination is not a list gets WRONGTYPE.
	d.send(1, "BLPOP", "sk", "0")
	d.blocked(1)
	d.do(p, "SET", "sk", "str")
	d.do(p, "DEL", "sk")
	d.do(p, "RPUSH", "sk", "v")
	d.recv(1, "BLPOP sk")
	d.do(p, "SET", "notlist", "x")
	d.send(1, "BLMOVE", "s3", "notlist", "LEFT", "LEFT", "0")
	d.blocked(1)
	d.do(p, "RPUSH", "s3", "z")
	d.recv(1, "BLMOVE to a string")
	d.do(p, "LRANGE", "s3", "0", "-1")

	// BLMPOP with COUNT, BZPOPMIN, BZPOPMAX and BZMPOP.
	d.send(1, "BLMPOP", "0", "2", "m1", "m2", "RIGHT", "COUNT", "2")
	d.blocked(1)
	d.do(p, "RPUSH", "m2", "1", "2", "3")
	d.recv(1, "BLMPOP")
	d.send(1, "BZPOPMIN", "z1", "z2", "0")
	d.blocked(1)
	d.send(2, "BZPOPMAX", "z2", "0")
	d.blocked(2)
	d.send(3, "BZMPOP", "0", "1", "z2", "MIN", "COUNT", "5")
	d.blocked(3)
	d.do(p, "ZADD", "z2", "1", "a", "2", "b", "3", "c", "4", "d")
	d.recv(1, "BZPOPMIN")
	d.recv(2, "BZPOPMAX")
	d.recv(3, "BZMPOP")
	d.do(p, "EXISTS", "z2")
	// A list at a key a sorted-set waiter watches does not serve it.
	d.send(1, "BZPOPMIN", "z3", "0")
	d.blocked(1)
	d.do(p, "RPUSH", "z3", "x")
	d.do(p, "DEL", "z3")
	d.do(p, "ZADD", "z3", "5", "e")
	d.recv(1, "BZPOPMIN z3")

	// CLIENT UNBLOCK in both modes; the ids differ, the replies do not.
	aid, rid := d.ids(1)
	d.send(1, "BLPOP", "u", "0")
	d.blocked(1)
	for _, mode := range []string{"TIMEOUT", "ERROR"} {
		ra, rr := d.a[p].Do("CLIENT", "UNBLOCK", aid, mode), d.r[p].Do("CLIENT", "UNBLOCK", rid, mode)
		if ra != rr {
			t.Errorf("CLIENT UNBLOCK %s: abacus %q, redis %q", mode, ra, rr)
		}
		d.recv(1, "unblocked with "+mode)
		if mode == "TIMEOUT" {
			d.send(1, "BRPOP", "u", "0")
			d.blocked(1)
		}
	}
	d.blocked(0)

	// Timeouts (short, on both servers' real clocks): a null array for
	// every blocking command, also in RESP3.
	d.send(1, "BLPOP", "t", "0.01")
	d.recv(1, "BLPOP timeout")
	d.send(1, "BLMOVE", "t", "t2", "LEFT", "LEFT", "0.01")
	d.recv(1, "BLMOVE timeout")
	d.send(1, "BLMPOP", "0.01", "1", "t", "LEFT")
	d.recv(1, "BLMPOP timeout")
	d.a[4].Do("HELLO", "3")
	d.r[4].Do("HELLO", "3")
	d.send(4, "BRPOPLPUSH", "t", "t2", "0.01")
	d.recv(4, "BRPOPLPUSH timeout (RESP3)")
	d.send(4, "BLPOP", "r3", "0")
	d.blocked(1)
	d.do(p, "RPUSH", "r3", "v")
	d.recv(4, "BLPOP served (RESP3)")
	d.send(4, "BZPOPMIN", "t", "0.01")
	d.recv(4, "BZPOPMIN timeout (RESP3)")
	d.send(4, "BZPOPMAX", "zr3", "0")
	d.blocked(1)
	d.do(p, "ZADD", "zr3", "1.5", "m")
	d.recv(4, "BZPOPMAX served (RESP3)")

	// Errors in the arguments, checked in Redis's order, and commands that
	// are served at once.
	for _, line := range []string{
		"BLPOP t abc", "BLPOP t -1", "BLPOP t -0.001x", "BLPOP t inf", "BLPOP t 1e16", "BLPOP t nan",
		"BLMOVE t t2 UP LEFT abc", "BLMOVE t t2 LEFT LEFT abc", "BRPOPLPUSH t t2 -1",
		"BLMPOP abc 0 t LEFT", "BLMPOP abc 1 t UP", "BLMPOP abc 1 t LEFT COUNT 0", "BLMPOP abc 1 t LEFT",
		"BLMPOP 0 2 t LEFT", "BLPOP", "BLPOP t",
		"SET str v", "BLPOP str 0", "BLMOVE str t LEFT LEFT 0", "BLMPOP 0 1 str LEFT",
		"RPUSH full a b c", "BLPOP t full 0", "BRPOP full 0", "BLMOVE full str LEFT LEFT 0", "BLMPOP 0 2 t full RIGHT COUNT 9",
	} {
		d.do(p, strings.Fields(line)...)
	}
	for _, line := range []string{
		"BZPOPMIN t abc", "BZPOPMAX t -1", "BZMPOP abc 0 t MIN", "BZMPOP abc 1 t MIDDLE", "BZMPOP abc 1 t MIN",
		"BZPOPMIN str 0", "BZMPOP 0 1 str MAX", "RPUSH lst a", "BZPOPMIN lst 0", "BZMPOP 0 2 nokey lst MIN",
		"ZADD zf 1 a 2 b 3 c", "BZPOPMIN t zf 0", "BZPOPMAX zf 0", "BZMPOP 0 2 t zf MIN COUNT 10",
	} {
		d.do(p, strings.Fields(line)...)
	}
	d.blocked(0)

	// Inside MULTI/EXEC a blocking command answers as on a timeout, and
	// the keys an EXEC makes ready are served in the order they became
	// ready (Redis 7.0 serves a client from the first ready key).
	if engine.Lookup([]byte("multi")) != nil {
		d.do(p, "MULTI")
		d.do(p, "BLPOP", "t", "0")
		d.do(p, "BLMOVE", "t", "t2", "LEFT", "LEFT", "0")
		d.do(p, "BLMPOP", "0", "1", "t", "LEFT")
		d.do(p, "EXEC")
		d.send(1, "BLPOP", "ea", "eb", "0")
		d.blocked(1)
		d.do(p, "MULTI")
		d.do(p, "RPUSH", "eb", "1")
		d.do(p, "RPUSH", "ea", "2")
		d.do(p, "EXEC")
		d.recv(1, "BLPOP ea eb after EXEC")
		d.do(p, "LRANGE", "ea", "0", "-1")
		// Nothing is served in the middle of a transaction: the waiter gets
		// what the key holds when EXEC is done.
		d.send(1, "BLPOP", "ec", "0")
		d.blocked(1)
		d.do(p, "MULTI")
		d.do(p, "RPUSH", "ec", "a")
		d.do(p, "LPOP", "ec")
		d.do(p, "RPUSH", "ec", "b", "c")
		d.do(p, "LLEN", "ec")
		d.do(p, "EXEC")
		d.recv(1, "BLPOP ec after EXEC")
		d.do(p, "LRANGE", "ec", "0", "-1")
	}
	// A script is one command too: its waiters are served when it is done,
	// and inside it BLMPOP answers at once (BLPOP may not run in scripts).
	if engine.Lookup([]byte("eval")) != nil {
		d.send(1, "BLPOP", "sc", "0")
		d.blocked(1)
		d.do(p, "EVAL", "redis.call('rpush', KEYS[1], 'a', 'b') redis.call('lpop', KEYS[1]) return redis.call('llen', KEYS[1])", "1", "sc")
		d.recv(1, "BLPOP sc after EVAL")
		d.do(p, "EVAL", "return redis.call('blmpop', 0, 1, KEYS[1], 'LEFT')", "1", "nokey")
		d.do(p, "EVAL", "return redis.call('bzmpop', 0, 1, KEYS[1], 'MIN')", "1", "nokey")
		d.do(p, "EVAL", "return redis.pcall('blpop', KEYS[1], 0)", "1", "nokey")
		d.blocked(0)
	}
	t.Logf("%d replies compared", d.n)
}
