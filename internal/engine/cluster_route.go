package engine

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/resp"
	"github.com/abacusdb/abacus/internal/script"
)

// Routing in cluster mode: every command's keys decide whether this node
// serves it, as Redis's getNodeByQuery decides, with Redis's replies. The
// keys are those COMMAND GETKEYS finds (the table's positions or Keys
// function), sharded pub/sub channels included; a command without keys is
// served here. With cluster mode off (no ClusterView) none of this runs:
// Execute's only cost is the nil check in check.

// The redirections and refusals, with Redis's texts.
const (
	ErrCrossSlot        = "CROSSSLOT Keys in request don't hash to the same slot"
	ErrTryAgain         = "TRYAGAIN Multiple keys request during rehashing of slot"
	ErrClusterDown      = "CLUSTERDOWN The cluster is down"
	ErrClusterDownRO    = "CLUSTERDOWN The cluster is down and only accepts read commands"
	ErrClusterUnbound   = "CLUSTERDOWN Hash slot not served"
	ErrClusterDisabled  = "ERR This instance has cluster support disabled"
	errScriptNonLocal   = "ERR Script attempted to access a non local key in a cluster node"
	errScriptCrossSlot  = "ERR Script attempted to access keys that do not hash to the same slot"
	errScriptClusterRO  = "ERR Script attempted to execute a write command while the cluster is down and readonly"
	errScriptClusterDwn = "ERR Script attempted to execute a command while the cluster is down"
)

// clusterSession is a client's cluster state.
type clusterSession struct {
	// readOnly: READONLY was sent; a replica serves this client's reads
	// of its primary's slots.
	readOnly bool
	// asking: ASKING was sent; the next command (or the transaction it
	// opens) may use a slot this node imports. askFresh marks that ASKING
	// itself was the last command, so the flag lives one more command.
	asking, askFresh bool
	// refused: the cluster step refused the command being checked.
	refused bool
	// slot is 1 + the slot the current command's keys hash to (0: no
	// keys yet): a script's undeclared keys must stay in it.
	slot int32
}

// redirect kinds, Redis's CLUSTER_REDIR_*.
const (
	redirNone = iota
	redirCrossSlot
	redirUnstable
	redirAsk
	redirMoved
	redirDownState
	redirDownROState
	redirDownUnbound
)

// routing is what routeQuery found: the redirection (redirNone: served
// here), the slot and, for -MOVED and -ASK, the node's address.
type routing struct {
	code int
	slot int // -1 when the command has no keys
	addr string
}

// message is the redirection's error text.
func (r routing) message() string {
	switch r.code {
	case redirCrossSlot:
		return ErrCrossSlot
	case redirUnstable:
		return ErrTryAgain
	case redirDownState:
		return ErrClusterDown
	case redirDownROState:
		return ErrClusterDownRO
	case redirDownUnbound:
		return ErrClusterUnbound
	case redirAsk:
		return "ASK " + strconv.Itoa(r.slot) + " " + r.addr
	case redirMoved:
		return "MOVED " + strconv.Itoa(r.slot) + " " + r.addr
	}
	return ""
}

// mustObey reports whether s is the AOF loader or this node's primary,
// whose commands are never redirected (Redis's mustObeyClient).
func mustObey(s *Session) bool { return s.Obey || strings.Contains(s.Flags, "M") }

// keyless reports whether cmd has no keys to route by (no key positions
// and no Keys function), so it is served wherever it is sent; EXEC routes
// by its queue.
func keyless(cmd *Command) bool { return cmd.First <= 0 && cmd.Keys == nil && cmd.Name != "exec" }

// isShardPubSub: commands whose "keys" are shard channels.
func isShardPubSub(cmd *Command) bool {
	switch cmd.Name {
	case "ssubscribe", "sunsubscribe", "spublish":
		return true
	}
	return false
}

// clusterStep is the cluster step of Execute's checks (after ACL, before
// the others, as in Redis's processCommand). It returns the refusal, or ""
// to go on; s.cl.slot is set to the slot the command's keys hash to.
func (e *Env) clusterStep(s *Session, cmd *Command, args [][]byte) string {
	cs := &s.cl
	cs.slot = 0
	if mustObey(s) || keyless(cmd) {
		return ""
	}
	r := e.routeQuery(s, cmd, args, cs.asking, cs.readOnly)
	if r.slot >= 0 && r.code != redirDownState && r.code != redirDownROState {
		cs.slot = int32(r.slot) + 1
	}
	if r.code == redirNone {
		return ""
	}
	cs.refused = true
	return r.message()
}

// clusterNext is called as each command arrives: ASKING holds for the one
// command after it, or for the transaction that command is part of
// (Redis's resetClient clears it after any other command outside MULTI).
func (cs *clusterSession) next(multi bool) {
	if cs.askFresh {
		cs.askFresh = false
	} else if !multi {
		cs.asking = false
	}
}

// routeQuery is Redis's getNodeByQuery for cmd (for EXEC: the commands it
// queued), as the session sees it (asking, readOnly).
func (e *Env) routeQuery(s *Session, cmd *Command, args [][]byte, asking, readOnly bool) routing {
	cv := e.cluster
	q := routeState{env: e, slot: -1}
	shard := isShardPubSub(cmd)
	if cmd.Name == "exec" {
		t := &s.tx
		if !t.multi {
			return routing{slot: -1} // EXEC will answer its own error
		}
		for i := range t.cmds {
			if q.keysOf(t.cmds[i].cmd, t.queued(i), shard) {
				return q.result
			}
		}
	} else if q.keysOf(cmd, args, shard) {
		return q.result
	}
	if q.slot < 0 {
		return routing{slot: -1} // no key at all: served here
	}
	// Whether the command writes matters only on the paths below that ask.
	write := func() bool {
		return s.EffectiveFlags(cmd)&FlagWrite != 0 || e.scriptWrites(cmd, args)
	}
	if !cv.OK() {
		switch {
		case shard:
			if !e.clusterParam(&e.clp.allowShardDown, "cluster-allow-pubsubshard-when-down", true) {
				return routing{code: redirDownState, slot: q.slot}
			}
		case !e.clusterParam(&e.clp.allowReadsDown, "cluster-allow-reads-when-down", false):
			return routing{code: redirDownState, slot: q.slot}
		case write():
			return routing{code: redirDownROState, slot: q.slot}
		}
	}
	rt := q.route
	// MIGRATE works on an open slot's keys wherever they are.
	if (q.migrating || q.importing) && cmd.Name == "migrate" {
		return routing{slot: q.slot}
	}
	if q.migrating && q.missing > 0 {
		if q.existing > 0 {
			return routing{code: redirUnstable, slot: q.slot}
		}
		return routing{code: redirAsk, slot: q.slot, addr: redirAddr(s, rt.MigratingTo, rt.PMigratingTo)}
	}
	if q.importing && (asking || cmd.Flags&FlagAsking != 0) {
		if q.multiple && q.missing > 0 {
			return routing{code: redirUnstable, slot: q.slot}
		}
		return routing{slot: q.slot}
	}
	if (readOnly || shard) && rt.OfMyPrimary && !write() {
		return routing{slot: q.slot}
	}
	if !rt.Self {
		return routing{code: redirMoved, slot: q.slot, addr: redirAddr(s, rt.Addr, rt.PAddr)}
	}
	return routing{slot: q.slot}
}

// routeState walks a query's keys.
type routeState struct {
	env      *Env
	first    []byte
	slot     int // the first key's slot, -1 before it
	route    SlotRoute
	multiple bool // keys other than the first (all in its slot)
	// The slot is migrating away from this node, or being imported;
	// missing and existing count the keys (not channels) found here.
	migrating, importing bool
	missing, existing    int
	result               routing // the refusal when keysOf returns true
}

// keysOf walks one command's keys; it returns true when the query is
// refused (q.result says why).
func (q *routeState) keysOf(cmd *Command, args [][]byte, shard bool) bool {
	if cmd.Keys != nil {
		for _, p := range cmd.Keys(args) {
			if p < len(args) && q.key(args[p], shard) {
				return true
			}
		}
		return false
	}
	first, last := cmd.fixedKeys(len(args))
	for p := first; p <= last; p += cmd.Step {
		if q.key(args[p], shard) {
			return true
		}
	}
	return false
}

func (q *routeState) key(k []byte, shard bool) bool {
	slot := keyspace.HashSlot(k)
	if q.slot < 0 {
		q.first, q.slot = k, slot
		q.route = q.env.cluster.Route(slot)
		if !q.route.Served {
			q.result = routing{code: redirDownUnbound, slot: slot}
			return true
		}
		if q.route.Self && q.route.MigratingTo != "" {
			q.migrating = true
		} else if q.route.Importing {
			q.importing = true
		}
	} else if !bytes.Equal(q.first, k) {
		if slot != q.slot {
			q.result = routing{code: redirCrossSlot, slot: q.slot}
			return true
		}
		q.multiple = true
	}
	if (q.migrating || q.importing) && !shard {
		// Redis looks in db 0 without touching, counting or expiring:
		// an expired key is missing.
		ks := q.env.KS
		if o := ks.DBs[0].Peek(string(k)); o == nil || o.Expire != 0 && o.Expire <= ks.Now {
			q.missing++
		} else {
			q.existing++
		}
	}
	return false
}

// clusterParams are the cluster parameters routing reads, found by name.
type clusterParams struct {
	allowReadsDown, allowShardDown *config.Param
}

// clusterParam reads a boolean parameter by name, found once: the cluster
// layer registers it (def when it does not).
func (e *Env) clusterParam(p **config.Param, name string, def bool) bool {
	if *p == nil {
		if q, ok := config.Lookup(name); ok {
			*p = q
		} else {
			return def
		}
	}
	return e.Cfg.Bool((*p).ID())
}

// redirectRefusal answers a command the cluster step refused: as any
// refused command it dooms a transaction being queued, and a refused EXEC
// discards its transaction and answers the redirection itself, not
// EXECABORT (Redis's processCommand).
func (e *Env) redirectRefusal(s *Session, w *resp.Writer, cmd *Command, args [][]byte, msg string) {
	if cmd.Name != "exec" {
		e.reject(s, w, cmd, args, msg)
		return
	}
	e.cmdStat(cmd.Name).Rejected++
	e.discardTx(s)
	e.CountError(msg)
	w.Error(msg)
}

// scriptClusterRefusal is Redis's scriptVerifyClusterState for a command
// a script calls: its keys must be served here, as the caller's flags
// (READONLY, ASKING) see it, and all in one slot unless the script allows
// cross-slot keys. It returns the error, or "".
func (e *Env) scriptClusterRefusal(caller *Session, cmd *Command, args [][]byte, allowCrossSlot bool) string {
	if mustObey(caller) || keyless(cmd) {
		return ""
	}
	r := e.routeQuery(e.scr.sess, cmd, args, caller.cl.asking, caller.cl.readOnly)
	switch r.code {
	case redirNone:
	case redirDownROState:
		return errScriptClusterRO
	case redirDownState:
		return errScriptClusterDwn
	default:
		return errScriptNonLocal
	}
	if r.slot >= 0 && !allowCrossSlot {
		if caller.cl.slot == 0 {
			caller.cl.slot = int32(r.slot) + 1
		} else if int(caller.cl.slot)-1 != r.slot {
			return errScriptCrossSlot
		}
	}
	return ""
}

func init() {
	cmd := func(name string, flags Flag, summary string, h func(*Ctx)) *Command {
		return &Command{Name: name, Arity: 1, Flags: flags, ACL: "@connection", Group: "cluster",
			Summary: summary, Since: "3.0.0", Complexity: "O(1)", Handler: h}
	}
	Register(
		cmd("asking", FlagFast, "Sent by cluster clients after an -ASK redirect", cmdAsking),
		cmd("readonly", FlagFast|FlagLoading|FlagStale, "Enables read queries for a connection to a cluster replica node", cmdReadonly),
		cmd("readwrite", FlagFast|FlagLoading|FlagStale, "Disables read queries for a connection to a cluster replica node", cmdReadwrite),
	)
}

// ClusterReadOnly reports whether the client sent READONLY (CLIENT LIST's
// flag r).
func (s *Session) ClusterReadOnly() bool { return s.cl.readOnly }

// ASKING: the next command may use a slot this node imports.
func cmdAsking(c *Ctx) {
	if c.Env.cluster == nil {
		c.Error(ErrClusterDisabled)
		return
	}
	// Inside EXEC the flag ends with EXEC, as Redis clears it after the
	// command that ran ASKING.
	c.S.cl.asking, c.S.cl.askFresh = true, c.Env.depth == 1 // its own Ctx only
	c.W.OK()
}

// READONLY: a replica serves this client's reads of its primary's slots.
func cmdReadonly(c *Ctx) {
	if c.Env.cluster == nil {
		c.Error(ErrClusterDisabled)
		return
	}
	c.S.cl.readOnly = true
	c.W.OK()
}

// READWRITE undoes READONLY.
func cmdReadwrite(c *Ctx) {
	if c.Env.cluster == nil {
		c.Error(ErrClusterDisabled)
		return
	}
	c.S.cl.readOnly = false
	c.W.OK()
}

// RedirectBlocked ends the waits of clients blocked on keys (BLPOP,
// BZPOPMIN, XREAD...) that this node can no longer serve, as Redis's
// clusterRedirectBlockedClientIfNeeded: with the cluster down, every such
// wait ends with -CLUSTERDOWN (a write that would serve it may never come);
// otherwise a wait whose first key's slot is unbound, or owned elsewhere
// and not being imported here, ends with -CLUSTERDOWN Hash slot not served
// or -MOVED (a READONLY client's read on its primary's slot stays). The
// cluster layer calls it under the server lock when the slot map or the
// cluster state changes; it returns how many waits it ended.
func (e *Env) RedirectBlocked() int {
	cv := e.cluster
	if cv == nil {
		return 0
	}
	var ended []*Waiter
	for _, w := range e.blk.byID {
		if w.done || len(w.nodes) == 0 {
			continue // not waiting on keys (WAIT)
		}
		r := routing{code: redirDownState}
		if cv.OK() {
			slot := keyspace.HashSlotString(w.nodes[0].bk.key)
			rt := cv.Route(slot)
			switch {
			case w.S.cl.readOnly && w.cmd.Flags&FlagWrite == 0 && rt.OfMyPrimary, rt.Self, rt.Importing:
				continue
			case !rt.Served:
				r = routing{code: redirDownUnbound, slot: slot}
			default:
				r = routing{code: redirMoved, slot: slot, addr: redirAddr(w.S, rt.Addr, rt.PAddr)}
			}
		}
		msg := r.message()
		e.CountError(msg)
		w.out.Error(msg)
		ended = append(ended, w)
	}
	for _, w := range ended {
		e.endWait(w)
	}
	return len(ended)
}

// DropShardChannels unsubscribes every client from the shard channels of
// slot, each getting its sunsubscribe message, as Redis does when a slot
// leaves this node's shard (removeChannelsInSlot). The cluster layer calls
// it under the server lock; it returns how many channels went.
func (e *Env) DropShardChannels(slot int) int {
	var chans []string
	for ch := range e.ps.subs[SubShard] {
		if keyspace.HashSlotString(ch) == slot {
			chans = append(chans, ch)
		}
	}
	slices.Sort(chans)
	for _, ch := range chans {
		// A copy: Unsubscribe edits the list.
		for _, s := range slices.Clone(e.ps.subs[SubShard][ch]) {
			e.Unsubscribe(s, SubShard, ch)
			if s.Push != nil {
				s.Push(appendUnsubscribed(nil, s.Proto == 3, ch, s.SubCount(SubShard)))
			}
		}
	}
	return len(chans)
}

// appendUnsubscribed is a sunsubscribe confirmation pushed to a client.
func appendUnsubscribed(b []byte, resp3 bool, channel string, count int) []byte {
	if resp3 {
		b = append(b, ">3\r\n"...)
	} else {
		b = append(b, "*3\r\n"...)
	}
	b = resp.AppendBulk(b, SubVerb(SubShard, true))
	b = resp.AppendBulk(b, channel)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(count), 10)
	return append(b, '\r', '\n')
}

// scriptWrites reports whether EVAL, EVALSHA or FCALL (or their _RO forms)
// is a write as Redis's getCommandFlags sees it: the script or function
// declares flags (a shebang) without no-writes. A script without a
// shebang, or one not found, has the command's own flags.
func (e *Env) scriptWrites(cmd *Command, args [][]byte) bool {
	flags, ok := e.declaredScriptFlags(cmd, args)
	return ok && flags&script.FlagNoWrites == 0
}

// declaredScriptFlags returns the flags that the script or function EVAL,
// EVALSHA or FCALL (or their _RO forms) runs declares, and false when
// there are none: another command, a script without a shebang, one not
// found.
func (e *Env) declaredScriptFlags(cmd *Command, args [][]byte) (script.Flags, bool) {
	var flags script.Flags
	switch cmd.Name {
	case "eval", "eval_ro":
		body := args[1]
		if !bytes.HasPrefix(body, []byte("#!")) {
			return 0, false
		}
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			body = body[:i+1] // the shebang line is all ParseShebang reads
		}
		f, _, err := script.ParseShebang(string(body))
		if err != nil {
			return 0, false
		}
		flags = f
	case "evalsha", "evalsha_ro":
		sc := e.Scripting().Lookup(args[1])
		if sc == nil {
			return 0, false
		}
		flags = sc.Flags
	case "fcall", "fcall_ro":
		f := e.Scripting().Function(string(args[1]))
		if f == nil {
			return 0, false
		}
		flags = f.Flags
	default:
		return 0, false
	}
	return flags, flags&script.FlagEvalCompat == 0
}

// CommandFlags are the flags that decide how cmd with args is treated
// before it runs (CLIENT PAUSE WRITE), as Redis's getCommandFlags: EXEC's
// add those of the commands it will run (EffectiveFlags); a script or
// function that declares flags writes, and needs memory, unless it says
// otherwise, and is no longer "may replicate" (its flags say whether it
// writes). Called under the lock.
func (e *Env) CommandFlags(s *Session, cmd *Command, args [][]byte) Flag {
	f := s.EffectiveFlags(cmd)
	sf, ok := e.declaredScriptFlags(cmd, args)
	if !ok {
		return f
	}
	f &^= FlagStale | FlagDenyOOM | FlagWrite | FlagMayReplicate
	if sf&(script.FlagAllowOOM|script.FlagNoWrites) == 0 {
		f |= FlagDenyOOM
	}
	if sf&script.FlagNoWrites == 0 {
		f |= FlagWrite
	}
	if sf&script.FlagAllowStale != 0 {
		f |= FlagStale
	}
	return f
}
