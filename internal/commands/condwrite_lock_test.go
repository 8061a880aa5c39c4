package commands_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// The lock with fencing tokens of docs/metrics.md:
//
//	acquire: MULTI; SET lock:R <owner> NX PX <ttl>; INCR fence:R; EXEC
//	         (the token is INCR's reply when SET answered OK)
//	renew:   SET lock:R <owner> IFEQ <owner> PX <ttl>
//	release: DELEX lock:R IFEQ <owner>   (or DELIFEQ lock:R <owner>)
//	write:   the storage keeps "<token>:<data>" and accepts a write only
//	         from a token at least as new: GET, compare, then
//	         SET res:R <token>:<data> IFEQ <what GET saw> (NX when there
//	         was nothing), again on a nil reply.

type fencedLock struct {
	c     *redis.Client
	owner string
	ttl   time.Duration
}

// acquire returns the fencing token, or 0 when the lock is held.
func (l *fencedLock) acquire() (int64, error) {
	var set *redis.BoolCmd
	var incr *redis.IntCmd
	_, err := l.c.TxPipelined(servertest.Ctx, func(p redis.Pipeliner) error {
		set = p.SetNX(servertest.Ctx, "lock:R", l.owner, l.ttl)
		incr = p.Incr(servertest.Ctx, "fence:R")
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, err
	}
	if !set.Val() {
		return 0, nil
	}
	return incr.Val(), nil
}

func (l *fencedLock) renew() bool {
	return l.c.SetIFEQ(servertest.Ctx, "lock:R", l.owner, l.owner, l.ttl).Val() == "OK"
}

func (l *fencedLock) release() int64 {
	return l.c.DelExArgs(servertest.Ctx, "lock:R", redis.DelExArgs{Mode: "IFEQ", MatchValue: l.owner}).Val()
}

// fencedWrite stores data under token unless a newer token wrote first.
func fencedWrite(c *redis.Client, token int64, data string) (bool, error) {
	next := strconv.FormatInt(token, 10) + ":" + data
	for {
		cur, err := c.Get(servertest.Ctx, "res:R").Result()
		var ok bool
		switch {
		case errors.Is(err, redis.Nil):
			ok, err = c.SetNX(servertest.Ctx, "res:R", next, 0).Result()
		case err != nil:
			return false, err
		default:
			seen, _ := strconv.ParseInt(cur[:strings.IndexByte(cur, ':')], 10, 64)
			if seen > token {
				return false, nil // a newer holder wrote: this one is stale
			}
			err = c.SetIFEQ(servertest.Ctx, "res:R", next, cur, 0).Err()
			ok = err == nil
			if errors.Is(err, redis.Nil) {
				err = nil
			}
		}
		if err != nil {
			return false, err
		}
		if ok {
			return true, nil
		}
	}
}

// TestFencedLockContention: many clients race for the lock; at most one
// holds it at any time, tokens strictly increase from one holder to the
// next, every holder's fenced write is accepted and the last write is the
// last holder's.
func TestFencedLockContention(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0)) // TTLs never run out
	const clients, rounds = 12, 25
	var holders atomic.Int32
	var mu sync.Mutex
	var last int64
	var acquired atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4*clients*rounds)
	for g := 0; g < clients; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			c := servertest.NewClient(t, inst.Addr)
			l := &fencedLock{c: c, owner: fmt.Sprintf("client-%d", g), ttl: 30 * time.Second}
			for r := 0; r < rounds; {
				tok, err := l.acquire()
				if err != nil {
					errs <- err
					return
				}
				if tok == 0 {
					continue
				}
				if n := holders.Add(1); n != 1 {
					errs <- fmt.Errorf("%d holders at once", n)
					return
				}
				mu.Lock()
				if tok <= last {
					errs <- fmt.Errorf("token %d after %d", tok, last)
				}
				last = tok
				mu.Unlock()
				if !l.renew() {
					errs <- fmt.Errorf("%s could not renew its own lock", l.owner)
				}
				ok, err := fencedWrite(c, tok, l.owner)
				if err != nil || !ok {
					errs <- fmt.Errorf("holder's write refused (token %d): %v", tok, err)
				}
				holders.Add(-1)
				if n := l.release(); n != 1 {
					errs <- fmt.Errorf("%s released %d locks", l.owner, n)
				}
				acquired.Add(1)
				r++
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	c := inst.Client(t)
	servertest.Eq(t, "acquisitions", acquired.Load(), int64(clients*rounds))
	res := c.Get(servertest.Ctx, "res:R").Val()
	servertest.Eq(t, "last write is the last token's", strings.HasPrefix(res, strconv.FormatInt(last, 10)+":"), true)
	servertest.Eq(t, "lock free", c.Exists(servertest.Ctx, "lock:R").Val(), int64(0))
}

// TestFencedLockStaleHolder: a holder whose lock expired (a long pause)
// cannot write over the next holder, renew or release its lock.
func TestFencedLockStaleHolder(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	a := &fencedLock{c: inst.Client(t), owner: "A", ttl: 10 * time.Second}
	b := &fencedLock{c: inst.Client(t), owner: "B", ttl: 10 * time.Second}
	ta, err := a.acquire()
	servertest.NoErr(t, err)
	servertest.Eq(t, "A's token", ta, int64(1))
	tb, _ := b.acquire()
	servertest.Eq(t, "B waits", tb, int64(0))
	ok, _ := fencedWrite(a.c, ta, "a1")
	servertest.Eq(t, "A writes", ok, true)
	inst.Clock.Set(servertest.T0 + 10_001) // A pauses past its TTL
	tb, _ = b.acquire()
	servertest.Eq(t, "B's token", tb, int64(3)) // B's failed attempt used token 2
	ok, _ = fencedWrite(b.c, tb, "b1")
	servertest.Eq(t, "B writes", ok, true)
	ok, _ = fencedWrite(a.c, ta, "a2")
	servertest.Eq(t, "A's stale write refused", ok, false)
	servertest.Eq(t, "storage", a.c.Get(servertest.Ctx, "res:R").Val(), "3:b1")
	servertest.Eq(t, "A cannot renew", a.renew(), false)
	servertest.Eq(t, "A cannot release", a.release(), int64(0))
	servertest.Eq(t, "B still holds", a.c.Get(servertest.Ctx, "lock:R").Val(), "B")
	n, _ := b.c.Do(servertest.Ctx, "DELIFEQ", "lock:R", "B").Int64()
	servertest.Eq(t, "B releases with DELIFEQ", n, int64(1))
}
