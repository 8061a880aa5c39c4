package cluster

import (
	"fmt"
	"net"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
)

// process handles one message from a link (clusterProcessPacket); false
// drops the link. Under the lock.
func (c *Cluster) process(l *link, m *message) bool {
	now := c.now()
	typ := m.typ
	if typ < msgTypeCount {
		c.statsRecv[typ]++
	}
	var sender *Node
	if l.node != nil && !l.node.inHandshake() {
		sender = l.node
	} else {
		sender = c.lookup(m.sender)
		if sender != nil && l.node == nil && l.inbound {
			if sender.inbound != nil && sender.inbound != l {
				sender.inbound.close()
			}
			sender.inbound = l
			l.node = sender
		}
	}
	if sender != nil {
		sender.dataRecv = now
	}
	if sender != nil && !sender.inHandshake() {
		if m.currentEpoch > c.currentEpoch {
			c.currentEpoch = m.currentEpoch
			c.todoSave = true
		}
		if m.configEpoch > sender.configEpoch {
			sender.configEpoch = m.configEpoch
			c.todoSave = true
		}
		sender.replOffset = int64(m.offset)
		if c.mfEnd != 0 && c.myself.isSlave() && c.myself.master == sender &&
			m.mflags&mflagPaused != 0 && c.mfPrimaryOffset == -1 {
			c.mfPrimaryOffset = sender.replOffset
		}
	}

	if typ == msgPing || typ == msgMeet {
		if (typ == msgMeet || c.myself.ip == "") && c.e.Cfg.Str(config.ClusterAnnounceIP) == "" {
			if ip := localIP(l.conn); ip != "" && ip != c.myself.ip {
				c.myself.ip = ip
				c.e.Log.Warn("IP address for this node updated to " + ip)
				c.todoSave = true
			}
		}
		if sender == nil && typ == msgMeet {
			n := c.newNode("", flagHandshake)
			n.ip = peerIP(l.conn, m.myIP)
			n.port, n.pport, n.cport = int(m.port), int(m.pport), int(m.cport)
			c.addNode(n)
			c.todoSave = true
			c.processGossip(m, l, nil, true)
		}
		c.sendPing(l, msgPong)
	}

	switch typ {
	case msgPing, msgPong, msgMeet:
		if !l.inbound && l.node != nil {
			n := l.node
			if n.inHandshake() {
				if sender != nil {
					// Already known under its real name: take the
					// address, drop the handshake node.
					if typ == msgPing {
						c.updateAddress(sender, l, m)
					}
					c.delNode(n)
					return false
				}
				c.renameNode(n, m.sender)
				n.flags &^= flagHandshake
				n.flags |= m.flags & (flagMaster | flagSlave)
				c.e.Log.Debug(fmt.Sprintf("Handshake with node %s completed.", n.name))
				c.todoSave = true
			} else if n.name != m.sender {
				c.e.Log.Debug(fmt.Sprintf("PONG contains mismatching sender ID. About node %s added %d ms ago, having flags %d", n.name, now-n.ctime, n.flags))
				n.flags |= flagNoAddr
				n.ip, n.port, n.pport, n.cport = "", 0, 0, 0
				c.todoSave = true
				l.close()
				return false
			}
		}
		if sender != nil {
			sender.flags &^= flagNoFailover
			sender.flags |= m.flags & flagNoFailover
		}
		if sender != nil && typ == msgPing && !sender.inHandshake() {
			c.updateAddress(sender, l, m)
		}
		if !l.inbound && typ == msgPong && l.node != nil {
			n := l.node
			n.pongRecv = now
			n.pingSent = 0
			if n.timedOut() {
				n.flags &^= flagPFail
				c.todoSave = true
			} else if n.failed() {
				c.clearFailureIfNeeded(n)
			}
		}
		if sender != nil {
			if m.slaveOf == "" {
				c.setAsMaster(sender)
			} else {
				master := c.lookup(m.slaveOf)
				if sender.isMaster() {
					c.delNodeSlots(sender)
					sender.flags &^= flagMaster | flagMigrateTo
					sender.flags |= flagSlave
					c.todoSave = true
				}
				if master != nil && sender.master != master {
					if sender.master != nil {
						sender.master.removeReplica(sender)
					}
					master.addReplica(sender)
					sender.master = master
					c.todoSave = true
				}
			}
		}
		var senderMaster *Node
		dirty := false
		if sender != nil {
			senderMaster = sender
			if sender.isSlave() {
				senderMaster = sender.master
			}
			dirty = senderMaster != nil && senderMaster.slots != m.slots
		}
		if sender != nil && sender.isMaster() && dirty {
			c.updateSlotsWith(sender, m.configEpoch, &m.slots)
		}
		if sender != nil && dirty {
			for j := 0; j < NumSlots; j++ {
				if !m.slots.has(j) {
					continue
				}
				o := c.slots[j]
				if o == sender || o == nil {
					continue
				}
				if o.configEpoch > m.configEpoch {
					c.sendUpdate(sender.link, o)
					break
				}
			}
		}
		if sender != nil && c.myself.isMaster() && sender.isMaster() && m.configEpoch == c.myself.configEpoch {
			c.handleEpochCollision(sender)
		}
		if sender != nil {
			c.processGossip(m, l, sender, false)
			if sender.hostname != m.hostname {
				sender.hostname = m.hostname
				c.todoSave = true
			}
		}
	case msgFail:
		if sender == nil {
			return true
		}
		if f := c.lookup(m.about); f != nil && f.flags&(flagFail|flagMyself) == 0 {
			c.e.Log.Info(fmt.Sprintf("FAIL message received from %s about %s", sender.name, f.name))
			f.flags |= flagFail
			f.failTime = now
			f.flags &^= flagPFail
			c.todoSave = true
		}
	case msgPublish, msgPublishShard:
		if sender == nil {
			return true
		}
		kind := engine.SubChannel
		if typ == msgPublishShard {
			kind = engine.SubShard
		}
		c.e.Publish(kind, m.channel, m.payload)
	case msgAuthRequest:
		if sender == nil {
			return true
		}
		c.sendFailoverAuthIfNeeded(sender, m)
	case msgAuthAck:
		if sender == nil {
			return true
		}
		if sender.isMaster() && sender.numSlots > 0 && int64(m.currentEpoch) >= c.authEpoch {
			c.authCount++
			c.handleReplicaFailover()
		}
	case msgMFStart:
		if sender == nil || sender.master != c.myself {
			return true
		}
		c.resetManualFailover()
		c.mfEnd = now + mfTimeout
		c.mfReplica = sender
		c.e.Host.Pause(engine.PauseByFailover, now+mfTimeout*2, true)
		c.repl.HoldPings(now + mfTimeout*2)
		c.e.Log.Warn(fmt.Sprintf("Manual failover requested by replica %s.", sender.name))
		// The PING carries the PAUSED flag and our final offset.
		c.sendPing(l, msgPing)
		if sender.link != nil && sender.link != l {
			c.sendPing(sender.link, msgPing)
		}
	case msgUpdate:
		if sender == nil {
			return true
		}
		n := c.lookup(m.updName)
		if n == nil || n.configEpoch >= m.updEpoch {
			return true
		}
		if n.isSlave() {
			c.setAsMaster(n)
		}
		n.configEpoch = m.updEpoch
		c.todoSave = true
		c.updateSlotsWith(n, m.updEpoch, &m.updSlots)
	}
	return true
}

// localIP is our address on a connection (how a MEET tells us our own).
func localIP(conn net.Conn) string {
	if a, ok := conn.LocalAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return ""
}

// peerIP is the address a peer announces, else the one it connects from.
func peerIP(conn net.Conn, announced string) string {
	if announced != "" {
		return announced
	}
	if a, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return ""
}

// updateAddress takes a node's address from its PING when it changed
// (nodeUpdateAddressIfNeeded).
func (c *Cluster) updateAddress(n *Node, l *link, m *message) {
	if n == c.myself {
		return
	}
	ip := peerIP(l.conn, m.myIP)
	if n.ip == ip && n.port == int(m.port) && n.cport == int(m.cport) && n.pport == int(m.pport) {
		return
	}
	n.ip, n.port, n.pport, n.cport = ip, int(m.port), int(m.pport), int(m.cport)
	if n.link != nil {
		n.link.close()
	}
	n.flags &^= flagNoAddr
	c.e.Log.Warn(fmt.Sprintf("Address updated for node %s, now %s:%d", n.name, ip, n.port))
	if c.myself.isSlave() && c.myself.master == n {
		c.repl.Follow(n.ip, n.port)
	}
	c.todoSave = true
}

// processGossip reads the gossip entries: failure reports from
// primaries, pong times, new nodes (clusterProcessGossipSection).
func (c *Cluster) processGossip(m *message, l *link, sender *Node, meet bool) {
	if sender == nil && !meet {
		return
	}
	now := c.now()
	for _, g := range m.gossip {
		n := c.lookup(g.name)
		if n != nil {
			if sender != nil && sender.isMaster() && n != c.myself {
				if g.flags&(flagFail|flagPFail) != 0 {
					if _, ok := n.failReports[sender]; !ok {
						c.e.Log.Debug(fmt.Sprintf("Node %s reported node %s as not reachable.", sender.name, n.name))
					}
					n.failReports[sender] = now
					c.markFailingIfNeeded(n)
				} else {
					delete(n.failReports, sender)
				}
			}
			if g.flags&(flagFail|flagPFail) == 0 && n.pingSent == 0 && c.failureReports(n) == 0 {
				pong := int64(g.pongRecv) * 1000
				if pong <= now+500 && pong > n.pongRecv {
					n.pongRecv = pong
				}
			}
			if n.flags&(flagFail|flagPFail) != 0 && g.flags&flagNoAddr == 0 && g.flags&(flagFail|flagPFail) == 0 &&
				(n.ip != g.ip || n.port != int(g.port) || n.cport != int(g.cport)) {
				if n.link != nil {
					n.link.close()
				}
				n.ip, n.port, n.pport, n.cport = g.ip, int(g.port), int(g.pport), int(g.cport)
				n.flags &^= flagNoAddr
			}
			continue
		}
		if sender != nil && g.flags&flagNoAddr == 0 && !c.blacklisted(g.name) && validName(g.name) {
			n := c.newNode(g.name, g.flags&(flagMaster|flagSlave|flagNoFailover))
			n.ip, n.port, n.pport, n.cport = g.ip, int(g.port), int(g.pport), int(g.cport)
			c.addNode(n)
			c.todoSave = true
		}
	}
}

func validName(s string) bool {
	if len(s) != nameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'f') {
			return false
		}
	}
	return true
}

func (c *Cluster) blacklisted(name string) bool {
	now := c.now()
	for k, until := range c.blacklist {
		if until < now {
			delete(c.blacklist, k)
		}
	}
	_, ok := c.blacklist[name]
	return ok
}

// markFailingIfNeeded turns PFAIL into FAIL when a majority of primaries
// reported it, and tells everyone.
func (c *Cluster) markFailingIfNeeded(n *Node) {
	if !n.timedOut() || n.failed() {
		return
	}
	failures := c.failureReports(n)
	if c.myself.isMaster() {
		failures++
	}
	if failures < c.quorum() {
		return
	}
	c.e.Log.Info(fmt.Sprintf("Marking node %s as failing (quorum reached).", n.name))
	n.flags &^= flagPFail
	n.flags |= flagFail
	n.failTime = c.now()
	c.sendFail(n.name)
	c.todoSave = true
}

// clearFailureIfNeeded clears FAIL for a reachable replica or slot-less
// primary at once, and for a primary with slots after node_timeout*2
// with nobody failing it over.
func (c *Cluster) clearFailureIfNeeded(n *Node) {
	now := c.now()
	if n.isSlave() || n.numSlots == 0 {
		c.e.Log.Info(fmt.Sprintf("Clear FAIL state for node %s: %s is reachable again.", n.name,
			map[bool]string{true: "replica", false: "master without slots"}[n.isSlave()]))
		n.flags &^= flagFail
		c.todoSave = true
	}
	if n.isMaster() && n.numSlots > 0 && now-n.failTime > c.nodeTimeout()*2 {
		c.e.Log.Info(fmt.Sprintf("Clear FAIL state for node %s: is reachable again and nobody is serving its slots after some time.", n.name))
		n.flags &^= flagFail
		c.todoSave = true
	}
}

// updateSlotsWith applies a primary's claim of slots at an epoch
// (clusterUpdateSlotsConfigWith): newer claims win; if our primary lost
// all its slots to the sender we follow the sender.
func (c *Cluster) updateSlotsWith(sender *Node, epoch uint64, slots *slotBitmap) {
	if sender == c.myself {
		return
	}
	cur := c.myself.masterOf()
	var newMaster *Node
	senderSlots, migrated := 0, 0
	var dirty []int
	for j := 0; j < NumSlots; j++ {
		if j&7 == 0 && slots[j>>3] == 0 {
			j += 7 // none of these eight
			continue
		}
		if !slots.has(j) {
			continue
		}
		senderSlots++
		o := c.slots[j]
		if o == sender || c.importing[j] != nil {
			continue
		}
		if o == nil || o.configEpoch < epoch {
			if o == c.myself && c.keysInSlot(j) > 0 {
				dirty = append(dirty, j)
			}
			if o == cur {
				newMaster = sender
				migrated++
			}
			c.delSlot(j)
			c.addSlot(sender, j)
			c.todoSave = true
		}
	}
	if newMaster != nil && cur.numSlots == 0 &&
		(c.e.Cfg.Bool(config.ClusterAllowReplicaMigration) || senderSlots == migrated) {
		c.e.Log.Warn("Configuration change detected. Reconfiguring myself as a replica of " + sender.name)
		c.setMyMaster(sender)
	} else {
		for _, j := range dirty {
			c.delKeysInSlot(j)
		}
	}
}

// handleEpochCollision: two primaries with one config epoch; the one
// with the smaller name takes a new epoch (clusterHandleConfigEpochCollision).
func (c *Cluster) handleEpochCollision(sender *Node) {
	if sender.configEpoch != c.myself.configEpoch || !sender.isMaster() || !c.myself.isMaster() {
		return
	}
	if sender.name <= c.myself.name {
		return
	}
	c.currentEpoch++
	c.myself.configEpoch = c.currentEpoch
	c.todoSave = true
	c.e.Log.Debug(fmt.Sprintf("WARNING: configEpoch collision with node %s. configEpoch set to %d", sender.name, c.currentEpoch))
}
