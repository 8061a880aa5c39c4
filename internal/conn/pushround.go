package conn

// Output pushed to a client during another client's batch (a PUBLISH's
// messages, keyspace events, invalidations, MONITOR lines) is gathered
// per receiving client in a buffer of its own, guarded by the server
// lock, and joins the receiver's pushed-output queue once: at the end of
// the event loop's round when the batch ran on a loop (roundEnd), else
// at the batch's end (flushPushes, still under the lock). Fifty
// PUBLISHes to 100 subscribers in a round then take each subscriber's
// queue lock once instead of fifty times, and wake its writer (or the
// loop's drain) once, as Redis appends to a client's buffer without a
// lock and writes it once per round.
//
// Invariants:
//   - Order: a receiver's gathered bytes are in its queue before any
//     output of its own or any push that is not gathered can follow
//     them: its own batch moves them first (runLocked), as do its
//     replies staged outside a batch (protocolError, waitBlocked) and a
//     push that goes to the queue at once (push, pushLent:
//     flushPendNow), all under the server lock; within the gathered
//     bytes, the order they were pushed in. A script's start moves every
//     receiver's (scriptStarted), and pushes made while a script runs go
//     to the queue at once: a client answered on the busy path stages
//     replies without the server lock, and must find there what was
//     pushed before them.
//   - The AOF: while pushes are held (holdPushes), every batch moves
//     what was gathered at its end, held, before its releasePushes, as
//     the AOF position that releases them is the batch's.
//   - Limits: the receiver's limits are checked as bytes are gathered,
//     against what was queued when its first byte of the round was
//     gathered plus what is gathered (the queue only shrinks meanwhile,
//     so this errs toward closing, as Redis counts its unwritten buffer);
//     a comparison per push until the smallest limit is near, the full
//     check (overLimit, which also keeps the soft limit's time) from
//     there. A client over its limit is closed at once and what it has
//     gathered dropped.
//   - Nothing stays gathered past the round: Server.gathered is set
//     while pushPend is not empty, and the loop's round end takes the
//     server lock to move them when it is (roundEnd), before it writes.

// roundPush is a receiving client's gathered output (under the server
// lock).
type roundPush struct {
	pend []byte
	// inPend says the client is in Server.pushPend.
	inPend bool
	// pendBase is what its queue held when the batch's first byte was
	// gathered; pendCheck is the unread output (queued and gathered) from
	// which the limits may apply.
	pendBase, pendCheck int64
	// pendEarly says the gathered bytes may join the queue before the
	// round ends, in pieces of keepPend (gather).
	pendEarly bool
	// limFrom caches limitFrom's result (less TLS's pending bytes) for
	// the limits, flags and authentication it was computed for.
	limFrom   int64
	limOf     *outLimits
	limFlags  string
	limAuthed bool
}

// keepPend is the largest gathering buffer a client keeps for the next
// round; a larger one (a message larger than it) goes with the round.
const keepPend = 4 << 10

// pushGathers reports whether output pushed to c now is gathered for the
// end of the batch: during another client's batch, and no script running.
func (s *Server) pushGathers(c *client) bool {
	return s.current != nil && s.current != c && !s.Env.ScriptRunning()
}

// gather appends b to c's output of the batch, checking c's limits.
func (c *client) gather(b []byte) {
	s := c.srv
	if c.sess.Killed.Load() {
		return
	}
	if !c.inPend {
		// Gathered bytes move on early (below) only to a queue whose
		// writer sleeps until the round's end wakes it: not to one made
		// now, whose writer starts at once and would send them before
		// the rest of the batch is gathered and its limits checked.
		c.pendEarly = c.out.Load() != nil
		q, _ := c.pushQueue() // made now, so the socket's owner changes as for any push
		c.inPend = true
		c.pendBase = q.size()
		c.pendCheck = c.limitFrom()
		if len(s.pushPend) == 0 {
			s.gathered.Store(true)
		}
		s.pushPend = append(s.pushPend, c)
	} else if c.pendEarly && len(c.pend) > 0 && len(c.pend)+len(b) > keepPend {
		// A round's output for a subscriber can be large (fifty
		// publishers' batches of 16): what is gathered moves on in
		// pieces of keepPend, so the buffer is kept and never regrown.
		c.pendBase = c.movePend(s.current.roundWakes, s.holdPushes())
		c.pend = c.pend[:0]
	}
	c.pend = append(c.pend, b...)
	if n := c.pendBase + int64(len(c.pend)); n >= c.pendCheck && c.pushOver(n) {
		c.pend = c.pend[:0]
		c.closeForLimit(n)
	}
}

// limitFrom is the unread output below which none of c's limits can
// apply (overLimit and addedWaking's check are false under it).
func (c *client) limitFrom() int64 {
	l := c.srv.outputLimits()
	if l != c.limOf || c.sess.Flags != c.limFlags || c.sess.Authed != c.limAuthed {
		c.limFrom = limitFromOf(c.limitFor(l))
		c.limOf, c.limFlags, c.limAuthed = l, c.sess.Flags, c.sess.Authed
	}
	return c.limFrom - c.tlsPending()
}

func limitFromOf(lim classLimit, unauth bool) int64 {
	at := int64(outLimit) + 1
	if unauth {
		at = unauthLimit + 1
	}
	if lim.hard > 0 {
		at = min(at, lim.hard)
	}
	if lim.soft > 0 {
		at = min(at, lim.soft)
	}
	return at + replyBufBytes
}

// pushOver is addedWaking's check of c's limits with n bytes unread, the
// peak noted as there.
func (c *client) pushOver(n int64) bool {
	c.setOutBuf(n)
	lim, unauth := c.limitFor(c.srv.outputLimits())
	return c.overLimit(n) || (!unauth && !lim.limited() && n > outLimit)
}

// flushPushes moves the gathered output to the receivers' queues, their
// writers woken after the round when wl is set. Under the server lock,
// before releasePushes.
func (s *Server) flushPushes(wl *wakeList) {
	if len(s.pushPend) == 0 {
		return
	}
	hold := s.holdPushes()
	for i, c := range s.pushPend {
		s.pushPend[i] = nil
		c.flushPend(wl, hold)
	}
	s.pushPend = s.pushPend[:0]
	s.gathered.Store(false)
}

// flushBatchPushes is flushPushes at the end of c's batch: a batch on an
// event loop leaves the gathered output for the round's end (roundEnd),
// unless pushes are held for the AOF, whose release is the batch's.
func (s *Server) flushBatchPushes(c *client) {
	if c.roundWakes == nil || s.holdPushes() {
		s.flushPushes(c.roundWakes)
	}
}

// flushPend moves c's gathered output to its queue.
func (c *client) flushPend(wl *wakeList, hold bool) {
	c.inPend = false
	if len(c.pend) > 0 {
		c.movePend(wl, hold)
	}
	if cap(c.pend) > keepPend {
		c.pend = nil
	} else {
		c.pend = c.pend[:0]
	}
}

// movePend appends c's gathered output to its queue and returns the bytes
// queued then (0 when the queue takes no more).
func (c *client) movePend(wl *wakeList, hold bool) int64 {
	q := c.out.Load()
	n, ok := q.append(c.pend, hold)
	if ok {
		if n < c.limitFrom() && c.softSince.Load() == 0 {
			// Under every limit (the check of addedWaking would find
			// nothing to do): publish the size and wake.
			c.setOutBuf(n)
			if wl != nil {
				wl.later(q)
			} else {
				q.signal()
			}
		} else {
			q.addedWaking(c, n, wl)
		}
	}
	if hold {
		c.srv.held(q)
	}
	return n
}

// flushPendNow moves c's gathered output to its queue ahead of output of
// its own or a push that does not gather. Under the server lock.
func (c *client) flushPendNow() {
	if len(c.pend) == 0 {
		return
	}
	s := c.srv
	var wl *wakeList
	if s.current != nil {
		wl = s.current.roundWakes
	}
	// c stays in pushPend, where flushPushes finds nothing left; a
	// later gather puts it in again, with its queue's new size.
	c.flushPend(wl, s.holdPushes())
}
