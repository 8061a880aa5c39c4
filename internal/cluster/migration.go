package cluster

import (
	"github.com/abacusdb/abacus/internal/config"
)

// Replica migration, as Redis 7.0's clusterCron and
// clusterHandleSlaveMigration: a primary left without a working replica
// (one that had replicas, flagMigrateTo) gets one from the primary with
// the most working replicas, as long as that one keeps more than
// cluster-migration-barrier of them; the replica with the smallest node
// name among those primaries' replicas moves, after the primary has been
// orphaned for replicaMigrationDelay (time for its own replicas to
// announce a failover).

const replicaMigrationDelay = 5000 // ms

func (c *Cluster) okReplicas(n *Node) int {
	ok := 0
	for _, r := range n.replicas {
		if !r.failed() {
			ok++
		}
	}
	return ok
}

// replicaMigrationCron runs each cron on a replica.
func (c *Cluster) replicaMigrationCron() {
	me := c.myself
	if !me.isSlave() || !c.e.Cfg.Bool(config.ClusterAllowReplicaMigration) {
		return
	}
	orphaned, maxOK, mine := 0, 0, 0
	for _, n := range c.nodes {
		if n.flags&(flagMyself|flagNoAddr|flagHandshake) != 0 || !n.isMaster() || n.failed() {
			continue
		}
		ok := c.okReplicas(n)
		if ok == 0 && n.numSlots > 0 && n.flags&flagMigrateTo != 0 {
			orphaned++
		}
		maxOK = max(maxOK, ok)
		if me.master == n {
			mine = ok
		}
	}
	// Moving makes no sense unless some primary has two working replicas.
	if orphaned > 0 && maxOK >= 2 && mine == maxOK {
		c.handleReplicaMigration(maxOK)
	}
}

func (c *Cluster) handleReplicaMigration(maxOK int) {
	me := c.myself
	mine := me.master
	if !c.stateOK || mine == nil {
		return
	}
	ok := 0
	for _, r := range mine.replicas {
		if !r.failed() && !r.timedOut() {
			ok++
		}
	}
	if int64(ok) <= c.e.Cfg.Int(config.ClusterMigrationBarrier) {
		return
	}
	var target *Node
	candidate := me
	now := c.now()
	for _, n := range c.sortedNodes() {
		okN := 0
		if n.isMaster() {
			okN = c.okReplicas(n)
		}
		if n.isMaster() && !n.failed() && n.flags&flagMigrateTo != 0 && okN == 0 {
			if target == nil && n.numSlots > 0 {
				target = n
			}
			if n.orphanedTime == 0 {
				n.orphanedTime = now
			}
		} else {
			n.orphanedTime = 0
		}
		if okN == maxOK {
			for _, r := range n.replicas {
				if r.name < candidate.name {
					candidate = r
				}
			}
		}
	}
	if target != nil && candidate == me && now-target.orphanedTime > replicaMigrationDelay {
		c.e.Log.Warn("Migrating to orphaned master " + target.name)
		c.setMyMaster(target)
	}
}
