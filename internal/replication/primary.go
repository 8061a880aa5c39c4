// Package replication makes Abacus a primary in Redis's replication
// protocol: replicas (redis-server's own, redis-cli --replica) connect
// with SYNC or PSYNC, receive a snapshot and then the effect stream (the
// same commands the AOF gets, engine/propagate.go), and can reconnect
// within the backlog to get only what they missed.
//
// The stream is one byte sequence numbered by master_repl_offset: every
// top-level command's effects are encoded once (SELECT when the database
// changes, MULTI/EXEC around several), appended to the backlog and pushed
// to each online replica's output queue (the connection's replica output
// class and its client-output-buffer-limit apply). Everything runs under
// the server lock but the cron's PING, which takes it.
package replication

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/abacusdb/abacus/internal/aof"
	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/num"
	"github.com/abacusdb/abacus/internal/resp"
)

// Primary is the primary side of one server's replication.
type Primary struct {
	e    *engine.Env
	lock sync.Locker

	// offset is master_repl_offset: the bytes of stream produced since
	// the backlog was made. The backlog holds the last hist of them.
	offset  int64
	backlog *ring
	seldb   int // the database the stream last selected (-1: none yet)
	buf     []byte

	// replid2 and off2 are the history this server continues after it
	// was promoted (second_repl_offset; -1 for none).
	replid2 string
	off2    int64
	// link is the connection to our primary while we are a replica.
	link *link
	// streamDB is the database our primary's stream has selected at our
	// offset: the link's session starts in it after a reconnection (the
	// stream goes on without a SELECT), a full sync sets it from the
	// snapshot's repl-stream-db, and our own replicas' snapshots carry
	// it, as they continue the same stream.
	streamDB int
	// noPingUntil (unix ms) holds the stream's PINGs back while a
	// cluster manual failover waits for a replica to reach our offset.
	noPingUntil int64
	// fo is the FAILOVER under way (failover.go).
	fo failover

	replicas []*replica
	waits    []*waitReq // clients blocked in WAIT
	// hand are the connections that sent REPLCONF but not yet PSYNC.
	hand map[*engine.Session]*replica
	done chan struct{}

	// Full syncs (fullsync.go): the replicas waiting for a job, since
	// when the first of them waits, and whether runSyncs is running.
	waiting   []*replica
	waitSince time.Time
	syncer    bool
	// alone is since when (unix ms) the primary has had no replica; 0
	// while it has one (repl-backlog-ttl).
	alone int64
}

type replica struct {
	s      *engine.Session
	port   int    // REPLCONF listening-port
	ip     string // REPLCONF ip-address, else the connection's address
	ackOff int64  // the last REPLCONF ACK offset
	ackAt  int64  // unix ms of the last ACK
	online bool
	// Its handshake: REPLCONF capa eof (takes the diskless form), capa
	// abacus (an Abacus replica: takes every type), PSYNC rather than SYNC.
	capaEOF, abacus, psync bool
	// syncing: a full sync job sends it the snapshot; pending is the
	// stream since the snapshot's moment, queued once the RDB is out.
	syncing bool
	pending []byte
	// softSince is when (unix ms) pending first passed the replica
	// class's soft output limit; 0 while under it.
	softSince int64
	// ackWait: the diskless payload is out; the stream starts at its ACK.
	ackWait bool
}

var ext = engine.NewExt(func(e *engine.Env) *Primary {
	return &Primary{e: e, seldb: -1, off2: -1, hand: map[*engine.Session]*replica{}}
})

// New installs the primary side on e: the stream tap and the PING cron.
// lock is the server lock the cron takes. Close stops the cron.
func New(e *engine.Env, lock sync.Locker) *Primary {
	p := ext.Of(e)
	p.lock = lock
	p.done = make(chan struct{})
	e.SetReplInfo(p.info)
	e.SetReplRefusal(p.refusal)
	go p.cron()
	return p
}

// Close stops the cron.
func (p *Primary) Close() {
	if p.done != nil {
		close(p.done)
	}
}

func init() {
	const f = engine.FlagAdmin | engine.FlagNoScript | engine.FlagNoMulti | engine.FlagNoAsyncLoading
	engine.Register(
		&engine.Command{Name: "psync", Arity: -3, Flags: f, Group: "server",
			Summary: "An internal command used in replication", Since: "2.8.0", Complexity: "", Handler: cmdPsync},
		&engine.Command{Name: "sync", Arity: 1, Flags: f, Group: "server",
			Summary: "An internal command used in replication", Since: "1.0.0", Complexity: "", Handler: cmdSync},
		&engine.Command{Name: "replconf", Arity: -1, Flags: engine.FlagAdmin | engine.FlagNoScript | engine.FlagLoading | engine.FlagStale | engine.FlagAllowBusy, Group: "server",
			Summary: "An internal command for configuring the replication stream", Since: "3.0.0", Complexity: "O(1)", Handler: cmdReplconf},
		&engine.Command{Name: "wait", Arity: 3, Flags: engine.FlagNoScript, Tips: "request_policy:all_shards response_policy:agg_min", ACL: "@slow @connection", Group: "generic",
			Summary: "Blocks until the asynchronous replication of all preceding write commands sent by the connection are completed.", Since: "3.0.0",
			Complexity: "O(1)", Handler: cmdWait},
		&engine.Command{Name: "role", Arity: 1, Flags: engine.FlagNoScript | engine.FlagLoading | engine.FlagStale | engine.FlagFast, ACL: "@admin @dangerous", Group: "server",
			Summary: "Returns the replication role.", Since: "2.8.12", Complexity: "O(1)", Handler: cmdRole},
	)
}

// ring is the backlog: the last size bytes of the stream.
type ring struct {
	buf  []byte
	size int
	hist int // bytes held
	end  int // where the next byte goes
}

func newRing(size int) *ring { return &ring{buf: make([]byte, size), size: size} }

func (r *ring) write(b []byte) {
	if len(b) >= r.size {
		copy(r.buf, b[len(b)-r.size:])
		r.end, r.hist = 0, r.size
		return
	}
	n := copy(r.buf[r.end:], b)
	if n < len(b) {
		copy(r.buf, b[n:])
	}
	r.end = (r.end + len(b)) % r.size
	r.hist = min(r.hist+len(b), r.size)
}

// last returns a copy of the last n bytes held (n <= hist).
func (r *ring) last(n int) []byte {
	out := make([]byte, 0, n)
	start := (r.end - n + r.size) % r.size
	if start+n <= r.size {
		return append(out, r.buf[start:start+n]...)
	}
	out = append(out, r.buf[start:]...)
	return append(out, r.buf[:n-(r.size-start)]...)
}

func (p *Primary) backlogSize() int {
	n := int(p.e.Cfg.Int(config.ReplBacklogSize))
	return max(n, 16<<10)
}

// ensureBacklog makes the backlog and starts feeding the stream to it, as
// Redis does when the first replica attaches.
func (p *Primary) ensureBacklog() {
	if p.backlog == nil {
		p.backlog = newRing(p.backlogSize())
		p.e.SetPropTap(p)
	}
}

// Feed implements engine.PropSink: one top-level command's effects.
func (p *Primary) Feed(entries []engine.PropEntry, wrap bool) {
	p.buf = aof.AppendEntries(p.buf[:0], entries, wrap, &p.seldb)
	p.send(p.buf)
	if cap(p.buf) > 1<<20 {
		p.buf = nil
	}
}

// send appends b to the stream: the backlog and every online replica.
func (p *Primary) send(b []byte) {
	p.backlog.write(b)
	p.offset += int64(len(b))
	live := p.replicas[:0]
	for _, r := range p.replicas {
		if r.s.Closed() {
			continue
		}
		live = append(live, r)
		if r.online {
			r.s.Push(b)
		} else if r.syncing {
			before := len(r.pending)
			r.pending = append(r.pending, b...)
			if before>>16 != len(r.pending)>>16 {
				p.checkPending(r)
			}
		}
	}
	clear(p.replicas[len(live):])
	p.replicas = live
}

// checkPending closes a syncing replica whose stream held back for it
// passed the replica class's client-output-buffer-limit (the hard limit,
// or the soft one for longer than its seconds), as Redis closes a replica
// whose output buffer grows while it loads the snapshot: the replica
// asks for a full sync again. Checked at each 64 KiB of growth.
func (p *Primary) checkPending(r *replica) {
	hard, soft, secs := config.OutputBufferLimit(p.e.Cfg.Str(config.ClientOutputBufferLimit), "replica")
	n := uint64(len(r.pending))
	over := hard > 0 && n >= hard
	if !over && soft > 0 && n >= soft {
		now := p.e.Clock.NowMs()
		if r.softSince == 0 {
			r.softSince = now
		}
		over = now-r.softSince > secs*1000
	} else if !over {
		r.softSince = 0
	}
	if !over {
		return
	}
	p.e.Stats.OutputLimitCloses.Add(1)
	p.e.Log.Warn(fmt.Sprintf("Client %s scheduled to be closed ASAP for overcoming of output buffer limits.", p.name(r)))
	r.pending, r.syncing = nil, false
	r.s.Killed.Store(true)
	p.e.Host.Kill(r.s)
}

// cron sends the stream's PING every repl-ping-replica-period seconds
// while replicas are attached, so that they see the link alive.
func (p *Primary) cron() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var n int64
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		n++
		p.lock.Lock()
		period := max(p.e.Cfg.Int(config.ReplPingReplicaPeriod), 1)
		// A replica sends no PING of its own: its stream is its primary's,
		// passed on (PINGs included), and a byte of its own would put its
		// replicas' offsets past the primary's.
		if len(p.replicas) > 0 && p.link == nil && n%period == 0 && p.e.Clock.NowMs() >= p.noPingUntil && p.fo.state == "" {
			p.send(resp.AppendCommand(nil, []byte("PING")))
		}
		p.housekeeping()
		p.updateFailover()
		p.lock.Unlock()
	}
}

func (p *Primary) handshake(s *engine.Session) *replica {
	r := p.hand[s]
	if r == nil {
		r = &replica{s: s}
		p.hand[s] = r
	}
	return r
}

// REPLCONF <option> <value> ...: a replica's handshake options, and its
// ACKs once it is online (those get no reply).
func cmdReplconf(c *engine.Ctx) {
	p := ext.Of(c.Env)
	if len(c.Args)%2 == 0 {
		c.Error(engine.ErrSyntax)
		return
	}
	for i := 1; i+1 < len(c.Args); i += 2 {
		opt, val := c.Args[i], c.Args[i+1]
		switch {
		case ascii.EqualFold(opt, "listening-port"):
			port, ok := num.ParseInt(val)
			if !ok {
				c.Error(engine.ErrNotInt)
				return
			}
			p.handshake(c.S).port = int(port)
		case ascii.EqualFold(opt, "ip-address"):
			p.handshake(c.S).ip = string(val)
		case ascii.EqualFold(opt, "capa"):
			switch r := p.handshake(c.S); {
			case ascii.EqualFold(val, "eof"):
				r.capaEOF = true
			case ascii.EqualFold(val, "abacus"):
				r.abacus = true
			}
		case ascii.EqualFold(opt, "rdb-only"), ascii.EqualFold(opt, "rdb-filter-only"):
		case ascii.EqualFold(opt, "ack"), ascii.EqualFold(opt, "fack"):
			if r := p.online(c.S); r != nil {
				if r.ackWait {
					p.startStream(r)
				}
				if off, ok := num.ParseInt(val); ok && ascii.EqualFold(opt, "ack") {
					r.ackOff = max(r.ackOff, off)
					r.ackAt = c.Env.Clock.NowMs()
					if len(p.waits) > 0 {
						p.ackArrived()
					}
					p.updateFailover()
				}
			}
			return // never answered
		case ascii.EqualFold(opt, "getack"):
			return // a primary is not asked
		default:
			c.Errorf("ERR Unrecognized REPLCONF option: %s", val)
			return
		}
	}
	c.W.OK()
}

func (p *Primary) online(s *engine.Session) *replica {
	for _, r := range p.replicas {
		if r.s == s {
			return r
		}
	}
	return nil
}

// PSYNC replid offset: continue from the backlog when the replica's
// history is ours and what it misses is still there, else a full sync.
func cmdPsync(c *engine.Ctx) {
	p := ext.Of(c.Env)
	if p.online(c.S) != nil {
		return // already a replica: Redis ignores it
	}
	if len(c.Args) > 3 && ascii.EqualFold(c.Args[3], "failover") && !p.failoverRequest(c) {
		return
	}
	if p.syncRefused(c) {
		return
	}
	replid := string(c.Args[1])
	want, ok := num.ParseInt(c.Args[2])
	if !ok {
		c.Error("ERR value is not an integer or out of range")
		return
	}
	ours := replid == c.Env.Stats.Info.ReplID() || replid == p.replid2 && want <= p.off2
	// A replica connected to its primary serves its own replicas' partial
	// resyncs from its backlog, which holds its primary's stream as it came.
	if ours && p.backlog != nil &&
		want >= p.offset-int64(p.backlog.hist)+1 && want <= p.offset+1 {
		replid = c.Env.Stats.Info.ReplID()
		r := p.attach(c.S)
		c.W.Simple("CONTINUE " + replid)
		if n := p.offset - want + 1; n > 0 {
			c.W.Raw(p.backlog.last(int(n)))
		}
		r.online = true
		c.Env.Stats.SyncPartialOK.Add(1)
		c.Env.Log.Info(fmt.Sprintf("Partial resynchronization request from %s accepted. Sending %d bytes of backlog starting from offset %d.", p.name(r), p.offset-want+1, want))
		return
	}
	if !strings.HasPrefix(replid, "?") {
		c.Env.Stats.SyncPartialErr.Add(1)
	}
	p.fullSync(c, true)
}

// SYNC: the old protocol, a full sync without the FULLRESYNC line.
func cmdSync(c *engine.Ctx) {
	p := ext.Of(c.Env)
	if p.online(c.S) != nil || p.syncRefused(c) {
		return
	}
	p.fullSync(c, false)
}

// syncRefused answers SYNC and PSYNC as Redis's syncCommand refuses them:
// during a failover, and on a replica whose link to its primary is not up
// (it would hand on a dataset it is about to replace).
func (p *Primary) syncRefused(c *engine.Ctx) bool {
	switch {
	case p.fo.state != "":
		c.Error("NOMASTERLINK Can't SYNC while failing over")
	case p.link != nil && !p.LinkUp():
		c.Error("NOMASTERLINK Can't SYNC while not connected with my master")
	default:
		return false
	}
	return true
}

// fullSync makes the connection a replica waiting for a full sync
// (fullsync.go): the reply, +FULLRESYNC then the snapshot, comes when a
// job takes it.
func (p *Primary) fullSync(c *engine.Ctx, psync bool) {
	c.Env.Stats.SyncFull.Add(1)
	p.ensureBacklog()
	r := p.attach(c.S)
	r.psync = psync
	p.queueFullSync(r)
}

// attach makes s a replica: its output becomes the replica class.
func (p *Primary) attach(s *engine.Session) *replica {
	r := p.hand[s]
	delete(p.hand, s)
	if r == nil {
		r = &replica{s: s}
	}
	r.ackAt = p.e.Clock.NowMs()
	if !strings.Contains(s.Flags, "S") {
		s.Flags += "S"
	}
	p.replicas = append(p.replicas, r)
	return r
}

func (p *Primary) ip(r *replica) string {
	if r.ip != "" {
		return r.ip
	}
	host, _, _ := strings.Cut(r.s.Addr, ":")
	if i := strings.LastIndexByte(r.s.Addr, ':'); i >= 0 {
		host = r.s.Addr[:i]
	}
	return host
}

func (p *Primary) name(r *replica) string { return p.ip(r) + ":" + strconv.Itoa(r.port) }

// live are the replicas whose connections are open.
func (p *Primary) live() []*replica {
	var out []*replica
	for _, r := range p.replicas {
		if !r.s.Closed() {
			out = append(out, r)
		}
	}
	return out
}

// info writes INFO replication for a primary.
func (p *Primary) info(b *engine.InfoBuilder) {
	e := p.e
	live := p.live()
	now := e.Clock.NowMs()
	if l := p.link; l != nil {
		b.KV("role", "slave")
		b.KV("master_host", l.host)
		b.Int("master_port", int64(l.port))
		up := l.state == "connected"
		if up {
			b.KV("master_link_status", "up")
			b.Int("master_last_io_seconds_ago", (now-l.lastIO)/1000)
		} else {
			b.KV("master_link_status", "down")
			b.KV("master_last_io_seconds_ago", "-1")
		}
		b.KV("master_sync_in_progress", map[bool]string{true: "1", false: "0"}[l.syncing])
		b.Int("slave_read_repl_offset", p.offset)
		b.Int("slave_repl_offset", p.offset)
		b.Int("slave_priority", e.Cfg.Int(config.ReplicaPriority))
		b.KV("slave_read_only", map[bool]string{true: "1", false: "0"}[e.Cfg.Bool(config.ReplicaReadOnly)])
		b.KV("replica_announced", "1")
	} else {
		b.KV("role", "master")
	}
	b.Int("connected_slaves", int64(len(live)))
	if e.Cfg.Int(config.MinReplicasToWrite) > 0 && e.Cfg.Int(config.MinReplicasMaxLag) > 0 {
		b.Int("min_slaves_good_slaves", int64(p.goodReplicas()))
	}
	for i, r := range live {
		state := "wait_bgsave"
		switch {
		case r.online:
			state = "online"
		case r.syncing:
			state = "send_bulk"
		}
		b.KV("slave"+strconv.Itoa(i), fmt.Sprintf("ip=%s,port=%d,state=%s,offset=%d,lag=%d", p.ip(r), r.port, state, r.ackOff, (now-r.ackAt)/1000))
	}
	b.KV("master_failover_state", p.failoverState())
	b.KV("master_replid", e.Stats.Info.ReplID())
	if p.replid2 != "" {
		b.KV("master_replid2", p.replid2)
	} else {
		b.KV("master_replid2", strings.Repeat("0", 40))
	}
	b.Int("master_repl_offset", p.offset)
	b.Int("second_repl_offset", p.off2)
	if p.backlog == nil {
		b.KV("repl_backlog_active", "0")
		b.Int("repl_backlog_size", e.Cfg.Int(config.ReplBacklogSize))
		b.KV("repl_backlog_first_byte_offset", "0")
		b.KV("repl_backlog_histlen", "0")
		return
	}
	b.KV("repl_backlog_active", "1")
	b.Int("repl_backlog_size", int64(p.backlog.size))
	b.Int("repl_backlog_first_byte_offset", p.offset-int64(p.backlog.hist)+1)
	b.Int("repl_backlog_histlen", int64(p.backlog.hist))
}

// ROLE for a primary: its offset and each replica's address and ACK.
func cmdRole(c *engine.Ctx) {
	p := ext.Of(c.Env)
	if l := p.link; l != nil {
		c.W.Array(5)
		c.W.BulkString("slave")
		c.W.BulkString(l.host)
		c.W.Int(int64(l.port))
		c.W.BulkString(l.state)
		c.W.Int(p.offset)
		return
	}
	live := p.live()
	c.W.Array(3)
	c.W.BulkString("master")
	c.W.Int(p.offset)
	c.W.Array(len(live))
	for _, r := range live {
		c.W.Array(3)
		c.W.BulkString(p.ip(r))
		c.W.BulkString(strconv.Itoa(r.port))
		c.W.BulkString(strconv.FormatInt(r.ackOff, 10))
	}
}

// waitReq is a client blocked in WAIT: it needs n replicas to have
// acknowledged off.
type waitReq struct {
	w   *engine.Waiter
	off int64
	n   int
}

// acked counts the replicas that acknowledged off.
func (p *Primary) acked(off int64) int {
	n := 0
	for _, r := range p.live() {
		if r.online && r.ackOff >= off {
			n++
		}
	}
	return n
}

// WAIT numreplicas timeout: block until numreplicas replicas acknowledged
// the stream up to now, or timeout ms pass (0: no timeout); the reply is
// how many did.
func cmdWait(c *engine.Ctx) {
	p := ext.Of(c.Env)
	if p.link != nil {
		c.Error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
		return
	}
	n, ok := num.ParseInt(c.Args[1])
	if !ok {
		c.Error(engine.ErrNotInt)
		return
	}
	timeout, ok := num.ParseInt(c.Args[2])
	if !ok {
		c.Error("ERR timeout is not an integer or out of range")
		return
	}
	if timeout < 0 {
		c.Error("ERR timeout is negative")
		return
	}
	off := p.offset
	if got := p.acked(off); int64(got) >= n || c.S.DenyBlocking {
		c.W.Int(int64(got))
		return
	}
	var deadline int64
	if timeout > 0 {
		deadline = c.Now + timeout
	}
	w := c.BlockFor(deadline, func(out *resp.Writer) { out.Int(int64(p.acked(off))) })
	if w == nil {
		c.W.Int(int64(p.acked(off)))
		return
	}
	p.waits = append(p.waits, &waitReq{w: w, off: off, n: int(n)})
	// Ask the replicas for their offsets now rather than at their next
	// second's ACK.
	p.send(resp.AppendCommand(nil, []byte("REPLCONF"), []byte("GETACK"), []byte("*")))
}

// ackArrived ends the WAITs the replicas' acknowledgements now satisfy.
func (p *Primary) ackArrived() {
	left := p.waits[:0]
	for _, wr := range p.waits {
		if wr.w.Done() {
			continue
		}
		if got := p.acked(wr.off); got >= wr.n {
			p.e.FinishWait(wr.w, func(out *resp.Writer) { out.Int(int64(got)) })
			continue
		}
		left = append(left, wr)
	}
	clear(p.waits[len(left):])
	p.waits = left
}
