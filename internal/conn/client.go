package conn

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/resp"
)

// client is one connection.
type client struct {
	srv  *Server
	conn net.Conn
	sess *engine.Session
	w    resp.Writer
	// reader is the input read and not yet run, parsed as far as it goes
	// (Redis's query buffer). It belongs to the client's owner (doc.go),
	// and passes with it in a handoff.
	reader resp.Reader
	// inNow is the memory the input holds (reader.Mem) after the last read,
	// and inPeak the most it held since the cron took it
	// (foldInputPeaks, for INFO's client_recent_max_input_buffer).
	inNow, inPeak atomic.Int64

	// The commands parsed from the buffer for the current batch: command
	// i's arguments are argv[ends[i-1]:ends[i]] and its bytes end at
	// offs[i] in the buffer.
	argv [][]byte
	ends []int
	offs []int

	// wown says who may write to the socket (the w* constants below): the
	// client's owner, for its staged replies, or the pushed-output
	// writer. It changes by compare-and-swap, never by a held lock.
	wown atomic.Int32
	// out is the pushed-output queue, created the first time something
	// is pushed to this client (under the server lock) or its socket
	// will not take its replies while it goes on being served (by its
	// owner: socketFull); from then on all its output goes through it, in
	// the order it was produced. Set (by compare-and-swap, once) before
	// wown leaves wDirect/wIdle for it.
	out atomic.Pointer[outQueue]
	// pushedSilenced holds what was pushed to the client while its own
	// command ran with CLIENT REPLY OFF or SKIP, for applyReplyMode.
	pushedSilenced []byte
	// softSince is the unix second at which the output was first seen
	// over its soft limit (0: it is not), Redis's
	// obuf_soft_limit_reached_time. Atomic: the owner and pushes check it.
	softSince atomic.Int64
	// checkAt is the length of w.Buf at which runLocked looks at the
	// output (outputGrew): the flush threshold, or a smaller limit.
	// outShown says Session.OutBuf shows output since written. Both
	// belong to the owner.
	checkAt  int
	outShown bool
	// blk is the wait of a blocking command in progress (blocking.go).
	blk parkState
	// pf is scratch for the keys of the commands prefetched together.
	pf [][]byte
	// raw does the connection's reads and writes with raw system calls
	// (rawio.go); nil for connections other than TCP.
	raw *rawIO
	// tsock is a TLS client's socket, whose writes never wait
	// (tlssock.go), and tconn its TLS layer; nil for other clients.
	// tlsMore says the TLS layer may hold input the loop has not taken
	// (tlsLoopRead): set by each loop read, it keeps the client kicked
	// until a read takes it all.
	tsock   *tlsSock
	tconn   *tls.Conn
	tlsMore bool

	// The event loop's side (loop_linux.go). fd is the socket's
	// descriptor for a client the loop accepted (-1 otherwise); it stays
	// open until close, also after a handoff, for the pushed-output
	// writer and kill. conn is nil while the loop serves the client.
	fd int
	// ioMu guards conn and fdOpen against kill and Close, which run on
	// other goroutines.
	ioMu   sync.Mutex
	fdOpen bool
	// inLoop is set while the loop serves the client; it, handoff and
	// kicked belong to the client's owner on the loop's side (doc.go).
	inLoop    bool
	handoff   handoffKind
	kicked    bool
	quitAfter bool
	// wrest is the part of the replies the socket did not take, written
	// by the goroutine after a handoff (wown stays wDirect until then).
	wrest []byte
	// wdl is the deadline (unix ns, 0 for none) of the pushed-output
	// writer's waits on fd.
	wdl atomic.Int64
	// deferWrite is set while the loop runs the client's commands: their
	// replies are not written at once but left in w.Buf (wpending, wown
	// at wDirect, the first wpendLen bytes), and the loop writes them all
	// after the round of events, as Redis does in beforeSleep
	// (loop_linux.go).
	deferWrite bool
	wpending   bool
	wpendLen   int
	// roundWakes, while the loop runs the client's commands, is the
	// loop's list of pushed-output writers to wake after the round
	// (out.go, wakeList).
	roundWakes *wakeList
	// roundPush is the output pushed to the client during another
	// client's batch, gathered until that batch or its loop's round
	// ends (pushround.go).
	roundPush
	// syncAt is the AOF position that must be durable before the staged
	// replies leave (appendfsync always; 0: none). The batch that staged
	// them sets it after the server lock is released; whoever writes the
	// replies (finish) waits for it, and the loop holds a client whose
	// position is not durable yet in its pending list (flushAll).
	syncAt int64
	// inPending is set while the client is in its loop's pending list.
	inPending bool
	// yield is set when a loop client's batch stops so that the loop
	// serves other clients before the rest of it (runBatch); unrun then
	// says the input holds commands still to run, and nothing more is
	// read before they have. roundOut counts the bytes of replies built
	// since the loop began serving the client (runBatch yields past
	// loopMaxReplies). inHeavy and heavySkips: the client is in the
	// loop's heavy list, passed over heavySkips rounds (serveHeavy).
	yield, unrun bool
	roundOut     int
	// deferredOut counts the bytes of replies that deferReply moved to
	// the queue (segments and the replies before them) and outputGrew
	// has not yet counted in roundOut.
	// deferFn is deferReply, made once.
	deferredOut int
	deferFn     func(*resp.Segment) bool
	inHeavy     bool
	heavySkips  int
	// readMore says input was read while a write waited (writeReading).
	readMore bool
	// prepFor is 1 + the index in the batch of the command whose work
	// was done ahead (prepare.go), 0 for none.
	prepFor int
	// unlocked is set while the owner adds output to the queue without
	// the server lock (queueRest, the busy path): a limit's log line then
	// shows only the fields it can read without it (closeForLimit).
	unlocked atomic.Bool
}

// Who may write to a client's socket (client.wown). Only the client's
// owner moves wIdle to wDirect and wDirect back (endDirect); only the
// push that creates the queue leaves wIdle or wDirect for the queue.
const (
	// wIdle: no write in flight; the owner may stage its replies.
	wIdle int32 = iota
	// wDirect: the owner's staged replies are being written, or wait for
	// the round's flush or for the goroutine a handoff starts.
	wDirect
	// wQueueWaits: a push made the queue while a direct write was in
	// flight; the owner starts the queue's writer when it ends it.
	wQueueWaits
	// wQueue: the queue's writer alone writes, for the rest of the
	// connection.
	wQueue
)

const (
	readChunk = 16 * 1024
	// maxBatch bounds how many commands run in one lock acquisition, so a
	// client pipelining a million commands does not hold off the others.
	maxBatch = 1024
	// prefetchWindow is how many pipelined commands have their keys
	// prefetched at a time: their lines stay in cache until they run.
	prefetchWindow = 16
)

// Redis's text for a connection refused by protected mode.
const deniedText = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Set up an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n"

// refusal decides whether a new connection from remote is turned away, in
// Redis's order (maxclients, then protected mode), and returns the reply
// to send before closing it, or "" to accept it.
func (s *Server) refusal(remote net.Addr, nclients int) string {
	if int64(nclients) >= s.Cfg.Int(config.MaxClients) {
		return "-" + engine.ErrMaxClients + "\r\n"
	}
	if s.Cfg.Bool(config.ProtectedMode) && s.Cfg.Str(config.RequirePass) == "" && !isLoopback(remote) {
		return deniedText
	}
	return ""
}

func (s *Server) accept(conn net.Conn) {
	if s.closing.Load() {
		conn.Close()
		return
	}
	s.clientsMu.Lock()
	if msg := s.refusal(conn.RemoteAddr(), len(s.clients)); msg != "" {
		s.clientsMu.Unlock()
		s.Env.Stats.RejectedConns.Add(1)
		conn.SetWriteDeadline(time.Now().Add(time.Second))
		conn.Write([]byte(msg))
		conn.Close()
		return
	}
	now := s.Env.Clock.NowMs()
	sess := &engine.Session{
		ID: s.nextID.Add(1), Addr: conn.RemoteAddr().String(), LAddr: conn.LocalAddr().String(),
		Proto: 2, Created: now, LastCmdAt: now, User: "default", FD: connFD(conn),
	}
	_, sess.TLS = conn.(*tls.Conn)
	sess.LastIO.Store(now)
	sess.Authed = !s.Env.AuthRequired()
	c := &client{srv: s, sess: sess, w: resp.Writer{Proto: 2}, fd: -1}
	sess.Push = c.push
	sess.PushLent = c.pushLent
	c.w.Over = c.overAppend
	c.deferFn = c.deferReply
	tc, isTCP := conn.(*net.TCPConn)
	if isTCP {
		if ka := s.Cfg.Int(config.TCPKeepalive); ka > 0 {
			tc.SetKeepAlive(true)
			tc.SetKeepAlivePeriod(time.Duration(ka) * time.Second)
		} else {
			// Go's listener turns keepalive on; tcp-keepalive 0 means off.
			tc.SetKeepAlive(false)
		}
		tc.SetNoDelay(true)
	}
	inLoop := false
	loop := s.pickLoop()
	if isTCP && loop != nil {
		if fd, err := detach(conn); err == nil {
			c.fd, c.fdOpen, sess.FD, inLoop = fd, true, fd, true
		} else {
			s.Log.Warn("io-event-loop: " + err.Error())
		}
	}
	if !inLoop {
		c.conn, c.raw = conn, newRawIO(conn)
		c.tconn, c.tsock = tlsConn(conn)
	}
	s.clients[sess.ID] = c
	s.wg.Add(1)
	s.clientsMu.Unlock()
	s.Env.Stats.TotalConnections.Add(1)
	if inLoop {
		loop.add(c)
		return
	}
	if c.tsock != nil {
		go c.serveTLS(loop)
		return
	}
	go c.serve()
}

// serveTLS is a TLS client's goroutine: the handshake runs on it, so a
// slow or stuck one holds nothing else; then an event loop, when there is
// one, takes the client as it takes a plaintext one (tlsToLoop), and
// this goroutine ends. Otherwise, or if the handshake failed, it serves
// the client (client.serve meets the failure at its first read).
func (c *client) serveTLS(loop *eventLoop) {
	if loop != nil && c.tlsHandshake() == nil && c.tlsToLoop(loop) {
		return
	}
	c.serve()
}

// isLoopback reports whether a client address is local in protected
// mode's sense: a loopback IP, or not an IP connection at all.
func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return true // unix sockets are local
	}
	return ta.IP.IsLoopback()
}

// connFD returns the connection's file descriptor (CLIENT LIST fd=), or
// -1 when it has none.
func connFD(conn net.Conn) int {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return -1
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	rc.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// close tears the client down once its owner is done with it (it runs
// on the owner, or on a goroutine the owner starts): the client leaves
// every registry, its pushed output is written out (briefly), and the
// connection is closed.
func (c *client) close() {
	s := c.srv
	s.mu.Lock()
	s.Env.Disconnected(c.sess)
	q := c.out.Load()
	s.mu.Unlock()
	if c.handoff == handoffWrite {
		// A loop client closing with replies the socket did not take
		// (QUIT's +OK, a protocol error's reply): try a little longer.
		c.wdl.Store(time.Now().Add(10 * time.Second).UnixNano())
		c.writeRest()
	}
	// No direct write is left in flight: the owner is done. A queue
	// that was waiting for one gets its writer now.
	c.endDirect()
	if q != nil {
		dl := time.Now().Add(10 * time.Second)
		c.wdl.Store(dl.UnixNano())
		if c.conn != nil {
			c.conn.SetWriteDeadline(dl)
		}
		q.close()
		<-q.done
	}
	c.ioMu.Lock()
	if c.conn != nil {
		c.conn.Close()
	} else if c.tconn != nil {
		// A TLS client the loop served: close_notify, if the socket
		// takes it now (tlsSock never waits).
		c.tconn.Close()
	}
	if c.fdOpen {
		fdClose(c.fd)
		c.fdOpen = false
	}
	c.ioMu.Unlock()
	if m := c.reader.Mem(); m >= closeRelease {
		ReleaseMemory(int64(m))
	}
	s.clientsMu.Lock()
	delete(s.clients, c.sess.ID)
	s.clientsMu.Unlock()
	// The client's buffers go with it; large ones go back to the system.
	ReleaseMemory(int64(cap(c.w.Buf) + cap(c.blk.stash)))
	c.w.Buf, c.blk.stash = nil, nil
	s.wg.Done()
}

// kill closes the connection from another goroutine: the client's owner
// (its goroutine, or the loop) notices (its read fails, or Killed is set
// before its next command) and tears down. Replies not yet written are
// lost, as in Redis.
func (c *client) kill() {
	c.sess.Killed.Store(true)
	c.ioMu.Lock()
	defer c.ioMu.Unlock()
	if c.fdOpen {
		// The loop (or the goroutine after a handoff) sees the socket
		// close; the descriptor stays its to close.
		fdShutdown(c.fd)
		return
	}
	if c.conn != nil {
		c.conn.Close()
	}
}

// wakeForClose makes the client's goroutine notice the server closing
// (the loop notices by itself).
func (c *client) wakeForClose() {
	c.ioMu.Lock()
	if c.conn != nil {
		c.conn.SetReadDeadline(time.Now())
	}
	c.ioMu.Unlock()
}

// writeRest writes what a loop client's socket did not take (a handoff
// with handoffWrite), waiting while the socket is full, and ends the
// direct write.
func (c *client) writeRest() {
	if c.handoff != handoffWrite {
		return
	}
	c.handoff = handoffNone
	if len(c.wrest) > 0 || c.tlsPending() > 0 {
		n, err := c.writeReading(c.wrest)
		c.srv.Env.Stats.NetOutputBytes.Add(int64(n))
		if err != nil {
			c.sess.Killed.Store(true)
		}
	}
	c.wrest = nil
	if c.outShown {
		c.sess.OutBuf.Store(0)
		c.outShown = false
	}
	c.endDirect()
}

// serve is the client's own goroutine (a client the loop does not serve,
// or hands off): read, parse every complete command, run them under the
// lock, write the replies; until the client leaves, a protocol error,
// QUIT, CLIENT KILL or server shutdown.
func (c *client) serve() {
	defer c.close()
	defer func() {
		// A panic outside a command handler (those are recovered in
		// Execute) costs this connection only.
		if r := recover(); r != nil {
			c.srv.Env.Stats.PanicsRecovered.Add(1)
			c.srv.Log.Error(fmt.Sprintf("panic serving client id=%d addr=%s: %v", c.sess.ID, c.sess.Addr, r), "stack", string(debug.Stack()))
		}
	}()
	s := c.srv
	// A client the event loop handed over (loop_linux.go) first finishes
	// what the loop could not.
	c.writeRest()
	c.handoff = handoffNone
	if c.blk.wait != nil && !c.waitBlocked() {
		return
	}
	if c.quitAfter {
		return
	}
	// After a handoff, what the loop read and did not run comes first.
	ready := c.reader.Buffered()
	for {
		if s.closing.Load() || c.sess.Killed.Load() {
			return
		}
		if !ready {
			n, err := c.read(c.reader.ReadBuf(0)) // blocking.go: bytes kept while parked first
			if n > 0 {
				c.reader.Filled(n)
				s.Env.Stats.NetInputBytes.Add(int64(n))
				c.sess.LastIO.Store(s.Env.NowMs())
			}
			if err != nil {
				return
			}
		}
		ready = false
		if c.consume() {
			return
		}
		if c.readMore {
			// Input arrived while a write waited (writeReading).
			c.readMore = false
			ready = true
		}
	}
}

// consume runs what the input holds after a read: the query buffer
// limit, then every complete command. It reports whether the connection
// must close.
func (c *client) consume() bool {
	s := c.srv
	in := &c.reader
	qbuf := in.QueryBuf()
	c.noteInput(qbuf)
	// Redis checks the query buffer against its limit after each read,
	// before parsing: the client is closed without a reply.
	if int64(qbuf) > s.Cfg.Int(config.ClientQueryBufferLimit) {
		s.Log.Warn(fmt.Sprintf("Closing client that reached max query buffer length: %s (qbuf initial bytes: %s)", c.info(), resp.AppendRepr(nil, in.QueryHead(64))))
		return true
	}
	quit := c.process()
	c.inputDone()
	return quit
}

// inputDone drops the input that has run. The argument slices of a
// large command go with it: kept for the next batch they would hold a
// pointer each (a million after a 1,000,000-value RPUSH) for every
// collection to mark, and keep the input they alias. When dropping the
// input frees large buffers, smaller argument slices let go of them too,
// and the memory is counted for its return to the system (inputmem.go).
func (c *client) inputDone() {
	in := &c.reader
	in.Discard()
	if cap(c.argv) > 1<<16 {
		c.argv = nil
	}
	if freed := in.TakeFreed(); freed > 0 {
		clear(c.argv[:cap(c.argv)])
		ReleaseMemory(int64(freed))
	}
	c.noteInput(in.QueryBuf())
}

// noteInput sets CLIENT LIST's qbuf and the client's input memory peak.
func (c *client) noteInput(qbuf int) {
	c.sess.QueryBuf.Store(int64(qbuf))
	m := int64(c.reader.Mem())
	c.inNow.Store(m)
	if m > c.inPeak.Load() {
		c.inPeak.Store(m)
	}
}

// info is the client's CLIENT LIST line without its newline, which
// Redis's log lines about a client show (catClientInfoString). It reads
// the session under the server lock, which the caller does not hold.
func (c *client) info() string {
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	return c.infoLocked()
}

// infoLocked is info for a caller that holds the server lock.
func (c *client) infoLocked() string {
	return strings.TrimSuffix(engine.ClientInfo(c.srv.Env, c.sess), "\n")
}

// process parses and runs every complete command in the input, writes
// the replies, and reports whether to close. The commands it does not run
// (a handoff, CLIENT PAUSE) are left in the input, which it rewinds to
// the first of them.
func (c *client) process() (quit bool) {
	s := c.srv
	in := &c.reader
	for {
		in.MaxBulk = s.Cfg.Int(config.ProtoMaxBulkLen)
		in.Authenticated = c.sess.Authed
		c.argv, c.ends, c.offs = c.argv[:0], c.ends[:0], c.offs[:0]
		var perr error
		batchStart := in.Pos()
		cut := false // the batch ends before a large command (prepare.go)
		for len(c.ends) < maxBatch {
			whole := false
			if c.largeNext() {
				if len(c.ends) > 0 || c.inLoop {
					// It starts a batch of its own, off the loop.
					cut = len(c.ends) > 0
					break
				}
				whole = c.prepareWhole()
			}
			args, err := in.Next(c.argv)
			if err != nil {
				if err != resp.ErrIncomplete {
					perr = err
				}
				break
			}
			if len(args) == len(c.argv) {
				continue // an empty request: nothing to run
			}
			c.argv = args
			c.ends = append(c.ends, len(c.argv))
			c.offs = append(c.offs, in.Pos())
			if whole {
				c.sess.BindPrepared(c.argv)
			}
		}
		if len(c.ends) == 0 {
			if perr != nil {
				c.protocolError(perr)
				return true
			}
			if c.largeAnnounced() {
				c.handoff = handoffLarge // read and run off the loop (prepare.go)
			}
			return false
		}
		ran, reparse, stop := c.runBatch()
		switch {
		case ran == len(c.ends):
		case ran > 0:
			in.Rewind(c.offs[ran-1])
			perr = nil // the rest is parsed again
		default:
			in.Rewind(batchStart)
			perr = nil
		}
		if stop {
			return true
		}
		if c.handoff != handoffNone {
			return false // the client's goroutine goes on (loop_linux.go)
		}
		if reparse {
			// Authentication or a limit changed what is acceptable: the
			// command begun after the batch is judged again.
			in.Reset()
		}
		if c.yield {
			return false // the loop's next round goes on (loop_linux.go)
		}
		if reparse || perr != nil || cut || len(c.ends) == maxBatch || ran < len(c.ends) {
			// Or the batch was full: parse on from here.
			continue
		}
		return false
	}
}

// protocolError answers a malformed request the way Redis does (unless
// replies are off) and makes the connection close.
func (c *client) protocolError(err error) {
	s := c.srv
	s.Log.Log(context.Background(), LevelVerbose, fmt.Sprintf("Protocol error (%v) from client: id=%d addr=%s", err, c.sess.ID, c.sess.Addr))
	msg := "ERR " + err.Error()
	s.mu.Lock()
	s.Env.CountError(msg)
	c.flushPendNow()
	if c.sess.Reply != engine.ReplyOff && c.sess.Reply != engine.ReplySkipNext {
		c.w.Error(msg)
	}
	direct := c.stage()
	s.mu.Unlock()
	c.finish(direct)
}

// runBatch runs the parsed commands in order. It returns how many ran,
// whether the rest must be parsed again (authentication or the bulk limit
// changed), and whether the connection must close (QUIT, killed...).
// CLIENT PAUSE holds the client between commands, outside the lock.
func (c *client) runBatch() (ran int, reparse, stop bool) {
	for ran < len(c.ends) {
		if c.srv.Env.ScriptRunning() {
			// A script holds the lock: BUSY and SCRIPT KILL are answered
			// without it (busy.go).
			if answered, quit := c.busyCommand(ran); answered {
				ran++
				if quit {
					return ran, false, true
				}
				if c.handoff != handoffNone {
					return ran, false, false
				}
				continue
			}
		}
		if c.wantsPrepare(ran) {
			if c.inLoop {
				c.handoff = handoffLarge // prepared and run off the loop (prepare.go)
				return ran, false, false
			}
			c.prepare(ran)
		}
		var paused bool
		ran, reparse, stop, paused = c.runLocked(ran)
		if c.blk.wait != nil {
			// A blocking command parked the client (blocking.go): the rest
			// of the batch runs once its wait is over.
			if c.inLoop {
				if c.handoff == handoffNone {
					c.handoff = handoffParked
				}
				return ran, false, stop
			}
			if !c.waitBlocked() {
				return ran, false, true
			}
			continue
		}
		if reparse || stop || c.handoff != handoffNone {
			return ran, reparse, stop
		}
		if !paused {
			if ran == len(c.ends) {
				return ran, false, false
			}
			if c.inLoop && (c.queued() || c.roundOut >= loopMaxReplies) {
				// Its replies wait in its queue for a socket that is
				// slow to take them, or it has had its share of the
				// round: the loop serves the others before it goes on
				// (eventLoop.serve kicks it).
				c.yield = true
				return ran, false, false
			}
			continue // stopped to write the replies built so far (outputGrew)
		}
		if c.inLoop {
			c.handoff = handoffPaused
			return ran, false, false
		}
		if !c.waitPause(ran) {
			return ran, false, true
		}
	}
	return ran, false, false
}

// runLocked runs commands from i on under the server lock until the batch
// ends or something interrupts it, then releases the lock and writes the
// replies (also when a panic unwinds through here).
func (c *client) runLocked(i int) (ran int, reparse, stop, paused bool) {
	s := c.srv
	s.mu.Lock()
	s.Env.BatchBegin()
	defer func() {
		s.Env.BatchEnd()
		if !c.deferWrite && s.Env.BroadcastDue() {
			// A client on its own goroutine: its batch is its round.
			s.Env.BroadcastTracking()
		}
		s.current = nil
		c.dropPrepared()
		s.flushBatchPushes(c) // what the batch pushed to others, before releasePushes
		c.w.Limit, c.w.Dropped = 0, false
		aofOff := s.Env.Persistence().Flush(c.out.Load() != nil) // the batch's AOF bytes (the effect stream on disk)
		if len(s.heldQs) > 0 {
			s.releasePushes(aofOff, c.roundWakes) // what the batch pushed to others follows its writes to disk
		}
		direct := c.stage()
		s.mu.Unlock()
		c.mustSync(aofOff) // appendfsync always: on disk before the replies (finish)
		c.finish(direct)
	}()
	s.current = c
	c.flushPendNow() // what others pushed to it this round comes before its replies
	c.w.Proto = c.sess.Proto
	lims := s.outputLimits()
	c.checkAt = c.outputCheckAt(lims)
	c.w.Limit = c.appendLimit(lims)
	c.w.Deferrer, c.w.DeferFrom = nil, 0
	if w := c.wown.Load(); w == wQueue {
		// Its output goes to its queue from now on (wQueue is final):
		// large replies may join it unencoded.
		c.w.Deferrer = c.deferFn
	} else if w == wIdle && c.inLoop && c.limitedBy(lims) {
		// It may move there with a large reply (deferReply); a shorter
		// range is encoded inline without a snapshot, as before.
		c.w.Deferrer, c.w.DeferFrom = c.deferFn, deferFirstElems
	}
	authed, maxBulk := c.sess.Authed, c.reader.MaxBulk
	first := i
	start := 0
	if i > 0 {
		start = c.ends[i-1]
	}
	pfEnd := i
	for ; i < len(c.ends); i++ {
		if c.sess.Killed.Load() || s.closing.Load() {
			return i, false, true, false
		}
		if i == pfEnd && len(c.ends)-i > 1 {
			// The keys of the next few commands are looked up together
			// (command/prefetch.go).
			pfEnd = min(i+prefetchWindow, len(c.ends))
			c.pf = s.Env.PrefetchBatch(c.sess, c.argv, start, c.ends[i:pfEnd], c.pf)
		}
		args := c.argv[start:c.ends[i]]
		if i > first && c.wantsPrepare(i) {
			return i, false, false, false // prepared first, without the lock (runBatch)
		}
		if s.pausedFor(c.sess, args) {
			return i, false, false, true
		}
		mark := len(c.w.Buf)
		s.Env.Execute(c.sess, args, &c.w)
		if c.w.Dropped {
			// The reply put the client over its limit as it was built.
			c.dropForLimit()
			return i + 1, false, true, false
		}
		if c.sess.Blocked && c.park() {
			return i + 1, false, false, false // the reply comes when the wait ends
		}
		c.applyReplyMode(mark)
		start = c.ends[i]
		if (len(c.w.Buf) >= c.checkAt || c.deferredOut > 0) && c.outputGrew() {
			// Over a limit (closed), or enough to write before going on.
			return i + 1, false, c.sess.Killed.Load(), false
		}
		if c.sess.CloseAfterReply {
			c.dropUnsent()
			return i + 1, false, true, false
		}
		if c.sess.Authed != authed || s.Cfg.Int(config.ProtoMaxBulkLen) != maxBulk {
			return i + 1, true, false, false
		}
	}
	return i, false, false, false
}

// applyReplyMode drops the reply just written when CLIENT REPLY says so,
// keeping what the command pushed meanwhile (pub/sub confirmations and
// messages, invalidations).
func (c *client) applyReplyMode(mark int) {
	switch c.sess.Reply {
	case engine.ReplyOff:
		c.w.Buf = c.w.Buf[:mark]
	case engine.ReplySkip:
		// The CLIENT REPLY SKIP command itself is answered with nothing;
		// the next command's reply is dropped.
		c.w.Buf = c.w.Buf[:mark]
		c.sess.Reply = engine.ReplySkipNext
	case engine.ReplySkipNext:
		c.w.Buf = c.w.Buf[:mark]
		c.sess.Reply = engine.ReplyOn
	}
	if len(c.pushedSilenced) > 0 {
		c.w.Buf = append(c.w.Buf, c.pushedSilenced...)
		c.pushedSilenced = c.pushedSilenced[:0]
	}
}

// stage is called once replies are in c.w, with the server lock held
// (or, on the busy path, without it: see flushUnlocked). With a
// pushed-output queue the replies join it now, so that whatever is pushed
// later comes after them; otherwise the client claims the socket
// (wIdle to wDirect) before the lock is released, for the same reason: a
// push that then creates the queue leaves its writer to start when this
// write ends. finish writes the staged replies; it reports whether there
// is a write for finish to make.
func (c *client) stage() (direct bool) {
	if len(c.w.Buf) == 0 {
		return false
	}
	if c.wpending {
		c.joinPending()
		// Too much to leave for the round's end: finish writes it now.
		return len(c.w.Buf) >= replyFlushAt
	}
	if c.wown.CompareAndSwap(wIdle, wDirect) {
		return true
	}
	q := c.out.Load() // wown is wQueue: out is set
	if cap(c.w.Buf) > keepReplyBuf {
		q.addOwned(c, c.w.Buf)
		c.w.Buf = nil
		return false
	}
	if n := len(c.w.Buf); n > bigChunk {
		// Queued as it is, not copied (a copy of a large reply cost as
		// much as building it), and the next replies built in a buffer
		// a queue gave back (chunkpool.go).
		q.addOwned(c, c.w.Buf)
		c.w.Buf = getReplyBuf(n)
		return false
	}
	// Copied, and the buffer kept for the next replies: a client whose
	// replies queue up (it does not read) would otherwise grow a fresh
	// buffer for every large reply, and the allocations would make the
	// collector run every few replies.
	q.add(c, c.w.Buf)
	c.w.Reset()
	return false
}

// finish writes the staged replies (after the server lock is released).
// On a loop they wait for the round's end (deferWrite) unless they passed
// replyFlushAt.
func (c *client) finish(direct bool) {
	if !direct {
		return
	}
	if c.deferWrite && len(c.w.Buf) < replyFlushAt {
		c.wpending, c.wpendLen = true, len(c.w.Buf)
		return
	}
	c.wpending = false
	s := c.srv
	if c.syncAt != 0 {
		s.Env.Persistence().Wait(c.syncAt)
		c.syncAt = 0
	}
	// The time is taken before writing: once the bytes are out the client
	// may act (and a test move the clock) before this goroutine goes on.
	now := s.Env.NowMs()
	n, err := c.connWrite(c.w.Buf)
	if err == errAgain {
		var m int
		m, err = c.socketFull(c.w.Buf[n:])
		n += m
	} else {
		c.endDirect()
		if c.outShown {
			c.sess.OutBuf.Store(0)
			c.outShown = false
		}
	}
	s.Env.Stats.NetOutputBytes.Add(int64(n))
	if n > 0 {
		c.sess.LastIO.Store(now)
	}
	c.resetOut()
	if err != nil {
		c.sess.Killed.Store(true)
	}
}

// mustSync records that the staged replies wait for the AOF position off
// (Persistence.Flush's answer) to be durable.
func (c *client) mustSync(off int64) { c.syncAt = max(c.syncAt, off) }

// socketFull handles the replies rest that the socket did not take, and
// returns how much of them it wrote. A client with an output limit goes
// on being served, as in Redis: rest goes to the head of its
// pushed-output queue, whose writer (started now) writes it and all that
// follows. Any other client waits until the socket takes it: a loop
// client's goroutine writes it (handoffWrite, loop_linux.go), which ends
// the direct write; a client goroutine writes it now.
func (c *client) socketFull(rest []byte) (int, error) {
	if c.keepServing() {
		c.queueRest(rest)
		return 0, nil
	}
	if c.inLoop {
		c.wrest = append([]byte(nil), rest...)
		c.handoff = handoffWrite
		c.setOutBuf(int64(len(rest)))
		c.outShown = true
		return 0, nil
	}
	c.setOutBuf(int64(len(rest)))
	c.outShown = true
	n, err := c.writeReading(rest) // only raw and TLS writes report errAgain
	c.endDirect()
	if c.outShown {
		c.sess.OutBuf.Store(0)
		c.outShown = false
	}
	return n, err
}

// queueRest moves the client to its pushed-output queue (made now if no
// push made it) with rest first: bytes pushed since the replies were
// staged were produced after them. The owner's direct write ends there,
// in wQueue, and the queue's writer starts.
func (c *client) queueRest(rest []byte) {
	q := c.queue()
	c.unlocked.Store(true)
	q.prepend(c, rest)
	c.unlocked.Store(false)
	for {
		if c.wown.CompareAndSwap(wDirect, wQueue) || c.wown.CompareAndSwap(wQueueWaits, wQueue) {
			go c.writeLoop(q)
			return
		}
	}
}

// queue returns the client's pushed-output queue, making it if it has
// none; whoever makes it counts its writer in the server's wait group.
func (c *client) queue() *outQueue {
	if q := c.out.Load(); q != nil {
		return q
	}
	q := newOutQueue(c)
	if !c.out.CompareAndSwap(nil, q) {
		return c.out.Load()
	}
	c.srv.wg.Add(1) // done by writeLoop
	return q
}

// endDirect ends the owner's direct write: the socket is free again, or,
// when a push made the queue meanwhile, it passes to the queue's writer,
// started here so that it writes only after these bytes. It does nothing
// when no direct write is in flight.
func (c *client) endDirect() {
	if c.wown.CompareAndSwap(wDirect, wIdle) {
		return
	}
	if c.wown.CompareAndSwap(wQueueWaits, wQueue) {
		go c.writeLoop(c.out.Load())
	}
}

// queued reports whether the client has a pushed-output queue (safe
// without the server lock).
func (c *client) queued() bool { return c.wown.Load() >= wQueueWaits }

// joinPending places the replies after a deferred write's bytes: in the
// pushed-output queue when the client has one (its writer starts when the
// deferred write ends), else in the deferred write.
func (c *client) joinPending() {
	if c.queued() {
		c.out.Load().add(c, c.w.Buf[c.wpendLen:])
		c.w.Buf = c.w.Buf[:c.wpendLen]
		return
	}
	c.wpendLen = len(c.w.Buf)
}

// dropUnsent discards the replies not yet written when the session asks
// to close without them (engine.Session.DropReplies); a deferred write
// then ends with nothing to write.
func (c *client) dropUnsent() {
	if c.sess.DropReplies {
		c.w.Buf, c.wpendLen = c.w.Buf[:0], 0
	}
}

// deferReply is the reply writer's Deferrer: a large reply (an LRANGE's,
// resp.Segment) of a client whose output goes to its queue joins the
// queue as a segment, after the replies built before it, and is encoded
// by the queue's writer as the socket takes it. A client that does not
// read its replies so costs the event loop neither their encoding nor
// their buffers; the queue counts the segment's full size at once, so
// the output buffer limits see it whole. A loop client with an output
// limit moves to its queue for a reply of deferFirstAt or more. It
// declines (the reply is built as usual) for output that does not go
// to the queue, for replies CLIENT REPLY drops, for small ones and
// while the AOF holds effects a reply must not overtake. A
// reply whose size puts the client over its limits is taken and dropped,
// and the client closed, as if it had been built up to its limit. Under
// the server lock, by the owner, inside a command.
func (c *client) deferReply(seg *resp.Segment) bool {
	if seg.Size() < chunkBytes || c.wpending || c.sess.Reply != engine.ReplyOn {
		return false
	}
	toQueue := false
	switch c.wown.Load() {
	case wQueue:
	case wIdle:
		// A loop client with an output limit whose reply is large moves
		// to its queue now, before its first large reply is built on the
		// loop: until its socket stopped taking its replies, a client
		// that pipelines large replies and does not read (the kernel
		// takes a few MB of them) had each built on the loop, 1 MB at a
		// time, while the others waited (docs/benchmarks.md). Only at a
		// batch's first reply.
		if seg.Size() < deferFirstAt || len(c.w.Buf) != 0 {
			return false
		}
		toQueue = true
	default:
		return false
	}
	if n := int64(len(c.w.Buf)) + seg.Size(); c.w.Limit != 0 && n > int64(c.w.Limit) && c.overLimit(n+c.unsent()) {
		// Its size puts the client over its limits: closed now, as when
		// the reply passes them as it is built (resp.Writer.Limit), but
		// without building the part below the limit first, which cost
		// the loop up to a limit's worth of encoding and a fresh 1 MB
		// buffer for every client closed. The output shown (omem, the
		// recent peak, the log line) is where building it would have
		// closed it: the limit passed.
		unread := c.passedAt(int64(len(c.w.Buf)) + c.unsent())
		c.setOutBuf(unread)
		c.closeForLimit(unread)
		c.w.Dropped = true // runLocked drops what is left
		return true
	}
	if c.srv.Env.Persistence().Flush(false) != 0 {
		// The AOF holds effects not yet where a reply may follow them
		// (written; under appendfsync always, synced). The queue's writer
		// would send this reply, and the batch's replies before it, at
		// once; built as usual, they leave after runLocked's Flush.
		return false
	}
	if toQueue {
		q := c.queue()
		c.wown.Store(wQueue) // wIdle under the server lock: no push can move it meanwhile
		go c.writeLoop(q)
	}
	q := c.out.Load()
	moved := len(c.w.Buf) + int(min(seg.Size(), 1<<40))
	if len(c.w.Buf) > 0 {
		q.add(c, c.w.Buf)
		c.w.Reset()
	}
	c.deferredOut += moved
	q.addSeg(c, seg)
	c.srv.deferred.Add(1)
	if c.w.Limit != 0 {
		// Limit is measured on Buf against what was queued when the
		// batch began: the queue now holds moved bytes more.
		c.w.Limit = max(c.w.Limit-moved, 1)
	}
	return true
}

// deferFirstAt is the size from which a large reply moves a loop client
// with an output limit to its queue (deferReply).
const deferFirstAt = bigChunk

// deferFirstElems is the least number of elements of a reply offered to
// a loop client's Deferrer before it is queued: a range of fewer is
// unlikely to reach deferFirstAt, and offering it would cost a snapshot
// and the generic encoding for a reply built anyway.
const deferFirstElems = 2048

// keepReplyBuf is the largest reply buffer a queued client keeps between
// batches (stage).
const keepReplyBuf = 4 << 20

func (c *client) resetOut() {
	if cap(c.w.Buf) > 1<<20 {
		c.w.Buf = nil
	} else {
		c.w.Reset()
	}
}

// push is the session's Push: bytes for the client outside its replies.
// It runs with the server lock held. When the client is the one running
// commands right now, the bytes join its replies in order.
func (c *client) push(b []byte) {
	s := c.srv
	if s.current == c {
		if c.sess.Reply != engine.ReplyOn {
			// CLIENT REPLY OFF or SKIP drops the running command's
			// reply, not what it pushes (Redis's CLIENT_PUSHING):
			// applyReplyMode puts it back after the drop.
			c.pushedSilenced = append(c.pushedSilenced, b...)
			return
		}
		c.w.Buf = append(c.w.Buf, b...)
		return
	}
	if s.pushGathers(c) {
		c.gather(b)
		return
	}
	c.flushPendNow()
	q, wl := c.pushQueue()
	hold := s.holdPushes()
	q.addWaking(c, b, wl, hold)
	if hold {
		s.held(q)
	}
}

// pushLent is the session's PushLent: push for a buffer the caller lends
// until release is called, queued as it is instead of copied (a full
// sync's encoded snapshot, whose buffers go round from the encoder to
// the socket and back).
func (c *client) pushLent(b []byte, release func()) {
	s := c.srv
	if s.current == c || len(b) == 0 {
		c.push(b)
		release()
		return
	}
	c.flushPendNow()
	q, wl := c.pushQueue()
	hold := s.holdPushes()
	q.addLent(c, b, wl, hold, release)
	if hold {
		s.held(q)
	}
}

// pushQueue returns the client's pushed-output queue, made and its
// writer started if need be, and the wake list of the batch running now.
// Under the server lock.
func (c *client) pushQueue() (*outQueue, *wakeList) {
	s := c.srv
	var wl *wakeList
	if s.current != nil {
		wl = s.current.roundWakes
	}
	q := c.out.Load()
	if q == nil {
		q = c.queue()
		// The queue's writer starts now if the socket is free, else when
		// the owner's direct write ends (endDirect), unless the owner has
		// moved to the queue itself (queueRest). The owner may end its
		// write between the tries, hence the loop.
		for c.wown.Load() < wQueueWaits {
			if c.wown.CompareAndSwap(wIdle, wQueue) {
				go c.writeLoop(q)
				break
			}
			if c.wown.CompareAndSwap(wDirect, wQueueWaits) {
				break
			}
		}
	}
	return q, wl
}

// pausedFor reports whether CLIENT PAUSE holds the command args back:
// every command under PAUSE ALL, commands that may write under PAUSE
// WRITE. Commands that are refused anyway (unknown, wrong arity, NOAUTH)
// are answered at once, as in Redis.
func (s *Server) pausedFor(sess *engine.Session, args [][]byte) bool {
	st := s.pause.Load()
	if st == 0 {
		return false
	}
	if s.Env.Clock.NowMs() >= st>>1 {
		s.pause.CompareAndSwap(st, 0)
		return false
	}
	cmd := s.Env.Cmd(args)
	if cmd == nil || !cmd.ArityOK(len(args)) {
		return false
	}
	if !sess.Authed && cmd.Flags&engine.FlagNoAuth == 0 && s.Cfg.Str(config.RequirePass) != "" {
		return false
	}
	if st&1 == 0 {
		return true // ALL
	}
	// EXEC counts as a write when it would run one, a script by the
	// flags it declares (Redis 7.0's getCommandFlags).
	return s.Env.CommandFlags(sess, cmd, args)&(engine.FlagWrite|engine.FlagMayReplicate) != 0
}

// waitPause holds the client (its replies already written) until command
// i is no longer paused. It reports false when the client must close.
func (c *client) waitPause(i int) bool {
	s := c.srv
	start := 0
	if i > 0 {
		start = c.ends[i-1]
	}
	args := c.argv[start:c.ends[i]]
	s.mu.Lock()
	c.sess.Blocked = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		c.sess.Blocked = false
		s.mu.Unlock()
	}()
	for {
		if s.closing.Load() || c.sess.Killed.Load() {
			return false
		}
		s.mu.Lock()
		paused := s.pausedFor(c.sess, args)
		s.mu.Unlock()
		if !paused {
			return true
		}
		d := 10 * time.Millisecond
		if until := s.pause.Load() >> 1; until > 0 {
			if left := time.Duration(until-s.Env.Clock.NowMs()) * time.Millisecond; left > 0 && left < d {
				d = left
			}
		}
		select {
		case <-s.done:
			return false
		case <-time.After(d):
		}
	}
}
