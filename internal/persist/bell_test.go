package persist

import (
	"runtime"
	"sync"
	"testing"
)

// TestBellOneRingPerWait: a ring before the wait is kept for it, a wait
// in progress returns on the ring, and rings from other goroutines reach
// a waiter locked to its thread (the encoder's case) every time.
func TestBellOneRingPerWait(t *testing.T) {
	b := newBell()
	defer b.close()
	b.ring()
	b.wait() // returns: the ring came first

	const rounds = 1000
	var mu sync.Mutex
	sleeping, woken := false, 0
	turn := make(chan struct{})
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(done)
		for range rounds {
			mu.Lock()
			sleeping = true
			mu.Unlock()
			turn <- struct{}{}
			b.wait()
			mu.Lock()
			if sleeping {
				t.Error("the wait returned before its ring")
			}
			woken++
			mu.Unlock()
		}
	}()
	for range rounds {
		<-turn
		mu.Lock()
		sleeping = false
		b.ring()
		mu.Unlock()
	}
	<-done
	if woken != rounds {
		t.Fatalf("woken %d times, want %d", woken, rounds)
	}
}
