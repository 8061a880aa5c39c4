package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/testenv"
)

// Replica migration: 3 primaries, one of them with two replicas; the only
// replica of another primary is killed; once that primary has been
// orphaned for a while, one of the two replicas (the smallest node name)
// moves to it, as Redis's cluster-migration-barrier 1 allows.
func TestClusterReplicaMigration(t *testing.T) {
	testenv.Need(t, "redis-cli")
	var nodes []*clusterNode
	for i := 0; i < 7; i++ {
		nodes = append(nodes, startClusterNode(t, false))
	}
	// redis-cli gives the seventh node to one of the primaries as a
	// second replica.
	createCluster(t, nodes, 1)
	byID := map[string]*clusterNode{}
	for _, n := range nodes {
		byID[n.myself()[0]] = n
	}
	replicasOf := map[string][]*clusterNode{}
	eventuallyTrue(t, 30*time.Second, "every replica attached", func() bool {
		replicasOf = map[string][]*clusterNode{}
		for _, n := range nodes {
			if f := n.myself(); strings.Contains(f[2], "slave") && f[3] != "-" {
				replicasOf[f[3]] = append(replicasOf[f[3]], n)
			}
		}
		return len(replicasOf) == 3 && keyOf(replicasOf, 2) != ""
	})
	// Every node must know every replica as one: a node learns a role
	// from the node's own PINGs.
	eventuallyTrue(t, 30*time.Second, "every node agrees on the roles", func() bool {
		role := map[string]string{}
		for _, n := range nodes {
			f := n.myself()
			role[f[0]] = f[3]
		}
		for _, n := range nodes {
			c := n.client()
			s, _ := c.ClusterNodes(context.Background()).Result()
			c.Close()
			for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
				if f := strings.Fields(line); len(f) < 4 || role[f[0]] != f[3] {
					return false
				}
			}
		}
		return true
	})
	rich := keyOf(replicasOf, 2)
	var orphanID string
	var lone *clusterNode
	for id, rs := range replicasOf {
		if len(rs) == 1 {
			orphanID, lone = id, rs[0]
			break
		}
	}
	lone.kill9()
	// The smallest-named replica of the primary with two moves.
	mover := replicasOf[rich][0]
	for _, r := range replicasOf[rich] {
		if r.myself()[0] < mover.myself()[0] {
			mover = r
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			c := mover.client()
			s, _ := c.ClusterNodes(context.Background()).Result()
			c.Close()
			t.Logf("DEBUG orphan %s mover view:\n%s\nlogs:\n%s", orphanID, s, mover.p.logs())
		}
	})
	eventuallyTrue(t, 40*time.Second, "a replica migrates to the orphaned primary", func() bool {
		f := mover.myself()
		return f != nil && strings.Contains(f[2], "slave") && f[3] == orphanID
	})
	if !strings.Contains(mover.p.logs(), "Migrating to orphaned master "+orphanID) {
		t.Errorf("the migration is not logged")
	}
	eventuallyTrue(t, 30*time.Second, "the migrated replica in sync", func() bool {
		c := mover.client()
		defer c.Close()
		s, _ := c.Info(t.Context(), "replication").Result()
		return strings.Contains(s, "master_link_status:up") && strings.Contains(s, "master_port:"+strconv.Itoa(byID[orphanID].port))
	})
}

// keyOf is a key of m whose slice has n entries, "" if none.
func keyOf(m map[string][]*clusterNode, n int) string {
	for k, v := range m {
		if len(v) == n {
			return k
		}
	}
	return ""
}

// createCluster runs redis-cli --cluster create over nodes with that many
// replicas per primary and waits for every node to see the cluster ok.
func createCluster(t *testing.T, nodes []*clusterNode, replicas int) {
	t.Helper()
	out := redisCli(t, append(append([]string{"--cluster", "create"}, addrs(nodes)...),
		"--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")...)
	if !strings.Contains(out, "[OK] All 16384 slots covered.") {
		t.Fatalf("--cluster create:\n%s", out)
	}
	waitClusterOK(t, nodes...)
}
