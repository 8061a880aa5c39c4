package persist

import (
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// The threads a driven save encodes on run under SCHED_IDLE (at nice
// encoderNice, which is what they keep should SCHED_IDLE be refused).
// The encoder shares the cores with the event loop: at the loop's
// priority the kernel lets it finish its time slice when the loop wakes,
// and every request in flight waits for it. At nice 10 the loop
// preempts it on waking, yet GET's p95 during a save of 10M keys stayed
// above redis-server's. Under SCHED_IDLE the encoder gets a core only
// while no thread of normal priority wants one: a waking loop or client
// preempts it at once, and the kernel counts its core as idle when it
// places a woken thread. Its p50, p95 and p99 were below nice 10's
// (docs/benchmarks.md, branch dura11). The save runs on what the
// process leaves, and takes longer when the cores are busy; with other
// processes busy too, longer than at nice 10, since the encoder's weight
// is all its group of processes (autogroup, cgroup) brings to its core.
const encoderNice = 10

// lowWorkers are goroutines locked to threads at the encoder's priority,
// idle between saves. A thread's priority, once lowered, cannot be
// raised again without a privilege the server lacks, so the threads
// never go back to the runtime; nor do they end, since a goroutine that
// exits locked ends its thread, and a thread's end sends the
// parent-death signal to the processes it started (a test's
// redis-server): they are kept and reused, as many as saves have run at
// once.
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
	// the saves go on at the normal priority. The nice value first:
	// sched_setattr sets it only for SCHED_OTHER and SCHED_BATCH. Pid 0
	// is this thread.
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), encoderNice)
	_ = unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}, 0)
	for f := range w {
		f()
	}
}

// bell is how the loop wakes the encoder waiting for a batch: an eventfd
// the encoder's thread blocks on in read(2). Waking it through the Go
// scheduler (sync.Cond, a channel) would make the encoder's goroutine
// runnable on the loop's processor, first in line there; when the loop
// then yields (every loopYieldEvery) or is preempted, it goes to the
// global queue, its processor goes to the encoder's locked thread, and
// no idle processor is woken for the loop: it waited 3-9 ms at a time
// behind the encoder while a processor stood idle (runtime traces of a
// BGREWRITEAOF of 2M keys under GET load, docs/benchmarks.md). A thread
// woken by the kernel takes an idle processor for itself on return
// from the system call. Falls back to a channel without eventfd.
type bell struct {
	fd int
	ch chan struct{}
}

func newBell() *bell {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return &bell{fd: -1, ch: make(chan struct{}, 1)}
	}
	return &bell{fd: fd}
}

var bellOne = [8]byte{1} // an eventfd's increment of 1, little-endian

// ring wakes the wait in progress or the next one.
func (b *bell) ring() {
	if b.fd < 0 {
		select {
		case b.ch <- struct{}{}:
		default:
		}
		return
	}
	for {
		if _, err := unix.Write(b.fd, bellOne[:]); err != unix.EINTR {
			return
		}
	}
}

// wait returns once ring was called since the last wait returned.
func (b *bell) wait() {
	if b.fd < 0 {
		<-b.ch
		return
	}
	var buf [8]byte
	for {
		if _, err := unix.Read(b.fd, buf[:]); err != unix.EINTR {
			return
		}
	}
}

// close frees the eventfd; nobody may ring or wait any more.
func (b *bell) close() {
	if b.fd >= 0 {
		unix.Close(b.fd)
	}
}
