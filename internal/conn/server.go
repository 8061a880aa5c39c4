package conn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// Server is one Abacus server.
type Server struct {
	Env *engine.Env
	Cfg *config.Config
	Log *slog.Logger

	mu sync.Mutex // the keyspace lock: held while commands run
	// current is the client whose commands run now (under mu), so that
	// output pushed to it joins its replies in order.
	current *client
	// pushPend are the clients with output gathered during the batch
	// running now, or the event loop's round (under mu; pushround.go);
	// gathered says it is not empty, for the loops' look without mu.
	pushPend []*client
	gathered atomic.Bool
	// heldQs are the pushed-output queues holding bytes back until the
	// AOF position of the writes behind them is known (under mu; see
	// holdPushes).
	heldQs []*outQueue
	// heldCount is len(heldQs), for the cron's look without the lock.
	heldCount atomic.Int64

	lnMu      sync.Mutex
	listeners []net.Listener
	port      int

	clientsMu sync.Mutex
	clients   map[int64]*client
	nextID    atomic.Int64
	wg        sync.WaitGroup

	closing   atomic.Bool
	done      chan struct{}
	closeOnce sync.Once
	// ShutdownRequested receives when a client asks for SHUTDOWN; main
	// exits on it. Buffered, so SHUTDOWN never blocks.
	ShutdownRequested chan struct{}

	// loops serve the TCP clients (loop_linux.go), io-threads of them,
	// new clients going to each in turn; none when io-event-loop is off.
	loops    []*eventLoop
	nextLoop atomic.Uint32

	// pause is the pause in force: the end (unix ms) times two, plus one
	// when only writes are paused; 0 when nothing is paused. It combines
	// pauses, one per purpose (the same encoding), under pauseMu.
	pause   atomic.Int64
	pauseMu sync.Mutex
	pauses  [engine.PausePurposes]int64

	// obl is client-output-buffer-limit parsed (outlimit.go); inPeak and outPeak
	// are the largest input and unread output a client had in each of
	// the last seconds (inputmem.go, outlimit.go).
	tls             tlsState // tls.go
	obl             atomic.Pointer[outLimits]
	inPeak, outPeak peakWindow
	// deferred counts the replies queued as segments (client.deferReply).
	deferred atomic.Int64
	peakSec  atomic.Int64 // unix second of the cron's last tick (peakSecond)
}

// Options are what a Server needs besides its configuration.
type Options struct {
	Clock  clock.Clock  // nil: the wall clock
	Logger *slog.Logger // nil: Redis-style lines on stderr
}

// New builds a server from a configuration.
func New(cfg *config.Config, opt Options) *Server {
	if opt.Clock == nil {
		opt.Clock = clock.Real{}
	}
	if opt.Logger == nil {
		opt.Logger = NewLogger(os.Stderr, cfg)
	}
	ks := keyspace.New(int(cfg.Int(config.Databases)))
	s := &Server{
		Cfg: cfg, Log: opt.Logger,
		clients:           map[int64]*client{},
		done:              make(chan struct{}),
		ShutdownRequested: make(chan struct{}, 1),
	}
	s.Env = engine.NewEnv(ks, cfg, opt.Clock, opt.Logger)
	s.Env.Host = s
	prev := cfg.OnChange
	cfg.OnChange = func(id config.ID) {
		if prev != nil {
			prev(id)
		}
		s.reloadTLS(id)
	}
	prevVerify := cfg.Verify
	cfg.Verify = func(id config.ID) error {
		if prevVerify != nil {
			if err := prevVerify(id); err != nil {
				return err
			}
		}
		return s.verifyTLS(id)
	}
	for i := int64(0); i < cfg.Int(config.IOThreads); i++ {
		if l := newEventLoop(s); l != nil {
			s.loops = append(s.loops, l)
		}
	}
	if len(s.loops) > 0 {
		s.Env.ScriptStarted = s.scriptStarted
	}
	go s.cron()
	return s
}

// Lock takes the server lock (tests and maintenance use it to look at the
// keyspace consistently).
func (s *Server) Lock() { s.mu.Lock() }

// Unlock releases the server lock.
func (s *Server) Unlock() {
	s.releaseHeld() // output pushed by what ran under it (replication, tests)
	s.mu.Unlock()
}

// ListenAndServe binds the configured addresses and serves until Close.
func (s *Server) ListenAndServe() error {
	lns, err := s.Listen()
	if err != nil {
		return err
	}
	return s.Serve(lns...)
}

// Listen binds the configured TCP addresses (bind, port) without serving
// them yet: main binds before it loads the dataset, so that a port in use
// fails the start at once, as Redis's initServer does, and connections
// wait in the backlog while the data loads.
func (s *Server) Listen() ([]net.Listener, error) {
	port := int(s.Cfg.Int(config.Port))
	var lns []net.Listener
	for _, addr := range strings.Fields(s.Cfg.Str(config.Bind)) {
		optional := strings.HasPrefix(addr, "-")
		addr = strings.TrimPrefix(addr, "-")
		if addr == "*" {
			addr = "0.0.0.0"
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
		if err != nil {
			if optional {
				s.Log.Warn(fmt.Sprintf("Could not bind optional address %s: %v", addr, err))
				continue
			}
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("could not create server TCP listening socket %s:%d: %w", addr, port, err)
		}
		if port == 0 {
			port = ln.Addr().(*net.TCPAddr).Port
		}
		lns = append(lns, ln)
	}
	if len(lns) == 0 {
		return nil, errors.New("no address to listen on")
	}
	tlns, err := s.ListenTLS()
	if err != nil {
		for _, l := range lns {
			l.Close()
		}
		return nil, err
	}
	return append(lns, tlns...), nil
}

// Serve accepts connections on the listeners until Close.
func (s *Server) Serve(lns ...net.Listener) error {
	s.lnMu.Lock()
	s.listeners = append(s.listeners, lns...)
	if s.port == 0 && len(lns) > 0 {
		if a, ok := lns[0].Addr().(*net.TCPAddr); ok {
			s.port = a.Port
		}
	}
	s.lnMu.Unlock()
	s.Log.Info("Ready to accept connections tcp")
	var wg sync.WaitGroup
	for _, ln := range lns {
		wg.Add(1)
		go func(ln net.Listener) {
			defer wg.Done()
			s.acceptLoop(ln)
		}(ln)
	}
	wg.Wait()
	return nil
}

func (s *Server) acceptLoop(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			if s.closing.Load() {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.Log.Warn("Accepting client connection: " + err.Error())
			time.Sleep(5 * time.Millisecond)
			continue
		}
		s.accept(conn)
	}
}

// pickLoop returns the event loop for a new client, nil when there is
// none.
func (s *Server) pickLoop() *eventLoop {
	if len(s.loops) == 0 {
		return nil
	}
	return s.loops[int(s.nextLoop.Add(1))%len(s.loops)]
}

// Addr returns the first listener's address.
func (s *Server) Addr() string {
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	if len(s.listeners) == 0 {
		return ""
	}
	return s.listeners[0].Addr().String()
}

// Port is the TCP port the server listens on.
func (s *Server) Port() int {
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	return s.port
}

// Close stops accepting, lets every batch in flight finish and write its
// replies, then closes all connections and waits for their goroutines.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.closing.Store(true)
		close(s.done)
		// A script holding the lock would keep the server up forever.
		s.Env.StopScripts()
		s.lnMu.Lock()
		for _, ln := range s.listeners {
			ln.Close()
		}
		s.lnMu.Unlock()
		// Wake readers; a goroutine running a batch finishes it first.
		s.clientsMu.Lock()
		for _, c := range s.clients {
			c.wakeForClose()
		}
		s.clientsMu.Unlock()
		for _, l := range s.loops {
			l.wake()
		}
		waited := make(chan struct{})
		go func() { s.wg.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(5 * time.Second):
			s.clientsMu.Lock()
			for _, c := range s.clients {
				c.kill()
			}
			s.clientsMu.Unlock()
			<-waited
		}
	})
}

// Done is closed when the server starts closing.
func (s *Server) Done() <-chan struct{} { return s.done }

// Clients implements engine.Host.
func (s *Server) Clients() []*engine.Session {
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	out := make([]*engine.Session, 0, len(s.clients))
	for _, c := range s.clients {
		// A killed client is gone for CLIENT LIST, CLIENT KILL and INFO,
		// as Redis frees it at once, even while its goroutine or the
		// event loop has yet to notice the closed socket.
		if !c.sess.Killed.Load() {
			out = append(out, c.sess)
		}
	}
	return out
}

// Kill implements engine.Host: the client's connection is closed now and
// none of its pending commands runs (CLIENT KILL of another client; a
// client killing itself uses CloseAfterReply instead).
func (s *Server) Kill(sess *engine.Session) {
	s.clientsMu.Lock()
	c := s.clients[sess.ID]
	s.clientsMu.Unlock()
	if c != nil {
		c.kill()
	} else {
		sess.Killed.Store(true)
	}
}

// NumClients is the number of connected clients.
func (s *Server) NumClients() int {
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	return len(s.clients)
}

// Shutdown implements engine.Host: it saves the RDB file when asked or
// when save points are configured (engine.Persistence.ShutdownSave), and refuses
// to stop when that save fails.
func (s *Server) Shutdown(save, nosave, now, force bool) error {
	s.Log.Warn("User requested shutdown...")
	if err := s.Env.Persistence().ShutdownSave(save, nosave, force); err != nil {
		return err
	}
	select {
	case s.ShutdownRequested <- struct{}{}:
	default:
	}
	return nil
}

// Pause implements engine.Host. A purpose's pause in force is extended,
// never shortened, and a WRITE pause never weakens an ALL pause, as in
// Redis.
func (s *Server) Pause(purpose engine.PausePurpose, until int64, writeOnly bool) {
	s.pauseMu.Lock()
	defer s.pauseMu.Unlock()
	now := s.Env.Clock.NowMs()
	if cur := s.pauses[purpose]; cur != 0 && cur>>1 > now {
		if cur>>1 > until {
			until = cur >> 1
		}
		if cur&1 == 0 {
			writeOnly = false
		}
	}
	st := until << 1
	if writeOnly {
		st |= 1
	}
	s.pauses[purpose] = st
	s.pause.Store(s.combinedPause(now))
}

// Unpause implements engine.Host: it lifts one purpose's pause.
func (s *Server) Unpause(purpose engine.PausePurpose) {
	s.pauseMu.Lock()
	defer s.pauseMu.Unlock()
	s.pauses[purpose] = 0
	s.pause.Store(s.combinedPause(s.Env.Clock.NowMs()))
}

// combinedPause is the pause in force over every purpose's: the latest
// end, and ALL when any purpose pauses all. Called with pauseMu held.
func (s *Server) combinedPause(now int64) int64 {
	var until int64
	writeOnly := true
	for _, st := range s.pauses {
		if st == 0 || st>>1 <= now {
			continue
		}
		until = max(until, st>>1)
		if st&1 == 0 {
			writeOnly = false
		}
	}
	if until == 0 {
		return 0
	}
	st := until << 1
	if writeOnly {
		st |= 1
	}
	return st
}

// Paused reports whether a pause is in force (the engine keeps expired
// keys while one is).
func (s *Server) Paused() bool { return s.paused() }

// paused reports whether a CLIENT PAUSE is in force; key expiry waits
// while one is (Redis pauses expiry for both WRITE and ALL).
func (s *Server) paused() bool {
	st := s.pause.Load()
	return st != 0 && st>>1 > s.Env.Clock.NowMs()
}

// cron runs the periodic work (active expiry) hz times a second.
func (s *Server) cron() {
	for {
		hz := s.Cfg.Int(config.Hz)
		if hz < 1 {
			hz = 1
		}
		if hz > 500 {
			hz = 500
		}
		period := time.Second / time.Duration(hz)
		select {
		case <-s.done:
			return
		case <-time.After(period):
		}
		if s.Env.CronPaused() {
			continue // DEBUG PAUSE-CRON
		}
		s.Env.Cron() // INFO's instantaneous metrics and memory peak
		s.peakSec.Store(s.Env.Clock.NowMs() / 1000)
		s.foldInputPeaks()
		s.clientsCron()
		s.mu.Lock()
		s.Env.TrackingLimit()
		s.mu.Unlock()
		if !s.paused() {
			s.activeExpire(period / 4)
		}
		if s.Env.BroadcastDue() || s.heldCount.Load() > 0 {
			// Keys the cron expired, or changed outside any round, and
			// output pushed outside any batch.
			s.mu.Lock()
			s.Env.BroadcastTracking()
			s.releaseHeld()
			s.mu.Unlock()
		}
	}
}

// clientsCron closes clients idle for longer than the timeout parameter
// (seconds), except those Redis spares: blocked clients (CLIENT PAUSE
// included), monitors and subscribers.
func (s *Server) clientsCron() {
	t := s.Cfg.Int(config.Timeout)
	if t <= 0 {
		return
	}
	nowS := s.Env.Clock.NowMs() / 1000
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	for _, c := range s.clients {
		if c.sess.Blocked || c.sess.Monitor || c.sess.Subscribed() {
			continue
		}
		if nowS-c.sess.LastIO.Load()/1000 > t {
			s.Log.Log(context.Background(), LevelVerbose, "Closing idle client")
			c.kill()
		}
	}
}

// activeExpire reclaims expired keys for at most budget of CPU time, in
// small steps so that clients are never held off for long.
func (s *Server) activeExpire(budget time.Duration) {
	start := time.Now()
	for time.Since(start) < budget {
		s.mu.Lock()
		if !s.Env.ActiveExpireEnabled() {
			s.mu.Unlock()
			return
		}
		s.Env.KS.Now = s.Env.Clock.NowMs()
		n := s.Env.KS.ExpireCycle(200)
		s.releaseHeld() // expired events, after the DELs they follow
		s.mu.Unlock()
		if n == 0 {
			return
		}
	}
}
