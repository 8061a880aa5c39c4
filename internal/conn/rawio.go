package conn

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// rawIO reads and writes a TCP (or unix) connection with raw system calls, inside
// the poller's RawConn.Read and RawConn.Write (which keep the descriptor
// open, honour deadlines and wait for readiness).
//
// Why: at pipeline 1 a request costs a read, a write and a read that finds
// nothing, and conn.Read/conn.Write wrap each in entersyscall/exitsyscall.
// That hands the processor back to the scheduler for the call's duration,
// and the runtime's monitor thread (sysmon), seeing processors in system
// calls with goroutines waiting, keeps waking every 20 µs to retake them
// and starts threads to run the waiting goroutines: in profiles of GET at
// pipeline 1, sysmon's sleeps and the thread handoffs cost about a fifth
// of the server's CPU. These sockets are non-blocking, so their reads and
// writes never block: a raw call keeps its processor like any other short
// piece of work, as Redis's event loop does.
type rawIO struct {
	rc syscall.RawConn
	// A read and a write may run at once (the pushed-output writer), so
	// each has its own arguments and results.
	rp, wp     []byte
	rn, wn     int
	rerr, werr error
	readFn     func(fd uintptr) bool
	writeFn    func(fd uintptr) bool
	// wait says whether a write waits while the socket is full (write)
	// or stops with errAgain (tryWrite).
	wait bool
}

// newRawIO returns the raw I/O of a TCP or unix socket connection, or nil
// for another kind of connection (which then goes through net.Conn).
func newRawIO(conn net.Conn) *rawIO {
	var sc syscall.Conn
	switch conn := conn.(type) {
	case *net.TCPConn:
		sc = conn
	case *net.UnixConn:
		// Its writes then report a full socket too (tryWrite), so that
		// a unix socket client that does not read is served as a TCP
		// one: its output queues up to its limit, or its input is read
		// while its replies wait (writeReading).
		sc = conn
	default:
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	r := &rawIO{rc: rc}
	// Method values made once: RawConn takes a func, and a closure made
	// per call would be an allocation per read.
	r.readFn, r.writeFn = r.doRead, r.doWrite
	return r
}

func (r *rawIO) doRead(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(r.rp))), uintptr(len(r.rp)))
		switch e {
		case 0:
			r.rn = int(n)
			if n == 0 {
				r.rerr = io.EOF
			}
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // wait until readable
		default:
			r.rerr = e
			return true
		}
	}
}

func (r *rawIO) doWrite(fd uintptr) bool {
	for len(r.wp) > 0 {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(r.wp))), uintptr(len(r.wp)))
		switch e {
		case 0:
			r.wn += int(n)
			r.wp = r.wp[n:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			if !r.wait {
				r.werr = errAgain
				return true
			}
			return false // wait until writable
		default:
			r.werr = e
			return true
		}
	}
	return true
}

// read reads into p as conn.Read does.
func (r *rawIO) read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.rp, r.rn, r.rerr = p, 0, nil
	err := r.rc.Read(r.readFn)
	n, rerr := r.rn, r.rerr
	r.rp, r.rerr = nil, nil
	if err != nil {
		return n, err // closed, or the deadline passed
	}
	return n, rerr
}

// write writes all of p as conn.Write does.
func (r *rawIO) write(p []byte) (int, error) {
	r.wait = true
	return r.doWrites(p)
}

// tryWrite writes what of p the socket takes now: errAgain, with what was
// written, when it will not take all of it.
func (r *rawIO) tryWrite(p []byte) (int, error) {
	r.wait = false
	return r.doWrites(p)
}

func (r *rawIO) doWrites(p []byte) (int, error) {
	r.wp, r.wn, r.werr = p, 0, nil
	err := r.rc.Write(r.writeFn)
	n, werr := r.wn, r.werr
	r.wp, r.werr = nil, nil
	if err != nil {
		return n, err
	}
	return n, werr
}

// connRead reads from the client's connection.
func (c *client) connRead(p []byte) (int, error) {
	if c.tsock != nil {
		return c.tlsRead(p)
	}
	if c.inLoop {
		return fdRead(c.fd, p)
	}
	if c.raw != nil {
		return c.raw.read(p)
	}
	return c.conn.Read(p)
}

// connWrite writes to the client's connection: errAgain, with what was
// written, when the socket does not take all of it, except for
// connections other than TCP, unix and TLS, which wait.
func (c *client) connWrite(p []byte) (int, error) {
	if c.tsock != nil {
		return c.tlsWrite(p)
	}
	if c.inLoop {
		return fdWrite(c.fd, p)
	}
	if c.raw != nil {
		return c.raw.tryWrite(p)
	}
	return c.conn.Write(p)
}

// outWrite writes all of p for the pushed-output writer and writeRest,
// waiting while the socket is full: on the descriptor when the event loop
// accepted the client (it stays open through a handoff), on conn
// otherwise.
func (c *client) outWrite(p []byte) (int, error) {
	if c.tsock != nil {
		return c.tlsWriteWait(p)
	}
	if c.fd < 0 {
		return c.conn.Write(p)
	}
	return fdWriteWait(c.fd, p, c.sess.Killed.Load, c.wdl.Load)
}
