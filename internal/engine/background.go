package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/internal/persist"
)

// Background steps: work that needs the server lock but serves no client
// (a background save or AOF rewrite walking the keyspace's snapshot and
// handing its batches to the encoder's goroutine) runs on the event loop,
// between its rounds, in steps of bounded time.
//
// Why not a goroutine of its own that takes the lock for each slice: it
// competes with the loop for the lock, and every hand-off costs a wake-up
// of the waiting thread; worse, when the OS preempts that goroutine's
// thread while it holds the lock (two cores shared with anything else),
// every client waits until the thread runs again. Measured: GET p99 of
// 55-183 ms and a fourth of the GETs per second during a BGSAVE of 10M
// keys. On the loop the lock changes hands with nobody, and a step's cost
// is bounded like a batch of commands. Only the walk needs the lock: the
// encoding, which does not, runs on a goroutine of its own.
//
// Without an event loop (io-event-loop no, other systems, a server
// closing) a task is driven by a goroutine that takes the lock for each
// step, as before.

// Step is what a background step reports.
type Step int

const (
	// StepMore: call the step again soon.
	StepMore Step = iota
	// StepBlocked: nothing to do until the task's wake is called (its
	// output waits to be written).
	StepBlocked
	// StepDone: the task is over; the step is never called again.
	StepDone
)

// The time RunBackground lets the steps run: half of what the loop spent
// since the last call, so that a save takes at most a third of a busy
// loop (redis-server's clients lose about half of their throughput to its
// child on 2 cores), within these bounds: a client waits at most the upper
// one more for its reply, and an idle loop runs short steps back to back.
// The lower one is small because rounds are: at pipeline 1 a round may
// serve one client in 10 µs, and a larger floor gave the save most of the
// loop (GET/s during a BGSAVE fell to a fifth).
const (
	minStepBudget = 5 * time.Microsecond
	maxStepBudget = time.Millisecond
)

// ownStepBudget is a step's time when a goroutine of its own drives it.
const ownStepBudget = 500 * time.Microsecond

// bgTask is one registered task.
type bgTask struct {
	step  func(deadline time.Time) Step
	lock  sync.Locker
	woken atomic.Bool   // wake was called since the step last ran
	kick  chan struct{} // wakes the goroutine driving it, when one does
	done  bool          // under bgWork.mu
	own   bool          // driven by a goroutine of its own (under bgWork.mu)
}

// bgWork is an Env's background tasks and the loops that drive them.
type bgWork struct {
	mu     sync.Mutex // a leaf: guards tasks, drivers, next
	tasks  []*bgTask
	driver map[int]func() // the event loops' wake functions, by id
	next   int
	ready  atomic.Bool // some task may have work: a loop polls rather than sleeps
	run    []*bgTask   // RunBackground's scratch (under the server lock)
	last   time.Time   // when RunBackground last ended (under the server lock)
	// wakes is driver's functions, published for wakeDrivers, which
	// reads them without mu: an encoder waking the loop must not hold a
	// lock the loop takes (RunBackground), or the loop blocks on it and
	// then waits for the Go scheduler, and on a loaded machine the OS,
	// to hand its goroutine a thread again (milliseconds in a trace).
	wakes atomic.Pointer[[]func()]
}

// AddBackgroundDriver registers an event loop that runs the background
// steps (RunBackground) whenever BackgroundReady says so; wake must make
// it start a round soon (it is called with leaf locks held and must only
// signal). The returned function unregisters it; when the last loop is
// gone the tasks left get goroutines of their own.
func (e *Env) AddBackgroundDriver(wake func()) (remove func()) {
	w := &e.bgw
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.driver == nil {
		w.driver = map[int]func(){}
	}
	id := w.next
	w.next++
	w.driver[id] = wake
	w.publishLocked()
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.driver, id)
		w.publishLocked()
		if len(w.driver) > 0 {
			return
		}
		for _, t := range w.tasks {
			if !t.done && !t.own {
				w.startOwnLocked(t)
			}
		}
	}
}

// RunInBackground registers step, to be called with lock (the server
// lock) held until it returns StepDone: by an event loop between its
// rounds, or by a goroutine of its own when there is none. Each call
// should stop at about deadline. After StepBlocked the step is called
// again only once the returned wake function has been called (by anyone,
// with or without the lock; it only signals).
func (e *Env) RunInBackground(lock sync.Locker, step func(deadline time.Time) Step) (wake func()) {
	w := &e.bgw
	t := &bgTask{step: step, lock: lock, kick: make(chan struct{}, 1)}
	t.woken.Store(true)
	w.mu.Lock()
	w.tasks = append(w.tasks, t)
	if len(w.driver) == 0 {
		w.startOwnLocked(t)
	}
	w.mu.Unlock()
	wake = func() {
		t.woken.Store(true)
		select {
		case t.kick <- struct{}{}:
		default:
		}
		w.ready.Store(true)
		w.wakeDrivers()
	}
	wake()
	return wake
}

// SaveDriver is a persist.Options.Drive that runs a background save's
// steps through RunInBackground with lock (the server lock) held.
func (e *Env) SaveDriver(lock sync.Locker) func(step func(time.Time) persist.Step) (wake func()) {
	return func(step func(time.Time) persist.Step) func() {
		return e.RunInBackground(lock, func(deadline time.Time) Step {
			switch step(deadline) {
			case persist.StepMore:
				return StepMore
			case persist.StepBlocked:
				return StepBlocked
			}
			return StepDone
		})
	}
}

// wakeDrivers starts a round of every loop. It takes no lock.
func (w *bgWork) wakeDrivers() {
	if p := w.wakes.Load(); p != nil {
		for _, wake := range *p {
			wake()
		}
	}
}

// publishLocked publishes driver's wake functions for wakeDrivers (under
// mu).
func (w *bgWork) publishLocked() {
	wakes := make([]func(), 0, len(w.driver))
	for _, wake := range w.driver {
		wakes = append(wakes, wake)
	}
	w.wakes.Store(&wakes)
}

// startOwnLocked drives t from a goroutine that takes the lock for each
// step (under w.mu).
func (w *bgWork) startOwnLocked(t *bgTask) {
	t.own = true
	go func() {
		for {
			t.woken.Store(false)
			t.lock.Lock()
			if t.doneLocked(w) {
				t.lock.Unlock()
				return
			}
			r := t.step(time.Now().Add(ownStepBudget))
			if r == StepDone {
				w.finish(t)
			}
			t.lock.Unlock()
			switch r {
			case StepDone:
				return
			case StepBlocked:
				if !t.woken.Load() {
					<-t.kick
				}
			}
		}
	}()
}

// doneLocked reports whether t has finished (under the server lock, which
// every step and finish hold: a task moved from the loops to a goroutine
// of its own is never stepped by both).
func (t *bgTask) doneLocked(w *bgWork) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return t.done
}

// finish records that t returned StepDone.
func (w *bgWork) finish(t *bgTask) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t.done = true
	for i, x := range w.tasks {
		if x == t {
			w.tasks = append(w.tasks[:i], w.tasks[i+1:]...)
			break
		}
	}
}

// BackgroundReady reports whether a background step may have work: an
// event loop then polls instead of sleeping and calls RunBackground after
// its round.
func (e *Env) BackgroundReady() bool { return e.bgw.ready.Load() }

// RunBackground runs the loop-driven tasks' steps for about half as long
// as the loop served clients since the last call (minStepBudget to
// maxStepBudget). Call it with the server lock held, from an event
// loop registered with AddBackgroundDriver.
func (e *Env) RunBackground() {
	w := &e.bgw
	w.ready.Store(false)
	w.mu.Lock()
	w.run = w.run[:0]
	for _, t := range w.tasks {
		if !t.own && !t.done {
			w.run = append(w.run, t)
		}
	}
	w.mu.Unlock()
	now := time.Now()
	deadline := now.Add(min(max(now.Sub(w.last)/2, minStepBudget), maxStepBudget))
	defer func() { w.last = time.Now() }()
	more := false
	for _, t := range w.run {
		if !t.woken.Swap(false) {
			continue // blocked, and not woken since
		}
		switch t.step(deadline) {
		case StepMore:
			t.woken.Store(true)
			more = true
		case StepDone:
			w.finish(t)
		case StepBlocked:
			// A wake since the Swap above set woken and ready again.
		}
	}
	clear(w.run)
	if more {
		w.ready.Store(true)
	}
}
