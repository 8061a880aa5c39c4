package conn

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/internal/config"
)

// Output buffer limits, as Redis 7.0 applies client-output-buffer-limit.
//
// A client's output buffer is what it has been answered and has not read:
// the replies built and not yet written, and its pushed-output queue.
// Redis keeps the first 16 KB of it in a static buffer that the limits do
// not count (replyBufBytes) and checks the rest each time replies are
// appended; so does Abacus, as a reply grows past the limit (each bulk
// string, resp.Writer.Limit: a reply larger than the limit is dropped
// when it passes it, not built whole), after each command (runLocked)
// and each time bytes join the queue (outQueue.add). A client over its class's hard
// limit, or over its soft limit for longer than soft-seconds, is closed at
// once without being sent what is left, and Redis's line is logged.
//
// Replies are written once a client's unwritten replies reach
// replyFlushAt, not only at the end of a batch, so no batch builds more
// than that plus one reply. When the socket will not take them, a client
// whose class has a limit (or that has not authenticated) goes on being
// served as in Redis, its output queued, until the limit closes it; a
// client without a limit stops being served until it reads (the loop
// hands it to its goroutine, which waits for the socket), so its memory
// is bounded by its socket rather than by its pipeline; its input is read
// meanwhile (writeReading), so that a client that writes all its
// pipeline before it reads does not wait for the server while the server
// waits for it. A client whose unread output passed backlogAt is served
// after the loop's other clients, within a budget (loop_linux.go,
// serveHeavy).

const (
	// replyFlushAt is how many bytes of replies a client may have built
	// and not written before its batch stops to write them: Redis writes
	// at most NET_MAX_WRITES_PER_EVENT (64 KB) per client per event.
	replyFlushAt = 64 << 10
	// loopMaxReplies is how many bytes of replies a loop client may have
	// built in one turn before the loop serves the others (runBatch).
	loopMaxReplies = 1 << 20
	// replyBufBytes is Redis's static reply buffer (PROTO_REPLY_CHUNK_BYTES),
	// which the limits do not count.
	replyBufBytes = 16 << 10
	// unauthLimit is what a client that must authenticate may have
	// unread beyond replyBufBytes: Redis closes it past 1024 bytes
	// (CVE-2025-21605; Debian's redis-server 7.0.15 carries the fix).
	unauthLimit = 1024
)

// Output buffer limit classes, in client-output-buffer-limit's order.
const (
	classNormal = iota
	classReplica
	classPubsub
)

// outputClass is the client's class for the limits, Redis's
// getClientType: a replica (flag S, a MONITOR excepted) or a client with
// subscriptions (flag P), otherwise normal (a primary's link counts as
// normal too). The families that make replicas and subscribers set those
// flags on the session, under the server lock.
func (c *client) outputClass() int {
	f := c.sess.Flags
	if f == "" {
		return classNormal
	}
	if strings.IndexByte(f, 'S') >= 0 && !c.sess.Monitor {
		return classReplica
	}
	if strings.IndexByte(f, 'P') >= 0 {
		return classPubsub
	}
	return classNormal
}

// classLimit is one class's limits in bytes (0: none) and seconds.
type classLimit struct {
	hard, soft, softSecs int64
}

// limited reports whether the class has a limit at all.
func (l classLimit) limited() bool { return l.hard > 0 || l.soft > 0 }

// outLimits is the client-output-buffer-limit value src parsed.
type outLimits struct {
	src   string
	class [3]classLimit
}

// outputLimits returns the limits in force. The parsed form is kept until
// the parameter changes; comparing the value with the one parsed costs a
// pointer comparison while it has not.
func (s *Server) outputLimits() *outLimits {
	v := s.Cfg.Str(config.ClientOutputBufferLimit)
	if l := s.obl.Load(); l != nil && l.src == v {
		return l
	}
	l := &outLimits{src: v}
	for i, name := range []string{"normal", "replica", "pubsub"} {
		h, sf, secs := config.OutputBufferLimit(v, name)
		l.class[i] = classLimit{hard: clampInt64(h), soft: clampInt64(sf), softSecs: secs}
	}
	s.obl.Store(l)
	return l
}

func clampInt64(v uint64) int64 {
	if v > 1<<62 {
		return 1 << 62
	}
	return int64(v)
}

// limitFor returns the limits that apply to c now: its class's, and for a
// client that has not authenticated the small limit Redis gives it.
// unauth says the latter applies.
func (c *client) limitFor(l *outLimits) (lim classLimit, unauth bool) {
	return l.class[c.outputClass()], !c.sess.Authed
}

// outputCheckAt returns the length of the reply buffer at which runLocked
// looks at c's output: replyFlushAt, or less when a limit is smaller. It
// is computed once per batch so that the check per command is a
// comparison.
func (c *client) outputCheckAt(l *outLimits) int {
	at := replyFlushAt
	lim, unauth := c.limitFor(l)
	if unauth {
		at = min(at, replyBufBytes+unauthLimit)
	}
	if lim.hard > 0 && lim.hard+replyBufBytes < int64(at) {
		at = int(lim.hard + replyBufBytes)
	}
	if lim.soft > 0 && lim.soft+replyBufBytes < int64(at) {
		at = int(lim.soft + replyBufBytes)
	}
	return at
}

// limitedBy reports whether an output limit of l applies to c.
func (c *client) limitedBy(l *outLimits) bool {
	lim, unauth := c.limitFor(l)
	return unauth || lim.limited()
}

// keepServing reports whether c goes on being served while its socket is
// full (its output then queues up to its limit), rather than waiting for
// the socket: when a limit applies to it, as in Redis.
func (c *client) keepServing() bool { return c.limitedBy(c.srv.outputLimits()) }

// outputGrew is runLocked's look at the output once the replies built
// reach checkAt: it publishes their size and closes the client when they
// put it over its limits. It reports whether the batch stops here, to
// write them (they passed replyFlushAt) or because the client is closed.
func (c *client) outputGrew() bool {
	unread := int64(len(c.w.Buf))
	if q := c.out.Load(); q != nil {
		unread += q.size()
	}
	c.setOutBuf(unread)
	c.outShown = true
	if c.overLimit(unread) {
		c.closeForLimit(unread)
		c.dropReplies()
		return true
	}
	if out := len(c.w.Buf) + c.deferredOut; out >= replyFlushAt {
		c.roundOut += out
		c.deferredOut = 0
		return true
	}
	return false
}

// unsent is the client's queued output.
func (c *client) unsent() int64 {
	if q := c.out.Load(); q != nil {
		return q.size()
	}
	return 0
}

// dropReplies discards the replies not sent to a client closed for its
// limits: nothing more is sent (a deferred write then ends with nothing
// to write).
func (c *client) dropReplies() {
	ReleaseMemory(int64(cap(c.w.Buf)))
	c.w.Buf, c.wpendLen = nil, 0
}

// appendLimit is the length of the reply buffer past which a reply being
// built is checked against c's limits (resp.Writer.Limit; 0: none
// applies): the smallest limit, less what is queued.
func (c *client) appendLimit(l *outLimits) int {
	lim, unauth := c.limitFor(l)
	var at int64
	for _, v := range []int64{lim.hard, lim.soft} {
		if v > 0 && (at == 0 || v < at) {
			at = v
		}
	}
	if unauth && (at == 0 || unauthLimit < at) {
		at = unauthLimit
	}
	if at == 0 {
		return 0
	}
	return int(max(at+replyBufBytes-c.unsent(), 1))
}

// overAppend is the reply buffer's check as a reply grows past
// appendLimit (resp.Writer.Over): whether n bytes of replies, with what
// is queued, put c over its limits (Redis checks on each append). If
// not, the next check is set where the limit would be reached.
func (c *client) overAppend(n int) bool {
	unread := int64(n) + c.unsent()
	if c.overLimit(unread) {
		return true
	}
	// Over a soft limit not yet for long enough: look again after one
	// more replyFlushAt, as the time passes.
	c.w.Limit = n + max(c.appendLimit(c.srv.outputLimits())-n, replyFlushAt)
	return false
}

// dropForLimit closes c, whose reply being built put it over its limits.
func (c *client) dropForLimit() {
	unread := int64(len(c.w.Buf)) + c.unsent()
	c.setOutBuf(unread)
	c.closeForLimit(unread)
	c.dropReplies()
}

// overLimit reports whether unread bytes of output put c over its limits,
// Redis's checkClientOutputBufferLimits; it keeps the time the soft limit
// was first reached (c.softSince) as a side effect.
func (c *client) overLimit(unread int64) bool {
	used := unread + c.tlsPending() - replyBufBytes
	if used <= 0 {
		// Redis checks only once replies overflow its static buffer.
		return false
	}
	lim, unauth := c.limitFor(c.srv.outputLimits())
	if unauth && used > unauthLimit {
		return true
	}
	if lim.hard > 0 && used >= lim.hard {
		return true
	}
	if lim.soft > 0 && used >= lim.soft {
		now := c.srv.Env.Clock.NowMs() / 1000
		since := c.softSince.Load()
		if since == 0 {
			c.softSince.Store(now)
			return false
		}
		return now-since > lim.softSecs
	}
	c.softSince.Store(0)
	return false
}

// passedAt is the output at which c, with unread bytes of output and a
// reply that overLimit has just found to put it over its limits, passes
// them: the smallest limit that closes it now (the unauthenticated one,
// the hard one, or the soft one once held for too long) beyond Redis's
// static buffer, and at least unread.
func (c *client) passedAt(unread int64) int64 {
	lim, unauth := c.limitFor(c.srv.outputLimits())
	at := int64(-1)
	if unauth {
		at = unauthLimit + 1
	}
	if lim.hard > 0 && (at < 0 || lim.hard < at) {
		at = lim.hard
	}
	if since := c.softSince.Load(); lim.soft > 0 && since != 0 && c.srv.Env.Clock.NowMs()/1000-since > lim.softSecs && (at < 0 || lim.soft < at) {
		at = lim.soft
	}
	return max(unread, at+replyBufBytes)
}

// closeForLimit closes c for overcoming its output buffer limit (with the
// server lock held, unless c.unlocked says otherwise): what it
// has not been sent is dropped and the connection is shut down at once;
// its owner then tears it down (Redis's freeClientAsync). It reports
// false when c was already being closed.
func (c *client) closeForLimit(unread int64) bool {
	if c.sess.Killed.Load() {
		return false
	}
	s := c.srv
	s.Env.Stats.OutputLimitCloses.Add(1)
	info := c.describe(unread)
	if !c.unlocked.Load() {
		info = c.infoLocked()
	}
	s.Log.Warn(fmt.Sprintf("Client %s scheduled to be closed ASAP for overcoming of output buffer limits.", info))
	if q := c.out.Load(); q != nil {
		q.fail()
	}
	c.kill()
	c.setOutBuf(0)
	return true
}

// describe is the part of the CLIENT LIST line the connection knows, for
// log lines made without the server lock.
func (c *client) describe(omem int64) string {
	s := c.sess
	now := c.srv.Env.Clock.NowMs()
	name := s.Name
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d db=%d qbuf=%d omem=%d cmd=%s user=%s",
		s.ID, s.Addr, s.LAddr, s.FD, name, (now-s.Created)/1000, (now-s.LastIO.Load())/1000,
		s.DB, s.QueryBuf.Load(), omem, s.LastCmd, s.User)
}

// setOutBuf publishes c's unread output (CLIENT LIST omem) and notes it
// in the server's recent peak.
func (c *client) setOutBuf(n int64) {
	n += c.tlsPending()
	c.sess.OutBuf.Store(n)
	c.srv.outPeak.note(c.srv.peakSecond(), n)
}

// peakSecond is the second the peaks are noted in: the cron's reading,
// refreshed every tick, so that the output path (a note per message
// pushed) reads no clock.
func (s *Server) peakSecond() int64 {
	if sec := s.peakSec.Load(); sec != 0 {
		return sec
	}
	return s.Env.Clock.NowMs() / 1000
}

// OutputLimitDisconnections is how many clients were closed for their
// output buffer limits (Redis 7.2's client_output_buffer_limit_disconnections;
// 7.0 does not report it).
func (s *Server) OutputLimitDisconnections() int64 { return s.Env.Stats.OutputLimitCloses.Load() }

// DeferredReplies is how many replies were queued to be encoded as they
// are sent (client.deferReply), for tests.
func (s *Server) DeferredReplies() int64 { return s.deferred.Load() }

// RecentMaxOutputBuffer is the largest unread output a client had in the
// last few seconds, for INFO client_recent_max_output_buffer (Redis keeps
// the peak of the last CLIENTS_PEAK_MEM_USAGE_SLOTS seconds).
func (s *Server) RecentMaxOutputBuffer() int64 {
	return s.outPeak.max(s.Env.Clock.NowMs() / 1000)
}

// peakSlots is how many seconds a peak is remembered (Redis: 8).
const peakSlots = 8

// peakWindow keeps the largest value noted in each of the last peakSlots
// seconds; lock-free, as it is noted from several goroutines.
type peakWindow struct {
	slot [peakSlots]struct{ sec, v atomic.Int64 }
}

func (w *peakWindow) note(sec, v int64) {
	p := &w.slot[sec%peakSlots]
	if p.sec.Load() != sec {
		p.sec.Store(sec)
		p.v.Store(0)
	}
	for {
		cur := p.v.Load()
		if v <= cur || p.v.CompareAndSwap(cur, v) {
			return
		}
	}
}

func (w *peakWindow) max(sec int64) int64 {
	var m int64
	for i := range w.slot {
		p := &w.slot[i]
		if sec-p.sec.Load() < peakSlots {
			m = max(m, p.v.Load())
		}
	}
	return m
}

// Memory given back to the operating system. Go's scavenger returns freed
// heap slowly (it paces itself to about 1% of a CPU), so the gigabytes a
// closed client's buffers held could stay resident for minutes. Code that
// drops a large buffer reports it here; once bigFree bytes have been
// dropped, debug.FreeOSMemory runs on a goroutine of its own, at most
// once per freeEvery, so that a stream of frees costs one collection a
// second at most, and memory is back with the system within about a
// second of the free.
const (
	bigFree   = 32 << 20
	freeEvery = time.Second
	// freeDelay lets the goroutines that still held the buffers (a
	// pushed-output writer waiting on its socket) let go of them first.
	freeDelay = 200 * time.Millisecond
)

var (
	freedBytes  atomic.Int64
	lastFreeOS  atomic.Int64 // unix ns
	freeRunning atomic.Bool
)

// ReleaseMemory reports n bytes of buffers that are no longer referenced
// (the read side reports its large input buffers here too).
func ReleaseMemory(n int64) {
	if n <= 0 || freedBytes.Add(n) < bigFree || !freeRunning.CompareAndSwap(false, true) {
		return
	}
	go freeOSMemory()
}

// freeOSMemory gives freed memory back while enough has been reported; a
// report made as it stops finds freeRunning clear, or is seen here.
// Trailing releases follow about 1, 2 and 4 s after the last one asked
// for: a buffer reported while a goroutine still held it (a writer
// finishing on a slow socket, a client torn down late on a loaded
// machine) is garbage only after the collection that came too early.
func freeOSMemory() {
	for {
		trailing := 0 // releases still to come after the last asked for
		for freedBytes.Load() >= bigFree || trailing > 0 {
			wait := freeDelay
			if next := time.Duration(lastFreeOS.Load() + int64(freeEvery<<(2-min(trailing, 2))) - time.Now().UnixNano()); next > wait {
				wait = next
			}
			time.Sleep(wait)
			// Frees reported from here on are counted for the next round.
			if freedBytes.Swap(0) >= bigFree {
				trailing = 3
			} else {
				trailing--
			}
			debug.FreeOSMemory()
			lastFreeOS.Store(time.Now().UnixNano())
		}
		freeRunning.Store(false)
		if freedBytes.Load() < bigFree || !freeRunning.CompareAndSwap(false, true) {
			return
		}
	}
}
