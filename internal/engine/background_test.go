package engine

import (
	"sync"
	"testing"
	"time"
)

// A loop-driven task runs only in RunBackground, under the lock; after
// StepBlocked it waits for its wake; once the last loop is gone, what is
// left runs on a goroutine of its own, which takes the lock for each step.
func TestBackgroundTaskSteps(t *testing.T) {
	var e Env
	var lock sync.Mutex
	woken := 0
	remove := e.AddBackgroundDriver(func() { woken++ })

	var steps, blockAt int
	var mu sync.Mutex // steps, read by the test while the goroutine runs
	done := make(chan struct{})
	step := func(time.Time) Step {
		if !lock.TryLock() {
			// Held, as it must be: by the caller.
		} else {
			lock.Unlock()
			t.Error("step ran without the lock")
		}
		mu.Lock()
		defer mu.Unlock()
		steps++
		switch {
		case steps == blockAt:
			return StepBlocked
		case steps >= 6:
			close(done)
			return StepDone
		}
		return StepMore
	}
	blockAt = 2
	lock.Lock()
	wake := e.RunInBackground(&lock, step)
	lock.Unlock()
	if !e.BackgroundReady() || woken == 0 {
		t.Fatal("registering did not wake the loop")
	}
	run := func() {
		lock.Lock()
		e.RunBackground()
		lock.Unlock()
	}
	run()
	if steps != 1 || !e.BackgroundReady() {
		t.Fatalf("after one run: %d steps, ready %v", steps, e.BackgroundReady())
	}
	run() // step 2 blocks
	if steps != 2 || e.BackgroundReady() {
		t.Fatalf("after blocking: %d steps, ready %v", steps, e.BackgroundReady())
	}
	run()
	if steps != 2 {
		t.Fatalf("a blocked task ran: %d steps", steps)
	}
	wake()
	if !e.BackgroundReady() {
		t.Fatal("wake did not make the loop ready")
	}
	run()
	if steps != 3 {
		t.Fatalf("after wake: %d steps", steps)
	}
	// The loop goes away: a goroutine finishes the task.
	remove()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if steps != 6 {
		t.Fatalf("%d steps, want 6", steps)
	}
}

// Without a loop a task runs on a goroutine of its own from the start.
func TestBackgroundTaskWithoutLoop(t *testing.T) {
	var e Env
	var lock sync.Mutex
	done := make(chan struct{})
	n := 0
	lock.Lock()
	var wake func()
	wake = e.RunInBackground(&lock, func(time.Time) Step {
		n++
		if n == 1 {
			go func() {
				lock.Lock() // after this step released it
				defer lock.Unlock()
				wake()
			}()
			return StepBlocked
		}
		close(done)
		return StepDone
	})
	lock.Unlock()
	<-done
}
