package replication

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/resp"
)

// The replica side: REPLICAOF host port starts a link goroutine that
// connects, shakes hands (PING, AUTH with masterauth, REPLCONF
// listening-port and capa, PSYNC), loads the primary's snapshot in full or
// continues from its offset, then applies the primary's stream under the
// server lock as the primary's client (flag M). The bytes applied are
// also the replica's own stream: they go to its backlog and its replicas
// unchanged, so offsets agree along a chain and after a failover (PSYNC2).
// While it is a replica the engine's own effects are not fed to the
// stream, and clients other than the primary may not write
// (replica-read-only).

// link is one connection attempt loop to a primary.
type link struct {
	host string
	port int
	stop chan struct{}
	// Under the server lock: the link's state for INFO.
	state    string // connect, connecting, sync, connected
	lastIO   int64  // unix ms of the last byte from the primary
	syncing  bool
	readOff  int64 // stream bytes read (slave_read_repl_offset)
	conn     net.Conn
	sess     *engine.Session
	attempts int
}

var errStopped = errors.New("replication link stopped")

// linkIDs numbers the primary links' sessions, above any connection's
// client id (CLIENT LIST, CLIENT KILL ID).
var linkIDs atomic.Int64

func init() {
	const f = engine.FlagAdmin | engine.FlagNoScript | engine.FlagStale | engine.FlagNoAsyncLoading
	for _, name := range []string{"replicaof", "slaveof"} {
		engine.Register(&engine.Command{Name: name, Arity: 3, Flags: f, Group: "server",
			Summary: "Configures a server as replica of another, or promotes it to a primary.", Since: "5.0.0",
			Complexity: "O(1)", Handler: cmdReplicaof})
	}
}

// REPLICAOF host port | NO ONE
func cmdReplicaof(c *engine.Ctx) {
	p := ext.Of(c.Env)
	if p.fo.state != "" {
		c.Error("ERR REPLICAOF not allowed while failing over.")
		return
	}
	if ascii.EqualFold(c.Args[1], "no") && ascii.EqualFold(c.Args[2], "one") {
		if p.link != nil {
			p.promote()
			c.Env.Log.Info("MASTER MODE enabled (user request from '" + c.S.Addr + "')")
		}
		c.W.OK()
		return
	}
	port, err := strconv.Atoi(string(c.Args[2]))
	if err != nil || port < 0 || port > 65535 {
		c.Error("ERR Invalid master port")
		return
	}
	host := string(c.Args[1])
	if p.link != nil && p.link.host == host && p.link.port == port {
		c.W.Simple("OK Already connected to specified master")
		return
	}
	p.follow(host, port)
	c.Env.Log.Info(fmt.Sprintf("REPLICAOF %s:%d enabled (user request from '%s')", host, port, c.S.Addr))
	c.W.OK()
}

// Follow makes the server a replica of host:port (the replicaof
// parameter at startup). Call it under the server lock.
func (p *Primary) Follow(host string, port int) { p.follow(host, port) }

func (p *Primary) follow(host string, port int) {
	if p.link != nil {
		p.stopLink()
	} else {
		// The history so far stays continuable (PSYNC2): the new primary
		// may hold it.
		p.ensureBacklog()
	}
	p.e.SetPropTap(nil) // the stream is now the primary's, proxied
	p.e.SetReadOnlyReplica(p.e.Cfg.Bool(config.ReplicaReadOnly))
	p.e.SetActiveExpire(false) // keys expire by the primary's DEL
	p.e.SetReplicaExpiry(true)
	// Every replica of ours resyncs: our history is about to change. A
	// failover's hand-over keeps them until the target's answer changes
	// it (a new replid or a full sync), as they may continue with us.
	if p.fo.state != failoverInProgress {
		p.dropReplicas()
	}
	l := &link{host: host, port: port, stop: make(chan struct{}), state: "connect"}
	p.link = l
	go p.run(l)
}

// dropReplicas disconnects every replica of ours (they reconnect and
// resync).
func (p *Primary) dropReplicas() {
	for _, r := range p.live() {
		r.s.Killed.Store(true)
		p.e.Host.Kill(r.s)
	}
}

func (p *Primary) stopLink() {
	l := p.link
	p.link = nil
	close(l.stop)
	if l.conn != nil {
		l.conn.Close()
	}
}

// promote ends the link and makes the server a primary that continues
// the history it has (replid2 = the old id up to offset+1).
func (p *Primary) promote() {
	p.stopLink()
	p.replid2 = p.e.Stats.Info.ReplID()
	p.off2 = p.offset + 1
	p.e.Stats.Info.NewReplID()
	p.e.SetReadOnlyReplica(false)
	p.e.SetActiveExpire(true)
	p.e.SetReplicaExpiry(false)
	p.ensureBacklog()
	p.e.SetPropTap(p)
	p.seldb = -1
}

// run keeps the link up until it is stopped. After a broken or failed
// session it reconnects with backoff: 1 s after a link that was
// streaming (as Redis's replication cron does), then 2 s, then every
// maxBackoff while attempts keep failing.
func (p *Primary) run(l *link) {
	for {
		err := p.session(l)
		select {
		case <-l.stop:
			return
		default:
		}
		p.lock.Lock()
		if p.link == l {
			l.state, l.syncing, l.conn = "connect", false, nil
		}
		wait := min(time.Second<<min(l.attempts, 8), maxBackoff)
		l.attempts++
		p.lock.Unlock()
		var ne net.Error
		switch {
		case errors.Is(err, errMasterTimeout):
			p.e.Log.Warn("MASTER timeout: no data nor PING received...")
		case errors.As(err, new(handshakeError)):
			p.e.Log.Warn(err.Error())
		case errors.As(err, &ne) && ne.Timeout():
			p.e.Log.Warn("Timeout connecting to the MASTER...")
		case err != nil:
			p.e.Log.Warn(fmt.Sprintf("Error condition on socket for SYNC: %v", err))
		}
		p.e.Log.Info(fmt.Sprintf("Reconnecting to MASTER %s:%d in %v (attempt %d)", l.host, l.port, wait, l.attempts))
		select {
		case <-l.stop:
			return
		case <-time.After(wait):
		}
	}
}

// maxBackoff is the longest wait between attempts to reach the primary.
const maxBackoff = 4 * time.Second

// errMasterTimeout: the primary sent nothing, not even a PING, for
// repl-timeout while the link was streaming.
var errMasterTimeout = errors.New("no data nor PING received from the master within repl-timeout")

// session is one connection: handshake, sync, then the stream until the
// link breaks or stops.
func (p *Primary) session(l *link) error {
	p.e.Log.Info(fmt.Sprintf("Connecting to MASTER %s:%d", l.host, l.port))
	conn, err := p.dial(net.JoinHostPort(l.host, strconv.Itoa(l.port)), 5*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	p.lock.Lock()
	if p.link != l {
		p.lock.Unlock()
		return errStopped
	}
	l.conn, l.state = conn, "connecting"
	myPort := p.e.Cfg.Int(config.Port)
	if lp := p.e.Host.Port(); lp > 0 {
		// The port actually listened on (the same unless port was 0).
		myPort = int64(lp)
	}
	if ap := p.e.Cfg.Int(config.ReplicaAnnouncePort); ap != 0 {
		myPort = ap
	}
	myIP := p.e.Cfg.Str(config.ReplicaAnnounceIP)
	// Our own history, when we have one, may be the new primary's too
	// (it was our replica, or a sibling): ask to continue it.
	replid, next := p.e.Stats.Info.ReplID(), p.offset+1
	if p.backlog == nil {
		replid, next = "?", -1
	}
	auth := p.e.Cfg.Str(config.MasterAuth)
	user := p.e.Cfg.Str(config.MasterUser)
	failing := p.fo.state == failoverInProgress
	p.lock.Unlock()

	r := bufio.NewReaderSize(conn, 64<<10)
	timeout := time.Duration(max(p.e.Cfg.Int(config.ReplTimeout), 1)) * time.Second
	ask := func(args ...string) (string, error) {
		conn.SetDeadline(time.Now().Add(timeout))
		var b []byte
		bs := make([][]byte, len(args))
		for i, a := range args {
			bs[i] = []byte(a)
		}
		b = resp.AppendCommand(b, bs...)
		if _, err := conn.Write(b); err != nil {
			return "", err
		}
		line, err := r.ReadString('\n')
		return strings.TrimRight(line, "\r\n"), err
	}
	if reply, err := ask("PING"); err != nil {
		return err
	} else if reply[0] == '-' && !strings.HasPrefix(reply, "-NOAUTH") {
		return fmt.Errorf("master replied to PING: %s", reply)
	}
	if auth != "" {
		args := []string{"AUTH", auth}
		if user != "" {
			args = []string{"AUTH", user, auth}
		}
		if reply, err := ask(args...); err != nil {
			return err
		} else if reply[0] == '-' {
			return handshakeError("Unable to AUTH to MASTER: " + reply)
		}
	}
	if _, err := ask("REPLCONF", "listening-port", strconv.FormatInt(myPort, 10)); err != nil {
		return err
	}
	if myIP != "" {
		if _, err := ask("REPLCONF", "ip-address", myIP); err != nil {
			return err
		}
	}
	if _, err := ask("REPLCONF", "capa", "eof", "capa", "psync2", "capa", "abacus"); err != nil {
		return err
	}
	p.e.Log.Info(fmt.Sprintf("Trying a partial resynchronization (request %s:%d).", replid, next))
	psync := []string{"PSYNC", replid, strconv.FormatInt(next, 10)}
	if failing {
		// The target, holding our replid, promotes itself and continues.
		psync = append(psync, "FAILOVER")
	}
	reply, err := ask(psync...)
	var extra []byte // stream bytes the snapshot's loader read past its end
	for err == nil && reply == "" {
		// Newlines keep the link alive while the primary prepares.
		conn.SetReadDeadline(time.Now().Add(timeout))
		reply, err = r.ReadString('\n')
		reply = strings.TrimRight(reply, "\r\n")
	}
	if err != nil {
		return err
	}
	if failing {
		if err := p.failoverAnswered(l, reply); err != nil {
			return err
		}
	}
	switch {
	case strings.HasPrefix(reply, "+FULLRESYNC "):
		f := strings.Fields(reply)
		if len(f) != 3 {
			return fmt.Errorf("bad FULLRESYNC reply %q", reply)
		}
		off, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return fmt.Errorf("bad FULLRESYNC offset %q", reply)
		}
		p.lock.Lock()
		l.state, l.syncing = "sync", true
		p.lock.Unlock()
		conn.SetDeadline(time.Time{})
		if extra, err = p.loadSnapshot(l, r, conn, timeout, f[1], off); err != nil {
			return err
		}
	case strings.HasPrefix(reply, "+CONTINUE"):
		p.lock.Lock()
		if f := strings.Fields(reply); len(f) == 2 && f[1] != p.e.Stats.Info.ReplID() {
			// The primary's history has a new id (it was promoted): ours
			// continues under it.
			p.replid2, p.off2 = p.e.Stats.Info.ReplID(), p.offset+1
			p.e.Stats.Info.SetReplID(f[1])
			p.dropReplicas()
		}
		p.lock.Unlock()
		p.e.Log.Info("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.")
	default:
		return fmt.Errorf("unexpected reply to PSYNC from master: %s", reply)
	}
	return p.stream(l, conn, r, extra, timeout)
}

// stream applies the primary's commands until the link breaks, ACKing
// the offset every second and when asked (REPLCONF GETACK).
func (p *Primary) stream(l *link, conn net.Conn, r *bufio.Reader, extra []byte, timeout time.Duration) error {
	p.lock.Lock()
	if p.link != l {
		p.lock.Unlock()
		return errStopped
	}
	l.state, l.syncing = "connected", false
	l.lastIO = p.e.Clock.NowMs()
	l.attempts = 0
	sess := &engine.Session{ID: 1<<62 + linkIDs.Add(1), Addr: conn.RemoteAddr().String(), LAddr: conn.LocalAddr().String(),
		Authed: true, User: "default", Proto: 2, Flags: "M", Created: p.e.Clock.NowMs(), DB: p.streamDB}
	l.sess = sess
	p.e.SetPrimaryLink(sess, func() { conn.Close() })
	defer func() {
		p.lock.Lock()
		if p.e.PrimaryLink() == sess {
			p.e.SetPrimaryLink(nil, nil)
		}
		p.lock.Unlock()
	}()
	p.lock.Unlock()
	ack := func() error {
		p.lock.Lock()
		off := p.offset
		p.lock.Unlock()
		conn.SetWriteDeadline(time.Now().Add(timeout))
		_, err := conn.Write(resp.AppendCommand(nil, []byte("REPLCONF"), []byte("ACK"), strconv.AppendInt(nil, off, 10)))
		return err
	}
	// The first ACK at once: a primary that sent a diskless payload
	// starts the stream when it comes.
	if err := ack(); err != nil {
		return err
	}
	stopAck := make(chan struct{})
	defer close(stopAck)
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stopAck:
				return
			case <-t.C:
				if ack() != nil {
					return
				}
			}
		}
	}()
	a := &applier{}
	// Bytes the handshake's reader and the snapshot's loader took past
	// the sync are the stream's first.
	for len(extra) > 0 {
		room := a.in.ReadBuf(0)
		n := copy(room, extra)
		a.in.Filled(n)
		extra = extra[n:]
	}
	for r.Buffered() > 0 {
		room := a.in.ReadBuf(0)
		n, _ := r.Read(room[:min(len(room), r.Buffered())])
		a.in.Filled(n)
	}
	return p.streamLoop(l, conn, a, timeout)
}

// handshakeError is a refusal by the primary during the handshake, logged
// as its own line with Redis's text ("Unable to AUTH to MASTER: -ERR ...").
type handshakeError string

func (e handshakeError) Error() string { return string(e) }
