package engine

import (
	"strings"
	"time"

	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/resp"
)

// Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH, as in Redis 7.0.
//
// After MULTI, Execute checks each command as usual (unknown, arity,
// NOAUTH, no_multi) and then, instead of running it, copies it into the
// session's queue and answers QUEUED. A command refused while queuing
// dooms the transaction: EXEC answers EXECABORT. EXEC runs the queue
// through Env.run (Execute after its checks, which were made when each
// command was queued), one command after the other inside its own call,
// so nothing else runs in between (the server lock is held for the whole
// command), and each queued command gets its commandstats, slow log and
// MONITOR line as in Redis. Errors of single commands do not stop the
// others: the EXEC array carries them.
//
// WATCH registers keys with the keyspace (keyspace/watch.go), which marks
// the watcher dirty on any write to them; EXEC then answers the null
// array. As in Redis, the queue has no memory limit of its own: the client
// query buffer limit bounds each command, not their number.

// Error texts of the family.
const (
	errNoMulti       = "ERR Command not allowed inside a transaction"
	errExecNoMulti   = "ERR EXEC without MULTI"
	errDiscardNoMult = "ERR DISCARD without MULTI"
	errWatchInMulti  = "ERR WATCH inside MULTI is not allowed"
	execAbortPrefix  = "EXECABORT Transaction discarded because of: "
)

const txFlags = FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy

func init() {
	cmd := func(name string, arity int, flags Flag, summary, since, complexity string, h func(*Ctx)) *Command {
		return &Command{Name: name, Arity: arity, Flags: flags, ACL: "@transaction", Group: "transactions",
			Summary: summary, Since: since, Complexity: complexity, Handler: h}
	}
	watch := cmd("watch", -2, txFlags, "Monitors changes to keys to determine the execution of a transaction.", "2.2.0", "O(1) for every key.", cmdWatch)
	watch.First, watch.Last, watch.Step, watch.KeyFlags = 1, -1, 1, "RO"
	Register(
		cmd("multi", 1, txFlags, "Starts a transaction.", "1.2.0", "O(1)", cmdMulti),
		cmd("exec", 1, FlagNoScript|FlagLoading|FlagStale|FlagSkipSlowlog, "Executes all commands in a transaction.", "1.2.0",
			"Depends on commands in the transaction", cmdExec),
		cmd("discard", 1, txFlags, "Discards a transaction.", "2.0.0", "O(N), when N is the number of queued commands", cmdDiscard),
		watch,
		cmd("unwatch", 1, txFlags, "Forgets about watched keys of a transaction.", "2.2.0", "O(1)", cmdUnwatch),
	)
}

// txState is a session's transaction: the queue after MULTI and the
// watched keys. The queued arguments are copied into one arena (buf), as
// the originals alias the connection's read buffer.
type txState struct {
	multi   bool  // in MULTI: commands are queued
	aborted bool  // a command was refused while queuing (Redis's DIRTY_EXEC)
	execing bool  // EXEC is running the queue
	flags   Flag  // the union of the queued commands' flags
	inv     Flag  // the union of their complements: a flag some lack
	mem     int64 // CLIENT LIST multi-mem: argument bytes + a pointer per argument
	buf     []byte
	ends    []int       // end of each queued argument in buf
	cmds    []queuedCmd // the queued commands
	args    [][]byte
	watch   keyspace.Watcher
	// unwatchLater: an EXEC refused while a script was busy ended the
	// transaction without the lock; its watches are forgotten when the
	// session's next command runs (Execute), before anything can read them.
	unwatchLater bool
}

// queuedCmd is a command checked when queued: EXEC runs it without looking
// it up again.
type queuedCmd struct {
	cmd *Command
	end int // end of its arguments in ends
}

// arenaKeep is the arena capacity kept from one transaction to the next.
const arenaKeep = 4 << 10

// InMulti reports whether the session is queuing commands (after MULTI).
func (s *Session) InMulti() bool { return s.tx.multi }

// InExec reports whether the session's EXEC is running its queue (Redis's
// server.in_exec, for the command running now).
func (s *Session) InExec() bool { return s.tx.execing }

// EffectiveFlags are the flags that decide how cmd is treated before it
// runs (CLIENT PAUSE WRITE): its own, plus for EXEC
// those of the commands it will run, as Redis does.
func (s *Session) EffectiveFlags(cmd *Command) Flag {
	if cmd.Name == "exec" && s.tx.multi {
		return cmd.Flags | s.tx.flags
	}
	return cmd.Flags
}

// ServesStale reports whether cmd may run on a replica whose link is down
// with replica-serve-stale-data no: it has the stale flag and, for EXEC,
// so does every command it will run (Redis's cmd_inv_flags).
func (s *Session) ServesStale(cmd *Command) bool {
	if cmd.Flags&FlagStale == 0 {
		return false
	}
	return cmd.Name != "exec" || !s.tx.multi || s.tx.inv&FlagStale == 0
}

// txRunsNow lists the commands that run at once in MULTI, as in Redis.
func txRunsNow(cmd *Command) bool {
	switch cmd.Name {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return true
	}
	return false
}

// queue takes a command sent in MULTI that passed Execute's checks. It
// returns false when the command must run now instead.
func (e *Env) queue(s *Session, cmd *Command, args [][]byte, w *resp.Writer) bool {
	if cmd.Flags&FlagNoMulti != 0 {
		e.reject(s, w, cmd, args, errNoMulti)
		return true
	}
	if txRunsNow(cmd) {
		return false
	}
	s.tx.push(cmd, args, e.CommandFlags(s, cmd, args))
	w.Simple("QUEUED")
	return true
}

// push copies a command into the queue; flags are the command's as it
// will run (Env.CommandFlags: a script's declared ones). A transaction
// that cannot run (refused command, touched key) keeps nothing, as in
// Redis.
func (t *txState) push(cmd *Command, args [][]byte, flags Flag) {
	if t.aborted || t.watch.Dirty {
		return
	}
	for _, a := range args {
		t.buf = append(t.buf, a...)
		t.ends = append(t.ends, len(t.buf))
		t.mem += int64(len(a)) + 8
	}
	t.cmds = append(t.cmds, queuedCmd{cmd, len(t.ends)})
	t.flags |= flags
	t.inv |= ^flags
}

// queued returns command i's arguments. The slice is reused by the next
// call; each argument is capped so that appending to it copies.
func (t *txState) queued(i int) [][]byte {
	lo := 0
	if i > 0 {
		lo = t.cmds[i-1].end
	}
	t.args = t.args[:0]
	for j := lo; j < t.cmds[i].end; j++ {
		start := 0
		if j > 0 {
			start = t.ends[j-1]
		}
		end := t.ends[j]
		t.args = append(t.args, t.buf[start:end:end])
	}
	return t.args
}

// clearQueue leaves MULTI and empties the queue, keeping a small arena.
func (t *txState) clearQueue() {
	t.multi, t.aborted, t.execing = false, false, false
	t.flags, t.inv, t.mem = 0, 0, 0
	if cap(t.buf) > arenaKeep {
		t.buf, t.ends, t.cmds = nil, nil, nil
	} else {
		t.buf, t.ends, t.cmds = t.buf[:0], t.ends[:0], t.cmds[:0]
	}
	clear(t.args)
	t.args = t.args[:0]
}

// discardTx ends any transaction of s and forgets its watched keys
// (DISCARD, a failed EXEC, RESET, disconnection).
func (e *Env) discardTx(s *Session) {
	s.tx.clearQueue()
	s.tx.watch.Unwatch()
}

// txRejected is called for every refused command: in MULTI the
// transaction is doomed; a refused EXEC (wrong arity, NOAUTH...) ends it
// and says why, as Redis's execCommandAbort does. It returns the error
// text to send.
func (e *Env) txRejected(s *Session, cmd *Command, args [][]byte, msg string) string {
	if s.tx.multi {
		s.tx.aborted = true
	}
	if cmd == nil || cmd.Name != "exec" {
		return msg
	}
	e.discardTx(s)
	if len(e.monitors) > 0 {
		e.FeedMonitors(s, cmd, args)
	}
	return execAbortPrefix + strings.TrimPrefix(msg, "ERR ")
}

func cmdMulti(c *Ctx) {
	if c.S.tx.multi {
		c.Error(ErrMultiNested)
		return
	}
	c.S.tx.multi = true
	c.W.OK()
}

func cmdDiscard(c *Ctx) {
	if !c.S.tx.multi {
		c.Error(errDiscardNoMult)
		return
	}
	c.Env.discardTx(c.S)
	c.W.OK()
}

// EXEC runs the queue unless the transaction is doomed (EXECABORT) or a
// watched key changed or expired (the null array). Either way the
// transaction is over and nothing is watched any more.
func cmdExec(c *Ctx) {
	c.PreventPropagation() // the commands it runs propagate their own effects
	s, e := c.S, c.Env
	t := &s.tx
	switch {
	case !t.multi:
		c.Error(errExecNoMulti)
		return
	case t.aborted:
		e.discardTx(s)
		c.Error(ErrExecAbort)
		return
	case t.watch.Dirty || t.watch.Expired():
		e.discardTx(s)
		c.W.NullArray()
		return
	}
	t.watch.Unwatch()
	t.multi, t.execing = false, true
	deny := s.DenyBlocking
	s.DenyBlocking = true
	defer func() {
		s.DenyBlocking = deny
		e.execMark = 0
		t.clearQueue()
	}()
	n := len(t.cmds)
	c.W.Array(n)
	e.execMark = time.Since(monoBase)
	for i := 0; i < n; i++ {
		cmd, args := t.cmds[i].cmd, t.queued(i)
		if msg := e.aclRecheck(s, cmd, args); msg != "" {
			e.CountError(msg)
			c.W.Error(msg)
			continue
		}
		e.run(s, cmd, args, c.W)
	}
}

func cmdWatch(c *Ctx) {
	if c.S.tx.multi {
		c.Error(errWatchInMulti)
		return
	}
	for _, k := range c.Args[1:] {
		c.DB.Watch(&c.S.tx.watch, string(k))
	}
	c.W.OK()
}

func cmdUnwatch(c *Ctx) {
	c.S.tx.watch.Unwatch()
	c.W.OK()
}

// dropTx forgets a disconnected client's transaction and watched keys.
func (e *Env) dropTx(s *Session) {
	e.discardTx(s)
	s.tx.buf, s.tx.ends, s.tx.cmds, s.tx.args = nil, nil, nil, nil
}

// TxClientInfo returns CLIENT LIST's view of s's transaction: whether it
// is in MULTI (flag x), whether a watched key changed (flag d), the
// number of queued commands (-1 outside MULTI) and their memory.
func TxClientInfo(s *Session) (inMulti, dirty bool, queued, mem int64) {
	t := &s.tx
	if !t.multi && !t.execing {
		return false, t.watch.Dirty, -1, 0
	}
	return true, t.watch.Dirty, int64(len(t.cmds)), t.mem
}

// ResetSession is RESET's part in the engine: it discards s's transaction
// and WATCHed keys, takes s out of MONITOR mode, drops its
// subscriptions and turns tracking off.
func (e *Env) ResetSession(s *Session) {
	e.discardTx(s)
	s.cl = clusterSession{}
	if s.Monitor {
		e.removeMonitor(s)
	}
	if s.subs != nil {
		e.unsubscribeAll(s)
	}
	e.DisableTracking(s)
}
