package main

import (
	"context"
	"math/rand"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// chaosLoad writes a mix of types to addr until ctx ends, through a
// client that reconnects (the primary dies and comes back on the same
// port); it counts writes that succeeded and failed.
func chaosLoad(ctx context.Context, addr string, ok, failed *atomic.Int64) {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 500 * time.Millisecond,
		ReadTimeout: time.Second, DisableIdentity: true, Protocol: 2})
	defer c.Close()
	rng := rand.New(rand.NewSource(7))
	for ctx.Err() == nil {
		k := strconv.Itoa(rng.Intn(300))
		var err error
		switch rng.Intn(8) {
		case 0:
			err = c.Set(ctx, "s:"+k, rng.Int(), 0).Err()
		case 1:
			err = c.IncrBy(ctx, "n:"+k, int64(rng.Intn(10))).Err()
		case 2:
			err = c.HSet(ctx, "h:"+k, "f"+strconv.Itoa(rng.Intn(20)), rng.Int()).Err()
		case 3:
			err = c.RPush(ctx, "l:"+k, rng.Int()).Err()
		case 4:
			err = c.ZAdd(ctx, "z:"+k, redis.Z{Score: float64(rng.Intn(100)), Member: strconv.Itoa(rng.Intn(50))}).Err()
		case 5:
			err = c.SAdd(ctx, "t:"+k, rng.Intn(50)).Err()
		case 6:
			err = c.Set(ctx, "e:"+k, k, time.Hour).Err()
		case 7:
			err = c.Del(ctx, "s:"+k, "l:"+k).Err()
		}
		if err != nil {
			failed.Add(1)
			time.Sleep(20 * time.Millisecond)
		} else {
			ok.Add(1)
		}
	}
}

// A bounded chaos run: under a write load, the primary (with its AOF)
// and then each replica in turn are killed with SIGKILL and restarted,
// three rounds; once the load stops every replica converges to the
// primary's dataset (DEBUG DIGEST). It runs in the normal test run: the
// rounds are fixed (one with -short), so it takes some seconds of chaos
// plus the final sync.
func TestReplicationChaos(t *testing.T) {
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	common := []string{"--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0"}
	pdir, pport := t.TempDir(), freePort(t)
	startPrimary := func() *proc { return startIn(t, pdir, pport, append(common, "--appendonly", "yes")...) }
	primary := startPrimary()
	type node struct {
		p    *proc
		dir  string
		port int
	}
	startReplica := func(n *node) {
		n.p = startIn(t, n.dir, n.port, append(common, "--replicaof", "127.0.0.1", strconv.Itoa(pport))...)
	}
	replicas := []*node{{dir: t.TempDir(), port: freePort(t)}, {dir: t.TempDir(), port: freePort(t)}}
	for _, n := range replicas {
		startReplica(n)
	}
	kill := func(p *proc) {
		p.cmd.Process.Kill()
		<-p.done
	}

	ctx, cancel := context.WithCancel(context.Background())
	var ok, failed atomic.Int64
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		chaosLoad(ctx, primary.addr, &ok, &failed)
	}()
	defer func() { cancel(); <-loadDone }()
	for round := 0; round < rounds; round++ {
		time.Sleep(700 * time.Millisecond)
		kill(primary)
		primary = startPrimary()
		time.Sleep(700 * time.Millisecond)
		n := replicas[round%len(replicas)]
		kill(n.p)
		startReplica(n)
	}
	time.Sleep(500 * time.Millisecond)
	cancel()
	<-loadDone
	t.Logf("%d writes succeeded, %d failed during %d rounds", ok.Load(), failed.Load(), rounds)

	pc := servertest.Dial(t, primary.addr)
	eventuallyTrue(t, 60*time.Second, "every replica in sync with the primary", func() bool {
		off := field(t, pc, "master_repl_offset")
		for _, n := range replicas {
			rc := servertest.Dial(t, n.p.addr)
			if field(t, rc, "master_link_status") != "up" || field(t, rc, "slave_repl_offset") != off {
				return false
			}
		}
		return true
	})
	want := pc.Do("DEBUG", "DIGEST")
	if size := pc.Do("DBSIZE"); size == ":0\r\n" {
		t.Fatalf("the primary holds nothing after the chaos")
	}
	for i, n := range replicas {
		rc := servertest.Dial(t, n.p.addr)
		if got := rc.Do("DEBUG", "DIGEST"); got != want {
			t.Errorf("replica %d digest %q, primary %q (DBSIZE %q vs %q)", i, got, want, rc.Do("DBSIZE"), pc.Do("DBSIZE"))
		}
	}
}
