package conn

import (
	"iter"
	"sync"
	"sync/atomic"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/resp"
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
	// chunks are the output queued, in order: small outputs are copied
	// into the last one, a large reply buffer is queued as it is (Redis
	// keeps its reply list in blocks for the same reason: a queue that
	// grows by copying holds twice its size and leaves the copies to the
	// collector), and a reply deferred by its command (addSeg) is
	// encoded by the writer as it sends it.
	chunks []outChunk
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
	// busy is set while someone writes chunks it took from the queue:
	// its writer goroutine, or an event loop draining it at the end of
	// its round (drain). Whoever sets it is the one writer to the socket
	// until it clears it; spare is that writer's scratch.
	busy  bool
	spare []outChunk
	// c is the client the queue belongs to.
	c *client
	// owned are the chunks queued by pushOwned that are not yet written,
	// in queue order: each one's release is called (q.mu held) once it is
	// written whole, and never if the queue fails first.
	owned []ownedChunk
}

// outChunk is one entry of a queue: bytes, or a reply encoded as it is
// sent (seg), whose bytes still to encode count in outQueue.n, as if
// they were queued, from the moment it is queued: the output buffer
// limits and CLIENT LIST omem see the reply's full size at once.
type outChunk struct {
	b   []byte
	seg *resp.Segment
}

// ownedChunk is a chunk its producer lent to the queue (pushOwned). It is
// known by the address of its last byte, which a partly written chunk's
// rest (drain) keeps.
type ownedChunk struct {
	last    *byte
	release func()
}

// chunkBytes is the size of the chunks small outputs are copied into.
const chunkBytes = 16 << 10

func newOutQueue(c *client) *outQueue {
	return &outQueue{wake: make(chan struct{}, 1), done: make(chan struct{}), held: -1, c: c}
}

// add queues a copy of b for c; a client over its limit is closed.
func (q *outQueue) add(c *client, b []byte) { q.addWaking(c, b, nil, false) }

// addWaking is add whose writer, with wl set, wakes at the end of the
// event loop's round instead of at once. With hold, b is held back until
// Server.releasePushes.
func (q *outQueue) addWaking(c *client, b []byte, wl *wakeList, hold bool) {
	if n, ok := q.append(b, hold); ok {
		q.addedWaking(c, n, wl)
	}
}

// append queues a copy of b and returns how many bytes are queued, or
// false when the queue takes no more.
func (q *outQueue) append(b []byte, hold bool) (int64, bool) {
	q.mu.Lock()
	if q.failed || q.closing {
		q.mu.Unlock()
		return 0, false
	}
	if hold && q.held < 0 {
		q.held = len(q.chunks) // b starts a chunk of its own
	}
	k := len(q.chunks) - 1
	last := k >= 0 && k >= q.held && q.chunks[k].seg == nil // b may join the last chunk
	if last && cap(q.chunks[k].b)-len(q.chunks[k].b) >= len(b) {
		q.chunks[k].b = append(q.chunks[k].b, b...)
	} else if q.free != nil && len(b) <= chunkBytes {
		q.chunks = append(q.chunks, outChunk{b: append(q.free[:0], b...)})
		q.free = nil
	} else if len(b) > chunkBytes {
		q.chunks = appendChunked(q.chunks, b, last)
	} else {
		q.chunks = append(q.chunks, outChunk{b: append(getSmallChunk(), b...)})
	}
	q.n += int64(len(b))
	n := q.n
	q.mu.Unlock()
	return n, true
}

// addOwned queues b itself, which the caller gives up.
func (q *outQueue) addOwned(c *client, b []byte) {
	q.mu.Lock()
	if q.failed || q.closing {
		q.mu.Unlock()
		return
	}
	q.chunks = append(q.chunks, outChunk{b: b})
	q.n += int64(len(b))
	n := q.n
	q.mu.Unlock()
	q.added(c, n)
}

// addSeg queues seg, a reply the writer encodes as it sends it.
func (q *outQueue) addSeg(c *client, seg *resp.Segment) {
	q.mu.Lock()
	if q.failed || q.closing {
		q.mu.Unlock()
		return
	}
	q.chunks = append(q.chunks, outChunk{seg: seg})
	q.n += seg.Size()
	n := q.n
	q.mu.Unlock()
	q.added(c, n)
}

// addLent queues b itself, which the caller lends until release is
// called (once b is written whole; never if the connection fails first),
// its writer woken as addWaking's. b's capacity ends at its length, so
// that nothing is appended into it.
func (q *outQueue) addLent(c *client, b []byte, wl *wakeList, hold bool, release func()) {
	q.mu.Lock()
	if q.failed || q.closing {
		q.mu.Unlock()
		return
	}
	if hold && q.held < 0 {
		q.held = len(q.chunks)
	}
	b = b[:len(b):len(b)]
	q.chunks = append(q.chunks, outChunk{b: b})
	q.owned = append(q.owned, ownedChunk{last: &b[len(b)-1], release: release})
	q.n += int64(len(b))
	n := q.n
	q.mu.Unlock()
	q.addedWaking(c, n, wl)
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
	q.chunks = append([]outChunk{{b: append([]byte(nil), b...)}}, q.chunks...)
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

// wakeAll drains the queues on the list from the event loop (drain), or
// wakes their writers.
func (w *wakeList) wakeAll() {
	w.mu.Lock()
	qs := w.qs
	w.qs = nil
	w.mu.Unlock()
	var now int64
	for i, q := range qs {
		if i == 0 {
			now = q.c.srv.Env.Clock.NowMs() // one clock read for the round's writes
		}
		q.wakeQueued.Store(false)
		if !q.drain(now) {
			q.signal()
		}
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

// take moves the chunks the writer may have out of the queue, and
// returns them with the AOF position they wait for. q.mu held, by the
// one who then sets busy.
func (q *outQueue) take() ([]outChunk, int64) {
	var chunks []outChunk
	if k := q.ready(); k == len(q.chunks) {
		chunks = q.chunks
		q.chunks = q.spare[:0]
	} else {
		// Held chunks stay: the released ones move out.
		chunks = append(q.spare[:0], q.chunks[:k]...)
		n := copy(q.chunks, q.chunks[k:])
		clear(q.chunks[n:])
		q.chunks = q.chunks[:n]
		q.held = 0
	}
	q.spare = nil
	pos := q.syncPos
	q.syncPos = 0
	return chunks, pos
}

// wroteLocked accounts for n bytes of chunk b written (all of it: b may be
// kept for the next small output). q.mu held.
func (q *outQueue) wroteLocked(b []byte, n int) {
	if q.failed {
		return
	}
	q.n -= int64(n)
	if n == len(b) && n > 0 && len(q.owned) > 0 && &b[n-1] == q.owned[0].last {
		// A lent chunk goes back to its producer, not to q.free.
		q.owned[0].release()
		q.owned[0] = ownedChunk{}
		q.owned = q.owned[1:]
		return
	}
	if n == len(b) && cap(b) == chunkBytes && q.free == nil {
		q.free = b
	} else if n == len(b) {
		putChunk(b)
	}
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
	n := q.n
	q.mu.Unlock()
	return n
}

// fail drops what is queued: the connection is closing without it.
func (q *outQueue) fail() {
	q.mu.Lock()
	var n int
	for _, ch := range q.chunks {
		n += cap(ch.b)
		if ch.seg == nil && !q.lent(ch.b) {
			putChunk(ch.b)
		}
	}
	q.failed, q.chunks, q.n, q.free, q.held, q.owned = true, nil, 0, nil, -1, nil
	q.mu.Unlock()
	ReleaseMemory(int64(n))
}

// lent reports whether b is a chunk lent by its producer (addLent),
// which the queue must not reuse. q.mu held.
func (q *outQueue) lent(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, o := range q.owned {
		if &b[len(b)-1] == o.last {
			return true
		}
	}
	return false
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
	for {
		q.mu.Lock()
		for q.busy || q.ready() == 0 && !q.closing && !q.failed {
			q.mu.Unlock()
			<-q.wake
			q.mu.Lock()
		}
		if q.failed || len(q.chunks) == 0 {
			q.mu.Unlock()
			return
		}
		chunks, pos := q.take()
		q.busy = true
		q.mu.Unlock()
		if pos != 0 {
			s.Env.Persistence().Wait(pos)
		}
		for i, ch := range chunks {
			chunks[i] = outChunk{}
			for b := range ch.pieces() {
				now := s.Env.Clock.NowMs()
				n, err := c.outWrite(b) // wown is wQueue and busy is ours: this goroutine alone writes
				s.Env.Stats.NetOutputBytes.Add(int64(n))
				if n > 0 {
					c.sess.LastIO.Store(now)
				}
				q.mu.Lock()
				q.wroteLocked(b, len(b))
				left := q.n
				if err != nil {
					q.busy = false
				}
				q.mu.Unlock()
				c.sess.OutBuf.Store(left)
				if err != nil {
					q.fail()
					c.kill()
					return
				}
			}
		}
		q.mu.Lock()
		q.busy = false
		q.spare = chunks[:0]
		q.mu.Unlock()
	}
}

// drain writes the queue's ready bytes from an event loop at the end of
// its round, without blocking, instead of waking the writer goroutine:
// a PUBLISH to many subscribers then costs the loop one write per
// subscriber per round, as in Redis, and no goroutine wake-up each. It
// reports false when it wrote nothing and the writer must be woken (the
// client is not the loop's kind, a write or the AOF's fsync is in
// progress); a socket that does not take everything gets the rest back
// at the head of the queue, and the writer is woken to wait for it.
func (q *outQueue) drain(now int64) bool {
	c := q.c
	if c == nil || c.fd < 0 || c.tsock != nil || c.wown.Load() != wQueue {
		return false // the writer alone writes TLS, or bytes behind a direct write
	}
	s := c.srv
	q.mu.Lock()
	if q.busy || q.failed || q.closing || q.ready() == 0 {
		q.mu.Unlock()
		return false
	}
	if q.syncPos != 0 && !s.Env.Persistence().Durable(q.syncPos, nil) {
		q.mu.Unlock()
		return false // the writer waits for the fsync
	}
	chunks, _ := q.take()
	q.busy = true
	q.mu.Unlock()
	total := 0
	var rest []outChunk
	done := len(chunks) // chunks written whole
	for i, ch := range chunks {
		for b := range ch.pieces() {
			n, err := fdWrite(c.fd, b)
			total += n
			if err == nil && ch.seg == nil {
				break // accounted for below, with the others written whole
			}
			q.mu.Lock()
			q.wroteLocked(b, n)
			q.mu.Unlock()
			if err == nil {
				continue
			}
			done = i
			chunks[i] = outChunk{}
			// The rest goes back to the head of the queue for the writer
			// (which meets a failure again and closes).
			if n < len(b) {
				rest = append(rest, outChunk{b: b[n:]})
			}
			if ch.seg != nil && ch.seg.Size() > 0 {
				rest = append(rest, ch)
			}
			rest = append(rest, chunks[i+1:]...)
			clear(chunks[i+1:])
			break
		}
		if done < len(chunks) {
			break
		}
	}
	s.Env.Stats.NetOutputBytes.Add(int64(total))
	if total > 0 {
		c.sess.LastIO.Store(now)
	}
	q.mu.Lock()
	for i, ch := range chunks[:done] {
		if ch.seg == nil {
			q.wroteLocked(ch.b, len(ch.b))
		}
		chunks[i] = outChunk{}
	}
	if len(rest) > 0 && !q.failed {
		q.chunks = append(rest, q.chunks...)
		if q.held >= 0 {
			q.held += len(rest)
		}
	}
	q.busy = false
	q.spare = chunks[:0]
	more := q.ready() > 0 || q.closing || q.failed
	left := q.n
	q.mu.Unlock()
	c.sess.OutBuf.Store(left)
	if more {
		q.signal()
	}
	return true
}

// pieces yields the chunk's bytes: b, or the segment's encoding in
// pooled chunks of bigChunk, each encoded once the one before it has been
// handed on (the caller accounts for each with wroteLocked, which gives
// a piece written whole back to the pool). Only the queue's writer (busy)
// calls it.
func (ch outChunk) pieces() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		if ch.seg == nil {
			yield(ch.b)
			return
		}
		for ch.seg.Size() > 0 {
			if !yield(ch.seg.Next(getChunk(), bigChunk)) {
				return
			}
		}
	}
}
