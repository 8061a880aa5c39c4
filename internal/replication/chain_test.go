package replication_test

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// TestChainedReplicaPartialResync: a replica serves its own replica's
// PSYNC from its backlog (+CONTINUE) while its link to its primary is up,
// as Redis's replicas do, and refuses SYNC and PSYNC with Redis's
// NOMASTERLINK error while the link is down. The chain is redis-server
// -> Abacus -> redis-server, so both ends of each PSYNC are Redis's.
func TestChainedReplicaPartialResync(t *testing.T) {
	top := servertest.PrivateRedis(t, "--repl-diskless-sync-delay", "0")
	tc := servertest.Dial(t, top.Addr)
	host, port, _ := strings.Cut(top.Addr, ":")
	mid := servertest.Start(t, servertest.WithConfig("repl-diskless-sync-delay", "0"))
	mc := mid.Raw(t)
	mc.Do("REPLICAOF", host, port)
	mhost, mport, _ := strings.Cut(mid.Addr, ":")
	sub := servertest.PrivateRedis(t, "--replicaof", mhost, mport)
	sc := servertest.Dial(t, sub.Addr)
	rng := rand.New(rand.NewSource(7))
	randomWrites(t, tc, rng, 300)
	waitSynced(t, tc, mc)
	waitSynced(t, mc, sc)

	// The sub-replica's link is cut; it asks to continue and gets the
	// writes it missed from the middle replica's backlog.
	mc.Do("CLIENT", "KILL", "TYPE", "replica")
	randomWrites(t, tc, rng, 300)
	waitSynced(t, tc, mc)
	waitSynced(t, mc, sc)
	if !strings.Contains(mid.Logs.String(), "Partial resynchronization request from") {
		t.Fatalf("the middle replica did not accept a partial resync:\n%s", mid.Logs.String())
	}
	// INFO counts the syncs as Redis does: the sub-replica's first, full
	// one (PSYNC ? -1: no partial error) and its continuation.
	for name, want := range map[string]string{"sync_full": "1", "sync_partial_ok": "1", "sync_partial_err": "0"} {
		if got := field(t, mc, "stats", name); got != want {
			t.Errorf("middle replica's %s = %q, want %s", name, got, want)
		}
	}
	if got := field(t, sc, "replication", "master_link_status"); got != "up" {
		t.Fatalf("sub-replica link %q", got)
	}
	sameData(t, tc, sc)

	// With its primary gone, the middle replica refuses to hand on its
	// dataset.
	top.Stop()
	eventually(t, "middle replica's link down", func() bool {
		return field(t, mc, "replication", "master_link_status") == "down"
	})
	want := "-NOMASTERLINK Can't SYNC while not connected with my master\r\n"
	for _, cmd := range [][]string{{"PSYNC", "?", "-1"}, {"SYNC"}} {
		if got := mid.Raw(t).Do(cmd...); got != want {
			t.Errorf("%s on a replica whose link is down: %q, want %q", cmd[0], got, want)
		}
	}
}
