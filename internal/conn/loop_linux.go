package conn

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/resp"
)

// The event loop (io-event-loop yes, the default on Linux) serves TCP
// clients the way Redis does: one goroutine waits on an epoll set of
// their sockets, and for each one that is readable reads what arrived,
// runs the complete commands under the server lock and writes the
// replies, with non-blocking system calls. doc.go says who owns what, and
// when a client moves to a goroutine of its own (handoff) or the busy
// watcher answers for the loop while a script runs.
//
// Why: with a goroutine per connection, every request at pipeline 1 costs
// a read that finds nothing, a park in Go's poller, and a wake-up that
// makes the scheduler start another thread. Those costs, not the
// commands, made Abacus slower than Redis at pipeline 1. The loop owns
// its sockets outright: their descriptors are taken out of Go's poller
// (accepted by net.Listener, duplicated, the net.Conn closed), so the
// runtime's poller never wakes for them. A handed-off client gets a
// net.Conn made from its descriptor, and client.serve goes on from what
// the loop had read.

// errAgain is a non-blocking read or write that would block.
var errAgain = syscall.EAGAIN

type handoffKind uint8

const (
	handoffNone   handoffKind = iota
	handoffParked             // a blocking command parked the client
	handoffPaused             // CLIENT PAUSE holds the next command
	handoffWrite              // c.wrest is left to write (wown still wDirect)
	handoffLarge              // a command of very many arguments (prepare.go)
)

type eventLoop struct {
	s    *Server
	epfd int
	evfd int // eventfd: wakes the loop for new clients and shutdown
	mu   sync.Mutex
	byFD []*client // the loop's clients by descriptor (under mu)
	cur  *client   // the client whose commands run now (under mu)
	kick []*client // clients with work but no new event (under mu)
	// pending are the clients whose replies wait to be written after the
	// round of events (under mu; client.deferWrite), and those still
	// waiting for their AOF position to be durable (client.syncAt): they
	// stay in it, across rounds, until it is. wakes are the pushed-output
	// writers woken after the round (out.go).
	pending []*client
	wakes   wakeList
	// heavy are the clients whose unread output passed backlogAt: they
	// are served after the round's other clients, within heavyBudget
	// (serveHeavy). heavyPhase is set while serveHeavy serves them.
	heavy      []*client
	heavyPhase bool
	// othersRan says commands of clients not in heavy ran since the
	// heavy ones were last served; heavyNext is when heavy clients may
	// be served again while others are being served (serveHeavy).
	othersRan bool
	heavyNext time.Time
	// asked is the AOF position the loop asked durability to wake it for
	// (syncWake): 0 once it did, so that the loop asks again.
	asked  atomic.Int64
	inMu   sync.Mutex
	inbox  []*client // accepted, not yet in the epoll set
	closed bool      // evfd is closed (under inMu and evMu)
	// evMu guards evfd's writes against its close, apart from inMu: a
	// waker (a save's encoder, the AOF's committer) writes the eventfd,
	// which wakes the loop, whose round starts with admit (inMu); under
	// inMu the woken loop often found it held by the waker (the OS runs
	// the woken thread first) and slept again until the waker's thread
	// ran (runtime traces of a save under load: waits of 1-20 ms).
	evMu sync.Mutex
	// want is set while the loop waits for mu: the busy server lets go.
	want atomic.Bool
	// busySig wakes busyWatch when a script starts. busyArmed is set by
	// the start that sends it and cleared by the watcher once no script
	// runs, so scripts that start while it is set cost one atomic load.
	busySig   chan struct{}
	busyArmed atomic.Bool
	// bgOff unregisters the loop as a driver of background steps.
	bgOff func()
}

// newEventLoop makes the loop's epoll set, or returns nil (the server
// then serves every client with a goroutine) when it is switched off or
// cannot be made.
func newEventLoop(s *Server) *eventLoop {
	if !s.Cfg.Bool(config.EventLoop) {
		return nil
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		s.Log.Warn("io-event-loop: epoll_create1: " + err.Error())
		return nil
	}
	evfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		s.Log.Warn("io-event-loop: eventfd: " + err.Error())
		return nil
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(evfd)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, evfd, &ev); err != nil {
		unix.Close(epfd)
		unix.Close(evfd)
		return nil
	}
	l := &eventLoop{s: s, epfd: epfd, evfd: evfd, busySig: make(chan struct{}, 1)}
	l.bgOff = s.Env.AddBackgroundDriver(l.wake)
	s.wg.Add(2)
	go l.run()
	go l.busyWatch()
	return l
}

// detach takes a TCP connection's descriptor out of Go's poller: it
// returns a duplicate (non-blocking, close-on-exec) and closes conn.
func detach(conn net.Conn) (int, error) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return -1, errors.New("not a socket")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	nfd, derr := -1, error(nil)
	if err := rc.Control(func(fd uintptr) { nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	if derr != nil {
		return -1, derr
	}
	conn.Close()
	if err := unix.SetNonblock(nfd, true); err != nil {
		unix.Close(nfd)
		return -1, err
	}
	return nfd, nil
}

// add hands a new client to the loop.
func (l *eventLoop) add(c *client) {
	l.inMu.Lock()
	defer l.inMu.Unlock()
	if l.closed {
		go c.close()
		return
	}
	l.inbox = append(l.inbox, c)
	l.wake()
}

func (l *eventLoop) wake() {
	l.evMu.Lock()
	defer l.evMu.Unlock()
	if l.closed {
		return
	}
	one := uint64(1)
	unix.Write(l.evfd, (*[8]byte)(unsafe.Pointer(&one))[:])
}

// loopYieldEvery is how often the event loop yields its processor: under
// the runtime's 10 ms before it forces a preemption, and not much more
// often, since a yield wakes another thread to look for work (tens of µs
// of CPU on a virtual machine).
const loopYieldEvery = 5 * time.Millisecond

// run is the loop's goroutine.
func (l *eventLoop) run() {
	s := l.s
	defer s.wg.Done()
	events := make([]unix.EpollEvent, 256)
	l.mu.Lock()
	defer l.mu.Unlock()
	lastYield := time.Now()
	for {
		// The loop is one goroutine that never parks, so the scheduler
		// sees its processor run the same goroutine for as long as the
		// server does. After 10 ms of that the runtime's monitor (sysmon)
		// preempts it with a signal and, when it is blocked in
		// epoll_wait, takes its processor away: the loop then resumes on
		// another thread, and sysmon, having found work, polls every
		// 20 µs again for the next millisecond or more. Yielding at a
		// round's start well within the 10 ms keeps it on its thread and
		// lets sysmon back off (docs/design.md, "Event loop").
		if now := time.Now(); now.Sub(lastYield) >= loopYieldEvery {
			lastYield = now
			runtime.Gosched()
		}
		if s.closing.Load() {
			l.bgOff()
			l.closeAll()
			// busyServe checks closing before it polls again.
			unix.Close(l.epfd)
			l.inMu.Lock()
			l.evMu.Lock()
			unix.Close(l.evfd)
			l.closed = true
			l.evMu.Unlock()
			for _, c := range l.inbox {
				go c.close() // accepted as the server closed
			}
			l.inbox = nil
			l.inMu.Unlock()
			return
		}
		l.admit()
		// Clients held for the AOF's fsync are woken by its end, not by
		// polling: no spin while they wait (syncWake). Heavy clients
		// whose turn has not come make it wait until it comes.
		heavyIn := l.heavyWait()
		n := l.wait(events, len(l.kick) == 0 && heavyIn != 0 && !s.Env.BackgroundReady(), len(l.pending) == 0, heavyIn)
		for i := 0; i < n; i++ {
			fd := int(events[i].Fd)
			if fd == l.evfd {
				var b [8]byte
				unix.Read(l.evfd, b[:])
				continue
			}
			if fd < len(l.byFD) {
				if c := l.byFD[fd]; c != nil {
					l.serve(c, false)
				}
			}
		}
		if len(l.kick) > 0 {
			kick := l.kick
			l.kick = nil
			for _, c := range kick {
				c.kicked = false
				if c.inLoop {
					l.serve(c, true)
				}
			}
		}
		// The round's replies go out before the heavy clients are
		// served: they must not wait for a large reply to be built.
		if s.Env.BroadcastDue() || s.gathered.Load() {
			l.roundEnd()
		}
		l.flushAll(false)
		if l.serveHeavy() {
			if s.Env.BroadcastDue() || s.gathered.Load() {
				l.roundEnd()
			}
			l.flushAll(false)
		}
		if s.Env.BackgroundReady() {
			l.background()
		}
	}
}

// roundEnd moves the output the round's batches pushed to others to their
// queues (pushround.go) and sends the BCAST invalidations of the round's
// writes (Env.BroadcastTracking), once per round as Redis does in
// beforeSleep. When the server lock is taken (a script may hold it for
// long), the loop lets go of its set while it waits, as in serve, so
// that the busy watcher can answer its clients meanwhile.
func (l *eventLoop) roundEnd() {
	s := l.s
	if !s.mu.TryLock() {
		l.mu.Unlock()
		s.mu.Lock()
		defer func() {
			l.want.Store(true)
			l.mu.Lock()
			l.want.Store(false)
		}()
	}
	s.flushPushes(&l.wakes)
	if s.Env.BroadcastDue() {
		s.Env.BroadcastTracking()
	}
	s.releaseHeld()
	s.mu.Unlock()
}

// flushAll writes the replies the round of events left pending. Writing
// them together, after the commands of every ready client have run,
// rather than each right after its commands, lets a client with many
// connections (redis-benchmark, a pool) find many replies at once when
// it wakes: at pipeline 16 that was worth 5-30% of throughput here
// (docs/benchmarks.md).
//
// Under appendfsync always it is also the group commit: replies whose AOF
// position is not durable yet stay pending, and one fsync, started by
// the first of them to ask, covers the writes of every client of the
// round (Redis fsyncs once per round in beforeSleep). The loop does not
// wait for it: it goes on serving clients, whose writes gather for the
// next fsync, and the end of the fsync wakes it (syncWake) to write what
// it covered. With block (shutdown, a busy script) it waits instead.
func (l *eventLoop) flushAll(block bool) {
	keep := l.pending[:0]
	var hold int64
	for _, c := range l.pending {
		if !c.inLoop {
			// Dropped or handed off since it joined the list, its
			// replies written first (serve): no longer the loop's.
			c.inPending = false
			continue
		}
		if !block && c.wpending && l.held(c) {
			keep = append(keep, c)
			hold = max(hold, c.syncAt)
			continue
		}
		c.inPending = false
		l.flush(c)
		if c.handoff == handoffWrite && c.inLoop {
			l.handoffTo(c, false)
		}
	}
	clear(l.pending[len(keep):])
	l.pending = keep
	l.wakes.wakeAll()
	if hold > l.asked.Load() {
		l.asked.Store(hold)
		if l.s.Env.Persistence().Durable(hold, l.syncWake) {
			l.asked.Store(0)
			l.wake() // durable meanwhile: the next round writes them
		}
	}
}

// held reports whether c's staged replies wait for an AOF position that
// is not durable yet.
func (l *eventLoop) held(c *client) bool {
	if c.syncAt == 0 {
		return false
	}
	if l.s.Env.Persistence().Durable(c.syncAt, nil) {
		c.syncAt = 0
		return false
	}
	return true
}

// syncWake is called by durability when the fsync the loop asked for has
// ended (on its goroutine: it only signals).
func (l *eventLoop) syncWake() {
	l.asked.Store(0)
	l.wake()
}

// addPending puts c in the list of clients whose replies the round's end
// writes (once: a held client may be served again meanwhile).
func (l *eventLoop) addPending(c *client) {
	if !c.inPending {
		c.inPending = true
		l.pending = append(l.pending, c)
	}
}

// flush writes c's pending replies (a socket that does not take them
// whole sets handoffWrite).
func (l *eventLoop) flush(c *client) {
	if c.wpending {
		c.wpending = false
		c.finish(true)
	}
}

// wait returns the ready events: at once when block is false, else after
// blocking until there are some (or timeout, rounded up to a millisecond,
// when it is positive). A wait that may block is one epoll_wait through
// the runtime's system-call path, which returns at once when events are
// ready: a round costs one epoll_wait, as Redis's does. Only with
// io-event-loop-spin-us set (and spin) does the loop first poll with raw
// non-blocking calls, which keep the processor, for that long.
func (l *eventLoop) wait(events []unix.EpollEvent, block, spin bool, timeout time.Duration) int {
	if !block {
		for {
			n, e := l.poll(events)
			if e != syscall.EINTR {
				return n
			}
		}
	}
	if us := l.s.Cfg.Int(config.EventLoopSpin); us > 0 && spin {
		// Poll on before sleeping. A loop that sleeps between rounds
		// makes every request wake it (and the client's write pay for
		// the wake-up); polling a little longer finds the next requests
		// already there, as a busy Redis does (docs/design.md).
		spinUntil := time.Now().Add(time.Duration(us) * time.Microsecond)
		for {
			n, e := l.poll(events)
			if n > 0 || (e != 0 && e != syscall.EINTR) {
				return n
			}
			if !time.Now().Before(spinUntil) {
				break
			}
		}
	}
	ms := -1
	if timeout > 0 {
		ms = int((timeout + time.Millisecond - 1) / time.Millisecond)
	}
	for {
		n, err := unix.EpollWait(l.epfd, events, ms)
		if err == nil {
			return n
		}
		if err != syscall.EINTR {
			s := l.s
			s.Log.Warn("io-event-loop: epoll_wait: " + err.Error())
			time.Sleep(time.Millisecond)
			return 0
		}
	}
}

// poll is a non-blocking epoll_wait by a raw system call, which keeps the
// processor.
func (l *eventLoop) poll(events []unix.EpollEvent) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(l.epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), 0
}

// admit puts the newly accepted clients into the epoll set.
func (l *eventLoop) admit() {
	l.inMu.Lock()
	in := l.inbox
	l.inbox = nil
	l.inMu.Unlock()
	for _, c := range in {
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(c.fd)}
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
			l.s.Log.Warn("io-event-loop: epoll_ctl: " + err.Error())
			go c.close()
			continue
		}
		for len(l.byFD) <= c.fd {
			l.byFD = append(l.byFD, nil)
		}
		l.byFD[c.fd] = c
		c.inLoop = true
		if c.tsock != nil {
			// Its first requests may have come with the handshake's
			// last flight: the TLS layer holds them, and the socket
			// may never be readable again for them.
			l.kickLocked(c)
		}
	}
}

// remove takes c out of the epoll set.
func (l *eventLoop) remove(c *client) {
	unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	l.byFD[c.fd] = nil
	c.inLoop = false
}

// serve reads what c sent and runs it. kicked says c has input the busy
// server left unanswered (or a handoff to make) without a new event.
func (l *eventLoop) serve(c *client, kicked bool) {
	s := l.s
	defer func() {
		if r := recover(); r != nil {
			s.Env.Stats.PanicsRecovered.Add(1)
			s.Log.Error(fmt.Sprintf("panic serving client id=%d addr=%s: %v", c.sess.ID, c.sess.Addr, r), "stack", string(debug.Stack()))
			if c.inLoop {
				l.flush(c)
				l.drop(c)
			}
		}
	}()
	if !l.held(c) {
		// Served again in the same round (kicked). Replies that wait for
		// the AOF stay pending: the next ones join them (stage).
		l.flush(c)
	}
	if c.sess.Killed.Load() || c.sess.CloseAfterReply {
		// Killed, or the busy server answered SHUTDOWN NOSAVE / QUIT.
		l.flush(c)
		l.drop(c)
		return
	}
	if c.handoff != handoffNone {
		l.flush(c)
		l.handoffTo(c, false)
		return
	}
	if !l.heavyPhase && (c.inHeavy || c.backlogged()) {
		l.addHeavy(c)
		return
	}
	if c.unrun {
		// Commands read before are still to run: no more is read until
		// they have, so that a client whose replies are not taken does
		// not pile up input too (the kernel's buffer holds it back).
		c.unrun = false
	} else {
		n, err := c.loopRead()
		if n > 0 {
			s.Env.Stats.NetInputBytes.Add(int64(n))
			c.sess.LastIO.Store(s.Env.NowMs())
		} else if err == errAgain {
			if !kicked || !c.reader.Buffered() {
				return
			}
		} else {
			l.flush(c)
			l.drop(c)
			return
		}
	}
	c.roundOut = 0
	if !l.heavyPhase {
		l.othersRan = true
	}
	l.cur = c
	l.mu.Unlock()
	var quit bool
	func() {
		// The lock is taken back even when a panic unwinds from here.
		defer func() {
			l.want.Store(true) // the busy server gives the set back
			l.mu.Lock()
			l.want.Store(false)
			l.cur = nil
			c.deferWrite = false
			c.roundWakes = nil
		}()
		c.deferWrite = true
		c.roundWakes = &l.wakes
		quit = c.consume()
	}()
	if c.wpending {
		if c.handoff == handoffNone && !quit {
			l.addPending(c)
		} else {
			l.flush(c)
		}
	}
	if c.yield {
		// The rest of its input waits for the loop's next round.
		c.yield = false
		if c.handoff == handoffNone && !quit {
			c.unrun = true
			if c.backlogged() {
				l.addHeavy(c)
			} else {
				l.kickLocked(c)
			}
		}
	}
	switch {
	case c.handoff != handoffNone:
		l.handoffTo(c, quit)
	case quit:
		l.drop(c)
	case c.tlsMore:
		// The TLS layer holds input that no event will announce: it is
		// read on the next round (or after the commands still unrun).
		l.kickLocked(c)
	}
}

// Clients whose output is not being read. A client that pipelines
// commands with large replies and does not read them (a slow reader, or an
// attack) would make every round build its replies, and all such clients'
// queues would grow at once. Instead, once its unread output passes
// backlogAt, a client is served only after the round's other clients,
// and the rounds build at most heavyBudget bytes of replies for all such
// clients together (at least one batch): the others' latency stays that
// of a round plus one batch, and memory grows one queue at a time, the
// largest first, as Redis fills one client's buffer per event until its
// limit closes it. While other clients are being served, the heavy ones
// get at most 1/heavyShare of the loop's time: a round that serves them
// is followed by heavyShare-1 times as long without them, during which
// the loop serves the others or waits for them (heavyWait). The share is
// small because a heavy client's output is not being taken: building more
// of it only grows its queue, and every other request that arrives while
// one of its large replies is built waits for it. A client whose reader
// takes its queue below backlogAt leaves the list at the next round and
// is served as the others are, so a client that reads is held to the
// pace of its reading, not to the share. Only when no
// other client ran since the heavy ones were last served are they served
// again at once: a batch of one large reply takes far longer than a
// round of small requests, and serving one whenever a round found no
// request ready (the others' next requests on their way) would add it to
// nearly every other request's latency. A client passed over heavyAge
// rounds in a row goes first, so that none waits for ever behind a
// larger one that keeps draining and refilling (a few rounds would let
// every queue grow at once again).
const (
	backlogAt   = replyFlushAt
	heavyBudget = 1 << 20
	heavyAge    = 256
	heavyShare  = 16
	// heavyReplyCost is what a heavy serve is charged per MB of replies
	// at least: about what building 1 MB of an LRANGE reply took the
	// loop (docs/benchmarks.md), so that replies deferred to the queue
	// (client.deferReply), which take the loop a few µs, do not let a
	// client that does not read fill its queue to its limit, reconnect
	// and fill it again many times a second.
	heavyReplyCost = 400 * time.Microsecond
)

// backlogged reports whether c's unread output passed backlogAt.
func (c *client) backlogged() bool {
	q := c.out.Load()
	return q != nil && q.size() >= backlogAt
}

// addHeavy puts c in the list served after the round's other clients,
// and takes it out of the epoll set until serveHeavy serves it: its
// unread input keeps its socket readable, and a level-triggered event
// for every heavy client in every round would keep the loop from ever
// sleeping (polling without end, on processors its other clients need).
// Its closing or kill is noticed when serveHeavy serves it.
func (l *eventLoop) addHeavy(c *client) {
	if !c.inHeavy {
		c.inHeavy = true
		c.heavySkips = 0
		l.heavy = append(l.heavy, c)
		unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	}
}

// takeHeavy takes c out of the heavy list's state and puts it back in
// the epoll set (addHeavy).
func (l *eventLoop) takeHeavy(c *client) {
	c.inHeavy = false
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(c.fd)}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
		l.s.Log.Warn("io-event-loop: epoll_ctl: " + err.Error())
		c.sess.Killed.Store(true) // closed when served now
	}
}

// heavyWait is how long the heavy clients must wait for their turn: -1
// when there are none, 0 when they may be served now.
func (l *eventLoop) heavyWait() time.Duration {
	if len(l.heavy) == 0 {
		return -1
	}
	if !l.othersRan {
		return 0
	}
	return max(time.Until(l.heavyNext), 0)
}

// serveHeavy serves the backlogged clients within heavyBudget, the
// longest-waiting (past heavyAge rounds) and then the largest first. It
// reports whether it served any.
func (l *eventLoop) serveHeavy() bool {
	if len(l.heavy) == 0 {
		return false
	}
	list := l.heavy[:0]
	for _, c := range l.heavy {
		switch {
		case !c.inLoop:
			c.inHeavy = false
		case !c.backlogged():
			// Its reader took its output below backlogAt: it is served
			// with the others again, from the next round.
			l.takeHeavy(c)
			l.kickLocked(c)
		default:
			list = append(list, c)
		}
	}
	clear(l.heavy[len(list):])
	l.heavy = list
	if len(list) == 0 || l.heavyWait() > 0 {
		return false
	}
	start := time.Now()
	l.othersRan = false
	spent := int64(0)
	defer func() {
		// A reply deferred to the queue costs the loop little, but its
		// encoding, its snapshot and its share of the collector's work
		// are still done: it is charged as if built here (heavyReplyCost).
		cost := max(time.Since(start), time.Duration(spent)*heavyReplyCost>>20)
		l.heavyNext = start.Add(cost * heavyShare)
	}()
	l.heavyPhase = true
	defer func() { l.heavyPhase = false }()
	for spent < heavyBudget && len(l.heavy) > 0 {
		best, bestSize := -1, int64(-1)
		for i, c := range l.heavy {
			size := c.unsent()
			if c.heavySkips >= heavyAge {
				size = 1 << 62
			}
			if size > bestSize {
				best, bestSize = i, size
			}
		}
		c := l.heavy[best]
		l.heavy = append(l.heavy[:best], l.heavy[best+1:]...)
		l.takeHeavy(c)
		l.serve(c, true)
		spent += max(int64(c.roundOut), 1)
	}
	for _, c := range l.heavy {
		c.heavySkips++
	}
	return true
}

// drop closes a loop client.
func (l *eventLoop) drop(c *client) {
	l.remove(c)
	// queued, not out: another loop's client may be pushing to c (under
	// the server lock, which the loop does not hold here).
	if c.queued() || c.handoff == handoffWrite || l.s.Env.ScriptRunning() {
		// Writing out what is queued may take a while, and a script
		// holds the lock close needs: not on the loop.
		go c.close()
		return
	}
	c.close()
}

// handoffTo moves c to a goroutine of its own (doc.go, Ownership).
// With quit the goroutine only finishes writing c.wrest and closes.
func (l *eventLoop) handoffTo(c *client, quit bool) {
	s := l.s
	l.remove(c)
	nfd, err := unix.FcntlInt(uintptr(c.fd), unix.F_DUPFD_CLOEXEC, 0)
	var conn net.Conn
	if err == nil {
		f := os.NewFile(uintptr(nfd), "")
		conn, err = net.FileConn(f)
		f.Close()
	}
	if err != nil {
		s.Log.Warn(fmt.Sprintf("io-event-loop: client id=%d to its own goroutine: %v", c.sess.ID, err))
		c.sess.Killed.Store(true)
		c.wrest = nil // close ends the direct write without writing
		go c.close()
		return
	}
	// Not under the server lock, which a script may hold for long: a
	// waker (wakeParked) sees conn under ioMu, or nil, and then the
	// goroutine finds the wait over when it looks.
	if c.tsock != nil {
		c.tlsToGoroutine(conn)
	} else {
		c.raw = newRawIO(conn)
		c.ioMu.Lock()
		c.conn = conn
		c.ioMu.Unlock()
	}
	c.quitAfter = quit
	go c.serve()
}

// closeAll closes the loop's clients at shutdown.
func (l *eventLoop) closeAll() {
	l.flushAll(true)
	l.admit()
	for _, c := range l.byFD {
		if c != nil {
			l.drop(c)
		}
	}
}

// armBusy wakes busyWatch for a script that starts (Server.scriptStarted,
// under the server lock): only the first start after a quiet spell sends.
func (l *eventLoop) armBusy() {
	if l.busyArmed.Load() || !l.busyArmed.CompareAndSwap(false, true) {
		return
	}
	select {
	case l.busySig <- struct{}{}:
	default:
	}
}

// busyWatch gives the loop's clients the busy server while a script is
// busy and the loop is not polling (it runs the script itself, or waits
// for the lock a script holds). It sleeps until a script starts
// (armBusy), then until the command package says the script is busy
// (Env.ScriptBusyIn), then takes the loop's epoll set when the loop lets
// go of it, which it does only inside a batch.
func (l *eventLoop) busyWatch() {
	s := l.s
	defer s.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-l.busySig:
		}
		for !s.closing.Load() {
			left, running := s.Env.ScriptBusyIn()
			if !running {
				l.busyArmed.Store(false)
				// A script that started before the flag dropped found it
				// set and sent nothing: look once more.
				if _, running = s.Env.ScriptBusyIn(); running && l.busyArmed.CompareAndSwap(false, true) {
					continue
				}
				break
			}
			if left > 0 {
				timer.Reset(left)
				select {
				case <-s.done:
					timer.Stop()
					return
				case <-timer.C:
				}
				continue
			}
			l.mu.Lock()
			l.busyServe()
			l.mu.Unlock()
			// Let the loop take its set back before trying again.
			for l.want.Load() && !s.closing.Load() {
				runtime.Gosched()
			}
		}
	}
}

// scriptBusy reports whether the running script is busy.
func (s *Server) scriptBusy() bool {
	left, running := s.Env.ScriptBusyIn()
	return running && left == 0
}

// busyServe answers the loop's clients while a script is busy, until it
// ends, the server closes or the loop wants its set back.
func (l *eventLoop) busyServe() {
	s := l.s
	serving := func() bool { return s.scriptBusy() && !s.closing.Load() && !l.want.Load() }
	if !serving() {
		return // the loop may have closed the set
	}
	// The script may run for long: the replies of the clients served
	// before it in this round go out now.
	l.flushAll(true)
	events := make([]unix.EpollEvent, 64)
	for serving() {
		l.admit() // clients accepted since the loop last polled
		n, err := unix.EpollWait(l.epfd, events, 10)
		if err != nil {
			n = 0
		}
		useful := false
		for _, ev := range events[:n] {
			fd := int(ev.Fd)
			if fd == l.evfd || fd >= len(l.byFD) {
				continue
			}
			c := l.byFD[fd]
			if c == nil || c == l.cur || c.kicked {
				continue
			}
			useful = true
			l.busyClient(c)
		}
		if !useful {
			// Only the running client or the wake-up descriptor is ready
			// (level-triggered: they stay ready until the loop runs).
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// busyClient reads what c sent and answers the commands the busy state
// allows; at the first one it does not (the script ended), or anything
// else the loop must handle, c is kicked to the loop.
func (l *eventLoop) busyClient(c *client) {
	s := l.s
	n, err := c.loopRead()
	if c.tlsMore {
		l.kickLocked(c) // the loop reads the rest
	}
	if n > 0 {
		s.Env.Stats.NetInputBytes.Add(int64(n))
		c.sess.LastIO.Store(s.Env.NowMs())
	} else if err != errAgain {
		l.kickLocked(c) // the loop sees the close again and drops c
		return
	}
	in := &c.reader
	in.MaxBulk = s.Cfg.Int(config.ProtoMaxBulkLen)
	in.Authenticated = c.sess.Authed
	for {
		pos := in.Pos()
		args, perr := in.Next(c.argv[:0])
		if perr != nil {
			if perr != resp.ErrIncomplete {
				l.kickLocked(c) // the protocol error is the loop's to answer
			}
			break
		}
		if len(args) == 0 {
			continue
		}
		c.argv = args
		mark := len(c.w.Buf)
		if !s.Env.ExecuteBusy(c.sess, args, &c.w) {
			in.Rewind(pos) // the loop runs it
			l.kickLocked(c)
			break
		}
		c.applyReplyMode(mark)
		if c.sess.CloseAfterReply || c.sess.Killed.Load() {
			c.dropUnsent()
			l.kickLocked(c)
			break
		}
	}
	c.inputDone()
	c.flushUnlocked()
	if c.handoff != handoffNone {
		l.kickLocked(c)
	}
}

func (l *eventLoop) kickLocked(c *client) {
	if !c.kicked {
		c.kicked = true
		l.kick = append(l.kick, c)
	}
}

// loopMaxRead bounds one read on the loop, so that a client sending a
// large value (or many clients at once) cannot hold the others off for
// long: the rest is read on the next rounds.
const loopMaxRead = 64 << 10

// loopRead reads what arrived for c into its input.
func (c *client) loopRead() (int, error) {
	var n int
	var err error
	if c.tsock != nil {
		n, c.tlsMore, err = c.tlsLoopRead(c.reader.ReadBuf(loopMaxRead))
	} else {
		n, err = fdRead(c.fd, c.reader.ReadBuf(loopMaxRead))
	}
	c.reader.Filled(n)
	return n, err
}

// fdRead reads from a non-blocking descriptor: errAgain when nothing is
// there, io.EOF when the peer closed.
func fdRead(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
		switch e {
		case 0:
			if n == 0 {
				return 0, io.EOF
			}
			return int(n), nil
		case syscall.EINTR:
			continue
		default:
			return 0, e
		}
	}
}

// fdWrite writes p to a non-blocking descriptor until it is all written
// (nil), the socket is full (errAgain, with what was written) or fails.
func fdWrite(fd int, p []byte) (int, error) {
	done := 0
	for done < len(p) {
		rest := p[done:]
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(rest))), uintptr(len(rest)))
		switch e {
		case 0:
			done += int(n)
		case syscall.EINTR:
		default:
			return done, e
		}
	}
	return done, nil
}

// fdWriteWait writes all of p, waiting (poll) while the socket is full,
// until killed says stop or the deadline (unix ns, 0 for none) passes.
func fdWriteWait(fd int, p []byte, killed func() bool, deadline func() int64) (int, error) {
	return fdWriteReading(fd, p, killed, deadline, nil)
}

// fdWriteReading is fdWriteWait that, with read set, calls it whenever
// the socket is readable while it waits to write; read returning false
// ends the write (net.ErrClosed).
func fdWriteReading(fd int, p []byte, killed func() bool, deadline func() int64, read func() bool) (int, error) {
	done := 0
	for {
		n, err := fdWrite(fd, p[done:])
		done += n
		if err != errAgain {
			return done, err
		}
		if killed() {
			return done, net.ErrClosed
		}
		if dl := deadline(); dl != 0 && time.Now().UnixNano() >= dl {
			return done, os.ErrDeadlineExceeded
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		if read != nil {
			pfd[0].Events |= unix.POLLIN
		}
		unix.Poll(pfd, 100)
		if read != nil && pfd[0].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) != 0 && !read() {
			return done, net.ErrClosed
		}
	}
}

// writeReading writes all of p for a client whose socket is full and
// that is not served on while it is (no output limit applies to it),
// reading its input meanwhile, as Redis goes on reading a client whatever
// its output: a client that writes its whole pipeline before it reads a
// reply would otherwise wait for the server to read while the server
// waits for it to read. The input waits in the client's query buffer
// (bounded by client-query-buffer-limit), not as replies; c.readMore
// says some arrived.
func (c *client) writeReading(p []byte) (int, error) {
	s := c.srv
	if c.tsock != nil {
		return c.tlsWriteReading(p)
	}
	killed := func() bool { return c.sess.Killed.Load() || s.closing.Load() }
	if c.fd >= 0 {
		return fdWriteReading(c.fd, p, killed, c.wdl.Load, func() bool { return c.readAside(c.fd) })
	}
	if c.raw == nil {
		return c.outWrite(p)
	}
	var n int
	var err error
	noDeadline := func() int64 { return 0 }
	if cerr := c.raw.rc.Control(func(fd uintptr) {
		n, err = fdWriteReading(int(fd), p, killed, noDeadline, func() bool { return c.readAside(int(fd)) })
	}); cerr != nil {
		return n, cerr
	}
	return n, err
}

// readAside reads what arrived for c into its input while a write waits
// (writeReading); false: the connection ended, or the input passed
// client-query-buffer-limit (the client is closed, as Redis closes it).
func (c *client) readAside(fd int) bool {
	n, err := fdRead(fd, c.reader.ReadBuf(loopMaxRead))
	c.reader.Filled(n)
	return c.tookAside(n) && (err == nil || err == errAgain)
}

// tookAside accounts for n bytes readAside put in the input; false: the
// input passed client-query-buffer-limit (the client is closed).
func (c *client) tookAside(n int) bool {
	s := c.srv
	if n > 0 {
		s.Env.Stats.NetInputBytes.Add(int64(n))
		c.sess.LastIO.Store(s.Env.NowMs())
		c.readMore = true
		c.noteInput(c.reader.QueryBuf())
		if int64(c.reader.QueryBuf()) > s.Cfg.Int(config.ClientQueryBufferLimit) {
			s.Log.Warn(fmt.Sprintf("Closing client that reached max query buffer length: %s (qbuf initial bytes: %s)", c.info(), resp.AppendRepr(nil, c.reader.QueryHead(64))))
			c.sess.Killed.Store(true)
			return false
		}
	}
	return true
}

func fdShutdown(fd int) { unix.Shutdown(fd, unix.SHUT_RDWR) }

func fdClose(fd int) { unix.Close(fd) }
