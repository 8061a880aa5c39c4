package cluster

import (
	"fmt"
	mrand "math/rand"
	"path/filepath"
	"sync"
	"time"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
)

// New makes this server a cluster node: it loads (or creates) the
// cluster config file, opens the bus port and starts the cron. lock is
// the server lock. Call it once the data is loaded, before clients come.
func New(e *engine.Env, lock sync.Locker, repl Replication) (*Cluster, error) {
	c := &Cluster{e: e, lock: lock, repl: repl,
		rnd:   mrand.New(mrand.NewSource(time.Now().UnixNano())),
		nodes: map[string]*Node{}, blacklist: map[string]int64{},
		mfPrimaryOffset: -1, done: make(chan struct{})}
	c.confPath = e.Cfg.Str(config.ClusterConfigFile)
	if !filepath.IsAbs(c.confPath) {
		// Relative to dir, as Redis (which chdirs there) resolves it.
		c.confPath = filepath.Join(e.Cfg.Str(config.Dir), c.confPath)
	}
	lock.Lock()
	loaded, err := c.loadConfig()
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	if !loaded {
		c.myself = c.newNode("", flagMyself|flagMaster)
		c.addNode(c.myself)
		e.Log.Info("No cluster configuration found, I'm " + c.myself.name)
		c.todoSave = true
	} else {
		e.Log.Info("Node configuration loaded, I'm " + c.myself.name)
	}
	c.myself.port, c.myself.pport, c.myself.cport = c.clientPort(), c.plainPort(), c.busPort()
	if ip := e.Cfg.Str(config.ClusterAnnounceIP); ip != "" {
		c.myself.ip = ip
	}
	c.myself.hostname = e.Cfg.Str(config.ClusterAnnounceHostname)
	c.firstStateCheck = c.now()
	if err := c.saveConfig(); err != nil {
		lock.Unlock()
		return nil, err
	}
	if err := c.listen(); err != nil {
		lock.Unlock()
		return nil, err
	}
	e.SetCluster(c)
	lock.Unlock()
	c.wg.Add(1)
	go c.cronLoop()
	return c, nil
}

// Close stops the bus and the cron and saves the config.
func (c *Cluster) Close() {
	c.lock.Lock()
	if c.closed {
		c.lock.Unlock()
		return
	}
	c.closed = true
	close(c.done)
	if c.ln != nil {
		c.ln.Close()
	}
	for _, n := range c.nodes {
		if n.link != nil {
			n.link.close()
		}
		if n.inbound != nil {
			n.inbound.close()
		}
	}
	c.saveConfigIfNeeded()
	c.lock.Unlock()
}

func (c *Cluster) cronLoop() {
	defer c.wg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var iter int
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
		}
		c.lock.Lock()
		if !c.closed {
			iter++
			c.cron(iter)
		}
		c.lock.Unlock()
	}
}

// cron is clusterCron: links, pings, failure detection, elections and
// the cluster state, every 100 ms.
func (c *Cluster) cron(iter int) {
	now := c.now()
	nt := c.nodeTimeout()
	c.myself.hostname = c.e.Cfg.Str(config.ClusterAnnounceHostname)
	if ip := c.e.Cfg.Str(config.ClusterAnnounceIP); ip != "" && ip != c.myself.ip {
		c.myself.ip = ip
		c.todoSave = true
	}
	hsTimeout := max(nt, 1000)
	c.pfailNodes = 0
	for _, n := range c.nodes {
		if n.flags&(flagMyself|flagNoAddr) != 0 {
			continue
		}
		if n.timedOut() {
			c.pfailNodes++
		}
		if n.inHandshake() && now-n.ctime > hsTimeout {
			c.delNode(n)
			continue
		}
		c.freeLinksOverLimit(n)
		if n.link == nil && !n.connecting && n.cport != 0 {
			n.connecting = true
			c.wg.Add(1)
			go c.dial(n, n.ip, n.cport)
		}
	}
	if iter%10 == 0 {
		// Ping the node, of five random ones, we heard from longest ago.
		var best *Node
		for i := 0; i < 5 && len(c.nodes) > 1; i++ {
			n := c.randomNode()
			if n.link == nil || n.pingSent != 0 || n.flags&(flagMyself|flagHandshake) != 0 {
				continue
			}
			if best == nil || n.pongRecv < best.pongRecv {
				best = n
			}
		}
		if best != nil {
			c.sendPing(best.link, msgPing)
		}
	}
	update := false
	for _, n := range c.nodes {
		if n.flags&(flagMyself|flagNoAddr|flagHandshake) != 0 {
			continue
		}
		pingDelay := now - n.pingSent
		dataDelay := now - n.dataRecv
		if n.link != nil && now-n.link.ctime > nt && n.pingSent != 0 && pingDelay > nt/2 && dataDelay > nt/2 {
			n.link.close()
		}
		if n.link != nil && n.pingSent == 0 && now-n.pongRecv > nt/2 {
			c.sendPing(n.link, msgPing)
			continue
		}
		if c.mfEnd != 0 && c.myself.isMaster() && c.mfReplica == n && n.link != nil {
			c.sendPing(n.link, msgPing)
			continue
		}
		if n.pingSent == 0 {
			continue
		}
		if min(pingDelay, dataDelay) > nt && n.flags&(flagPFail|flagFail) == 0 {
			c.e.Log.Debug(fmt.Sprintf("*** NODE %s possibly failing", n.name))
			n.flags |= flagPFail
			update = true
		}
	}
	me := c.myself
	if me.isSlave() && me.master != nil && me.master.hasAddr() && me.master.ip != "" {
		host, port, ok := c.repl.Following()
		if !ok || host != me.master.ip || port != me.master.port {
			c.repl.Follow(me.master.ip, me.master.port)
		}
	}
	c.manualFailoverCron()
	if me.isSlave() {
		c.handleReplicaFailover()
		c.replicaMigrationCron()
	}
	_ = update // the state is recomputed every run, as Redis's cron does
	c.updateState()
	// Blocked clients whose keys this node no longer serves, or every one
	// while the cluster is down, get their redirection (Redis checks them
	// in its clients cron).
	c.e.RedirectBlocked()
	c.saveConfigIfNeeded()
}

// updateState computes ok/fail (clusterUpdateState): every slot served
// by a node not FAIL (with cluster-require-full-coverage), and a
// majority of the primaries reachable.
func (c *Cluster) updateState() {
	now := c.now()
	const writableDelay = 2000
	if c.myself.isMaster() && !c.stateOK && now-c.firstStateCheck < writableDelay {
		return
	}
	// Every slot is served by a node not failed when the nodes' slot
	// counts add up to all the slots and none of those holding slots
	// failed: a node's numSlots counts exactly the slots c.slots gives
	// it (addSlot and delSlot keep both), so this is Redis's pass over
	// the 16,384 slots at the cost of one over the nodes, which matters
	// on a reshard's SETSLOTs.
	assigned, anyFailed := 0, false
	size, reachable := 0, 0
	for _, n := range c.nodes {
		if n.numSlots > 0 {
			assigned += n.numSlots
			anyFailed = anyFailed || n.failed()
		}
		if n.isMaster() && n.numSlots > 0 {
			size++
			if n.flags&(flagFail|flagPFail) == 0 {
				reachable++
			}
		}
	}
	ok := true
	if c.e.Cfg.Bool(config.ClusterRequireFullCoverage) && (assigned != NumSlots || anyFailed) {
		ok = false
	}
	c.size = size
	if reachable < c.size/2+1 {
		ok = false
		c.amongMinoritySince = now
	}
	if ok == c.stateOK {
		return
	}
	rejoin := min(max(c.nodeTimeout(), 500), 5000)
	if ok && c.myself.isMaster() && now-c.amongMinoritySince < rejoin {
		return
	}
	c.stateOK = ok
	c.stateChangedAt = now
	if ok {
		c.e.Log.Warn("Cluster state changed: ok")
	} else {
		c.e.Log.Warn("Cluster state changed: fail")
	}
}

// setMyMaster makes this node a replica of n (clusterSetMaster).
func (c *Cluster) setMyMaster(n *Node) {
	me := c.myself
	if me.isMaster() {
		me.flags &^= flagMaster | flagMigrateTo
		me.flags |= flagSlave
		for j := range c.migrating {
			c.setOpen(&c.migrating, j, nil)
			c.setOpen(&c.importing, j, nil)
		}
	} else if me.master != nil {
		me.master.removeReplica(me)
	}
	me.master = n
	n.addReplica(me)
	if n.ip != "" {
		c.repl.Follow(n.ip, n.port)
	}
	c.resetManualFailover()
	c.todoSave = true
}

func (c *Cluster) saveConfigIfNeeded() {
	if c.todoSave {
		if err := c.saveConfig(); err != nil {
			c.e.Log.Warn("Cluster config save failed: " + err.Error())
		}
	}
}
