package conn

import (
	"errors"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// tlsWriteReading is writeReading for a TLS client: p goes into the TLS
// layer, and its ciphertext out as the socket takes it, the client's
// input being read (and deciphered) whenever some arrives meanwhile.
func (c *client) tlsWriteReading(p []byte) (int, error) {
	s, t := c.srv, c.tsock
	n, err := c.conn.Write(p) // never waits (tlsSock)
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
		if err := t.rc.Control(func(fd uintptr) {
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT | unix.POLLIN}}
			unix.Poll(pfd, 100)
			rev = pfd[0].Revents
		}); err != nil {
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
	c.conn.SetReadDeadline(time.Now().Add(time.Millisecond))
	n, err := c.conn.Read(c.reader.ReadBuf(loopMaxRead))
	c.conn.SetReadDeadline(time.Time{})
	c.reader.Filled(n)
	return c.tookAside(n) && (err == nil || errors.Is(err, os.ErrDeadlineExceeded))
}
