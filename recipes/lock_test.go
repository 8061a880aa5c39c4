package recipes

import (
	"sync"
	"testing"
	"time"
)

// TestLock: one holder at a time, tokens increasing from holder to
// holder, extend and release only by the owner, and a holder that paused
// past its TTL refused everything once another took the lock.
func TestLock(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		l := NewLock(e.client(t, 0), "lock:report", 100*time.Millisecond, e.opts)
		m, err := l.Mode(ctx)
		e.checkMode(t, m, err)
		a, ok, err := l.Acquire(ctx)
		if err != nil || !ok {
			t.Fatalf("first acquire: %v %v", ok, err)
		}
		if _, ok, err := l.Acquire(ctx); err != nil || ok {
			t.Fatalf("second acquire while held: %v %v", ok, err)
		}
		if ok, err := a.Extend(ctx, 100*time.Millisecond); err != nil || !ok {
			t.Fatalf("extend: %v %v", ok, err)
		}
		e.expire(150 * time.Millisecond) // a pauses past its TTL
		b, ok, err := l.Acquire(ctx)
		if err != nil || !ok {
			t.Fatalf("acquire after expiry: %v %v", ok, err)
		}
		if b.Token <= a.Token {
			t.Fatalf("tokens %d then %d", a.Token, b.Token)
		}
		if ok, err := a.Extend(ctx, time.Second); err != nil || ok {
			t.Fatalf("stale extend: %v %v", ok, err)
		}
		if ok, err := a.Release(ctx); err != nil || ok {
			t.Fatalf("stale release: %v %v", ok, err)
		}
		if ok, err := b.Release(ctx); err != nil || !ok {
			t.Fatalf("release: %v %v", ok, err)
		}

		// Contention: twelve clients, one holder at a time, tokens
		// strictly increasing in the order of holding.
		l2 := NewLock(e.client(t, 0), "lock:busy", time.Minute, e.opts)
		var mu sync.Mutex
		holding, last := false, int64(0)
		var wg sync.WaitGroup
		for g := 0; g < 12; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for got := 0; got < 5; {
					s, ok, err := l2.Acquire(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					if !ok {
						continue
					}
					mu.Lock()
					if holding || s.Token <= last {
						t.Errorf("holding %v, token %d after %d", holding, s.Token, last)
					}
					holding, last = true, s.Token
					mu.Unlock()
					mu.Lock()
					holding = false
					mu.Unlock()
					if ok, err := s.Release(ctx); err != nil || !ok {
						t.Errorf("release: %v %v", ok, err)
					}
					got++
				}
			}()
		}
		wg.Wait()
	})
}
