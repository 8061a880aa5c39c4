package command

import (
	"strconv"
	"strings"

	"github.com/abacusdb/abacus/internal/aof"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// Command propagation: what a write did, as the commands that redo it,
// for the AOF (and, later, replicas). As in Redis 7, a command that
// changed the dataset (its Dirty count grew) is propagated as received,
// unless replaying the same arguments could give another result: then a
// rewrite (propRewrites) emits an equivalent deterministic form (relative
// TTLs become absolute, SPOP becomes SREM, INCRBYFLOAT becomes SET ...).
// Keys deleted by expiry are propagated as DEL. EXEC and scripts emit the
// effects of the commands they ran, wrapped in MULTI/EXEC when there are
// several (a script that rolls back emits nothing).
//
// Entries collect in Env.prop while a top-level command runs (with the
// commands EXEC, a script or a served blocked client run inside it) and go
// to the sink (the AOF) at its end, before its reply can leave: with
// appendfsync always the sink syncs before returning.

// PropEntry is one propagated command: the database it ran in and its
// arguments (copies, owned by the entry).
type PropEntry = aof.Entry

// PropSink receives the entries of one top-level command; wrap asks for
// MULTI/EXEC around them. It is called under the server lock.
type PropSink interface {
	Feed(entries []PropEntry, wrap bool)
}

type propState struct {
	sink    PropSink
	off     bool // loading: nothing is propagated
	pending []PropEntry
	// scriptMark is len(pending) when the running script began: a
	// transactional script that rolls back drops what it queued.
	scriptMark int
	wrap       bool     // the top-level command was EXEC or a script
	aof        aofState // the append-only file (propagate_aof.go)
}

// SetPropSink installs (or, with nil, removes) the propagation target.
func (e *Env) SetPropSink(s PropSink) {
	e.prop.sink = s
	if s != nil {
		e.KS.Expired = e.propExpired
	} else {
		e.KS.Expired = nil
	}
}

// selfPropagating commands emit nothing of their own: the commands they
// run are propagated.
var selfPropagating = map[string]bool{
	"exec": true, "eval": true, "evalsha": true, "eval_ro": true, "evalsha_ro": true,
	"fcall": true, "fcall_ro": true,
}

// propActive reports whether propagation is wanted now.
func (e *Env) propActive() bool { return e.prop.sink != nil && !e.prop.off }

// Propagate queues argv (copied) as what the command did in its database.
// Rewrites call it; a command that calls it is not propagated as received.
func (c *Ctx) Propagate(argv ...[]byte) {
	c.propDone = true
	if !c.Env.propActive() {
		return
	}
	c.Env.queueProp(c.DB.ID, argv)
}

func (e *Env) queueProp(db int, argv [][]byte) {
	n := 0
	for _, a := range argv {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	cp := make([][]byte, len(argv))
	for i, a := range argv {
		buf = append(buf, a...)
		cp[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	e.prop.pending = append(e.prop.pending, PropEntry{DB: db, Argv: cp})
}

// propAfter is called by call after a handler ran, with the Dirty count
// from before and the reply's start in ctx.W.
func (e *Env) propAfter(ctx *Ctx, dirty int64, mark int) {
	name := ctx.Cmd.Name
	if selfPropagating[name] {
		if e.depth == 1 && len(e.prop.pending) > 0 {
			e.prop.wrap = true // flushed (and reset) at the end of this command
		}
		return
	}
	if ctx.propDone || e.Stats.Dirty.Load() == dirty {
		return
	}
	if rw := propRewrites[name]; rw != nil {
		var reply []byte
		if mark <= len(ctx.W.Buf) {
			reply = ctx.W.Buf[mark:]
		}
		if rw(ctx, reply) {
			return
		}
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

// propFlush hands the pending entries to the sink.
func (e *Env) propFlush() {
	p := &e.prop
	if len(p.pending) > 0 && p.sink != nil && !p.off {
		p.sink.Feed(p.pending, p.wrap && len(p.pending) > 1)
	}
	clear(p.pending)
	p.pending = p.pending[:0]
	p.wrap = false
}

// propScriptBegin and propScriptEnd bracket a script (scripting_run.go).
func (e *Env) propScriptBegin() { e.prop.scriptMark = len(e.prop.pending) }

func (e *Env) propScriptRollback() {
	if m := e.prop.scriptMark; m <= len(e.prop.pending) {
		clear(e.prop.pending[m:])
		e.prop.pending = e.prop.pending[:m]
	}
}

// A propRewrite emits what the command did (through Ctx.Propagate) and
// reports true, or reports false to propagate the arguments as received.
// reply is the command's reply (RESP2 or RESP3).
type propRewrite func(c *Ctx, reply []byte) bool

var propRewrites map[string]propRewrite

func init() {
	propRewrites = map[string]propRewrite{
		"expire": rwExpire, "pexpire": rwExpire, "expireat": rwExpire, "pexpireat": rwExpire,
		"set": rwSet, "setex": rwSetex, "psetex": rwSetex, "getex": rwGetex,
		"incrbyfloat":  rwIncrByFloat,
		"hincrbyfloat": rwHincrByFloat,
		"spop":         rwSpop,
		"restore":      rwRestore,
		"blpop":        rwBpop("LPOP"), "brpop": rwBpop("RPOP"),
		"bzpopmin": rwBpop("ZPOPMIN"), "bzpopmax": rwBpop("ZPOPMAX"),
		"blmove": rwBlmove, "brpoplpush": rwBrpoplpush,
		"blmpop": rwBmpop("LPOP", "RPOP"), "bzmpop": rwBmpop("ZPOPMIN", "ZPOPMAX"),
		"hexpire": rwHexpire, "hpexpire": rwHexpire,
		"hsetex": rwHashFieldTTL, "hgetex": rwHashFieldTTL,
		"ts.add": rwTSStar(3), "ts.madd": rwTSStar(3), "ts.incrby": rwTSIncr, "ts.decrby": rwTSIncr,
	}
}

// liveAfter is the key's object after the command, nil when absent or
// already expired.
func liveAfter(c *Ctx, key []byte) *keyspace.Object {
	o := c.DB.Peek(string(key))
	if o == nil || o.Expire != 0 && o.Expire <= c.Now {
		return nil
	}
	return o
}

func msBytes(ms int64) []byte { return strconv.AppendInt(nil, ms, 10) }

// rwTTL emits the key's state after a TTL change: PEXPIREAT with the
// absolute time, PERSIST when the TTL is gone, DEL when the key is.
func rwTTL(c *Ctx, key []byte) bool {
	o := liveAfter(c, key)
	switch {
	case o == nil:
		c.Propagate([]byte("DEL"), key)
	case o.Expire == 0:
		c.Propagate([]byte("PERSIST"), key)
	default:
		c.Propagate([]byte("PEXPIREAT"), key, msBytes(o.Expire))
	}
	return true
}

func rwExpire(c *Ctx, _ []byte) bool { return rwTTL(c, c.Args[1]) }

// rwSet: SET with EX/PX/EXAT/PXAT becomes SET key value PXAT ms (the
// condition held, since the key changed).
func rwSet(c *Ctx, _ []byte) bool {
	ttl := false
	for _, a := range c.Args[3:] {
		switch strings.ToLower(string(a)) {
		case "ex", "px", "exat", "pxat":
			ttl = true
		}
	}
	if !ttl {
		return false
	}
	return rwSetAbs(c, c.Args[1], c.Args[2])
}

func rwSetAbs(c *Ctx, key, val []byte) bool {
	o := liveAfter(c, key)
	if o == nil {
		c.Propagate([]byte("DEL"), key)
	} else {
		c.Propagate([]byte("SET"), key, val, []byte("PXAT"), msBytes(o.Expire))
	}
	return true
}

func rwSetex(c *Ctx, _ []byte) bool { return rwSetAbs(c, c.Args[1], c.Args[3]) }

func rwGetex(c *Ctx, _ []byte) bool { return rwTTL(c, c.Args[1]) }

// rwIncrByFloat: SET key <new value> KEEPTTL, so that float formatting
// and rounding are not replayed.
func rwIncrByFloat(c *Ctx, reply []byte) bool {
	v, ok := replyBulk(reply)
	if !ok {
		return false
	}
	c.Propagate([]byte("SET"), c.Args[1], v, []byte("KEEPTTL"))
	return true
}

func rwHincrByFloat(c *Ctx, reply []byte) bool {
	v, ok := replyBulk(reply)
	if !ok {
		return false
	}
	c.Propagate([]byte("HSET"), c.Args[1], c.Args[2], v)
	return true
}

// rwSpop: the members popped, as SREM.
func rwSpop(c *Ctx, reply []byte) bool {
	items, ok := replyFlat(reply)
	if !ok {
		return false
	}
	if len(items) == 0 {
		c.propDone = true
		return true
	}
	argv := append([][]byte{[]byte("SREM"), c.Args[1]}, items...)
	c.Propagate(argv...)
	return true
}

// rwRestore: a relative TTL becomes ABSTTL.
func rwRestore(c *Ctx, _ []byte) bool {
	if string(c.Args[2]) == "0" {
		return false
	}
	for _, a := range c.Args[4:] {
		if strings.EqualFold(string(a), "absttl") {
			return false
		}
	}
	o := liveAfter(c, c.Args[1])
	if o == nil {
		c.Propagate([]byte("DEL"), c.Args[1])
		return true
	}
	argv := append([][]byte{}, c.Args...)
	argv[2] = msBytes(o.Expire)
	argv = append(argv, []byte("ABSTTL"))
	c.Propagate(argv...)
	return true
}

// rwBpop: BLPOP and friends served: the non-blocking pop of the key the
// reply names.
func rwBpop(pop string) propRewrite {
	return func(c *Ctx, reply []byte) bool {
		items, ok := replyFlat(reply)
		if !ok || len(items) == 0 {
			return false
		}
		c.Propagate([]byte(pop), items[0])
		return true
	}
}

func rwBlmove(c *Ctx, _ []byte) bool {
	c.Propagate([]byte("LMOVE"), c.Args[1], c.Args[2], c.Args[3], c.Args[4])
	return true
}

func rwBrpoplpush(c *Ctx, _ []byte) bool {
	c.Propagate([]byte("RPOPLPUSH"), c.Args[1], c.Args[2])
	return true
}

// rwBmpop: BLMPOP/BZMPOP served: LPOP key count (or the zset pop), the
// count being the number of elements the reply holds.
func rwBmpop(left, right string) propRewrite {
	return func(c *Ctx, reply []byte) bool {
		key, n, ok := replyKeyCount(reply)
		if !ok {
			return false
		}
		pop := left
		nk, err := strconv.Atoi(string(c.Args[2]))
		if i := 3 + nk; err == nil && i < len(c.Args) {
			if d := string(c.Args[i]); strings.EqualFold(d, "right") || strings.EqualFold(d, "max") {
				pop = right
			}
		}
		c.Propagate([]byte(pop), key, strconv.AppendInt(nil, int64(n), 10))
		return true
	}
}

// rwHexpire: HEXPIRE/HPEXPIRE key n ... become HPEXPIREAT key <abs ms>
// with the same condition and fields.
func rwHexpire(c *Ctx, _ []byte) bool {
	n, err := strconv.ParseInt(string(c.Args[2]), 10, 64)
	if err != nil {
		return false
	}
	if strings.EqualFold(c.Cmd.Name, "hexpire") {
		n *= 1000
	}
	argv := append([][]byte{}, c.Args...)
	argv[0], argv[2] = []byte("HPEXPIREAT"), msBytes(c.Now+n)
	c.Propagate(argv...)
	return true
}

// rwHashFieldTTL: HSETEX/HGETEX with EX or PX (before FIELDS) get PXAT.
func rwHashFieldTTL(c *Ctx, _ []byte) bool {
	for i := 2; i+1 < len(c.Args); i++ {
		a := string(c.Args[i])
		if strings.EqualFold(a, "fields") {
			return false
		}
		ex, px := strings.EqualFold(a, "ex"), strings.EqualFold(a, "px")
		if !ex && !px {
			continue
		}
		n, err := strconv.ParseInt(string(c.Args[i+1]), 10, 64)
		if err != nil {
			return false
		}
		if ex {
			n *= 1000
		}
		argv := append([][]byte{}, c.Args...)
		argv[i], argv[i+1] = []byte("PXAT"), msBytes(c.Now+n)
		c.Propagate(argv...)
		return true
	}
	return false
}

// rwTSStar: TS.ADD/TS.MADD's "*" timestamps (the server's clock) become
// the command's time, step apart from argument 2 on.
func rwTSStar(step int) propRewrite {
	return func(c *Ctx, _ []byte) bool {
		var argv [][]byte
		for i := 2; i < len(c.Args); i += step {
			if string(c.Args[i]) == "*" {
				if argv == nil {
					argv = append([][]byte{}, c.Args...)
				}
				argv[i] = msBytes(c.Now)
			}
		}
		if argv == nil {
			return false
		}
		c.Propagate(argv...)
		return true
	}
}

// rwTSIncr: TS.INCRBY/TS.DECRBY without TIMESTAMP (or with *) use the
// clock: the time is made explicit, right after the value.
func rwTSIncr(c *Ctx, _ []byte) bool {
	for i := 3; i+1 < len(c.Args); i++ {
		if strings.EqualFold(string(c.Args[i]), "labels") {
			break
		}
		if strings.EqualFold(string(c.Args[i]), "timestamp") {
			if string(c.Args[i+1]) != "*" {
				return false
			}
			argv := append([][]byte{}, c.Args...)
			argv[i+1] = msBytes(c.Now)
			c.Propagate(argv...)
			return true
		}
	}
	argv := append([][]byte{}, c.Args[:3]...)
	argv = append(argv, []byte("TIMESTAMP"), msBytes(c.Now))
	argv = append(argv, c.Args[3:]...)
	c.Propagate(argv...)
	return true
}
