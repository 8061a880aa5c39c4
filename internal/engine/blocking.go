package engine

import (
	"math"
	"math/big"
	"time"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
	"github.com/abacusdb/abacus/internal/resp"
)

// Blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN,
// BZPOPMAX, BZMPOP) follow Redis's model; docs/design.md, "Blocking
// commands", has the whole picture. In short:
//
//   - A blocking command that can be served at once is its non-blocking
//     form. Otherwise its handler calls Ctx.block: the client is parked,
//     registered in FIFO order on each of its keys (per database), and
//     the connection stops running its pipeline until the wait ends.
//   - Every write to a key with waiters marks the key ready (through the
//     keyspace's Touched hook). At the end of each top-level command
//     (Execute at depth 0, so after a whole EXEC or script too) the ready
//     keys are served in the order they became ready: the clients waiting
//     on a key whose value has the type they wait for run their command
//     again, in the order they blocked, under the lock, on behalf of
//     themselves, writing into the Waiter's own buffer. While serving,
//     Ctx.ServingKey names the ready key and the handler looks at that key
//     only (Redis 7.0 serves a client from the key that became ready). A
//     handler that still finds nothing calls block again, which then only
//     means "keep my place".
//   - The wait ends by being served, by its deadline, by CLIENT UNBLOCK, or
//     by the connection going away; the server's side (server/blocking.go)
//     waits for it and then sends the reply and goes on with the pipeline.
//
// Everything here runs under the server lock.

// Waiter is one parked client: what it waits for, and its reply once the
// wait is over. The server reads it under the lock.
type Waiter struct {
	S        *Session
	cmd      *Command
	args     [][]byte // a private copy of the command
	db       int
	kind     keyspace.Type // the value type that can serve it
	deadline int64         // unix ms; 0 waits forever
	nodes    []*waitNode   // its place in each key's queue
	out      resp.Writer   // the reply, once done
	done     bool
	wake     func()
	// firstRun is how long the command took when it blocked; Redis adds
	// it to the time of the run that serves it (updateStatsOnUnblock).
	firstRun time.Duration
	// onTimeout writes the timeout reply of a wait that no key ends
	// (BlockFor); nil means a null array.
	onTimeout func(w *resp.Writer)

	// always: run the command again on any write to its keys, even when
	// the key is gone or holds another type (XREADGROUP then fails).
	always bool
}

// Deadline is when the wait times out (unix ms), or 0 for never.
func (w *Waiter) Deadline() int64 { return w.deadline }

// Done reports whether the wait is over (served, timed out, unblocked or
// cancelled); the reply is then ready.
func (w *Waiter) Done() bool { return w.done }

// Reply returns the bytes to send the client once Done.
func (w *Waiter) Reply() []byte { return w.out.Buf }

// SetWake sets what to call, under the lock, when the wait ends. The
// server sets it right after the blocking command returns, before it
// releases the lock.
func (w *Waiter) SetWake(fn func()) { w.wake = fn }

// blockKey is a key in one database.
type blockKey struct {
	db  int
	key string
}

// waitQueue holds the waiters of one key in the order they blocked; nodes
// unlink in O(1) when a waiter leaves.
type waitQueue struct{ head, tail *waitNode }

type waitNode struct {
	w          *Waiter
	q          *waitQueue
	bk         blockKey
	prev, next *waitNode
}

// blockState is the Env's registry of parked clients.
type blockState struct {
	queues   map[blockKey]*waitQueue
	byID     map[int64]*Waiter
	ready    []blockKey
	readySet map[blockKey]struct{}
	hooked   bool
	// While a waiter's command runs again: the waiter, the key that made
	// it ready, and whether the handler asked to go on waiting.
	serving    *Waiter
	servingKey string
	reblock    bool
}

// Parked returns the wait s's last command started, or nil. The server
// asks right after running a command that left s.Blocked set.
func (e *Env) Parked(s *Session) *Waiter {
	w := e.blk.byID[s.ID]
	if w == nil || w.done {
		return nil
	}
	return w
}

// BlockedOn returns how many clients wait on key in database db (tests
// use it to see registrations come and go).
func (e *Env) BlockedOn(db int, key string) int {
	q := e.blk.queues[blockKey{db, key}]
	n := 0
	if q != nil {
		for nd := q.head; nd != nil; nd = nd.next {
			n++
		}
	}
	return n
}

// BlockedClients is the number of clients parked by blocking commands.
func (e *Env) BlockedClients() int { return len(e.blk.byID) }

// ServingKey returns the key a parked client is being served from, when
// c is such a re-run.
func (c *Ctx) ServingKey() (string, bool) {
	b := &c.Env.blk
	if b.serving != nil && b.serving.S == c.S {
		return b.servingKey, true
	}
	return "", false
}

// BlockKeys returns the keys a blocking command looks at: all of keys on
// its first run, only the ready key when it runs again to be served.
func (c *Ctx) BlockKeys(keys [][]byte) [][]byte {
	if k, ok := c.ServingKey(); ok {
		return [][]byte{[]byte(k)}
	}
	return keys
}

// Block parks the client on keys until a value of type kind can serve it,
// or until deadline (unix ms, 0 for never). It reports false, registering
// nothing, when the client may not block (inside MULTI/EXEC or a script:
// Session.DenyBlocking); the handler then replies as on a timeout.
// When the command is running again to be served, block only tells the
// registry that the client keeps its place.
func (c *Ctx) Block(kind keyspace.Type, keys [][]byte, deadline int64) bool {
	return c.block(kind, keys, deadline, false)
}

// BlockAlways is Block for a command that must also run again when a key
// it waits on is deleted or overwritten with another type, to fail there
// (XREADGROUP's group or stream gone).
func (c *Ctx) BlockAlways(kind keyspace.Type, keys [][]byte, deadline int64) bool {
	return c.block(kind, keys, deadline, true)
}

func (c *Ctx) block(kind keyspace.Type, keys [][]byte, deadline int64, always bool) bool {
	e := c.Env
	b := &e.blk
	if b.serving != nil && b.serving.S == c.S {
		b.reblock = true
		return true
	}
	if c.S.DenyBlocking {
		return false
	}
	if !b.hooked {
		b.hooked = true
		b.queues = map[blockKey]*waitQueue{}
		b.byID = map[int64]*Waiter{}
		b.readySet = map[blockKey]struct{}{}
		e.KS.OnTouched(e.markReady)
	}
	w := &Waiter{S: c.S, cmd: c.Cmd, db: c.DB.ID, kind: kind, deadline: deadline, always: always}
	w.out.Proto = c.S.Proto
	w.args = make([][]byte, len(c.Args))
	for i, a := range c.Args {
		w.args[i] = append([]byte(nil), a...)
	}
	for _, k := range keys {
		bk := blockKey{w.db, string(k)}
		if w.waitsOn(bk) {
			continue // BLPOP k k: one place per key
		}
		q := b.queues[bk]
		if q == nil {
			q = &waitQueue{}
			b.queues[bk] = q
		}
		nd := &waitNode{w: w, q: q, bk: bk, prev: q.tail}
		if q.tail != nil {
			q.tail.next = nd
		} else {
			q.head = nd
		}
		q.tail = nd
		w.nodes = append(w.nodes, nd)
	}
	b.byID[c.S.ID] = w
	c.S.Blocked = true
	return true
}

func (w *Waiter) waitsOn(bk blockKey) bool {
	for _, nd := range w.nodes {
		if nd.bk == bk {
			return true
		}
	}
	return false
}

// markReady is the keyspace's Touched hook: a write to a key somebody
// waits on queues the key for serving.
func (e *Env) markReady(db *keyspace.DB, key string) {
	b := &e.blk
	if len(b.queues) == 0 {
		return
	}
	bk := blockKey{db.ID, key}
	if _, ok := b.queues[bk]; !ok {
		return
	}
	if _, dup := b.readySet[bk]; dup {
		return
	}
	b.readySet[bk] = struct{}{}
	b.ready = append(b.ready, bk)
}

// DBsSwapped is SWAPDB's hook: a key somebody waits on in either database
// may now hold another value, or none, so each is queued for serving, as
// Redis's scanDatabaseForReadyKeys and scanDatabaseForDeletedKeys do (an
// XREADGROUP whose stream went away is answered; a waiter whose key is
// still missing waits on).
func (e *Env) DBsSwapped(a, b int) {
	bl := &e.blk
	for bk := range bl.queues {
		if bk.db != a && bk.db != b {
			continue
		}
		if _, dup := bl.readySet[bk]; !dup {
			bl.readySet[bk] = struct{}{}
			bl.ready = append(bl.ready, bk)
		}
	}
}

// ServeReady serves the clients waiting on keys that became ready, in the
// order the keys became ready and, per key, in the order the clients
// blocked. Serving may make more keys ready (BLMOVE pushes); they are
// served in the same call. Execute calls it at the end of every top-level
// command.
func (e *Env) ServeReady() {
	b := &e.blk
	for i := 0; i < len(b.ready); i++ {
		bk := b.ready[i]
		delete(b.readySet, bk)
		q := b.queues[bk]
		if q == nil {
			continue
		}
		db := e.KS.DBs[bk.db]
		for nd := q.head; nd != nil; {
			next := nd.next
			o := db.Lookup(bk.key)
			if nd.w.always || o != nil && nd.w.kind == o.Type {
				e.serveWaiter(nd.w, bk.key)
			}
			nd = next
		}
	}
	clear(b.ready)
	b.ready = b.ready[:0]
}

// serveWaiter runs w's command again on its behalf, looking at key only.
// If the command is served (or fails) the wait is over; if it blocks again
// the client keeps its place and its output is discarded.
func (e *Env) serveWaiter(w *Waiter, key string) {
	b := &e.blk
	start := time.Now()
	now := e.nowMs(start)
	e.KS.Now = now
	e.KS.Expiry = e.expiryFor(w.S)
	ctx := e.getCtx()
	*ctx = Ctx{Args: w.args, Cmd: w.cmd, W: &w.out, S: w.S, Env: e, DB: e.KS.DBs[w.db], Now: now}
	b.serving, b.servingKey, b.reblock = w, key, false
	mark := len(w.out.Buf)
	e.KS.SetSnapshotWrites(w.cmd.Flags&FlagWrite != 0) // BGSAVE's first-touch copies
	tracked := e.trk.hooked
	if tracked {
		e.trk.cur = w.S // its own writes' invalidations follow its reply
	}
	e.call(ctx, mark)
	failed, again := ctx.err, b.reblock
	e.putCtx(ctx)
	if e.depth == 0 && len(e.prop.pending) > 0 {
		e.propFlush() // the served command's effects, before its reply
	}
	b.serving, b.servingKey, b.reblock = nil, "", false
	if tracked {
		e.trk.cur = nil
		if again {
			clear(e.trk.pending) // it wrote nothing
			e.trk.pending = e.trk.pending[:0]
		} else {
			e.ownInvalidations(w.S, &w.out)
		}
	}
	if again {
		w.out.Buf = w.out.Buf[:mark]
		return
	}
	// The call and its first run's time were counted when the command
	// blocked; as Redis's updateStatsOnUnblock, the time again plus this
	// run's goes to the command's time, histogram and slow log, and this
	// run's alone to the command-unblocking latency event.
	st := e.cmdStat(w.cmd.Name)
	dur := time.Since(start)
	total := w.firstRun + dur
	st.Usec += total.Microseconds()
	if failed {
		st.Failed++
	}
	e.trackLatency(st, total)
	e.slowlogPush(w.cmd, w.S, w.args, total)
	e.latencySample("command-unblocking", dur)
	e.endWait(w)
}

// endWait takes w out of the registry and wakes its client.
func (e *Env) endWait(w *Waiter) {
	b := &e.blk
	for _, nd := range w.nodes {
		q := nd.q
		if nd.prev != nil {
			nd.prev.next = nd.next
		} else {
			q.head = nd.next
		}
		if nd.next != nil {
			nd.next.prev = nd.prev
		} else {
			q.tail = nd.prev
		}
		nd.prev, nd.next = nil, nil
		if q.head == nil {
			delete(b.queues, nd.bk)
		}
	}
	w.nodes = nil
	if b.byID[w.S.ID] == w {
		delete(b.byID, w.S.ID)
	}
	w.S.Blocked = false
	w.done = true
	if w.wake != nil {
		w.wake()
	}
}

// TimeoutWait ends w with the timeout reply (a null array, as Redis sends
// for every blocking type) if its deadline has passed at now (unix ms).
// It reports whether the wait is over.
func (e *Env) TimeoutWait(w *Waiter, now int64) bool {
	if w.done {
		return true
	}
	if w.deadline == 0 || now < w.deadline {
		return false
	}
	if w.onTimeout != nil {
		w.onTimeout(&w.out)
	} else {
		w.out.NullArray()
	}
	e.endWait(w)
	return true
}

// BlockFor parks the client until FinishWait ends its wait (no key does)
// or deadline (unix ms, 0 for never) passes, when onTimeout writes the
// reply (WAIT). It returns nil, registering nothing, when the client may
// not block (MULTI/EXEC, scripts).
func (c *Ctx) BlockFor(deadline int64, onTimeout func(w *resp.Writer)) *Waiter {
	if !c.Block(keyspace.TypeString, nil, deadline) { // no keys: the type is never consulted
		return nil
	}
	w := c.Env.blk.byID[c.S.ID]
	w.onTimeout = onTimeout
	return w
}

// FinishWait ends a BlockFor wait with the reply reply writes.
func (e *Env) FinishWait(w *Waiter, reply func(w *resp.Writer)) {
	if w.done {
		return
	}
	reply(&w.out)
	e.endWait(w)
}

// CancelWait ends w without a reply: its connection is gone.
func (e *Env) CancelWait(w *Waiter) {
	if !w.done {
		e.endWait(w)
	}
}

// BlockDeadline parses the timeout argument of a blocking command (seconds
// as a long double) into a deadline in unix ms, 0 for none. It computes as
// Redis's getTimeoutFromObjectOrReply does on x86-64: the seconds times
// 1000 rounded up in 64-bit-mantissa arithmetic, and a value that does not
// fit in a long long becomes LLONG_MIN, hence "timeout is negative".
func (c *Ctx) BlockDeadline(i int) (int64, bool) {
	ms, ok := timeoutMs(c.Args[i])
	if !ok {
		c.Error(ErrTimeout)
		return 0, false
	}
	if ms < 0 {
		c.Error(ErrTimeoutNeg)
		return 0, false
	}
	if ms == 0 {
		return 0, true
	}
	if ms > math.MaxInt64-c.Now {
		return math.MaxInt64, true // beyond any clock: never
	}
	return c.Now + ms, true
}

// timeoutMs converts a timeout in seconds to whole milliseconds, rounding
// up; ok is false when b is not a number strtold accepts.
func timeoutMs(b []byte) (int64, bool) {
	f, ok := num.ParseLongDouble(b)
	if !ok {
		return 0, false
	}
	if f.IsInf() {
		return math.MinInt64, true
	}
	thousand := new(big.Float).SetPrec(64).SetInt64(1000)
	f = new(big.Float).SetPrec(64).SetMode(big.ToNearestEven).Mul(f, thousand)
	z, acc := f.Int(nil) // truncates toward zero
	if acc == big.Below && f.Sign() > 0 {
		z.Add(z, big.NewInt(1)) // ceil
	}
	if !z.IsInt64() {
		return math.MinInt64, true
	}
	return z.Int64(), true
}

// ClientUnblock is CLIENT UNBLOCK id [TIMEOUT|ERROR]: it ends the wait
// of a client parked by a blocking command as if it had timed out, or with
// an UNBLOCKED error, and replies 1; 0 when no such client waits.
func ClientUnblock(c *Ctx) {
	if len(c.Args) > 4 {
		c.Error("ERR unknown subcommand or wrong number of arguments for 'unblock'. Try CLIENT HELP.")
		return
	}
	withError := false
	if len(c.Args) == 4 {
		switch {
		case ascii.OptIs(c.Args[3], "timeout"):
		case ascii.OptIs(c.Args[3], "error"):
			withError = true
		default:
			c.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	}
	id, ok := c.Int(2)
	if !ok {
		return
	}
	w := c.Env.blk.byID[id]
	if w == nil || w.done {
		c.W.Int(0)
		return
	}
	if withError {
		const msg = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
		c.Env.CountError(msg)
		w.out.Error(msg)
		// Redis's call() counts CLIENT UNBLOCK itself as failed too: an
		// error reply was counted while it ran.
		c.err = true
	} else if w.onTimeout != nil {
		w.onTimeout(&w.out)
	} else {
		w.out.NullArray()
	}
	// Either way Redis 7.0 (updateStatsOnUnblock(target, 0, 0, 1)) counts
	// the blocked command as failed and adds its first run's time again,
	// to its time, its histogram and the slow log, the last with the
	// arguments already dropped.
	e := c.Env
	st := e.cmdStat(w.cmd.Name)
	st.Failed++
	st.Usec += w.firstRun.Microseconds()
	e.trackLatency(st, w.firstRun)
	e.slowlogPush(w.cmd, w.S, nil, w.firstRun)
	e.endWait(w)
	c.W.Int(1)
}

// BlockedWithTimeout counts the waits that have a deadline (INFO's
// clients_in_timeout_table).
func (e *Env) BlockedWithTimeout() int {
	n := 0
	for _, w := range e.blk.byID {
		if w.deadline != 0 {
			n++
		}
	}
	return n
}
