package persist

import (
	"os"
	"runtime"
	"sync"
)

// A driven save's encoder keeps a processor (a Go P) busy for the whole
// save. With GOMAXPROCS at the number of cores, the event loop then has
// the only other one, and each time it sleeps in epoll_wait the runtime's
// monitor takes that processor from it (it takes a processor from a
// thread in a system call once no processor is idle); when the loop
// wakes and the processor has gone to another goroutine meanwhile (a
// timer, the cron, a goroutine the encoder woke) it waits in the run
// queue for a thread to pick it up. Runtime traces of saves of 2M keys
// under 50 GET clients on 2 cores: the loop woke from a system call
// without a processor 240-630 times a second, each a wait of up to 2 ms
// (p99; up to 50 ms on a loaded machine); with one processor more, 40-70
// times a second. One processor more than the cores while
// the encoder runs leaves one idle, so the monitor leaves a sleeping
// loop's processor alone and the loop wakes with it, as Redis's main
// thread only waits for the OS; the OS shares the cores between the loop
// and the encoder as between Redis and its child.
var extraProc struct {
	mu   sync.Mutex
	n    int // driven saves running
	prev int // GOMAXPROCS before the first of them
}

// addProc raises GOMAXPROCS by one for the first of the driven saves
// running at once.
func addProc() {
	extraProc.mu.Lock()
	defer extraProc.mu.Unlock()
	extraProc.n++
	if extraProc.n == 1 {
		extraProc.prev = runtime.GOMAXPROCS(0)
		runtime.GOMAXPROCS(extraProc.prev + 1)
	}
}

// dropProc undoes addProc once the last driven save has ended: back to
// the runtime's default (which follows the CPU limit) unless GOMAXPROCS
// was set in the environment.
func dropProc() {
	extraProc.mu.Lock()
	defer extraProc.mu.Unlock()
	extraProc.n--
	if extraProc.n > 0 {
		return
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.SetDefaultGOMAXPROCS()
	} else {
		runtime.GOMAXPROCS(extraProc.prev)
	}
}
