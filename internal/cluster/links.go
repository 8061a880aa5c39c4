package cluster

import (
	"fmt"

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
