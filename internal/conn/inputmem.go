package conn

import (
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// The memory of clients' input: what INFO reports of it, and how the
// memory of large requests goes back to the system.
//
// Returning memory: Go's heap keeps what a large request used after it is
// garbage, until a collection finds it and the background scavenger
// returns it, both paced by the size of the heap, not by how much went
// free: a 512 MB value, once stored or refused, could stay resident for
// minutes. So when clients' input buffers of BigArg bytes or more are
// dropped (a big request served, a client with one gone), the bytes are
// counted, and once releaseMin bytes have gone free the next
// releaseDelay tick runs debug.FreeOSMemory: a collection, then every
// free page back to the system. At most one runs per releaseDelay, on a
// timer goroutine (never a loop or a client's), and only after large
// frees, so the price of a forced collection (CPU in proportion to the
// live heap, concurrent with the clients) is paid only when there is
// much to give back.
const (
	releaseMin   = 64 << 20
	releaseDelay = time.Second
	// closeRelease: a closing client's input counts when it is this large.
	closeRelease = 1 << 20
)

// inputRelease is process-wide, as the memory it returns.
var inputRelease struct {
	pending atomic.Int64 // bytes freed since the last release
	armed   atomic.Bool  // a release is scheduled
}

// releaseInput counts n bytes of input buffers that went free, and
// schedules a release when they add up to releaseMin.
func releaseInput(n int) {
	if n > 0 && inputRelease.pending.Add(int64(n)) >= releaseMin {
		armRelease()
	}
}

func armRelease() {
	if inputRelease.armed.CompareAndSwap(false, true) {
		time.AfterFunc(releaseDelay, releaseNow)
	}
}

// releaseNow returns free memory to the system. What goes free while it
// runs is counted again and, when large, released a delay later.
func releaseNow() {
	inputRelease.pending.Store(0)
	debug.FreeOSMemory()
	inputRelease.armed.Store(false)
	if inputRelease.pending.Load() >= releaseMin {
		armRelease()
	}
}

// peakSlots are Redis's CLIENTS_PEAK_MEM_USAGE_SLOTS for input: the most
// input memory one client held, per second, for the last 8 seconds.
type peakSlots struct {
	mu  sync.Mutex
	sec int64 // the unix second of the current slot
	max [8]int64
}

// foldInputPeaks records the clients' input memory peaks in the current
// second's slot (the cron calls it).
func (s *Server) foldInputPeaks() {
	now := time.Now().Unix()
	var top int64
	s.clientsMu.Lock()
	for _, c := range s.clients {
		top = max(top, c.inPeak.Swap(c.inNow.Load()))
	}
	s.clientsMu.Unlock()
	p := &s.inPeaks
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.sec < now {
		// Entering a new second: its slot starts empty (seconds with no
		// fold in between are empty too).
		p.sec++
		if now-p.sec >= int64(len(p.max)) {
			p.sec = now
			p.max = [8]int64{}
		}
		p.max[p.sec%8] = 0
	}
	p.max[now%8] = max(p.max[now%8], top)
}

// RecentMaxInputBuffer is INFO's client_recent_max_input_buffer: the most
// memory one client's input (its query buffer and the command being
// received) held in the last 8 seconds, as Redis samples it.
func (s *Server) RecentMaxInputBuffer() int64 {
	p := &s.inPeaks
	p.mu.Lock()
	defer p.mu.Unlock()
	var m int64
	for _, v := range p.max {
		m = max(m, v)
	}
	return m
}
