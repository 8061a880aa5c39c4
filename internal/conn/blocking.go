package conn

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/resp"
)

// The connection's side of blocking commands (the registry and the
// serving of ready keys are in command/blocking.go; docs/design.md,
// "Blocking commands", has the whole picture).
//
// When a command parks its client, runLocked stops the batch there and
// releases the lock, flushing the replies of the commands before it. The
// client's goroutine (a loop client is handed off to one first) then
// waits in waitBlocked, which goes on reading the socket:
// a close is noticed at once (and the wait cancelled), and whatever else
// the client sends is kept in stash, to be parsed once the wait is over.
// The wait ends under the lock, by another goroutine (served, CLIENT
// UNBLOCK) or by this one (timeout, disconnect); the waker interrupts the
// read by moving the read deadline to now. The reply the Waiter holds is
// then sent, and the rest of the pipeline runs.

// parkState is what a client keeps while a blocking command waits.
type parkState struct {
	wait  *engine.Waiter // the wait in progress, nil when none
	stash []byte         // bytes received while parked, not yet parsed
}

// manualPoll is how often a parked client looks at a manual clock (tests
// move it by hand) to notice that its deadline has passed.
const manualPoll = 20 * time.Millisecond

// park is called under the lock right after a command left the session
// blocked: it takes over the wait, if the command started one, and
// reports whether it did.
func (c *client) park() bool {
	w := c.srv.Env.Parked(c.sess)
	if w == nil {
		return false
	}
	c.blk.wait = w
	w.SetWake(c.wakeParked)
	return true
}

// wakeParked interrupts the parked goroutine's read; it runs under the
// lock, once the wait is over.
// Before a handoff from the event loop the client has no conn yet: its
// goroutine finds the wait over when it starts.
func (c *client) wakeParked() {
	c.ioMu.Lock()
	if c.conn != nil {
		c.conn.SetReadDeadline(time.Now())
	}
	c.ioMu.Unlock()
}

// waitBlocked holds the client until its wait ends, then sends the reply.
// It reports false when the connection must close (gone, killed, server
// shutting down, query buffer over its limit).
func (c *client) waitBlocked() bool {
	s := c.srv
	w := c.blk.wait
	defer func() { c.blk.wait = nil }()
	_, realClock := s.Env.Clock.(clock.Real)
	for {
		s.mu.Lock()
		if w.Done() || s.Env.TimeoutWait(w, s.Env.Clock.NowMs()) {
			break // with the lock held
		}
		if s.closing.Load() || c.sess.Killed.Load() {
			s.Env.CancelWait(w)
			s.mu.Unlock()
			return false
		}
		var dl time.Time
		switch {
		case w.Deadline() == 0:
		case realClock:
			dl = time.UnixMilli(w.Deadline())
		default:
			dl = time.Now().Add(manualPoll)
		}
		// Set under the lock: a waker (also under the lock) runs either
		// before, and the loop sees Done, or after, and its deadline wins.
		c.conn.SetReadDeadline(dl)
		s.mu.Unlock()
		if s.closing.Load() {
			// Close moves every read deadline to now after setting closing;
			// ours may have overwritten it.
			c.cancelWait(w)
			return false
		}
		ok := c.readParked()
		if !ok {
			c.cancelWait(w)
			return false
		}
	}
	c.conn.SetReadDeadline(time.Time{})
	c.flushPendNow() // pushed to it before its reply (pushround.go)
	mark := len(c.w.Buf)
	c.w.Buf = append(c.w.Buf, w.Reply()...)
	c.applyReplyMode(mark)
	aofOff := s.Env.Persistence().Flush(c.out.Load() != nil) // see runLocked
	if len(s.heldQs) > 0 {
		s.releasePushes(aofOff, nil)
	}
	direct := c.stage()
	s.mu.Unlock()
	c.mustSync(aofOff)
	c.finish(direct)
	return !c.sess.Killed.Load()
}

func (c *client) cancelWait(w *engine.Waiter) {
	s := c.srv
	s.mu.Lock()
	s.Env.CancelWait(w)
	s.mu.Unlock()
}

// readParked reads what a parked client sends into its stash. It reports
// false when the connection is gone or the stash passes the query buffer
// limit; a read cut short by the deadline is fine.
func (c *client) readParked() bool {
	s := c.srv
	st := &c.blk
	if cap(st.stash)-len(st.stash) < readChunk/2 {
		nb := make([]byte, len(st.stash), 2*cap(st.stash)+readChunk)
		copy(nb, st.stash)
		st.stash = nb
	}
	n, err := c.conn.Read(st.stash[len(st.stash):cap(st.stash)])
	if n > 0 {
		st.stash = st.stash[:len(st.stash)+n]
		c.sess.LastIO.Store(s.Env.Clock.NowMs())
		// Redis's query buffer holds the commands not run yet and what
		// came after them.
		if int64(c.reader.QueryBuf()+len(st.stash)) > s.Cfg.Int(config.ClientQueryBufferLimit) {
			head := c.reader.QueryHead(64)
			head = append(head[:len(head):len(head)], st.stash[:min(64-len(head), len(st.stash))]...)
			s.Log.Warn(fmt.Sprintf("Closing client that reached max query buffer length: %s (qbuf initial bytes: %s)", c.info(), resp.AppendRepr(nil, head)))
			return false
		}
	}
	return err == nil || errors.Is(err, os.ErrDeadlineExceeded)
}

// read is the connection's read for the serving loop: the bytes a parked
// client received while it waited come first.
func (c *client) read(p []byte) (int, error) {
	st := &c.blk
	if len(st.stash) == 0 {
		return c.connRead(p) // rawio.go
	}
	n := copy(p, st.stash)
	rest := copy(st.stash, st.stash[n:])
	st.stash = st.stash[:rest]
	if rest == 0 && cap(st.stash) > 4*readChunk {
		st.stash = nil
	}
	return n, nil
}
