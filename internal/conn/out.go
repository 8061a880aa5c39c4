package conn

import (
	"fmt"
	"sync"
)

// outLimit caps the output waiting for a client that receives pushed
// output (MONITOR) and does not read it: beyond it the client is closed,
// as Redis closes clients over their client-output-buffer-limit. Redis's
// default for normal clients is unlimited; an unbounded queue could take
// the whole server's memory, so Abacus uses Redis's replica hard limit.
const outLimit = 256 << 20

// outQueue is the output of a client that receives pushed output: bytes
// are appended in the order they are produced (under the server lock, or
// by the busy path without it), and a writer goroutine, the only one that
// writes to the socket from then on, sends them.
type outQueue struct {
	mu      sync.Mutex
	buf     []byte
	wake    chan struct{} // one pending wake-up
	done    chan struct{} // closed when the writer has exited
	closing bool          // no more output: write what is left and exit
	failed  bool          // the connection broke: drop everything
}

func newOutQueue() *outQueue {
	return &outQueue{wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// add queues b for c; a client over the limit is closed.
func (q *outQueue) add(c *client, b []byte) {
	q.mu.Lock()
	if q.failed || q.closing {
		q.mu.Unlock()
		return
	}
	q.buf = append(q.buf, b...)
	n := len(q.buf)
	q.mu.Unlock()
	c.sess.OutBuf.Store(int64(n))
	if n > outLimit {
		c.srv.Log.Warn(fmt.Sprintf("Client id=%d addr=%s closed for overcoming of output buffer limits.", c.sess.ID, c.sess.Addr))
		q.fail()
		c.kill()
		return
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *outQueue) fail() {
	q.mu.Lock()
	q.failed, q.buf = true, nil
	q.mu.Unlock()
}

// close lets the writer finish what is queued and exit.
func (q *outQueue) close() {
	q.mu.Lock()
	q.closing = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// writeLoop sends the queue's bytes to the connection until the queue is
// closed and empty, or a write fails.
func (c *client) writeLoop(q *outQueue) {
	s := c.srv
	defer s.wg.Done()
	defer close(q.done)
	var spare []byte
	for {
		q.mu.Lock()
		for len(q.buf) == 0 && !q.closing && !q.failed {
			q.mu.Unlock()
			<-q.wake
			q.mu.Lock()
		}
		if q.failed || len(q.buf) == 0 {
			q.mu.Unlock()
			return
		}
		b := q.buf
		q.buf = spare[:0]
		q.mu.Unlock()
		now := s.Env.Clock.NowMs()
		n, err := c.outWrite(b) // wown is wQueue: this goroutine alone writes
		s.Env.Stats.NetOutputBytes.Add(int64(n))
		if n > 0 {
			c.sess.LastIO.Store(now)
		}
		q.mu.Lock()
		c.sess.OutBuf.Store(int64(len(q.buf)))
		q.mu.Unlock()
		if err != nil {
			q.fail()
			c.kill()
			return
		}
		if cap(b) <= 1<<20 {
			spare = b
		} else {
			spare = nil
		}
	}
}
