package cluster

import (
	"fmt"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
)

// Replica elections and manual failover, as Redis 7.0's
// clusterHandleSlaveFailover, clusterSendFailoverAuthIfNeeded and
// clusterHandleManualFailover.

const (
	mfTimeout = 5000 // ms a manual failover may take

	cantNone = iota
	cantDataAge
	cantWaitingDelay
	cantExpired
	cantWaitingVotes
)

// rank is this replica's place among its primary's replicas by offset:
// 0 for the most up to date.
func (c *Cluster) rank() int {
	me := c.myself
	if me.master == nil {
		return 0
	}
	off := c.repl.Offset()
	r := 0
	for _, s := range me.master.replicas {
		if s != me && s.flags&flagNoFailover == 0 && s.replOffset > off {
			r++
		}
	}
	return r
}

// handleReplicaFailover runs the election of a replica whose primary is
// FAIL (or a manual failover).
func (c *Cluster) handleReplicaFailover() {
	me := c.myself
	now := c.now()
	authAge := now - c.authTime
	manual := c.mfEnd != 0 && c.mfCanStart
	nt := c.nodeTimeout()
	authTimeout := max(nt*2, 2000)
	authRetry := authTimeout * 2
	if me.isMaster() || me.master == nil || (!me.master.failed() && !manual) ||
		(c.e.Cfg.Bool(config.ClusterReplicaNoFailover) && !manual) || me.master.numSlots == 0 {
		c.cantFailoverReason = cantNone
		return
	}
	dataAge := now - c.repl.LastIO()
	if dataAge > nt {
		dataAge -= nt
	}
	if f := c.e.Cfg.Int(config.ClusterReplicaValidityFactor); f != 0 &&
		dataAge > c.e.Cfg.Int(config.ReplPingReplicaPeriod)*1000+nt*f && !manual {
		c.logCantFailover(cantDataAge)
		return
	}
	if authAge > authRetry {
		c.authTime = now + 500 + int64(c.rnd.Intn(500))
		c.authCount = 0
		c.authSent = false
		c.authRank = c.rank()
		c.authTime += int64(c.authRank) * 1000
		if c.mfEnd != 0 {
			c.authTime = now
			c.authRank = 0
		}
		c.e.Log.Warn(fmt.Sprintf("Start of election delayed for %d milliseconds (rank #%d, offset %d).",
			c.authTime-now, c.authRank, c.repl.Offset()))
		c.broadcastPong(true)
		return
	}
	if !c.authSent && c.mfEnd == 0 {
		if r := c.rank(); r > c.authRank {
			c.authTime += int64(r-c.authRank) * 1000
			c.authRank = r
		}
	}
	if now < c.authTime {
		c.logCantFailover(cantWaitingDelay)
		return
	}
	if authAge > authTimeout {
		c.logCantFailover(cantExpired)
		return
	}
	if !c.authSent {
		c.currentEpoch++
		c.authEpoch = int64(c.currentEpoch)
		c.e.Log.Warn(fmt.Sprintf("Starting a failover election for epoch %d.", c.currentEpoch))
		h := c.header(msgAuthRequest)
		if manual {
			h.mflags |= mflagForceAck
		}
		c.broadcast(encodeHeader(h, hdrLen))
		c.authSent = true
		c.saveConfigSync()
	}
	if c.authCount >= c.quorum() {
		c.e.Log.Warn("Failover election won: I'm the new master.")
		if me.configEpoch < uint64(c.authEpoch) {
			me.configEpoch = uint64(c.authEpoch)
			c.e.Log.Warn(fmt.Sprintf("configEpoch set to %d after successful failover", me.configEpoch))
		}
		c.replaceMyMaster()
	} else {
		c.logCantFailover(cantWaitingVotes)
	}
}

func (c *Cluster) logCantFailover(reason int) {
	now := c.now()
	if reason == c.cantFailoverReason && now-c.lastCantFailoverLog < 10_000 {
		return
	}
	c.cantFailoverReason = reason
	c.lastCantFailoverLog = now
	msg := map[int]string{
		cantDataAge:      "Disconnected from master for longer than allowed. Please check the 'cluster-replica-validity-factor' configuration option.",
		cantWaitingDelay: "Waiting the delay before I can start a new failover.",
		cantExpired:      "Failover attempt expired.",
		cantWaitingVotes: "Waiting for votes, but majority still not reached.",
	}[reason]
	c.e.Log.Info("Currently unable to failover: " + msg)
}

// replaceMyMaster promotes this replica: it takes its primary's slots
// and tells everyone (clusterFailoverReplaceYourMaster).
func (c *Cluster) replaceMyMaster() {
	me := c.myself
	old := me.master
	if me.isMaster() || old == nil {
		return
	}
	c.setAsMaster(me)
	c.repl.Promote()
	for j := 0; j < NumSlots; j++ {
		if old.slots.has(j) {
			c.delSlot(j)
			c.addSlot(me, j)
		}
	}
	c.updateState()
	c.todoSave = true
	c.saveConfigSync()
	c.broadcastPong(false)
	c.resetManualFailover()
}

// sendFailoverAuthIfNeeded votes for a replica asking to replace its
// failed primary, at most once per epoch.
func (c *Cluster) sendFailoverAuthIfNeeded(n *Node, m *message) {
	master := n.master
	force := m.mflags&mflagForceAck != 0
	now := c.now()
	if c.myself.isSlave() || c.myself.numSlots == 0 {
		return
	}
	if m.currentEpoch < c.currentEpoch {
		return
	}
	if c.lastVoteEpoch == c.currentEpoch {
		return
	}
	if n.isMaster() || master == nil || (!master.failed() && !force) {
		return
	}
	if now-master.votedTime < c.nodeTimeout()*2 {
		return
	}
	for j := 0; j < NumSlots; j++ {
		if !m.slots.has(j) {
			continue
		}
		if o := c.slots[j]; o == nil || o.configEpoch <= m.configEpoch {
			continue
		}
		return
	}
	c.lastVoteEpoch = c.currentEpoch
	master.votedTime = now
	c.todoSave = true
	c.saveConfigSync()
	c.e.Log.Warn(fmt.Sprintf("Failover auth granted to %s for epoch %d", n.name, c.currentEpoch))
	if n.link != nil {
		n.link.send(encodeHeader(c.header(msgAuthAck), hdrLen))
	} else if n.inbound != nil {
		n.inbound.send(encodeHeader(c.header(msgAuthAck), hdrLen))
	}
}

func (c *Cluster) resetManualFailover() {
	if c.mfEnd != 0 && c.mfReplica != nil {
		c.e.Host.Unpause(engine.PauseByFailover)
		c.repl.HoldPings(0)
	}
	c.mfEnd = 0
	c.mfCanStart = false
	c.mfReplica = nil
	c.mfPrimaryOffset = -1
}

// manualFailoverCron ends a manual failover that timed out, and on the
// replica starts the election once it has the primary's final offset.
func (c *Cluster) manualFailoverCron() {
	if c.mfEnd == 0 {
		return
	}
	if c.now() > c.mfEnd {
		c.e.Log.Warn("Manual failover timed out.")
		c.resetManualFailover()
		return
	}
	if c.myself.isSlave() && !c.mfCanStart && c.mfPrimaryOffset != -1 &&
		c.mfPrimaryOffset == c.repl.Offset() {
		c.mfCanStart = true
		c.e.Log.Warn("All master replication stream processed, manual failover can start.")
		c.handleReplicaFailover()
	}
}

// bumpEpochWithoutConsensus gives this node a config epoch above every
// other (CLUSTER FAILOVER TAKEOVER, SETSLOT NODE); reports whether it did.
func (c *Cluster) bumpEpochWithoutConsensus() bool {
	var maxEpoch uint64
	for _, n := range c.nodes {
		maxEpoch = max(maxEpoch, n.configEpoch)
	}
	maxEpoch = max(maxEpoch, c.currentEpoch)
	if c.myself.configEpoch == 0 || c.myself.configEpoch != maxEpoch {
		c.currentEpoch++
		c.myself.configEpoch = c.currentEpoch
		c.todoSave = true
		c.e.Log.Warn(fmt.Sprintf("New configEpoch set to %d", c.myself.configEpoch))
		return true
	}
	return false
}
