package persist

import (
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// encoderNice is the nice value of the threads a driven save encodes on.
// The encoder shares the cores with the event loop; at the same priority
// the kernel's scheduler lets it finish its time slice when the loop
// wakes, and every request in flight waits for it. At a lower priority
// the loop preempts it on waking, and the encoder runs on what the loop
// and the clients leave: a save takes longer only when the cores are
// busy.
const encoderNice = 10

// lowWorkers are goroutines locked to threads at encoderNice, idle
// between saves. A thread's priority, once lowered, cannot be raised
// again without a privilege the server lacks, so the threads never go
// back to the runtime; nor do they end, since a goroutine that exits
// locked ends its thread, and a thread's end sends the parent-death
// signal to the processes it started (a test's redis-server): they are
// kept and reused, as many as saves have run at once.
var lowWorkers struct {
	mu   sync.Mutex
	idle []chan func()
}

// runLow runs f on one of lowWorkers and returns when f has.
func runLow(f func()) {
	lowWorkers.mu.Lock()
	var w chan func()
	if n := len(lowWorkers.idle); n > 0 {
		w = lowWorkers.idle[n-1]
		lowWorkers.idle = lowWorkers.idle[:n-1]
	}
	lowWorkers.mu.Unlock()
	if w == nil {
		w = make(chan func())
		go lowWorker(w)
	}
	done := make(chan struct{})
	w <- func() {
		defer close(done)
		f()
	}
	<-done
	lowWorkers.mu.Lock()
	lowWorkers.idle = append(lowWorkers.idle, w)
	lowWorkers.mu.Unlock()
}

func lowWorker(w chan func()) {
	runtime.LockOSThread()
	// Lowering one's own priority needs no privilege; should it fail,
	// the saves go on at the normal priority.
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), encoderNice)
	for f := range w {
		f()
	}
}
