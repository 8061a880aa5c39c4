package engine_test

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// A random differential stream with blocking clients: a producer writes to
// a few list and sorted-set keys while consumers issue blocking commands
// (timeout 0) on them. After every step both servers must agree on which
// consumers wait, and every reply a consumer receives must be the same.
// Serving is synchronous on both servers (a waiter is served before the
// reply of the command that made its key ready goes out), so once the
// producer has its reply the set of waiting consumers is settled.

// bkConn is a connection whose replies a goroutine reads into a channel,
// so a test can ask whether a reply has come without a timed read.
type bkConn struct {
	c       *servertest.Conn
	replies chan string
}

func bkReader(t *testing.T, c *servertest.Conn) *bkConn {
	bc := &bkConn{c: c, replies: make(chan string, 64)}
	go func() {
		for {
			c.C.SetReadDeadline(time.Time{})
			r, err := servertest.ReadReply(c.R)
			if err != nil {
				close(bc.replies)
				return
			}
			bc.replies <- string(r)
		}
	}()
	return bc
}

func (bc *bkConn) next(t *testing.T, what string) string {
	t.Helper()
	select {
	case r, ok := <-bc.replies:
		if !ok {
			t.Fatalf("%s: connection closed", what)
		}
		return r
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no reply", what)
	}
	return ""
}

// bkWaiting returns, for each id, whether CLIENT LIST shows it blocked.
func bkWaiting(t *testing.T, admin *servertest.Conn, ids []string) []bool {
	t.Helper()
	v, err := servertest.Parse(admin.Do("CLIENT", "LIST"))
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string]string{}
	for _, line := range strings.Split(v.Str, "\n") {
		var id, fl string
		for _, f := range strings.Fields(line) {
			if s, ok := strings.CutPrefix(f, "id="); ok {
				id = s
			}
			if s, ok := strings.CutPrefix(f, "flags="); ok {
				fl = s
			}
		}
		flags[id] = fl
	}
	out := make([]bool, len(ids))
	for i, id := range ids {
		out[i] = strings.Contains(flags[id], "b")
	}
	return out
}

type bkSide struct {
	admin *servertest.Conn
	cons  []*bkConn
	ids   []string
}

func TestBlockingDiffRandom(t *testing.T) {
	d, inst := servertest.StartDiff(t)
	const nc = 4
	var sides [2]bkSide // 0 Abacus, 1 redis-server
	for s, addr := range []string{inst.Addr, d.R.Addr} {
		sides[s].admin = servertest.Dial(t, addr)
		for i := 0; i < nc; i++ {
			c := servertest.Dial(t, addr)
			sides[s].ids = append(sides[s].ids, strings.TrimSuffix(strings.TrimPrefix(c.Do("CLIENT", "ID"), ":"), "\r\n"))
			sides[s].cons = append(sides[s].cons, bkReader(t, c))
		}
	}
	r := rand.New(rand.NewPCG(7, 77))
	lists := []string{"l0", "l1", "l2"}
	zsets := []string{"z0", "z1"}
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	blockCmd := func() []string {
		switch r.IntN(7) {
		case 0:
			return []string{"BLPOP", pick(lists), pick(lists), "0"}
		case 1:
			return []string{"BRPOP", pick(lists), "0"}
		case 2:
			return []string{"BLMOVE", pick(lists), pick(lists), pick([]string{"LEFT", "RIGHT"}), pick([]string{"LEFT", "RIGHT"}), "0"}
		case 3:
			return []string{"BRPOPLPUSH", pick(lists), pick(lists), "0"}
		case 4:
			return []string{"BLMPOP", "0", "2", pick(lists), pick(lists), pick([]string{"LEFT", "RIGHT"}), "COUNT", strconv.Itoa(1 + r.IntN(3))}
		case 5:
			return []string{pick([]string{"BZPOPMIN", "BZPOPMAX"}), pick(zsets), pick(zsets), "0"}
		default:
			return []string{"BZMPOP", "0", "1", pick(zsets), pick([]string{"MIN", "MAX"}), "COUNT", strconv.Itoa(1 + r.IntN(3))}
		}
	}
	val := func() string { return strconv.Itoa(r.IntN(50)) }
	writeCmd := func() []string {
		switch r.IntN(10) {
		case 0, 1, 2:
			args := []string{pick([]string{"RPUSH", "LPUSH"}), pick(lists)}
			for n := 1 + r.IntN(3); n > 0; n-- {
				args = append(args, val())
			}
			return args
		case 3, 4:
			return []string{"ZADD", pick(zsets), val(), "m" + val(), val(), "m" + val()}
		case 5:
			return []string{"LMOVE", pick(lists), pick(lists), "LEFT", "RIGHT"}
		case 6:
			return []string{"LPOP", pick(lists)}
		case 7:
			return []string{"DEL", pick(append(lists, zsets...))}
		case 8:
			if r.IntN(3) == 0 {
				return []string{"SET", pick(append(lists, zsets...)), "str"}
			}
			return []string{"RPOPLPUSH", pick(lists), pick(lists)}
		default:
			return []string{"LRANGE", pick(lists), "0", "-1"}
		}
	}
	prod := [2]*servertest.Conn{inst.Raw(t), servertest.Dial(t, d.R.Addr)}
	blocked := make([]bool, nc)
	// settle compares which consumers wait and the replies of those that
	// stopped waiting.
	settle := func(step int, what string) {
		t.Helper()
		wa := bkWaiting(t, sides[0].admin, sides[0].ids)
		wr := bkWaiting(t, sides[1].admin, sides[1].ids)
		for i := 0; i < nc; i++ {
			if wa[i] != wr[i] {
				t.Fatalf("step %d (%s): consumer %d waiting: abacus %v, redis %v", step, what, i, wa[i], wr[i])
			}
			if blocked[i] && !wa[i] {
				a := sides[0].cons[i].next(t, "abacus consumer")
				b := sides[1].cons[i].next(t, "redis consumer")
				if a != b {
					t.Fatalf("step %d (%s): consumer %d served\n abacus: %q\n  redis: %q", step, what, i, a, b)
				}
			}
			blocked[i] = wa[i]
		}
	}
	steps, served := 0, 0
	for step := 0; step < 1500; step++ {
		i := r.IntN(nc)
		if !blocked[i] && r.IntN(2) == 0 {
			args := blockCmd()
			req := servertest.Encode(args...)
			for s := range sides {
				sides[s].cons[i].c.Write(req)
			}
			// Wait until the command has run on both: it has either
			// replied or left the consumer waiting.
			var res [2]string
			for s := range sides {
				deadline := time.Now().Add(10 * time.Second)
				for res[s] == "" {
					select {
					case rep := <-sides[s].cons[i].replies:
						res[s] = rep
					case <-time.After(2 * time.Millisecond):
						if bkWaiting(t, sides[s].admin, sides[s].ids[i:i+1])[0] {
							res[s] = "(waiting)"
						}
					}
					if time.Now().After(deadline) {
						t.Fatalf("step %d: %q never ran", step, args)
					}
				}
			}
			if res[0] != res[1] {
				t.Fatalf("step %d: consumer %d %q\n abacus: %q\n  redis: %q", step, i, args, res[0], res[1])
			}
			blocked[i] = res[0] == "(waiting)"
			steps++
			continue
		}
		cmds := [][]string{writeCmd()}
		if r.IntN(8) == 0 {
			// A transaction makes several keys ready at once; the waiters
			// are served after EXEC, in the order the keys became ready.
			cmds = [][]string{{"MULTI"}, writeCmd(), writeCmd(), writeCmd(), {"EXEC"}}
		}
		var args []string
		for _, cmd := range cmds {
			args = append(args, cmd...)
			req := servertest.Encode(cmd...)
			prod[0].Write(req)
			prod[1].Write(req)
			a, b := prod[0].Read(), prod[1].Read()
			if a != b {
				t.Fatalf("step %d: %q\n abacus: %q\n  redis: %q", step, cmd, a, b)
			}
		}
		before := 0
		for _, w := range blocked {
			if w {
				before++
			}
		}
		settle(step, strings.Join(args, " "))
		for _, w := range blocked {
			if w {
				before--
			}
		}
		served += before
		steps++
	}
	// Let the rest go.
	for i := 0; i < nc; i++ {
		if blocked[i] {
			ra := sides[0].admin.Do("CLIENT", "UNBLOCK", sides[0].ids[i])
			rr := sides[1].admin.Do("CLIENT", "UNBLOCK", sides[1].ids[i])
			if ra != rr {
				t.Fatalf("CLIENT UNBLOCK: %q vs %q", ra, rr)
			}
		}
	}
	settle(-1, "unblock")
	t.Logf("%d steps compared, %d consumers served after waiting", steps, served)
}
