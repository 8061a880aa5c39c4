package conn

import (
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// tlsSock is the TCP socket under a TLS client's tls.Conn. Once the
// handshake is done its writes never wait: what the socket does not take
// of the ciphertext is kept (pend) and written by flush. So the
// tls.Conn's writes never block either, and neither does anything that
// writes through it (a reply, CLIENT KILL's close_notify alert under the
// server lock), while a client that does not read is served on and
// closed at its output limit as a plaintext one is (client.tlsWrite):
// crypto/tls cannot stop a record half written and go on later, as a
// non-blocking write must, and a write timeout breaks its connection for
// good.
//
// After the handshake, on its goroutine, a client that an event loop
// takes (client.tlsToLoop) has its descriptor taken out of Go's poller,
// as a plaintext loop client's is: from then on the ciphertext is
// written to that descriptor (fd) with raw system calls, and while the
// loop serves the client (onLoop) reads are the loop's: non-blocking,
// a bounded number per event (readLeft), and a read that would block
// returns errWouldBlock, which crypto/tls treats as a timeout: it keeps
// the part of a record it has and goes on with the next Read. After a
// handoff to a goroutine, reads go through a net.Conn made from a
// duplicate of fd (nc), whose waits are Go's poller's.
//
// One flush at a time (flushMu), by whoever may write to the client's
// socket (doc.go, client.wown); the TLS layer's writes (mu) only append
// while ciphertext is pending, so the bytes go out in their order.
type tlsSock struct {
	// nc is the connection reads go through, and deadlines apply to: the
	// accepted TCP connection, or after a handoff from a loop one made
	// from a duplicate of fd; nil while the loop serves the client.
	nc net.Conn
	// rc is the accepted connection's, for the writes while fd < 0.
	rc syscall.RawConn
	// fd is the client's descriptor once a loop took it (client.fd, open
	// until the client closes), -1 before; writes then use it directly.
	fd int
	// onLoop: the loop serves the client and reads fd itself (Read).
	// readLeft bounds the bytes one loop read takes (tlsLoopRead).
	onLoop   bool
	readLeft int
	// stop and deadline end a flush that waits on fd (the client is
	// killed or the server closes; client.wdl), as a closed connection
	// and its write deadline end one that waits on rc.
	stop     func() bool
	deadline func() int64
	laddr    net.Addr
	raddr    net.Addr
	// async: the handshake is over; before, writes wait for the socket,
	// as the handshake's flights must go out before it reads the peer's.
	async atomic.Bool

	flushMu sync.Mutex
	mu      sync.Mutex
	pend    []byte // ciphertext not yet written, in order
	n       atomic.Int64
	err     error // the socket's write failed: every later write fails
}

func newTLSSock(tc *net.TCPConn) (*tlsSock, error) {
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &tlsSock{nc: tc, rc: rc, fd: -1, laddr: tc.LocalAddr(), raddr: tc.RemoteAddr()}, nil
}

// errWouldBlock is a read of a loop client's socket that found nothing:
// a net.Error that is a timeout, after which a tls.Conn stays usable.
var errWouldBlock net.Error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "tls: socket read would block" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

// Read is the TLS layer's read of ciphertext.
func (t *tlsSock) Read(p []byte) (int, error) {
	if !t.onLoop {
		return t.nc.Read(p)
	}
	if t.readLeft <= 0 || len(p) == 0 {
		return 0, errWouldBlock
	}
	if len(p) > t.readLeft {
		p = p[:t.readLeft]
	}
	n, err := fdRead(t.fd, p)
	if err == errAgain {
		t.readLeft = 0
		return 0, errWouldBlock
	}
	if n < len(p) {
		// The socket held no more: the next read would find nothing.
		t.readLeft = 0
	} else {
		t.readLeft -= n
	}
	return n, err
}

func (t *tlsSock) Close() error {
	if t.nc != nil {
		return t.nc.Close()
	}
	return nil
}

func (t *tlsSock) LocalAddr() net.Addr  { return t.laddr }
func (t *tlsSock) RemoteAddr() net.Addr { return t.raddr }

func (t *tlsSock) SetDeadline(d time.Time) error {
	if t.nc != nil {
		return t.nc.SetDeadline(d)
	}
	return nil
}

func (t *tlsSock) SetReadDeadline(d time.Time) error {
	if t.nc != nil {
		return t.nc.SetReadDeadline(d)
	}
	return nil
}

func (t *tlsSock) SetWriteDeadline(d time.Time) error {
	if t.nc != nil {
		return t.nc.SetWriteDeadline(d)
	}
	return nil
}

// Write is the TLS layer's write of ciphertext: written at once as far as
// the socket takes it, the rest kept for flush.
func (t *tlsSock) Write(b []byte) (int, error) {
	if !t.async.Load() {
		return t.nc.Write(b)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return 0, t.err
	}
	n := len(b)
	if len(t.pend) == 0 {
		k, err := t.tryWrite(b)
		if err != nil {
			t.err = err
			return k, err
		}
		b = b[k:]
	}
	if len(b) > 0 {
		t.pend = append(t.pend, b...)
		t.n.Store(int64(len(t.pend)))
	}
	return n, nil
}

// tryWrite writes what of b the socket takes now.
func (t *tlsSock) tryWrite(b []byte) (int, error) {
	if t.fd >= 0 {
		return rawWriteNow(uintptr(t.fd), b)
	}
	var n int
	var werr error
	err := t.rc.Write(func(fd uintptr) bool {
		n, werr = rawWriteNow(fd, b)
		return true
	})
	if err != nil {
		return n, err
	}
	return n, werr
}

// rawWriteNow writes b to a non-blocking descriptor until it is all
// written or the socket is full (no error then).
func rawWriteNow(fd uintptr, b []byte) (int, error) {
	done := 0
	for done < len(b) {
		rest := b[done:]
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(rest))), uintptr(len(rest)))
		switch e {
		case 0:
			done += int(n)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return done, nil
		default:
			return done, e
		}
	}
	return done, nil
}

// pending is how many bytes of ciphertext wait for the socket.
func (t *tlsSock) pending() int64 { return t.n.Load() }

// flush writes the pending ciphertext: with wait, all of it, waiting
// while the socket is full (until the connection's write deadline, or
// its close; on fd, until stop or deadline); without, what the socket
// takes now. It returns what is left. A flush already under way
// elsewhere makes a flush without wait return at once.
func (t *tlsSock) flush(wait bool) (int64, error) {
	if wait {
		t.flushMu.Lock()
	} else if !t.flushMu.TryLock() {
		return t.pending(), nil
	}
	defer t.flushMu.Unlock()
	if t.fd >= 0 {
		for {
			left, err := t.writePend(uintptr(t.fd))
			if err != nil || left == 0 || !wait {
				return left, err
			}
			if err := fdWaitWritable(t.fd, t.stop, t.deadline); err != nil {
				return left, err
			}
		}
	}
	var werr error
	var left int64
	err := t.rc.Write(func(fd uintptr) bool {
		left, werr = t.writePend(fd)
		return werr != nil || left == 0 || !wait
	})
	if err != nil {
		return t.pending(), err
	}
	return left, werr
}

// writePend writes what of the pending ciphertext the socket takes now,
// from its head; the TLS layer appends to it meanwhile, so only the
// non-blocking system calls are made under mu.
func (t *tlsSock) writePend(fd uintptr) (int64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return int64(len(t.pend)), t.err
	}
	n, e := rawWriteNow(fd, t.pend)
	t.pend = t.pend[n:]
	if e != nil {
		t.err = e
		return int64(len(t.pend)), e
	}
	if len(t.pend) == 0 {
		t.pend = nil
	}
	t.n.Store(int64(len(t.pend)))
	return int64(len(t.pend)), nil
}

// tlsWrite is connWrite for a TLS client: errAgain when the socket did not
// take all the ciphertext, with what of p went into the TLS layer (all of
// it, unless earlier ciphertext is still pending: then none). Whoever
// gets errAgain hands the client to a writer that flushes (socketFull:
// the pushed-output writer, or writeReading; a loop's handoff, whose
// goroutine flushes in writeRest), so pending ciphertext always has one.
func (c *client) tlsWrite(p []byte) (int, error) {
	t := c.tsock
	if t.pending() > 0 {
		if left, err := t.flush(false); err != nil || left > 0 {
			if err == nil {
				err = errAgain
			}
			return 0, err
		}
	}
	n, err := c.tconn.Write(p)
	if err == nil && t.pending() > 0 {
		err = errAgain
	}
	return n, err
}

// tlsWriteWait writes all of p for a TLS client, waiting while the socket
// is full: the writers that may wait (outWrite, writeReading). p may be
// empty: then it writes what is pending.
func (c *client) tlsWriteWait(p []byte) (int, error) {
	n, err := c.tconn.Write(p)
	if err != nil {
		return n, err
	}
	_, err = c.tsock.flush(true)
	return n, err
}

// tlsHandshake runs the handshake on the client's goroutine, with writes
// that wait; after it the TLS layer's writes never wait (tlsSock).
func (c *client) tlsHandshake() error {
	t := c.tsock
	if t.async.Load() {
		return nil
	}
	if err := c.tconn.Handshake(); err != nil {
		return err
	}
	t.async.Store(true)
	return nil
}

// tlsRead reads for a TLS client served by its goroutine: the handshake
// first, if it has not run. Ciphertext the TLS layer wrote as it read (a
// key update) goes out now if the socket takes it, else with the next
// reply.
func (c *client) tlsRead(p []byte) (int, error) {
	if err := c.tlsHandshake(); err != nil {
		return 0, err
	}
	n, err := c.tconn.Read(p)
	if c.tsock.pending() > 0 {
		c.tsock.flush(false)
	}
	return n, err
}

// tlsPending is the ciphertext a TLS client has not been sent: output
// its limits count (also while the plaintext it came from, a chunk of its
// queue being written, is still held).
func (c *client) tlsPending() int64 {
	if c.tsock == nil {
		return 0
	}
	return c.tsock.pending()
}

// tlsConn returns conn as a TLS client's connection and its socket, or
// nils for another kind of connection.
func tlsConn(conn net.Conn) (*tls.Conn, *tlsSock) {
	tc, ok := conn.(*tls.Conn)
	if !ok {
		return nil, nil
	}
	ts, _ := tc.NetConn().(*tlsSock)
	if ts == nil {
		return nil, nil
	}
	return tc, ts
}
