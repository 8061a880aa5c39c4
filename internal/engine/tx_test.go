package engine_test

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Transactions through go-redis and raw RESP, against Abacus alone.

func TestTxGoRedisPipelined(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := servertest.Ctx
	var incr *redis.IntCmd
	var get *redis.StringCmd
	cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "k", "10", 0)
		incr = p.IncrBy(ctx, "k", 5)
		get = p.Get(ctx, "k")
		return nil
	})
	if err != nil || len(cmds) != 3 || incr.Val() != 15 || get.Val() != "15" {
		t.Fatalf("TxPipelined: %v %d cmds, incr %d get %q", err, len(cmds), incr.Val(), get.Val())
	}

	// A runtime error inside EXEC fails that command only.
	var bad *redis.IntCmd
	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "s", "abc", 0)
		bad = p.Incr(ctx, "s")
		p.Append(ctx, "s", "d")
		return nil
	})
	if err == nil || bad.Err() == nil || !strings.Contains(bad.Err().Error(), "not an integer") {
		t.Fatalf("runtime error: %v, INCR %v", err, bad.Err())
	}
	if v, _ := c.Get(ctx, "s").Result(); v != "abcd" {
		t.Fatalf("the command after the failed one did not run: %q", v)
	}

	// A command refused while queuing aborts everything.
	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "never", "1", 0)
		p.Do(ctx, "nosuchcommand")
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "EXECABORT") {
		t.Fatalf("queue-time error: %v", err)
	}
	if n, _ := c.Exists(ctx, "never").Result(); n != 0 {
		t.Fatal("an aborted transaction wrote")
	}
}

// TestTxGoRedisWatchRetries runs optimistic increments from several
// clients with WATCH and retries: every increment lands exactly once.
func TestTxGoRedisWatchRetries(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := servertest.Ctx
	const workers, each = 8, 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	retries := 0
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				for {
					err := c.Watch(ctx, func(tx *redis.Tx) error {
						n, err := tx.Get(ctx, "counter").Int()
						if err != nil && err != redis.Nil {
							return err
						}
						_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
							p.Set(ctx, "counter", n+1, 0)
							return nil
						})
						return err
					}, "counter")
					if err == nil {
						break
					}
					if !errors.Is(err, redis.TxFailedErr) {
						errs <- err
						return
					}
					mu.Lock()
					retries++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if v, _ := c.Get(ctx, "counter").Int(); v != workers*each {
		t.Fatalf("counter %d, want %d", v, workers*each)
	}
	t.Logf("%d increments, %d retries", workers*each, retries)
}

// TestTxAtomic checks that nothing runs between the commands of a
// transaction: a reader never sees the odd value between two INCRs.
func TestTxAtomic(t *testing.T) {
	inst := servertest.Start(t)
	w, r := inst.Raw(t), inst.Raw(t)
	done := make(chan struct{})
	var odd []string
	go func() {
		defer close(done)
		for i := 0; i < 2000; i++ {
			v := r.Do("GET", "x")
			if v != "$-1\r\n" {
				n, _ := strconv.Atoi(strings.Split(v, "\r\n")[1])
				if n%2 != 0 {
					odd = append(odd, v)
				}
			}
		}
	}()
	tx := string(servertest.Encode("MULTI")) + string(servertest.Encode("INCR", "x")) +
		string(servertest.Encode("INCR", "x")) + string(servertest.Encode("EXEC"))
	for i := 0; i < 500; i++ {
		if i%2 == 0 {
			w.Write([]byte(tx))
			for j := 0; j < 4; j++ {
				w.Read()
			}
			continue
		}
		// The same transaction one command per write, so that the reader
		// gets many chances to run in between.
		w.Do("MULTI")
		w.Do("INCR", "x")
		w.Do("INCR", "x")
		if got := w.Do("EXEC"); !strings.HasPrefix(got, "*2\r\n:") {
			t.Fatalf("EXEC %q", got)
		}
	}
	<-done
	if len(odd) > 0 {
		t.Fatalf("a reader saw a transaction half done: %q", odd[:1])
	}
	if got := w.Do("GET", "x"); got != "$4\r\n1000\r\n" {
		t.Fatalf("x = %q", got)
	}
}

func TestTxRaw(t *testing.T) {
	inst := servertest.Start(t)
	c, other := inst.Raw(t), inst.Raw(t)
	expect := func(conn *servertest.Conn, want string, args ...string) {
		t.Helper()
		if got := conn.Do(args...); got != want {
			t.Errorf("%q: got %q, want %q", args, got, want)
		}
	}
	// Queued arguments are copies: the read buffer is reused between
	// the commands that arrive in separate reads.
	big := strings.Repeat("a", 40000)
	expect(c, "+OK\r\n", "MULTI")
	expect(c, "+QUEUED\r\n", "SET", "k1", big)
	expect(c, "+QUEUED\r\n", "SET", "k2", strings.Repeat("b", 40000))
	c.Write(append(servertest.Encode("SET", "k3", "ccc"), servertest.Encode("GET", "k1")...))
	c.Read()
	c.Read()
	if got := c.Do("EXEC"); got != "*4\r\n+OK\r\n+OK\r\n+OK\r\n$40000\r\n"+big+"\r\n" {
		t.Errorf("EXEC: %q...", got[:40])
	}
	expect(c, "$3\r\nccc\r\n", "GET", "k3")

	// A whole transaction pipelined in one write.
	var req []byte
	for _, cmd := range [][]string{{"MULTI"}, {"SET", "p", "1"}, {"INCR", "p"}, {"nosuch"}, {"EXEC"}, {"GET", "p"}} {
		req = append(req, servertest.Encode(cmd...)...)
	}
	c.Write(req)
	for _, want := range []string{"+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n",
		"-ERR unknown command 'nosuch', with args beginning with: \r\n",
		"-EXECABORT Transaction discarded because of previous errors.\r\n", "$-1\r\n"} {
		if got := c.Read(); got != want {
			t.Errorf("pipelined: got %q, want %q", got, want)
		}
	}

	// RESET ends MULTI and forgets watched keys.
	expect(c, "+OK\r\n", "WATCH", "w")
	expect(c, "+OK\r\n", "MULTI")
	expect(c, "+QUEUED\r\n", "SET", "w", "1")
	expect(c, "+RESET\r\n", "RESET")
	expect(other, "+OK\r\n", "SET", "w", "2")
	expect(c, "+OK\r\n", "MULTI")
	expect(c, "*0\r\n", "EXEC")
	expect(c, "$1\r\n2\r\n", "GET", "w")

	// The slow log has the commands EXEC ran, not EXEC.
	expect(c, "+OK\r\n", "CONFIG", "SET", "slowlog-log-slower-than", "0")
	expect(c, "+OK\r\n", "SLOWLOG", "RESET")
	c.Do("MULTI")
	c.Do("SET", "slow", "1")
	c.Do("GET", "slow")
	c.Do("EXEC")
	log := c.Do("SLOWLOG", "GET")
	if !strings.Contains(log, "$3\r\nSET\r\n") || !strings.Contains(log, "$3\r\nGET\r\n") || strings.Contains(log, "EXEC") {
		t.Errorf("SLOWLOG GET: %q", log)
	}
	expect(c, "+OK\r\n", "CONFIG", "SET", "slowlog-log-slower-than", "10000")
}

// TestTxWatchExpiryClock uses the manual clock: a key live when watched
// that expires before EXEC fails the transaction even though nothing
// reclaimed it; one already expired when watched does not.
func TestTxWatchExpiryClock(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(1_700_000_000_000))
	c := inst.Raw(t)
	c.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0")
	c.Do("SET", "live", "v", "PX", "100")
	c.Do("SET", "old", "v", "PX", "10")
	inst.Clock.Advance(50 * time.Millisecond)
	c.Do("WATCH", "live", "old")
	inst.Clock.Advance(100 * time.Millisecond)
	c.Do("MULTI")
	if got := c.Do("EXEC"); got != "*-1\r\n" {
		t.Fatalf("EXEC after a watched key expired: %q", got)
	}
	c.Do("SET", "old2", "v", "PX", "10")
	inst.Clock.Advance(50 * time.Millisecond)
	c.Do("WATCH", "old2")
	inst.Clock.Advance(50 * time.Millisecond)
	c.Do("MULTI")
	if got := c.Do("EXEC"); got != "*0\r\n" {
		t.Fatalf("EXEC with a key watched after it expired: %q", got)
	}
}

// TestTxDisconnectDropsWatches: a client's watched keys and queue go
// with its connection.
func TestTxDisconnectDropsWatches(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	c.Do("WATCH", "a", "b")
	c.Do("MULTI")
	c.Do("SET", "a", "1")
	watched := func() int {
		inst.Srv.Lock()
		defer inst.Srv.Unlock()
		return inst.Srv.Env.KS.DBs[0].Watched()
	}
	if n := watched(); n != 2 {
		t.Fatalf("%d keys watched, want 2", n)
	}
	c.C.Close()
	deadline := time.Now().Add(5 * time.Second)
	for watched() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("watched keys outlived the connection")
		}
		time.Sleep(time.Millisecond)
	}
	// UNWATCH, EXEC, DISCARD and RESET empty the registry as well.
	d := inst.Raw(t)
	for _, end := range [][]string{{"UNWATCH"}, {"MULTI", "EXEC"}, {"MULTI", "DISCARD"}, {"RESET"}} {
		d.Do("WATCH", "x", "y")
		for _, cmd := range end {
			d.Do(cmd)
		}
		if n := watched(); n != 0 {
			t.Fatalf("after %v: %d keys watched", end, n)
		}
	}
}

// TestTxPauseWrite: under CLIENT PAUSE WRITE, an EXEC that would write
// waits like a write; one that only reads does not.
func TestTxPauseWrite(t *testing.T) {
	inst := servertest.Start(t)
	c, admin := inst.Raw(t), inst.Raw(t)
	c.Do("MULTI")
	c.Do("GET", "a")
	admin.Do("CLIENT", "PAUSE", "100000", "WRITE")
	if got := c.Do("EXEC"); got != "*1\r\n$-1\r\n" {
		t.Fatalf("read-only EXEC under PAUSE WRITE: %q", got)
	}
	admin.Do("CLIENT", "UNPAUSE")
	c.Do("MULTI")
	c.Do("SET", "a", "1")
	admin.Do("CLIENT", "PAUSE", "100000", "WRITE")
	c.Write(servertest.Encode("EXEC"))
	deadline := time.Now().Add(5 * time.Second)
	for {
		list := admin.Do("CLIENT", "LIST")
		if strings.Contains(list, "flags=xb ") {
			break // held in MULTI, not yet run
		}
		if time.Now().After(deadline) {
			t.Fatalf("EXEC with a write was not held: %q", list)
		}
		time.Sleep(2 * time.Millisecond)
	}
	admin.Do("CLIENT", "UNPAUSE")
	if got := c.Read(); got != "*1\r\n+OK\r\n" {
		t.Fatalf("EXEC after UNPAUSE: %q", got)
	}
}
