package conn

import (
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
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
// One flush at a time (flushMu), by whoever may write to the client's
// socket (doc.go, client.wown); the TLS layer's writes (mu) only append
// while ciphertext is pending, so the bytes go out in their order.
type tlsSock struct {
	*net.TCPConn
	rc syscall.RawConn
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
	return &tlsSock{TCPConn: tc, rc: rc}, nil
}

// Write is the TLS layer's write of ciphertext: written at once as far as
// the socket takes it, the rest kept for flush.
func (t *tlsSock) Write(b []byte) (int, error) {
	if !t.async.Load() {
		return t.TCPConn.Write(b)
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
// its close); without, what the socket takes now. It returns what is
// left. A flush already under way elsewhere makes a flush without wait
// return at once.
func (t *tlsSock) flush(wait bool) (int64, error) {
	if wait {
		t.flushMu.Lock()
	} else if !t.flushMu.TryLock() {
		return t.pending(), nil
	}
	defer t.flushMu.Unlock()
	var werr error
	err := t.rc.Write(func(fd uintptr) bool {
		// The TLS layer appends to pend meanwhile: it is written from
		// its head, under mu only for the non-blocking system calls.
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.err != nil {
			werr = t.err
			return true
		}
		n, e := rawWriteNow(fd, t.pend)
		t.pend = t.pend[n:]
		if e != nil {
			t.err, werr = e, e
			return true
		}
		if len(t.pend) == 0 {
			t.pend = nil
		}
		t.n.Store(int64(len(t.pend)))
		return len(t.pend) == 0 || !wait
	})
	if err != nil {
		return t.pending(), err
	}
	return t.pending(), werr
}

// tlsWrite is connWrite for a TLS client: errAgain when the socket did not
// take all the ciphertext, with what of p went into the TLS layer (all of
// it, unless earlier ciphertext is still pending: then none). Whoever
// gets errAgain hands the client to a writer that flushes (socketFull:
// the pushed-output writer, or writeReading), so pending ciphertext
// always has one.
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
	n, err := c.conn.Write(p)
	if err == nil && t.pending() > 0 {
		err = errAgain
	}
	return n, err
}

// tlsWriteWait writes all of p for a TLS client, waiting while the socket
// is full: the writers that may wait (outWrite, writeReading). p may be
// empty: then it writes what is pending.
func (c *client) tlsWriteWait(p []byte) (int, error) {
	n, err := c.conn.Write(p)
	if err != nil {
		return n, err
	}
	_, err = c.tsock.flush(true)
	return n, err
}

// tlsRead reads for a TLS client: the handshake first, with writes that
// wait, then the TLS layer's own writes never wait (tlsSock). Ciphertext
// the TLS layer wrote as it read (a key update) goes out now if the
// socket takes it, else with the next reply.
func (c *client) tlsRead(p []byte) (int, error) {
	t := c.tsock
	if !t.async.Load() {
		if err := c.conn.(*tls.Conn).Handshake(); err != nil {
			return 0, err
		}
		t.async.Store(true)
	}
	n, err := c.conn.Read(p)
	if t.pending() > 0 {
		t.flush(false)
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
