package engine

import (
	"strconv"

	"github.com/abacusdb/abacus/internal/aof"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// The effect stream: what each write did, as the commands that redo it,
// in one ordered stream that the AOF (and replicas) read. Handlers declare
// their effects where they write, as Redis's handlers do:
//
//   - A command that changed the dataset (its Dirty count grew) and said
//     nothing else is propagated as received.
//   - A handler whose arguments would not replay to the same result says
//     what replays instead: Ctx.Rewrite replaces the arguments (used only
//     if the command writes), Ctx.Propagate adds one entry now (relative
//     TTLs become absolute, SPOP becomes SREM, INCRBYFLOAT becomes SET
//     ... KEEPTTL); a command that calls Propagate is not propagated as
//     received.
//   - EXEC and scripts call Ctx.PreventPropagation: the commands they run
//     are propagated, they themselves are not.
//   - Keys deleted by expiry are propagated as DEL (propExpired).
//
// Entries collect in Env.prop while a top-level command runs (with the
// commands EXEC, a script or a served blocked client run inside it) and go
// to the sink at its end, before its reply can leave, wrapped in
// MULTI/EXEC when there are several (a script that rolls back emits
// nothing). With appendfsync always the replies wait for an fsync that
// covers them (Persistence.Flush and Durable; internal/conn).

// PropEntry is one propagated command: the database it ran in and its
// arguments (copies, valid until the sink's Feed returns: a sink encodes
// what it keeps).
type PropEntry = aof.Entry

// PropSink receives the entries of one top-level command; wrap asks for
// MULTI/EXEC around them. It is called under the server lock.
type PropSink interface {
	Feed(entries []PropEntry, wrap bool)
}

type propState struct {
	sink PropSink
	// tap is the replication stream: it receives what the sink does
	// (internal/replication), with or without an AOF.
	tap     PropSink
	off     bool // loading: nothing is propagated
	pending []PropEntry
	aofBuf  []PropEntry // forAOF's result when pending has ReplOnly entries
	// scriptMark is len(pending) when the running script began: a
	// transactional script that rolls back drops what it queued.
	scriptMark int
	// arena and argv hold the pending entries' copies of their arguments
	// and the slices of them. They live until propDiscard, which keeps
	// them for the next command (the sinks encode what Feed hands them
	// and keep no reference to it): a write with the AOF on or replicas
	// attached copies its arguments without allocating. A block that
	// runs out is replaced, not grown, so entries already queued keep
	// theirs.
	arena []byte
	argv  [][]byte
}

// propArenaKeep is the largest argument arena (bytes, and slices) kept
// from one command to the next; a larger one (a big MSET's) goes with it.
const propArenaKeep = 64 << 10

// SetPropSink installs (or, with nil, removes) the propagation target.
func (e *Env) SetPropSink(s PropSink) {
	e.prop.sink = s
}

// SetPropTap installs (or, with nil, removes) the replication stream,
// fed the same entries as the sink.
func (e *Env) SetPropTap(s PropSink) { e.prop.tap = s }

// propActive reports whether propagation is wanted now.
func (e *Env) propActive() bool { return (e.prop.sink != nil || e.prop.tap != nil) && !e.prop.off }

// Propagate adds argv (copied) to the effect stream as one thing the
// command did in its database (Redis's alsoPropagate). A command that
// calls it is not also propagated as received.
func (c *Ctx) Propagate(argv ...[]byte) {
	c.propDone = true
	if !c.Env.propActive() {
		return
	}
	c.Env.queueProp(c.DB.ID, argv)
}

// Propagating reports whether effects are wanted now (a sink is set and
// nothing is loading), so a handler can skip building effects nobody
// reads. A handler that skips Propagate must still keep itself out of the
// stream (PreventPropagation) when its arguments would not replay.
func (c *Ctx) Propagating() bool { return c.Env.propActive() }

// Rewrite sets what the command propagates if it changes the dataset, in
// place of its arguments as received (Redis's rewriteClientCommandVector):
// for a handler that knows the deterministic form before it knows whether
// it will write. argv is copied only if it is propagated.
func (c *Ctx) Rewrite(argv ...[]byte) { c.rewrite = argv }

// PreventPropagation keeps the command itself out of the effect stream
// (Redis's preventCommandPropagation): EXEC and scripts, whose commands
// propagate their own effects.
func (c *Ctx) PreventPropagation() { c.propDone = true }

// PropagateToReplicas adds the command as received to the replication
// stream only, not the AOF (Redis's forceCommandPropagation with
// PROPAGATE_REPL): PUBLISH, so that a replica's subscribers get the
// messages too. In cluster mode the bus carries messages instead.
func (c *Ctx) PropagateToReplicas() {
	c.propDone = true
	e := c.Env
	if e.prop.tap == nil || e.prop.off || e.cluster != nil {
		return
	}
	e.queueProp(c.DB.ID, c.Args)
	e.prop.pending[len(e.prop.pending)-1].ReplOnly = true
}

func (e *Env) queueProp(db int, argv [][]byte) {
	p := &e.prop
	n := 0
	for _, a := range argv {
		n += len(a)
	}
	if cap(p.arena)-len(p.arena) < n {
		p.arena = make([]byte, 0, max(n, 2*cap(p.arena), 512))
	}
	if cap(p.argv)-len(p.argv) < len(argv) {
		p.argv = make([][]byte, 0, max(len(argv), 2*cap(p.argv), 16))
	}
	from := len(p.argv)
	for _, a := range argv {
		p.arena = append(p.arena, a...)
		end := len(p.arena)
		p.argv = append(p.argv, p.arena[end-len(a):end:end])
	}
	p.pending = append(p.pending, PropEntry{DB: db, Argv: p.argv[from:len(p.argv):len(p.argv)]})
}

// propAfter is called by call after a handler ran, with the Dirty count
// from before: a write that declared no effect of its own is propagated
// as received.
func (e *Env) propAfter(ctx *Ctx, dirty int64) {
	if ctx.propDone || e.Stats.Dirty.Load() == dirty {
		return
	}
	if ctx.rewrite != nil {
		e.queueProp(ctx.DB.ID, ctx.rewrite)
		return
	}
	e.queueProp(ctx.DB.ID, ctx.Args)
}

// propExpired is the keyspace's hook for a key deleted by expiry.
func (e *Env) propExpired(db *keyspace.DB, key string) {
	if !e.propActive() {
		return
	}
	e.queueProp(db.ID, [][]byte{[]byte("DEL"), []byte(key)})
	if e.depth == 0 {
		e.propFlush() // the active expiry cycle, outside any command
	}
}

// propFieldExpired is the keyspace's hook for a hash field removed
// because its TTL passed: the AOF and replicas get HDEL key field, as
// Redis 7.4 propagates it, each on its own outside a command (no DEL
// follows when the hash went with its last field: the HDEL deletes it
// there too). A replica reclaims fields only for its own reads; the
// primary's HDEL removes them from its dataset and stream.
func (e *Env) propFieldExpired(db *keyspace.DB, key string, field []byte) {
	if !e.propActive() || e.replicaExpiry.Load() {
		return
	}
	e.queueProp(db.ID, [][]byte{[]byte("HDEL"), []byte(key), field})
	if e.depth == 0 {
		e.propFlush()
	}
}

// propFlush hands the pending entries to the sink, in MULTI/EXEC when a
// top-level command left more than one (Redis 7's propagatePendingCommands).
func (e *Env) propFlush() { e.propFlushWrap(true) }

// propFlushWrap is propFlush, with the MULTI/EXEC only if wrap.
func (e *Env) propFlushWrap(wrap bool) {
	p := &e.prop
	if len(p.pending) > 0 && !p.off {
		if p.sink != nil {
			if aofOnly := p.forAOF(); len(aofOnly) > 0 {
				p.sink.Feed(aofOnly, wrap && len(aofOnly) > 1)
			}
		}
		if p.tap != nil {
			p.tap.Feed(p.pending, wrap && len(p.pending) > 1)
		}
	}
	e.propDiscard()
}

// forAOF returns the pending entries without the replication-only ones
// (the slice itself when there are none, as almost always).
func (p *propState) forAOF() []PropEntry {
	n := 0
	for i := range p.pending {
		if p.pending[i].ReplOnly {
			n++
		}
	}
	if n == 0 {
		return p.pending
	}
	p.aofBuf = p.aofBuf[:0]
	for _, en := range p.pending {
		if !en.ReplOnly {
			p.aofBuf = append(p.aofBuf, en)
		}
	}
	return p.aofBuf
}

// propDiscard drops the pending entries unseen by the sink.
func (e *Env) propDiscard() {
	p := &e.prop
	clear(p.pending)
	p.pending = p.pending[:0]
	clear(p.aofBuf)
	if cap(p.arena) > propArenaKeep {
		p.arena = nil
	} else {
		p.arena = p.arena[:0]
	}
	clear(p.argv)
	if cap(p.argv) > propArenaKeep/8 {
		p.argv = nil
	} else {
		p.argv = p.argv[:0]
	}
}

// propScriptBegin and propScriptRollback bracket a script (scripting_run.go).
func (e *Env) propScriptBegin() { e.prop.scriptMark = len(e.prop.pending) }

func (e *Env) propScriptRollback() {
	if m := e.prop.scriptMark; m <= len(e.prop.pending) {
		clear(e.prop.pending[m:])
		e.prop.pending = e.prop.pending[:m]
	}
}

// MsArg formats a unix ms time (or any integer) as an argument.
func MsArg(ms int64) []byte { return strconv.AppendInt(nil, ms, 10) }
