package conn

import (
	"sync"
	"sync/atomic"

	"github.com/abacusdb/abacus/internal/config"
)

// outLimit caps the output queued for a client whose class has no
// output buffer limit (Redis's default for normal clients), such as a
// MONITOR that does not read: an unbounded queue could take the whole
// server's memory, so Abacus closes it past Redis's replica hard limit.
const outLimit = 256 << 20

// outQueue is the output of a client that receives pushed output, or that
// went on being served while its socket was full: bytes are appended in
// the order they are produced (under the server lock, or by the busy path
// without it), and a writer goroutine, the only one that writes to the
// socket from then on, sends them.
type outQueue struct {
	mu sync.Mutex
	// chunks are the bytes queued, in order: small outputs are copied
	// into the last one, a large reply buffer is queued as it is (Redis
	// keeps its reply list in blocks for the same reason: a queue that
	// grows by copying holds twice its size and leaves the copies to the
	// collector).
	chunks [][]byte
	// free is a written chunk of chunkBytes kept for the next small
	// output: a subscriber's queue drains and refills with every
	// message, and a fresh 16 KB buffer per message would be most of a
	// push's cost.
	free []byte
	n    int64         // bytes queued and not yet written
	wake chan struct{} // one pending wake-up
	// wakeQueued: the queue is on an event loop's wake list (wakeList).
	wakeQueued atomic.Bool
	done       chan struct{} // closed when the writer has exited
	// closing: no more output, write what is left and exit; failed: the
	// connection broke or is being closed, drop everything.
	closing, failed bool
	// held, when not -1, is the index in chunks from which the bytes are
	// held back: pushed while the AOF is on by a batch whose effects are
	// not written yet (holdPushes). The writer takes only the chunks
	// before it; held bytes start a chunk of their own. syncPos is the
	// AOF position the released chunks wait for (the largest of their
	// batches'; 0: none): the writer waits for it to be durable before it
	// writes them, as Redis writes every client's output after the AOF's
	// write and fsync in beforeSleep.
	held    int
	syncPos int64
	// inHeld says the queue is in Server.heldQs (under the server lock).
	inHeld bool
}

// chunkBytes is the size of the chunks small outputs are copied into.
const chunkBytes = 16 << 10

func newOutQueue() *outQueue {
	return &outQueue{wake: make(chan struct{}, 1), done: make(chan struct{}), held: -1}
}

// add queues a copy of b for c; a client over its limit is closed.
func (q *outQueue) add(c *client, b []byte) { q.addWaking(c, b, nil, false) }

// addWaking is add whose writer, with wl set, wakes at the end of the
// event loop's round instead of at once. With hold, b is held back until
// Server.releasePushes.
func (q *outQueue) addWaking(c *client, b []byte, wl *wakeList, hold bool) {
	q.mu.Lock()
	if q.failed || q.closing {
		q.mu.Unlock()
		return
	}
	if hold && q.held < 0 {
		q.held = len(q.chunks) // b starts a chunk of its own
	}
	if k := len(q.chunks) - 1; k >= 0 && k >= q.held && cap(q.chunks[k])-len(q.chunks[k]) >= len(b) {
		q.chunks[k] = append(q.chunks[k], b...)
	} else if q.free != nil && len(b) <= chunkBytes {
		q.chunks = append(q.chunks, append(q.free[:0], b...))
		q.free = nil
	} else if len(b) > chunkBytes {
		q.chunks = append(q.chunks, append([]byte(nil), b...)) // not zeroed first, as make would
	} else {
		q.chunks = append(q.chunks, append(make([]byte, 0, chunkBytes), b...))
	}
	q.n += int64(len(b))
	n := q.n
	q.mu.Unlock()
	q.addedWaking(c, n, wl)
}

// addOwned queues b itself, which the caller gives up.
func (q *outQueue) addOwned(c *client, b []byte) {
	q.mu.Lock()
	if q.failed || q.closing {
		q.mu.Unlock()
		return
	}
	q.chunks = append(q.chunks, b)
	q.n += int64(len(b))
	n := q.n
	q.mu.Unlock()
	q.added(c, n)
}

// prepend puts a copy of b before what is queued (the owner's replies,
// which a push made since they were staged must follow), before the
// writer starts.
func (q *outQueue) prepend(c *client, b []byte) {
	q.mu.Lock()
	if q.failed || q.closing {
		q.mu.Unlock()
		return
	}
	q.chunks = append([][]byte{append([]byte(nil), b...)}, q.chunks...)
	if q.held >= 0 {
		q.held++
	}
	q.n += int64(len(b))
	n := q.n
	q.mu.Unlock()
	q.added(c, n)
}

// added checks the client's limits now that n bytes are queued, and wakes
// the writer.
func (q *outQueue) added(c *client, n int64) { q.addedWaking(c, n, nil) }

func (q *outQueue) addedWaking(c *client, n int64, wl *wakeList) {
	c.setOutBuf(n)
	lim, unauth := c.limitFor(c.srv.outputLimits())
	if over := c.overLimit(n); over || (!unauth && !lim.limited() && n > outLimit) {
		c.closeForLimit(n)
		return
	}
	if wl != nil {
		wl.later(q)
		return
	}
	q.signal()
}

// signal wakes the writer.
func (q *outQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// holdPushes says whether output pushed now must wait for the AOF: with
// the AOF on, Redis writes no client's output before beforeSleep has
// written (and under appendfsync always, fsynced) the AOF, so a message
// published, a keyspace event or an invalidation never reaches a client
// before the write behind it is on disk. Pushed bytes are held in their
// queue (outQueue.held) until the batch that pushed them has written its
// effects (releasePushes, with the position Persistence.Flush gave the
// batch), and the queue's writer waits for that position to be durable.
// Under the server lock.
func (s *Server) holdPushes() bool { return s.Cfg.Bool(config.AppendOnly) }

// held registers q as holding pushed bytes back (under the server lock).
func (s *Server) held(q *outQueue) {
	if !q.inHeld {
		q.inHeld = true
		s.heldQs = append(s.heldQs, q)
		s.heldCount.Store(int64(len(s.heldQs)))
	}
}

// releasePushes lets the held queues' writers have their bytes once the
// AOF position pos (0: none) is durable, waking them after the event
// loop's round when wl is set, else at once. Under the server lock, after
// the writes that made the pushes were fed to the AOF.
func (s *Server) releasePushes(pos int64, wl *wakeList) {
	for i, q := range s.heldQs {
		q.release(pos)
		q.inHeld = false
		s.heldQs[i] = nil
		if wl != nil {
			wl.later(q)
		} else {
			q.signal()
		}
	}
	s.heldQs = s.heldQs[:0]
	s.heldCount.Store(0)
}

// releaseHeld releases the bytes pushed outside a client's batch (by the
// cron, the loop's round end, a lock holder such as replication) at the
// AOF's position now.
func (s *Server) releaseHeld() {
	if len(s.heldQs) > 0 {
		s.releasePushes(s.Env.Persistence().Flush(false), nil)
	}
}

// wakeList holds the queues whose writers an event loop wakes after its
// round of events, beside the replies it writes then (flushAll): output
// pushed by the round's commands (a PUBLISH to many subscribers) goes out
// in one write per subscriber per round, as Redis writes it in
// beforeSleep, rather than one per message.
type wakeList struct {
	mu sync.Mutex
	qs []*outQueue
}

func (w *wakeList) later(q *outQueue) {
	if !q.wakeQueued.CompareAndSwap(false, true) {
		return
	}
	w.mu.Lock()
	w.qs = append(w.qs, q)
	w.mu.Unlock()
}

// wakeAll wakes the writers on the list.
func (w *wakeList) wakeAll() {
	w.mu.Lock()
	qs := w.qs
	w.qs = nil
	w.mu.Unlock()
	for _, q := range qs {
		q.wakeQueued.Store(false)
		q.signal()
	}
}

// release lets the writer have the held bytes once the AOF position pos
// (0: none) is durable.
func (q *outQueue) release(pos int64) {
	q.mu.Lock()
	q.held = -1
	q.syncPos = max(q.syncPos, pos)
	q.mu.Unlock()
}

// ready is how many chunks the writer may take.
func (q *outQueue) ready() int {
	if q.held < 0 || q.closing {
		return len(q.chunks)
	}
	return q.held
}

// size is how many bytes wait in the queue.
func (q *outQueue) size() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// fail drops what is queued: the connection is closing without it.
func (q *outQueue) fail() {
	q.mu.Lock()
	var n int
	for _, b := range q.chunks {
		n += cap(b)
	}
	q.failed, q.chunks, q.n, q.free, q.held = true, nil, 0, nil, -1
	q.mu.Unlock()
	ReleaseMemory(int64(n))
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
	var spare [][]byte
	for {
		q.mu.Lock()
		for q.ready() == 0 && !q.closing && !q.failed {
			q.mu.Unlock()
			<-q.wake
			q.mu.Lock()
		}
		if q.failed || len(q.chunks) == 0 {
			q.mu.Unlock()
			return
		}
		var chunks [][]byte
		if k := q.ready(); k == len(q.chunks) {
			chunks = q.chunks
			q.chunks = spare[:0]
		} else {
			// Held chunks stay: the released ones move out.
			chunks = append(spare[:0], q.chunks[:k]...)
			n := copy(q.chunks, q.chunks[k:])
			clear(q.chunks[n:])
			q.chunks = q.chunks[:n]
			q.held = 0
		}
		pos := q.syncPos
		q.syncPos = 0
		q.mu.Unlock()
		if pos != 0 {
			s.Env.Persistence().Wait(pos)
		}
		for i, b := range chunks {
			chunks[i] = nil
			now := s.Env.Clock.NowMs()
			n, err := c.outWrite(b) // wown is wQueue: this goroutine alone writes
			s.Env.Stats.NetOutputBytes.Add(int64(n))
			if n > 0 {
				c.sess.LastIO.Store(now)
			}
			q.mu.Lock()
			if !q.failed {
				q.n -= int64(len(b))
				if cap(b) == chunkBytes && q.free == nil {
					q.free = b
				}
			}
			left := q.n
			q.mu.Unlock()
			c.sess.OutBuf.Store(left)
			if err != nil {
				q.fail()
				c.kill()
				return
			}
		}
		spare = chunks
	}
}
