package cluster

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/internal/config"
)

// link is one bus connection: outbound (we dialed node) or inbound (a
// peer dialed us; node is set once the peer is known).
type link struct {
	c       *Cluster
	conn    net.Conn
	node    *Node
	inbound bool
	ctime   int64
	// The send queue: messages appended by send under the server lock,
	// taken in batches by writeLoop, which wake tells there is work.
	// A slice rather than a buffered channel: an idle link holds no
	// queue, where a channel allocates all its slots up front.
	qmu  sync.Mutex
	q    [][]byte
	wake chan struct{}
	done chan struct{}
	once sync.Once
	// The bytes queued and not yet written (send-buffer-used), and the
	// memory their buffers hold (send-buffer-allocated): added by send
	// under the server lock, taken off by writeLoop once written, so
	// atomic. cluster-link-sendbuf-limit is checked against allocated.
	pending, allocated atomic.Int64
	// received is the capacity of the receive buffer readLoop holds: the
	// header's 8 bytes between messages, the message's buffer while one
	// is read and processed (Redis's rcvbuf_alloc).
	received atomic.Int64
}

// sendQueue bounds a link's queued messages: a peer that reads nothing
// for that long loses its link (and is reconnected by the cron), as
// cluster-link-sendbuf-limit frees a link in Redis.
const sendQueue = 1024

func (c *Cluster) newLink(conn net.Conn, n *Node, inbound bool) *link {
	l := &link{c: c, conn: conn, node: n, inbound: inbound, ctime: c.now(),
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	c.wg.Add(2)
	go l.writeLoop()
	go l.readLoop()
	return l
}

// close drops the link; the node (if any) forgets it. Under the lock.
func (l *link) close() {
	l.once.Do(func() {
		close(l.done)
		l.conn.Close()
	})
	if n := l.node; n != nil {
		if n.link == l {
			n.link = nil
		}
		if n.inbound == l {
			n.inbound = nil
		}
	}
}

// send queues a message; a full queue drops the link.
func (l *link) send(b []byte) {
	if l == nil {
		return
	}
	select {
	case <-l.done:
		return
	default:
	}
	l.qmu.Lock()
	if len(l.q) >= sendQueue {
		l.qmu.Unlock()
		l.c.e.Log.Warn("Cluster bus link send queue is full: freeing the link")
		l.close()
		return
	}
	// Counted before writeLoop can see the message, so that its
	// subtraction never comes first.
	l.pending.Add(int64(len(b)))
	l.allocated.Add(int64(cap(b)))
	l.q = append(l.q, b)
	l.qmu.Unlock()
	if t := be.Uint16(b[offType:]); t < msgTypeCount {
		l.c.statsSent[t]++
	}
	select {
	case l.wake <- struct{}{}:
	default: // already woken
	}
}

// writeLoop writes what send queued, each batch in one vectored write
// (a PING per peer per round, and a reshard's PONG broadcasts, come in
// bursts), until the link closes or a write fails.
func (l *link) writeLoop() {
	defer l.c.wg.Done()
	var batch, vec [][]byte
	for {
		select {
		case <-l.done:
			return
		case <-l.wake:
		}
		for {
			l.qmu.Lock()
			batch, l.q = l.q, batch[:0]
			l.qmu.Unlock()
			if len(batch) == 0 {
				break
			}
			var used, alloc int64
			for _, b := range batch {
				used += int64(len(b))
				alloc += int64(cap(b))
			}
			vec = append(vec[:0], batch...)
			clear(batch)
			l.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
			bufs := net.Buffers(vec) // WriteTo consumes bufs, not vec
			_, err := bufs.WriteTo(l.conn)
			clear(vec)
			l.pending.Add(-used)
			l.allocated.Add(-alloc)
			if err != nil {
				l.c.lock.Lock()
				l.close()
				l.c.lock.Unlock()
				return
			}
		}
	}
}

// readLoop reads whole messages and processes each under the lock. A
// bad signature, a length under a header's, a message that does not
// parse: the link is dropped (logged) and the state is untouched.
func (l *link) readLoop() {
	defer l.c.wg.Done()
	var hdr [8]byte
	for {
		l.received.Store(int64(len(hdr)))
		if _, err := io.ReadFull(l.conn, hdr[:]); err != nil {
			break
		}
		total := int(be.Uint32(hdr[4:]))
		if string(hdr[:4]) != "RCmb" || total < hdrLen || total > maxMsgLen {
			l.c.e.Log.Warn("Bad message length or signature received from Cluster bus.")
			break
		}
		buf := make([]byte, 8, min(total, 64<<10))
		copy(buf, hdr[:])
		l.received.Store(int64(cap(buf)))
		// Grow as bytes arrive, not as the header claims.
		for len(buf) < total {
			chunk := min(total-len(buf), 64<<10)
			if cap(buf)-len(buf) < chunk {
				nb := make([]byte, len(buf), min(total, 2*cap(buf)+chunk))
				copy(nb, buf)
				buf = nb
				l.received.Store(int64(cap(buf)))
			}
			n, err := io.ReadFull(l.conn, buf[len(buf):len(buf)+chunk])
			buf = buf[:len(buf)+n]
			if err != nil {
				goto out
			}
		}
		{
			m, err := decode(buf)
			l.c.lock.Lock()
			if l.c.closed {
				l.c.lock.Unlock()
				break
			}
			if err != nil {
				l.c.e.Log.Warn("Cluster bus: dropping the link to " + l.peer() + ": " + err.Error())
				l.close()
				l.c.lock.Unlock()
				break
			}
			keep := l.c.process(l, m)
			l.c.lock.Unlock()
			if !keep {
				break
			}
		}
	}
out:
	l.c.lock.Lock()
	l.close()
	l.c.lock.Unlock()
}

func (l *link) peer() string {
	if a := l.conn.RemoteAddr(); a != nil {
		return a.String()
	}
	return "?"
}

// listen opens the bus port and accepts links.
func (c *Cluster) listen() error {
	port := c.busPort()
	// A TLS configuration that does not load stops the start, as in
	// Redis; each accepted link then reads the files again, so a
	// CONFIG SET of a tls-* parameter applies to the links made after.
	if _, err := c.busServerTLS(); err != nil {
		return fmt.Errorf("could not configure TLS for the cluster bus: %w", err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(c.bindAddr(), strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("could not listen on the cluster bus port %d: %w", port, err)
	}
	c.ln = ln
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				time.Sleep(10 * time.Millisecond)
				continue
			}
			if !c.tlsOn() {
				c.accepted(conn)
				continue
			}
			c.wg.Add(1)
			go func() {
				defer c.wg.Done()
				tc, err := c.busServerTLS()
				if err != nil {
					c.e.Log.Warn("Cluster bus: TLS configuration: " + err.Error())
					conn.Close()
					return
				}
				t := tls.Server(conn, tc)
				if err := c.handshake(t); err != nil {
					c.e.Log.Info("Error accepting cluster node connection: " + err.Error())
					return
				}
				c.accepted(t)
			}()
		}
	}()
	return nil
}

// accepted makes an inbound link of conn, unless the cluster is closing.
func (c *Cluster) accepted(conn net.Conn) {
	c.lock.Lock()
	if c.closed {
		conn.Close()
	} else {
		c.newLink(conn, nil, true)
	}
	c.lock.Unlock()
}

// bindAddr is the first bind address ("" for all when none is set).
func (c *Cluster) bindAddr() string {
	for _, a := range splitFields(c.e.Cfg.Str(config.Bind)) {
		if a == "*" {
			return ""
		}
		if len(a) > 0 && a[0] == '-' {
			a = a[1:]
		}
		if a == "::1" || a == "::" {
			continue
		}
		return a
	}
	return ""
}

func splitFields(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	return out
}

func (c *Cluster) busPort() int {
	if p := c.e.Cfg.Int(config.ClusterPort); p != 0 {
		return int(p)
	}
	return c.clientPort() + 10000
}

// dial connects to n outside the lock; the cron started it.
func (c *Cluster) dial(n *Node, ip string, cport int) {
	defer c.wg.Done()
	timeout := time.Duration(max(c.nodeTimeout(), 1000)) * time.Millisecond
	conn, err := c.dialBus(net.JoinHostPort(ip, strconv.Itoa(cport)), timeout)
	c.lock.Lock()
	defer c.lock.Unlock()
	n.connecting = false
	if c.closed || c.nodes[n.name] != n || n.link != nil {
		if conn != nil {
			conn.Close()
		}
		return
	}
	if err != nil {
		if n.pingSent == 0 {
			n.pingSent = c.now()
		}
		return
	}
	l := c.newLink(conn, n, false)
	n.link = l
	// A PING right away, keeping the time of an unanswered older one so
	// failure detection is not reset by reconnecting.
	old := n.pingSent
	typ := uint16(msgPing)
	if n.flags&flagMeet != 0 {
		typ = msgMeet
	}
	c.sendPing(l, typ)
	if old != 0 {
		n.pingSent = old
	}
	n.flags &^= flagMeet
}

// header builds this node's message header (clusterBuildMessageHdr).
func (c *Cluster) header(typ uint16) *header {
	me := c.myself
	master := me.masterOf()
	h := &header{typ: typ, sender: me.name, slots: master.slots, flags: me.flags,
		currentEpoch: c.currentEpoch, configEpoch: master.configEpoch}
	if me.isSlave() && me.master != nil {
		h.slaveOf = me.master.name
	}
	h.myIP = c.e.Cfg.Str(config.ClusterAnnounceIP)
	h.port, h.pport, h.cport = c.announcedPorts()
	if c.stateOK {
		h.state = 0
	} else {
		h.state = 1
	}
	h.offset = uint64(c.repl.Offset())
	if me.isMaster() && c.mfEnd != 0 {
		h.mflags |= mflagPaused
	}
	return h
}

func (c *Cluster) announcedPorts() (port, pport, cport uint16) {
	p, pp := c.clientPort(), c.plainPort()
	if a := c.e.Cfg.Int(config.ClusterAnnounceTLSPort); a != 0 && c.tlsOn() {
		p, pp = int(a), int(c.e.Cfg.Int(config.ClusterAnnouncePort))
	} else if a := c.e.Cfg.Int(config.ClusterAnnouncePort); a != 0 {
		p = int(a)
	}
	cp := c.busPort()
	if a := c.e.Cfg.Int(config.ClusterAnnounceBusPort); a != 0 {
		cp = int(a)
	}
	return uint16(p), uint16(pp), uint16(cp)
}

func (c *Cluster) gossipEntry(n *Node) gossip {
	return gossip{name: n.name, pingSent: uint32(n.pingSent / 1000), pongRecv: uint32(n.pongRecv / 1000),
		ip: n.ip, port: uint16(n.port), cport: uint16(n.cport), pport: uint16(n.pport), flags: n.flags}
}

// sendPing sends a PING, PONG or MEET with gossip about a tenth of the
// nodes (at least 3) and every node in PFAIL (clusterSendPing).
func (c *Cluster) sendPing(l *link, typ uint16) {
	c.pingsSent++
	fresh := len(c.nodes) - 2
	wanted := max(len(c.nodes)/10, 3)
	wanted = min(wanted, fresh)
	if !l.inbound && typ == msgPing && l.node != nil {
		l.node.pingSent = c.now()
	}
	h := c.header(typ)
	var gs []gossip
	tries := wanted * 3
	for fresh > 0 && len(gs) < wanted && tries > 0 {
		tries--
		n := c.randomNode()
		if n == c.myself || n.flags&flagPFail != 0 {
			continue
		}
		if n.flags&(flagHandshake|flagNoAddr) != 0 || (n.link == nil && n.numSlots == 0) {
			fresh--
			continue
		}
		if n.lastGossip == c.pingsSent {
			continue
		}
		n.lastGossip = c.pingsSent
		gs = append(gs, c.gossipEntry(n))
		fresh--
	}
	for _, n := range c.nodes {
		if n.flags&flagPFail != 0 && n.flags&(flagHandshake|flagNoAddr) == 0 {
			gs = append(gs, c.gossipEntry(n))
		}
	}
	l.send(encodePing(h, gs, c.e.Cfg.Str(config.ClusterAnnounceHostname)))
}

// randomNode picks a node uniformly (map order is not random enough for
// small maps to be fair, so pick by index).
func (c *Cluster) randomNode() *Node {
	i := c.rnd.Intn(len(c.nodes))
	for _, n := range c.nodes {
		if i == 0 {
			return n
		}
		i--
	}
	return c.myself
}

// broadcast sends b to every known node with a link.
func (c *Cluster) broadcast(b []byte) {
	for _, n := range c.nodes {
		if n.link == nil || n.flags&(flagMyself|flagHandshake) != 0 {
			continue
		}
		n.link.send(b)
	}
}

// broadcastPong sends a PONG to every node (all) or to our primary's
// replicas (the new configuration reaches them first).
func (c *Cluster) broadcastPong(localReplicas bool) {
	for _, n := range c.nodes {
		if n.link == nil || n == c.myself || n.inHandshake() {
			continue
		}
		if localReplicas {
			local := n.isSlave() && n.master != nil && (n.master == c.myself || n.master == c.myself.master)
			if !local {
				continue
			}
		}
		c.sendPing(n.link, msgPong)
	}
}

func (c *Cluster) sendFail(name string) {
	c.broadcast(encodeFail(c.header(msgFail), name))
}

func (c *Cluster) sendUpdate(l *link, n *Node) {
	if l == nil {
		return
	}
	l.send(encodeUpdate(c.header(msgUpdate), n.configEpoch, n.name, &n.slots))
}

// Publish sends a PUBLISH to every node (PUBLISH in cluster mode).
func (c *Cluster) Publish(channel, msg []byte) {
	c.broadcast(encodePublish(c.header(msgPublish), channel, msg))
}

// PublishShard sends a PUBLISHSHARD to the nodes of this node's shard.
func (c *Cluster) PublishShard(channel, msg []byte) {
	b := encodePublish(c.header(msgPublishShard), channel, msg)
	master := c.myself.masterOf()
	for _, n := range c.nodes {
		if n == c.myself || n.link == nil || n.inHandshake() {
			continue
		}
		if n == master || (n.isSlave() && n.master == master) {
			n.link.send(b)
		}
	}
}
