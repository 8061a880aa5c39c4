package conn

import (
	"errors"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// tlsToLoop gives a TLS client whose handshake is done to the event loop
// l: its descriptor leaves Go's poller (detach) and the loop reads and
// writes it as it does a plaintext client's, through the TLS layer
// (tlsSock). It reports false when the client must go on on its goroutine
// instead (killed meanwhile, or the descriptor could not be taken).
func (c *client) tlsToLoop(l *eventLoop) bool {
	s, t := c.srv, c.tsock
	c.ioMu.Lock()
	if c.sess.Killed.Load() || s.closing.Load() {
		c.ioMu.Unlock()
		return false
	}
	// No other goroutine uses the socket now: the client has run no
	// command, so nothing writes to it, and kill waits for ioMu.
	fd, err := detach(t.nc)
	if err != nil {
		c.ioMu.Unlock()
		s.Log.Warn("io-event-loop: " + err.Error())
		return false
	}
	t.nc, t.rc, t.fd, t.onLoop = nil, nil, fd, true
	t.stop = func() bool { return c.sess.Killed.Load() || s.closing.Load() }
	t.deadline = c.wdl.Load
	c.fd, c.fdOpen = fd, true
	c.conn = nil
	c.ioMu.Unlock()
	l.add(c)
	return true
}

// tlsToGoroutine is handoffTo's part for a TLS client: reads go through
// conn, made from a duplicate of the descriptor, and wait in Go's poller;
// writes stay on the descriptor.
func (c *client) tlsToGoroutine(conn net.Conn) {
	t := c.tsock
	t.onLoop = false
	t.nc = conn
	c.raw = nil
	c.ioMu.Lock()
	c.conn = c.tconn
	c.ioMu.Unlock()
}

// fdWaitWritable waits (poll, in steps of 100 ms) until fd is writable,
// stop says to give up (net.ErrClosed) or deadline (unix ns, 0 for none)
// passes.
func fdWaitWritable(fd int, stop func() bool, deadline func() int64) error {
	for {
		if stop != nil && stop() {
			return net.ErrClosed
		}
		if deadline != nil {
			if dl := deadline(); dl != 0 && time.Now().UnixNano() >= dl {
				return os.ErrDeadlineExceeded
			}
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		if n, _ := unix.Poll(pfd, 100); n > 0 {
			return nil
		}
	}
}

// tlsLoopRead is the event loop's read for a TLS client: the ciphertext
// the socket holds (at most loopMaxRead bytes of it, as for a plaintext
// client) deciphered into p, without waiting. more says the TLS layer may
// hold more than p took, or an error to report after these bytes: the
// loop serves the client again (kick) without a new event.
func (c *client) tlsLoopRead(p []byte) (n int, more bool, err error) {
	t := c.tsock
	if len(p) == 0 {
		return 0, true, errAgain // no room now: the next round reads
	}
	t.readLeft = loopMaxRead
	defer func() {
		t.readLeft = 0
		if t.pending() > 0 {
			t.flush(false)
		}
	}()
	for n < len(p) {
		k, rerr := c.tconn.Read(p[n:])
		n += k
		if rerr != nil {
			if errors.Is(rerr, errWouldBlock) {
				if n == 0 {
					return 0, false, errAgain
				}
				return n, false, nil
			}
			if n > 0 {
				return n, true, nil
			}
			return 0, false, rerr
		}
	}
	return n, true, nil
}

// tlsWriteReading is writeReading for a TLS client: p goes into the TLS
// layer, and its ciphertext out as the socket takes it, the client's
// input being read (and deciphered) whenever some arrives meanwhile.
func (c *client) tlsWriteReading(p []byte) (int, error) {
	s, t := c.srv, c.tsock
	n, err := c.tconn.Write(p) // never waits (tlsSock)
	if err != nil {
		return n, err
	}
	for {
		left, err := t.flush(false)
		if err != nil || left == 0 {
			return n, err
		}
		if c.sess.Killed.Load() || s.closing.Load() {
			return n, net.ErrClosed
		}
		var rev int16
		poll := func(fd uintptr) {
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT | unix.POLLIN}}
			unix.Poll(pfd, 100)
			rev = pfd[0].Revents
		}
		if t.fd >= 0 {
			poll(uintptr(t.fd))
		} else if err := t.rc.Control(poll); err != nil {
			return n, err
		}
		if rev&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) != 0 && !c.tlsReadAside() {
			return n, net.ErrClosed
		}
	}
}

// tlsReadAside reads what arrived for a TLS client into its input while
// a write waits. A record not all there yet is kept by the TLS layer
// until the rest comes: the read stops at a short deadline, which leaves
// a TLS connection usable (a write's would not).
func (c *client) tlsReadAside() bool {
	c.tconn.SetReadDeadline(time.Now().Add(time.Millisecond))
	n, err := c.tconn.Read(c.reader.ReadBuf(loopMaxRead))
	c.tconn.SetReadDeadline(time.Time{})
	c.reader.Filled(n)
	return c.tookAside(n) && (err == nil || errors.Is(err, os.ErrDeadlineExceeded))
}
