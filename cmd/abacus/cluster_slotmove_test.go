package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// tagInSlots is a hash tag whose slot is below limit and not avoid.
func tagInSlots(limit, avoid int) (string, int) {
	for i := 0; ; i++ {
		tag := "{t" + strconv.Itoa(i) + "}"
		if s := keyspace.HashSlotString(tag); s < limit && s != avoid {
			return tag, s
		}
	}
}

// twoNodeCluster is a cluster of two primaries of one kind, slots split
// in halves (redis-cli --cluster create wants three).
func twoNodeCluster(t *testing.T, redisServer bool) (*clusterNode, *clusterNode) {
	t.Helper()
	a, b := startClusterNode(t, redisServer), startClusterNode(t, redisServer)
	relaxNodeTimeout(t, a, b)
	ctx := context.Background()
	ca, cb := a.client(), b.client()
	defer ca.Close()
	defer cb.Close()
	if err := ca.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 8191).Err(); err != nil {
		t.Fatal(err)
	}
	if err := cb.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 8192, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	if err := ca.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", b.port, b.cport).Err(); err != nil {
		t.Fatal(err)
	}
	eventuallyTrue(t, 30*time.Second, "the two nodes joined", func() bool {
		return a.info("cluster_known_nodes") == "2" && b.info("cluster_known_nodes") == "2"
	})
	waitClusterOK(t, a, b)
	return a, b
}

// relaxNodeTimeout sets Redis's default cluster-node-timeout (15 s) on
// nodes of a test that needs no failure detection.
func relaxNodeTimeout(t *testing.T, nodes ...*clusterNode) {
	t.Helper()
	for _, n := range nodes {
		c := n.client()
		err := c.ConfigSet(context.Background(), "cluster-node-timeout", "15000").Err()
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// slotMoveScript runs, on a two-node cluster of redis-server or of Abacus
// nodes, what clients see when a slot leaves a node: a client blocked in
// BLPOP on a key of that slot gets -MOVED (Redis's cron redirects it); a
// subscriber to a shard channel of that slot gets a sunsubscribe push
// (RESP2 and RESP3); a BLPOP and a shard channel of a slot that stays are
// untouched and served afterwards. It returns the raw replies, with the
// other node's address written B.
func slotMoveScript(t *testing.T, redisServer bool) []string {
	a, b := twoNodeCluster(t, redisServer)
	ctx := context.Background()
	ca, cb := a.client(), b.client()
	defer ca.Close()
	defer cb.Close()
	aID, bID := a.myself()[0], b.myself()[0]

	mv, slot := tagInSlots(8192, -1)
	stay, _ := tagInSlots(8192, slot)
	var out []string
	read := func(c *servertest.Conn) {
		t.Helper()
		r, err := c.ReadErr(10 * time.Second)
		if err != nil {
			t.Fatalf("reading from %s: %v (so far %q)", a.addr(), err, out)
		}
		out = append(out, strings.ReplaceAll(r, b.addr(), "B"))
	}
	blocked := servertest.Dial(t, a.addr())
	blocked.Write(servertest.Encode("BLPOP", mv+"list", "0"))
	blockedStay := servertest.Dial(t, a.addr())
	blockedStay.Write(servertest.Encode("BLPOP", stay+"list", "0"))
	sub := servertest.Dial(t, a.addr())
	sub.Write(servertest.Encode("SSUBSCRIBE", mv+"ch"))
	read(sub)
	sub.Write(servertest.Encode("SSUBSCRIBE", stay+"ch"))
	read(sub)
	sub3 := servertest.Dial(t, a.addr())
	sub3.Do("HELLO", "3")
	sub3.Write(servertest.Encode("SSUBSCRIBE", mv+"ch"))
	read(sub3)
	eventuallyTrue(t, 10*time.Second, "two clients blocked", func() bool {
		s, _ := ca.Info(ctx, "clients").Result()
		return strings.Contains(s, "blocked_clients:2\r\n")
	})

	// The slot moves to b as redis-cli --cluster reshard moves an empty
	// one: IMPORTING on b, MIGRATING on a, then NODE on both.
	for _, step := range [][]any{
		{cb, "IMPORTING", aID}, {ca, "MIGRATING", bID}, {cb, "NODE", bID}, {ca, "NODE", bID},
	} {
		c := ca
		if step[0] == cb {
			c = cb
		}
		if err := c.Do(ctx, append([]any{"CLUSTER", "SETSLOT", slot}, step[1:]...)...).Err(); err != nil {
			t.Fatalf("SETSLOT %d %v: %v", slot, step[1:], err)
		}
	}
	read(sub)     // sunsubscribe, RESP2
	read(sub3)    // sunsubscribe, RESP3
	read(blocked) // -MOVED, within a second of the clients cron
	// What stays on a is still served.
	if err := ca.RPush(ctx, stay+"list", "v").Err(); err != nil {
		t.Fatal(err)
	}
	read(blockedStay)
	if err := ca.Do(ctx, "SPUBLISH", stay+"ch", "hello").Err(); err != nil {
		t.Fatal(err)
	}
	read(sub)
	out = append(out, fmt.Sprint("slot ", slot))
	return out
}

func TestClusterSlotLeavesBlockedAndShardSubscribers(t *testing.T) {
	testenv.NeedRedis(t)
	abacus := slotMoveScript(t, false)
	redisServer := slotMoveScript(t, true)
	if strings.Join(abacus, "|") != strings.Join(redisServer, "|") {
		t.Errorf("Abacus:\n%q\nredis-server:\n%q", abacus, redisServer)
	}
	t.Logf("%q", abacus)
}
