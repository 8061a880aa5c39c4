package engine

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/internal/acl"
	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/hdr"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
	"github.com/abacusdb/abacus/internal/resp"
)

// Host is what the network side of the server offers to commands: the list
// of connected clients and operations on them and on the process.
type Host interface {
	// Clients returns the connected clients' sessions (a snapshot).
	Clients() []*Session
	// Kill closes a client's connection after its pending replies.
	Kill(s *Session)
	// Shutdown stops the server; it is called with the server lock held.
	Shutdown(save, nosave, now, force bool) error
	// Pause suspends command processing for other clients until the given
	// unix ms; writeOnly pauses only writes. Each purpose holds its own
	// pause, and the one in force is the strongest and longest of them.
	Pause(purpose PausePurpose, until int64, writeOnly bool)
	// Unpause lifts the pause of one purpose; the others stay.
	Unpause(purpose PausePurpose)
	// Addr is the listening address (for INFO tcp_port).
	Port() int
	// RecentMaxBuffers are the most input and unread output memory one
	// client held in the last seconds (INFO client_recent_max_*).
	RecentMaxBuffers() (in, out int64)
}

// PausePurpose names who paused the clients, as Redis keeps a pause per
// purpose: CLIENT UNPAUSE lifts only CLIENT PAUSE's, not a failover's.
type PausePurpose int

const (
	PauseByClient   PausePurpose = iota // CLIENT PAUSE
	PauseByFailover                     // FAILOVER, a cluster manual failover
	PausePurposes                       // the number of purposes
)

// Env is the state shared by every command of one server: the keyspace,
// the configuration, statistics and the host. Commands run under the
// server's lock, so fields without atomics are touched only under it.
type Env struct {
	KS      *keyspace.Keyspace
	Cfg     *config.Config
	Clock   clock.Clock
	Host    Host
	Log     *slog.Logger
	Started time.Time
	RunID   string
	Version string // Abacus's own version
	// ScriptStarted, when set, is called under the server lock as each
	// script starts, so the connection layer can wake its busy-script
	// watcher (ScriptBusyIn then says when the script is busy). It must
	// be cheap and must not block.
	ScriptStarted func()
	// ACL holds the users, ACL LOG and the denial counters (acl.go).
	ACL *acl.Registry

	Stats    Stats
	cmdStats map[string]*CmdStat
	errStats map[string]int64
	slowlog  slowlog
	latency  latencyMonitor
	mu       sync.Mutex // guards cmdStats/errStats readers outside the lock

	// recentStats are cmdStat's last answers, replaced oldest first at
	// recentNext (every entry empty after a reset of the statistics): a
	// client alternating a few commands (MULTI, HINCRBY, ZADD, EXEC) finds
	// each without the map.
	recentStats [4]recentStat
	recentNext  int

	activeExpireOff atomic.Bool  // DEBUG SET-ACTIVE-EXPIRE 0
	cronPaused      atomic.Bool  // DEBUG PAUSE-CRON 1
	denyScriptsOff  atomic.Bool  // DEBUG SET-DISABLE-DENY-SCRIPTS 1
	xssLogged       atomic.Int64 // unix s of the last cross-protocol warning (security.go)
	// dying is set by SHUTDOWN NOSAVE while a script is busy: the server
	// exits under the script, so nothing it did may reach the disk.
	dying atomic.Bool

	monitors []*Session // clients in MONITOR mode (under the server lock)
	blk      blockState // clients parked by blocking commands (blocking.go)
	ctxs     []*Ctx     // reused Ctx values, one per nesting level
	depth    int        // Ctx values in use (EXEC and scripts nest)
	// execMark, while EXEC runs its queue, is the monotonic reading
	// (since monoBase) at which the next queued command starts.
	execMark time.Duration
	// batchMark, while a client's pipelined batch runs (BatchBegin to
	// BatchEnd), is the monotonic reading at which the last top-level
	// command ended, and so the next one starts; 0 outside a batch and
	// before its first command.
	batchMark time.Duration
	batching  bool
	// scr is the scripting state: EVAL scripts, function libraries and
	// the script running now (scripting_run.go).
	scr scriptEnv
	// persist is the durability layer (persistence.go), installed after
	// the connection layer's cron may already read it.
	persist atomic.Pointer[persistBox]
	// prop collects what write commands did for the AOF (propagate.go).
	prop propState
	// exts holds the per-engine state of packages above the engine, one
	// value per slot declared with NewExt (ext.go).
	exts []any
	// ps holds the pub/sub subscriptions (pubsub.go).
	ps pubsubState
	// trk is the client-side caching state (tracking.go).
	trk trackState
	// replInfo writes INFO replication when a replication side is
	// installed (SetReplInfo).
	replInfo func(b *InfoBuilder)
	// readOnlyReplica: the server replicates a primary and clients other
	// than the primary's link may not write (replica-read-only).
	readOnlyReplica atomic.Bool
	// replicaExpiry: the server replicates a primary, so expired keys go
	// only by the primary's DEL (expiryFor).
	replicaExpiry atomic.Bool
	// replRefusal, when set, refuses commands for the replication state
	// (SetReplRefusal).
	replRefusal func(s *Session, cmd *Command) string
	// link is a replica's session for its primary's connection and what
	// closes that connection (SetPrimaryLink).
	link     *Session
	linkKill func()
	// mem is the maxmemory state: measure, eviction pool (evict.go).
	mem memState
	// cluster routes commands by hash slot in cluster mode (cluster.go);
	// nil when cluster-enabled is no.
	cluster ClusterView
	clp     clusterParams // parameters routing reads (cluster_route.go)
	// bgw is the background work the event loops run between rounds
	// (background.go).
	bgw bgWork
}

// SetReadOnlyReplica turns the replica's write refusal on or off.
func (e *Env) SetReadOnlyReplica(on bool) { e.readOnlyReplica.Store(on) }

// SetReplRefusal installs the replication side's refusal of a command
// (min-replicas-to-write, replica-serve-stale-data): it returns the error
// text or "". It is called under the lock for every top-level command and
// every command queued in MULTI, after the MISCONF check, as Redis's
// processCommand orders them.
func (e *Env) SetReplRefusal(f func(s *Session, cmd *Command) string) { e.replRefusal = f }

// SetPrimaryLink records a replica's session for its primary's
// connection (nil: none), which is not one of the Host's clients: CLIENT
// LIST shows it and CLIENT KILL (TYPE master) closes it with kill, as
// Redis lists its master client. Call it under the lock.
func (e *Env) SetPrimaryLink(s *Session, kill func()) { e.link, e.linkKill = s, kill }

// PrimaryLink is the session SetPrimaryLink recorded, or nil.
func (e *Env) PrimaryLink() *Session { return e.link }

// KillSession closes a client's connection: the Host's, or the primary's
// link.
func (e *Env) KillSession(s *Session) {
	if s == e.link && e.linkKill != nil {
		s.Killed.Store(true)
		e.linkKill()
		return
	}
	e.Host.Kill(s)
}

// SetReplicaExpiry turns a replica's expiry on or off: while on, a
// lookup by the primary's link sees an expired key as live and one by
// any other client sees it as absent, and nobody deletes it.
func (e *Env) SetReplicaExpiry(on bool) { e.replicaExpiry.Store(on) }

// pauser is a Host that says whether a CLIENT PAUSE (or FAILOVER's write
// pause) is in force: while one is, a primary's lookups keep expired keys.
type pauser interface{ Paused() bool }

// expiryFor is what s's lookups do with expired keys.
func (e *Env) expiryFor(s *Session) keyspace.ExpiryMode {
	switch {
	case !e.replicaExpiry.Load():
		if p, ok := e.Host.(pauser); ok && p.Paused() {
			return keyspace.ExpireKeep
		}
		return keyspace.ExpireDelete
	case strings.Contains(s.Flags, "M"):
		return keyspace.ExpireNever
	}
	return keyspace.ExpireHide
}

// PastDeadline reports whether an expiry time a command sets has already
// passed, so that the key goes at once instead of getting it. Never on a
// replica: it stores the TTL and the key waits for its primary's DEL
// (Redis's checkAlreadyExpired).
func (c *Ctx) PastDeadline(at int64) bool {
	return at <= c.Now && c.Env.KS.Expiry == keyspace.ExpireDelete
}

// ErrReadOnlyReplica is a write refused by a read-only replica.
const ErrReadOnlyReplica = "READONLY You can't write against a read only replica."

// SetReplInfo installs the writer of INFO's replication section.
func (e *Env) SetReplInfo(f func(b *InfoBuilder)) { e.replInfo = f }

// ReplInfo writes INFO replication through the installed writer and
// reports whether there is one.
func (e *Env) ReplInfo(b *InfoBuilder) bool {
	if e.replInfo == nil {
		return false
	}
	e.replInfo(b)
	return true
}

// ActiveExpireEnabled reports whether the background expiry cycle runs.
func (e *Env) ActiveExpireEnabled() bool { return !e.activeExpireOff.Load() }

// SetActiveExpire turns the background expiry cycle on or off.
func (e *Env) SetActiveExpire(on bool) { e.activeExpireOff.Store(!on) }

// CronPaused reports whether DEBUG PAUSE-CRON stopped the server's
// periodic work; SetCronPaused is that command. Safe without the lock.
func (e *Env) CronPaused() bool     { return e.cronPaused.Load() }
func (e *Env) SetCronPaused(p bool) { e.cronPaused.Store(p) }

// SetDenyScripts is DEBUG SET-DISABLE-DENY-SCRIPTS: with false, scripts
// may call commands flagged noscript (Redis's testing knob).
func (e *Env) SetDenyScripts(deny bool) { e.denyScriptsOff.Store(!deny) }

// Stats counts what INFO stats reports. Atomic fields are updated by the
// connection goroutines outside the lock.
type Stats struct {
	TotalConnections  atomic.Int64
	RejectedConns     atomic.Int64
	TotalCommands     atomic.Int64
	NetInputBytes     atomic.Int64
	NetOutputBytes    atomic.Int64
	PanicsRecovered   atomic.Int64
	UnexpectedErrors  atomic.Int64
	TotalErrorReplies atomic.Int64
	Dirty             atomic.Int64 // changes since the last save
	// OutputLimitCloses counts the clients closed for passing their
	// client-output-buffer-limit (INFO client_output_buffer_limit_disconnections).
	OutputLimitCloses atomic.Int64
	Info              InfoState // instantaneous_* samples, memory peak (info.go)
	Decisions         Decisions // rate limiters' answers, scripts rolled back (decisions.go)

	// Replicas' syncs as Redis's syncCommand counts them: full syncs,
	// partial resyncs accepted, and PSYNCs that asked to continue a
	// history (not "?") and got a full sync.
	SyncFull, SyncPartialOK, SyncPartialErr atomic.Int64
}

// CmdStat is one command's INFO commandstats line.
type CmdStat struct {
	Calls, Usec, Rejected, Failed int64
	hist                          *hdr.Histogram // latency tracking (latency.go)
}

// NewEnv makes an Env over a keyspace and configuration.
func NewEnv(ks *keyspace.Keyspace, cfg *config.Config, clk clock.Clock, log *slog.Logger) *Env {
	e := &Env{
		KS: ks, Cfg: cfg, Clock: clk, Log: log, Started: time.Now(),
		cmdStats: map[string]*CmdStat{}, errStats: map[string]int64{},
		RunID: newRunID(), Version: "0.1.0",
	}
	e.makeExts()
	e.initACL()
	e.ps.init()
	ks.Expired = e.keyExpired
	ks.Added, ks.FieldsExpired = e.keyAdded, e.fieldsExpired
	ks.FieldExpired = e.propFieldExpired
	ks.Missed, ks.MissWanted = e.keyMissed, e.missWanted
	return e
}

// Session is one client's state as commands see it.
type Session struct {
	ID        int64
	Name      string
	Addr      string // remote ip:port
	LAddr     string // local ip:port
	Proto     int    // 2 or 3
	DB        int
	Authed    bool
	User      string
	ACLUser   *acl.User // nil: the default user
	LibName   string
	LibVer    string
	Created   int64 // unix ms
	LastCmdAt int64 // unix ms
	LastCmd   string
	// lookedUp are the commands the session's last lookups found, newest
	// at lookedUpAt: pipelines repeat a command, or a few in turn (MULTI,
	// two writes, EXEC), and comparing a name is cheaper than the table
	// lookup (lookupFor).
	lookedUp   [4]*Command
	lookedUpAt uint8
	NoEvict    bool
	NoTouch    bool
	Reply      ReplyMode
	// CloseAfterReply asks the connection to close once this batch's
	// replies are written (QUIT, protocol errors, CLIENT KILL of self).
	CloseAfterReply bool
	// DropReplies, with CloseAfterReply, closes without writing the
	// replies not yet sent, as Redis's CLIENT_CLOSE_ASAP does (the
	// cross-protocol guard, security.go).
	DropReplies bool
	// Killed is set by CLIENT KILL; the connection notices and closes.
	Killed atomic.Bool
	// Stats the connection keeps for CLIENT LIST.
	QueryBuf, OutBuf atomic.Int64
	Flags            string
	// Set by the connection: its file descriptor, and the unix ms of its
	// last read or write (CLIENT LIST idle, the timeout parameter).
	FD     int
	LastIO atomic.Int64
	// Monitor is set by MONITOR: the client receives every command run.
	Monitor bool
	// Blocked is set (under the server lock) while the client waits: held
	// by CLIENT PAUSE, or later in a blocking command. CLIENT LIST shows
	// it as flag b; the idle timeout spares it.
	Blocked bool
	// DenyBlocking makes blocking commands answer at once as if they had
	// timed out, as Redis's CLIENT_DENY_BLOCKING does: set while a
	// transaction's commands run (EXEC) and for a script's commands.
	DenyBlocking bool
	// Obey marks the AOF loader (and a primary's stream): what it sends
	// was rewritten by the server that ran it, and the few checks Redis's
	// mustObeyClient skips are skipped (XADD/XTRIM's LIMIT without ~).
	Obey bool
	// TLS: the client came in on tls-port (cluster redirects then name
	// the nodes' TLS ports when the bus is TLS).
	TLS bool
	// Push delivers bytes to the client out of band, after the replies
	// already due (MONITOR lines; later pub/sub messages). The server sets
	// it; it is called with the server lock held and never blocks.
	Push func(b []byte)
	// PushLent is Push for a buffer the caller lends, not copied: release
	// is called once its bytes are written (never if the connection
	// closes first), after which the caller may reuse it. Nil where the
	// server does not offer it (Push then copies).
	PushLent func(b []byte, release func())
	// tx is the client's MULTI queue and WATCHed keys (tx.go).
	tx txState
	// subs are the client's pub/sub subscriptions, nil when it has none
	// (pubsub.go).
	subs *sessionSubs
	// track is the client's CLIENT TRACKING mode, nil when off
	// (tracking.go).
	track *sessionTracking
	// closed is set when the connection is gone (Disconnected).
	closed bool
	// cl is the client's cluster state: READONLY, ASKING (cluster_route.go).
	cl clusterSession
	// prep is the work done ahead for the command about to run (prepare.go).
	prep prepared
}

// ReplyMode is CLIENT REPLY's setting.
type ReplyMode uint8

// Reply modes.
const (
	ReplyOn ReplyMode = iota
	ReplyOff
	ReplySkip     // set by CLIENT REPLY SKIP: its own reply is dropped
	ReplySkipNext // the reply of the command after SKIP is dropped
)

// Ctx is one command execution: its arguments, where to reply, and access
// to the session and server state. Args alias the connection's read buffer:
// copy any byte slice that must outlive the call. The Ctx itself is reused
// for the next command once the handler returns: keep no pointer to it.
type Ctx struct {
	Args [][]byte
	Cmd  *Command
	W    *resp.Writer
	S    *Session
	Env  *Env
	DB   *keyspace.DB
	Now  int64 // unix ms, fixed for the command
	err  bool  // an error reply was sent
	// propDone: the command declared its effects, or has none of its own;
	// rewrite: what it propagates if it writes (propagate.go).
	propDone bool
	rewrite  [][]byte
}

// lookupFor is Lookup, answered from the session's last lookups when name
// is one of those commands' (ASCII case-insensitively).
func (s *Session) lookupFor(name []byte) *Command {
	for i := range s.lookedUp {
		// from the newest: a repeated command is found first
		if c := s.lookedUp[(int(s.lookedUpAt)-i)&3]; c != nil && len(c.Name) == len(name) && ascii.EqualFold(name, c.Name) {
			return c
		}
	}
	c := Lookup(name)
	if c != nil {
		s.lookedUpAt = (s.lookedUpAt + 1) & 3
		s.lookedUp[s.lookedUpAt] = c
	}
	return c
}

// Execute runs one command for a session, writing its reply to w. It is
// called with the server lock held. A panic in a handler is recovered,
// logged and answered with an error; the server goes on.
func (e *Env) Execute(s *Session, args [][]byte, w *resp.Writer) {
	if len(args) == 0 {
		return
	}
	if s.tx.unwatchLater {
		s.tx.unwatchLater = false
		s.tx.watch.Unwatch()
	}
	found := s.lookupFor(args[0])
	if found == nil && e.crossProtocol(s, args[0]) {
		return
	}
	if e.cluster != nil {
		s.cl.next(s.tx.multi)
	}
	cmd, known, msg := e.check(s, found, args, true)
	if msg != "" {
		if s.cl.refused {
			s.cl.refused = false
			e.redirectRefusal(s, w, known, args, msg)
			return
		}
		e.reject(s, w, known, args, msg)
		return
	}
	if msg := e.oomRefusal(s, cmd); msg != "" {
		// After check, not in it: ExecuteBusy runs check without the
		// lock, and Redis skips the maxmemory step while a script is busy.
		e.reject(s, w, cmd, args, msg)
		return
	}
	if e.depth == 0 {
		s.LastCmd = cmd.Name // not the commands EXEC or a script runs
	}
	if cmd.Flags&FlagWrite != 0 || cmd.Name == "ping" {
		if msg := e.Persistence().Refusal(); msg != "" { // MISCONF
			e.reject(s, w, cmd, args, msg)
			return
		}
	}
	if e.replRefusal != nil {
		if msg := e.replRefusal(s, cmd); msg != "" { // NOREPLICAS, MASTERDOWN
			e.reject(s, w, cmd, args, msg)
			return
		}
	}
	if s.tx.multi && e.queue(s, cmd, args, w) {
		return
	}
	e.run(s, cmd, args, w)
}

// check makes the checks every command passes before it runs, busy
// server or not: the name (found by the caller), the subcommand, the
// arity and authentication. On failure msg is the error and known is the
// command to count the rejection against (nil for an unknown command or
// subcommand, as Redis's commandstats do). locked: the server lock is
// held, so cluster routing (which reads the cluster layer) runs too.
func (e *Env) check(s *Session, found *Command, args [][]byte, locked bool) (cmd, known *Command, msg string) {
	if found == nil {
		return nil, nil, unknownCommand(args)
	}
	cmd = resolve(found, args)
	if cmd == nil {
		return nil, nil, fmt.Sprintf("ERR unknown subcommand '%s'. Try %s HELP.", ascii.Trunc(ascii.CStr(args[1]), 128), strings.ToUpper(found.Name))
	}
	if !cmd.ArityOK(len(args)) {
		return nil, cmd, fmt.Sprintf("ERR wrong number of arguments for '%s' command", cmd.Name)
	}
	if !s.Authed && cmd.Flags&FlagNoAuth == 0 && e.AuthRequired() {
		return nil, cmd, ErrNoAuth
	}
	if msg := e.aclCheck(s, cmd, args); msg != "" {
		return nil, cmd, msg
	}
	if locked && e.cluster != nil {
		if msg := e.clusterStep(s, cmd, args); msg != "" {
			return nil, cmd, msg
		}
	}
	if cmd.Flags&FlagWrite != 0 && e.readOnlyReplica.Load() && !strings.Contains(s.Flags, "M") {
		return nil, cmd, ErrReadOnlyReplica
	}
	if s.subs != nil && s.Proto == 2 && !allowedSubscribed(cmd) {
		return nil, cmd, "ERR Can't execute '" + cmd.Name + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
	}
	return cmd, cmd, ""
}

// allowedSubscribed reports whether a RESP2 client with subscriptions may
// run cmd (its connection carries messages, so only commands whose
// replies fit in that stream).
func allowedSubscribed(cmd *Command) bool {
	switch cmd.Name {
	case "ping", "subscribe", "ssubscribe", "unsubscribe", "sunsubscribe", "psubscribe", "punsubscribe", "quit", "reset":
		return true
	}
	return false
}

// BatchBegin and BatchEnd bracket the commands of one client's pipelined
// batch, run back to back under the server lock: between them each
// top-level command starts at the clock reading that ended the one
// before, so a command costs one reading rather than two. Nothing may
// wait between them (the caller ends the batch before it blocks, parks or
// lets go of the lock).
func (e *Env) BatchBegin() { e.batching, e.batchMark = true, 0 }

// BatchEnd ends what BatchBegin began.
func (e *Env) BatchEnd() { e.batching, e.batchMark = false, 0 }

// monoBase is the origin of the monotonic readings that time nested
// commands.
var monoBase = time.Now()

// run executes a command that passed Execute's checks (EXEC runs its
// queue through here). Inside EXEC or a script (depth > 0) the clock
// stands still, as in Redis, and only the monotonic clock is read to time
// the command.
func (e *Env) run(s *Session, cmd *Command, args [][]byte, w *resp.Writer) {
	nested := e.depth > 0
	var mono time.Duration
	now := e.KS.Now
	chained := nested && e.execMark != 0
	if chained {
		// EXEC's commands run back to back: one clock reading ends one
		// and starts the next.
		mono, e.execMark = e.execMark, 0
	} else {
		// One monotonic reading gives the start and the time (clock.go);
		// a batch's commands also run back to back, and the reading that
		// ended one starts the next.
		if mono = e.batchMark; nested || mono == 0 {
			mono = time.Since(monoBase)
		}
		if !nested {
			now = e.nowAt(mono)
			e.KS.Now = now
			e.KS.Expiry = e.expiryFor(s)
			e.setAccess(s, cmd)
		}
	}
	s.LastCmdAt = now
	e.Stats.TotalCommands.Add(1)
	if !nested && e.trk.hooked {
		e.trk.cur = s
	}
	ctx := e.getCtx()
	*ctx = Ctx{Args: args, Cmd: cmd, W: w, S: s, Env: e, DB: e.KS.DBs[s.DB], Now: now}
	e.KS.SetSnapshotWrites(cmd.Flags&FlagWrite != 0) // BGSAVE's first-touch copies (keyspace/snapshot.go)
	mark := len(w.Buf)
	e.call(ctx, mark)
	failed := ctx.err
	e.putCtx(ctx)
	if e.depth == 0 && e.dying.Load() {
		// SHUTDOWN NOSAVE stopped this command's script: as from a Redis
		// that exits under it, its effects are not propagated (the AOF
		// never sees a partial script) and its caller gets no reply.
		e.propDiscard()
		w.Buf = w.Buf[:min(mark, len(w.Buf))] // a reply deferred to the client's queue has left Buf (resp.Writer.Deferrer)
		s.CloseAfterReply = true
		return
	}
	end := time.Since(monoBase)
	dur := end - mono
	if chained {
		e.execMark = end
	} else if !nested && e.batching {
		e.batchMark = end
	}
	st := e.cmdStat(cmd.Name)
	st.Calls++
	st.Usec += dur.Microseconds()
	if failed {
		st.Failed++
	}
	blocked := s.Blocked && !nested
	if blocked {
		// As Redis's call(): a command that blocked has its call and
		// time counted now, its histogram and slow log entry when it is
		// served (serveWaiter), and neither if it times out.
		if w := e.blk.byID[s.ID]; w != nil {
			w.firstRun = dur
		}
	} else {
		e.trackLatency(st, dur)
	}
	if e.trk.hooked && cmd.Flags&FlagReadonly != 0 {
		if s != e.scr.sess {
			if s.track != nil {
				e.trackRead(s, cmd, args)
			}
		} else if run := e.scr.running.Load(); run != nil && run.caller.track != nil {
			// A script's read makes its caller track the keys the script
			// declared, not the ones the command named (Redis 7.0).
			e.trackKeys(run.caller, cmd, run.call.Keys, nil)
		}
	}
	if !blocked {
		e.slowlogPush(cmd, s, args, dur)
	}
	e.latencySample(commandLatencyEvent(cmd), dur)
	if len(e.monitors) > 0 && cmd.Flags&(FlagAdmin|FlagSkipMonitor) == 0 {
		e.FeedMonitors(s, cmd, args)
	}
	if e.depth == 0 && len(e.prop.pending) > 0 {
		// before the reply can leave (propagate.go)
		e.propFlushWrap(cmd.Flags&FlagTouchesArbitraryKeys == 0)
	}
	if e.depth == 0 && e.trk.hooked {
		e.trackAfter(s, cmd)
	}
	if e.depth == 0 && len(e.blk.ready) > 0 {
		// The end of a top-level command (a whole EXEC or script):
		// clients waiting on keys it made ready are served now, each
		// as a command of its own in the effect stream.
		e.ServeReady()
	}
}

// nowMs is the command's time: start itself on the wall clock (saving a
// second clock read per command), the configured clock otherwise.
func (e *Env) nowMs(start time.Time) int64 {
	if _, real := e.Clock.(clock.Real); real {
		return start.UnixMilli()
	}
	return e.Clock.NowMs()
}

// getCtx takes a Ctx from the reuse stack; commands run under the server
// lock, so the stack needs no locking, only depth for nested execution.
func (e *Env) getCtx() *Ctx {
	if e.depth == len(e.ctxs) {
		e.ctxs = append(e.ctxs, new(Ctx))
	}
	c := e.ctxs[e.depth]
	e.depth++
	return c
}

func (e *Env) putCtx(c *Ctx) {
	*c = Ctx{}
	e.depth--
}

func (e *Env) call(ctx *Ctx, mark int) {
	defer func() {
		if r := recover(); r != nil {
			e.Stats.PanicsRecovered.Add(1)
			e.Log.Error("panic in command handler", "command", ctx.Cmd.Name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			// Drop whatever part of a reply the handler wrote, so that the
			// client gets one well-formed error.
			if mark <= len(ctx.W.Buf) {
				ctx.W.Buf = ctx.W.Buf[:mark]
			}
			ctx.Error(fmt.Sprintf("ERR internal error while executing '%s'", ctx.Cmd.Name))
		}
	}()
	if !e.propActive() {
		ctx.Cmd.Handler(ctx)
		return
	}
	dirty := e.Stats.Dirty.Load()
	ctx.Cmd.Handler(ctx)
	e.propAfter(ctx, dirty)
}

// AuthRequired reports whether the default user has a password.
func (e *Env) AuthRequired() bool { return e.ACL.AuthRequired() }

// cmdStat returns name's statistics, made on first use. The last four
// found are kept: a pipeline repeats a few commands, and a string
// comparison (the same name's pointer, or lengths that differ) costs less
// than the map's hash.
func (e *Env) cmdStat(name string) *CmdStat {
	for i := range e.recentStats {
		if r := &e.recentStats[i]; r.st != nil && r.name == name {
			return r.st
		}
	}
	st := e.cmdStats[name]
	if st == nil {
		e.mu.Lock()
		st = &CmdStat{}
		e.cmdStats[name] = st
		e.mu.Unlock()
	}
	e.recentStats[e.recentNext] = recentStat{name, st}
	e.recentNext = (e.recentNext + 1) % len(e.recentStats)
	return st
}

// recentStat is one of cmdStat's recent answers.
type recentStat struct {
	name string
	st   *CmdStat
}

// reject answers a command that did not run (unknown, arity, auth). In
// MULTI that dooms the transaction; a refused EXEC discards it (tx.go).
func (e *Env) reject(s *Session, w *resp.Writer, cmd *Command, args [][]byte, msg string) {
	if cmd != nil {
		e.cmdStat(cmd.Name).Rejected++
	}
	msg = e.txRejected(s, cmd, args, msg)
	e.CountError(msg)
	w.Error(msg)
}

// CountError records an error reply in INFO's errorstats and
// total_error_replies: every error a command sends goes through it, and
// the connection layer calls it for errors sent outside a command
// (protocol errors).
func (e *Env) CountError(msg string) {
	e.Stats.TotalErrorReplies.Add(1)
	code := msg
	if i := strings.IndexByte(msg, ' '); i >= 0 {
		code = msg[:i]
	}
	e.mu.Lock()
	if _, ok := e.errStats[code]; !ok && len(e.errStats) >= 128 {
		code = "errstat_overflow"
	}
	e.errStats[code]++
	e.mu.Unlock()
}

func unknownCommand(args [][]byte) string {
	var b strings.Builder
	for _, a := range args[1:] {
		if b.Len() >= 128 {
			break
		}
		rest := 128 - b.Len()
		a = ascii.CStr(a)
		if len(a) > rest {
			a = a[:rest]
		}
		fmt.Fprintf(&b, "'%s' ", a)
	}
	name := ascii.CStr(args[0])
	if len(name) > 128 {
		name = name[:128]
	}
	return fmt.Sprintf("ERR unknown command '%s', with args beginning with: %s", name, b.String())
}

// Error writes an error reply (msg carries its code) and records it.
func (c *Ctx) Error(msg string) {
	c.err = true
	c.Env.CountError(msg)
	c.W.Error(msg)
}

// Errorf is Error with formatting.
func (c *Ctx) Errorf(format string, args ...any) { c.Error(fmt.Sprintf(format, args...)) }

// Failed reports whether the command replied with an error.
func (c *Ctx) Failed() bool { return c.err }

// Arg returns argument i as a string (a copy).
func (c *Ctx) Arg(i int) string { return string(c.Args[i]) }

// ArgIs reports whether argument i equals word, case-insensitively.
func (c *Ctx) ArgIs(i int, word string) bool { return strings.EqualFold(string(c.Args[i]), word) }

// Int parses argument i as an integer, replying with Redis's error and
// returning false when it is not one.
func (c *Ctx) Int(i int) (int64, bool) {
	v, ok := num.ParseInt(c.Args[i])
	if !ok {
		c.Error(ErrNotInt)
	}
	return v, ok
}

// Dirty counts n changes for persistence (rdb_changes_since_last_save).
func (c *Ctx) Dirty(n int64) { c.Env.Stats.Dirty.Add(n) }

// Key returns argument i as a key string.
func (c *Ctx) Key(i int) string { return string(c.Args[i]) }

// Lookup returns the live value at key for reading (counting hits and
// misses), or nil. It replies WRONGTYPE and returns ok=false when the value
// has a type other than want.
func (c *Ctx) Lookup(key string, want keyspace.Type) (o *keyspace.Object, ok bool) {
	o = c.DB.LookupRead(key)
	if o != nil && o.Type != want {
		c.Error(ErrWrongType)
		return nil, false
	}
	return o, true
}

// LookupWrite is Lookup for a write: no hit/miss statistics.
func (c *Ctx) LookupWrite(key string, want keyspace.Type) (o *keyspace.Object, ok bool) {
	o = c.DB.Lookup(key)
	if o != nil && o.Type != want {
		c.Error(ErrWrongType)
		return nil, false
	}
	if o != nil {
		c.DB.Touch(o) // lookupKeyWrite touches too
	}
	return o, true
}

// TouchLRU records an access to o as Redis's lookupKey does for writes too
// (DB.LookupRead does it for reads): its LRU time or LFU counter.
func TouchLRU(c *Ctx, o *keyspace.Object) { c.DB.Touch(o) }

// ReplyHelp writes a HELP reply as Redis's addReplyHelp does: a header
// line, the lines given, and the HELP entry, each as a status reply.
func (c *Ctx) ReplyHelp(name string, lines ...string) {
	c.W.Array(len(lines) + 3)
	c.W.Simple(name + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		c.W.Simple(l)
	}
	c.W.Simple("HELP")
	c.W.Simple("    Prints this help.")
}
