// Package cluster makes an Abacus server a Redis Cluster node: the node
// table, the slot map, nodes.conf, the cluster bus (Redis 7.0's binary
// protocol, so redis-server nodes and Abacus nodes form one cluster),
// failure detection, replica elections and the CLUSTER command.
//
// Concurrency: all of the state lives under the server lock, as Redis's
// cluster state lives in its one thread. The bus's goroutines read a
// whole message, then take the lock to process it; each link has a writer
// goroutine fed by a bounded queue, so nothing under the lock waits on a
// socket. The cron (100 ms, as Redis's clusterCron) takes the lock too.
// Dials happen outside the lock.
package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"math"
	mrand "math/rand"
	"net"
	"sort"
	"strconv"
	"sync"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
)

// Replication is what the cluster asks of the replication layer
// (internal/replication's *Primary); calls are made under the server lock.
type Replication interface {
	Follow(host string, port int)
	Promote()
	Following() (host string, port int, ok bool)
	Offset() int64
	LinkUp() bool
	LastIO() int64
	HoldPings(until int64)
}

// Node is one node of the cluster as this node sees it.
type Node struct {
	name        string
	flags       uint16
	configEpoch uint64
	slots       slotBitmap
	numSlots    int
	master      *Node
	replicas    []*Node

	ip       string
	hostname string
	port     int
	pport    int
	cport    int

	ctime, pingSent, pongRecv, dataRecv int64
	failTime, votedTime, orphanedTime   int64
	replOffset                          int64
	failReports                         map[*Node]int64
	link, inbound                       *link
	connecting                          bool
	lastGossip                          uint64
}

func (n *Node) isMaster() bool    { return n.flags&flagMaster != 0 }
func (n *Node) isSlave() bool     { return n.flags&flagSlave != 0 }
func (n *Node) inHandshake() bool { return n.flags&flagHandshake != 0 }
func (n *Node) timedOut() bool    { return n.flags&flagPFail != 0 }
func (n *Node) failed() bool      { return n.flags&flagFail != 0 }
func (n *Node) hasAddr() bool     { return n.flags&flagNoAddr == 0 }

// addr is the node's "ip:port" for clients (MOVED, ASK).
func (n *Node) addr() string { return net.JoinHostPort(n.ip, strconv.Itoa(n.port)) }

func (n *Node) addReplica(r *Node) {
	for _, x := range n.replicas {
		if x == r {
			return
		}
	}
	n.replicas = append(n.replicas, r)
	sort.Slice(n.replicas, func(i, j int) bool { return n.replicas[i].name < n.replicas[j].name })
	if len(n.replicas) > 0 {
		n.flags |= flagMigrateTo
	}
}

func (n *Node) removeReplica(r *Node) {
	for i, x := range n.replicas {
		if x == r {
			n.replicas = append(n.replicas[:i], n.replicas[i+1:]...)
			break
		}
	}
	if len(n.replicas) == 0 {
		n.flags &^= flagMigrateTo
	}
}

// Cluster is this node's cluster state. Everything is under the server
// lock.
type Cluster struct {
	e    *engine.Env
	lock sync.Locker
	repl Replication
	rnd  *mrand.Rand

	myself        *Node
	currentEpoch  uint64
	lastVoteEpoch uint64
	stateOK       bool
	size          int // primaries serving at least one slot
	nodes         map[string]*Node
	blacklist     map[string]int64 // FORGET: names not re-added until then (ms)
	slots         [NumSlots]*Node
	migrating     [NumSlots]*Node
	importing     [NumSlots]*Node
	open          int // entries set in migrating and importing (setOpen)

	// Elections, as a replica.
	authTime, authEpoch int64
	authCount           int
	authSent            bool
	authRank            int
	cantFailoverReason  int
	lastCantFailoverLog int64
	// Manual failover: mfEnd > 0 while one runs; mfReplica on the
	// primary; mfPrimaryOffset (-1: not yet known) and mfCanStart on the
	// replica.
	mfEnd           int64
	mfReplica       *Node
	mfPrimaryOffset int64
	mfCanStart      bool

	todoSave           bool
	confBuf            []byte // nodes.conf's rendering, reused by each save
	pingsSent          uint64
	statsSent          [msgTypeCount]int64
	statsRecv          [msgTypeCount]int64
	linksOverLimit     int64 // links freed for cluster-link-sendbuf-limit
	pfailNodes         int
	amongMinoritySince int64
	firstStateCheck    int64
	stateChangedAt     int64

	confPath string
	ln       net.Listener
	done     chan struct{}
	wg       sync.WaitGroup
	closed   bool
}

func randomName() string {
	var b [20]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (c *Cluster) now() int64 { return c.e.Clock.NowMs() }

func (c *Cluster) nodeTimeout() int64 { return c.e.Cfg.Int(config.ClusterNodeTimeout) }

func (c *Cluster) newNode(name string, flags uint16) *Node {
	if name == "" {
		name = randomName()
	}
	return &Node{name: name, flags: flags, ctime: c.now(), failReports: map[*Node]int64{}}
}

func (c *Cluster) addNode(n *Node) { c.nodes[n.name] = n }

// delNode removes a node: its slots, its links, the failure reports it
// made, its place among its primary's replicas.
func (c *Cluster) delNode(n *Node) {
	for j := 0; j < NumSlots; j++ {
		if c.importing[j] == n {
			c.setOpen(&c.importing, j, nil)
		}
		if c.migrating[j] == n {
			c.setOpen(&c.migrating, j, nil)
		}
		if c.slots[j] == n {
			c.delSlot(j)
		}
	}
	for _, o := range c.nodes {
		delete(o.failReports, n)
	}
	if n.master != nil {
		n.master.removeReplica(n)
	}
	for _, r := range n.replicas {
		r.master = nil
	}
	if n.link != nil {
		n.link.close()
	}
	if n.inbound != nil {
		n.inbound.close()
	}
	delete(c.nodes, n.name)
	c.todoSave = true
}

func (c *Cluster) renameNode(n *Node, name string) {
	delete(c.nodes, n.name)
	n.name = name
	c.nodes[name] = n
}

func (c *Cluster) lookup(name string) *Node { return c.nodes[name] }

// setOpen sets a slot's entry in c.migrating or c.importing (table),
// keeping c.open, the number of entries set in both, which lets
// CLUSTER NODES stop its walk of the tables after the last one. Every
// write to the two tables goes through here.
func (c *Cluster) setOpen(table *[NumSlots]*Node, j int, n *Node) {
	switch {
	case table[j] == nil && n != nil:
		c.open++
	case table[j] != nil && n == nil:
		c.open--
	}
	table[j] = n
}

func (c *Cluster) addSlot(n *Node, j int) bool {
	if c.slots[j] != nil {
		return false
	}
	if !n.slots.has(j) {
		n.slots.set(j)
		n.numSlots++
	}
	c.slots[j] = n
	return true
}

func (c *Cluster) delSlot(j int) bool {
	n := c.slots[j]
	if n == nil {
		return false
	}
	if n == c.myself || c.myself.master == n {
		// The slot leaves this node's shard: its shard channels' subscribers
		// are unsubscribed (Redis's removeChannelsInSlot).
		c.e.DropShardChannels(j)
	}
	if n.slots.has(j) {
		n.slots.clear(j)
		n.numSlots--
	}
	c.slots[j] = nil
	return true
}

func (c *Cluster) delNodeSlots(n *Node) int {
	d := 0
	for j := 0; j < NumSlots; j++ {
		if n.slots.has(j) {
			c.delSlot(j)
			d++
		}
	}
	return d
}

// setAsMaster makes n a primary (clusterSetNodeAsMaster).
func (c *Cluster) setAsMaster(n *Node) {
	if n.isMaster() {
		return
	}
	if n.master != nil {
		n.master.removeReplica(n)
		if n != c.myself {
			n.flags |= flagMigrateTo
		}
	}
	n.flags &^= flagSlave
	n.flags |= flagMaster
	n.master = nil
	c.todoSave = true
}

// masterOf is the primary whose slots a node serves (itself or its
// primary).
func (n *Node) masterOf() *Node {
	if n.isSlave() && n.master != nil {
		return n.master
	}
	return n
}

func (c *Cluster) quorum() int { return c.size/2 + 1 }

// failureReports counts the reports still valid (node_timeout*2),
// dropping the old ones.
func (c *Cluster) failureReports(n *Node) int {
	maxAge := c.nodeTimeout() * 2
	now := c.now()
	for k, t := range n.failReports {
		if now-t > maxAge {
			delete(n.failReports, k)
		}
	}
	return len(n.failReports)
}

// Route implements engine.ClusterView.
func (c *Cluster) Route(slot int) engine.SlotRoute {
	n := c.slots[slot]
	var r engine.SlotRoute
	if n == nil {
		if imp := c.importing[slot]; imp != nil {
			r.Importing = true
		}
		return r
	}
	r.Served = true
	r.Self = n == c.myself
	r.OfMyPrimary = c.myself.isSlave() && c.myself.master == n
	r.Addr = n.addr()
	// A pport is announced only with a TLS bus; it is tested first so the
	// plaintext cluster's route reads no configuration.
	if n.pport != 0 && c.tlsOn() {
		r.PAddr = net.JoinHostPort(n.ip, strconv.Itoa(n.pport))
	}
	if t := c.migrating[slot]; t != nil && r.Self {
		r.MigratingTo = t.addr()
		if t.pport != 0 && c.tlsOn() {
			r.PMigratingTo = net.JoinHostPort(t.ip, strconv.Itoa(t.pport))
		}
	}
	r.Importing = c.importing[slot] != nil
	return r
}

// OK implements engine.ClusterView.
func (c *Cluster) OK() bool { return c.stateOK }

// MyID is this node's name.
func (c *Cluster) MyID() string { return c.myself.name }

var _ engine.ClusterView = (*Cluster)(nil)

// maxInt64 guards sums of times.
const maxInt64 = math.MaxInt64

// parseIP canonicalizes an IP address ("" when it is not one).
func parseIP(s string) string {
	ip := net.ParseIP(s)
	if ip == nil {
		return ""
	}
	return ip.String()
}
