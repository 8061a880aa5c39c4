package cluster

import (
	"fmt"
	"unsafe"

	"github.com/abacusdb/abacus/internal/config"
)

// freeLinksOverLimit drops n's links whose send buffers hold more than
// cluster-link-sendbuf-limit bytes (0: no limit), as Redis's clusterCron
// does: a peer that stopped reading must not make this node hold an
// unbounded backlog of gossip for it. The outbound link is reconnected by
// the cron, the inbound one by the peer. Under the server lock.
func (c *Cluster) freeLinksOverLimit(n *Node) {
	limit := c.e.Cfg.Int(config.ClusterLinkSendbufLimit)
	if limit <= 0 {
		return
	}
	for _, l := range []*link{n.link, n.inbound} {
		if l == nil {
			continue
		}
		if mem := l.allocated.Load(); mem > limit {
			dir := "to"
			if l.inbound {
				dir = "from"
			}
			c.e.Log.Warn(fmt.Sprintf("Freeing cluster link(%s node %s, used memory: %d) due to exceeding send buffer memory limit.",
				dir, n.name, mem))
			l.close()
			c.linksOverLimit++
		}
	}
}

// linkEvents is CLUSTER LINKS' events: "rw" while the link has bytes
// waiting to be written (Redis has a write handler installed then).
func linkEvents(l *link) string {
	if l.pending.Load() > 0 {
		return "rw"
	}
	return "r"
}

// linkMemory is what one link holds for its buffers, as Redis's
// getClusterLinkMemUsage counts sizeof(clusterLink), the send buffer's
// allocation and the receive buffer's: here the link itself, its send
// queue's slice, the queued messages' buffers and the receive buffer.
// The goroutines' stacks and a TLS connection's state are not counted
// (Redis counts neither a connection's nor OpenSSL's).
func linkMemory(l *link) int64 {
	if l == nil {
		return 0
	}
	l.qmu.Lock()
	q := cap(l.q)
	l.qmu.Unlock()
	return int64(unsafe.Sizeof(*l)) + int64(q)*int64(unsafe.Sizeof([]byte(nil))) +
		l.allocated.Load() + l.received.Load()
}

// LinksMemory is INFO's mem_cluster_links: the memory of the links of
// every known node, outbound and inbound (a link not yet tied to a node
// is left out, as Redis's clusterCron leaves it). Under the server lock.
func (c *Cluster) LinksMemory() int64 {
	var total int64
	for _, n := range c.nodes {
		total += linkMemory(n.link) + linkMemory(n.inbound)
	}
	return total
}
