package main

// Cluster mode end to end: redis-cli --cluster builds clusters of Abacus
// nodes and of Abacus and redis-server nodes together; a killed primary
// is replaced by its replica; bad bus input drops the link only.

import (
	"context"
	bin "encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// clusterNode is one node of a test cluster, Abacus or redis-server.
type clusterNode struct {
	t      *testing.T
	redis  bool
	dir    string
	port   int
	cport  int
	p      *proc     // Abacus
	cmd    *exec.Cmd // redis-server
	exited chan struct{}
}

func (n *clusterNode) addr() string { return fmt.Sprintf("127.0.0.1:%d", n.port) }

const testNodeTimeout = "2000"

// busPort picks a free port below the kernel's ephemeral range (32768 and
// up), where freePort's come from, so that a bus port not yet bound cannot
// also be handed out as a later node's port.
func busPort(t *testing.T) int {
	for {
		p := 20000 + rand.Intn(12000)
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			l.Close()
			return p
		}
	}
}

func startClusterNode(t *testing.T, redisServer bool) *clusterNode {
	t.Helper()
	n := &clusterNode{t: t, redis: redisServer, dir: t.TempDir(), port: freePort(t), cport: busPort(t)}
	n.start()
	return n
}

func (n *clusterNode) start() {
	t := n.t
	t.Helper()
	args := []string{"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(n.cport),
		"--cluster-node-timeout", testNodeTimeout, "--save", "", "--appendonly", "no"}
	if !n.redis {
		n.p = startIn(t, n.dir, n.port, args...)
		return
	}
	rs := testenv.Need(t, "redis-server")
	all := append([]string{"--port", strconv.Itoa(n.port), "--bind", "127.0.0.1", "--dir", n.dir,
		"--logfile", "redis.log"}, args...)
	n.cmd = exec.Command(rs, all...)
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n.exited = make(chan struct{})
	cmd, exited := n.cmd, n.exited
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	eventuallyTrue(t, 10*time.Second, "redis-server on "+n.addr(), func() bool {
		c, err := net.DialTimeout("tcp", n.addr(), time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// kill9 kills the node with SIGKILL and waits for it to be gone.
func (n *clusterNode) kill9() {
	if n.redis {
		n.cmd.Process.Kill()
		<-n.exited
		return
	}
	n.p.cmd.Process.Kill()
	<-n.p.done
}

func (n *clusterNode) client() *redis.Client { return servertest.NewClient(n.t, n.addr()) }

// info is one CLUSTER INFO field.
func (n *clusterNode) info(field string) string {
	c := n.client()
	s, err := c.ClusterInfo(context.Background()).Result()
	c.Close()
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}

// myself is this node's own CLUSTER NODES line's fields.
func (n *clusterNode) myself() []string {
	c := n.client()
	s, _ := c.ClusterNodes(context.Background()).Result()
	c.Close()
	for _, line := range strings.Split(s, "\n") {
		if f := strings.Fields(line); len(f) > 2 && strings.Contains(f[2], "myself") {
			return f
		}
	}
	return nil
}

func redisCli(t *testing.T, args ...string) string {
	t.Helper()
	cli := testenv.Need(t, "redis-cli")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func addrs(nodes []*clusterNode) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.addr())
	}
	return out
}

func waitClusterOK(t *testing.T, nodes ...*clusterNode) {
	t.Helper()
	for _, n := range nodes {
		eventuallyTrue(t, 30*time.Second, "cluster_state:ok on "+n.addr(), func() bool {
			return n.info("cluster_state") == "ok"
		})
	}
}

func checkClean(t *testing.T, n *clusterNode) {
	t.Helper()
	out := redisCli(t, "--cluster", "check", n.addr())
	for _, want := range []string{"[OK] All nodes agree about slots configuration.", "[OK] All 16384 slots covered."} {
		if !strings.Contains(out, want) {
			t.Fatalf("--cluster check: no %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "[ERR]") || strings.Contains(out, "[WARNING]") {
		t.Fatalf("--cluster check is not clean:\n%s", out)
	}
}

// writeKeys sets n keys through a cluster client and has each primary
// confirm them on one replica (WAIT 1): they must survive a failover.
func writeKeys(t *testing.T, cc *redis.ClusterClient, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < n; i++ {
		if err := cc.Set(ctx, fmt.Sprintf("%s:%d", prefix, i), i, 0).Err(); err != nil {
			t.Fatalf("SET %s:%d: %v", prefix, i, err)
		}
		if err := cc.Incr(ctx, "{"+prefix+"}counter").Err(); err != nil {
			t.Fatalf("INCR: %v", err)
		}
	}
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		for tries := 0; ; tries++ {
			got, err := m.Do(ctx, "WAIT", 1, 1000).Int()
			if err == nil && got == 1 {
				return nil
			}
			if tries == 30 {
				return fmt.Errorf("WAIT 1 on %s: %d %v", m.Options().Addr, got, err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

func checkKeys(t *testing.T, cc *redis.ClusterClient, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	cc.ReloadState(ctx)
	for i := 0; i < n; i++ {
		var v string
		var err error
		// The client's slot map may lag the failover by a moment.
		eventuallyTrue(t, 10*time.Second, "reading "+prefix, func() bool {
			v, err = cc.Get(ctx, fmt.Sprintf("%s:%d", prefix, i)).Result()
			if err != nil {
				cc.ReloadState(ctx)
			}
			return err == nil
		})
		if v != strconv.Itoa(i) {
			t.Fatalf("%s:%d = %q, want %d", prefix, i, v, i)
		}
	}
	if got, err := cc.Get(ctx, "{"+prefix+"}counter").Int(); err != nil || got != n {
		t.Fatalf("counter = %d %v, want %d", got, err, n)
	}
}

// primaryWithReplica finds a primary (by its address) and the node that
// replicates it, in the view of n.
func primaryAndReplica(t *testing.T, nodes []*clusterNode, want func(p, r *clusterNode) bool) (*clusterNode, *clusterNode) {
	t.Helper()
	byID := map[string]*clusterNode{}
	for _, n := range nodes {
		byID[n.myself()[0]] = n
	}
	for _, r := range nodes {
		f := r.myself()
		if strings.Contains(f[2], "slave") {
			if p := byID[f[3]]; p != nil && want(p, r) {
				return p, r
			}
		}
	}
	t.Fatal("no primary/replica pair as wanted")
	return nil, nil
}

// pyWorkload runs redis-py's RedisCluster against the cluster: strings,
// counters, hashes, a list, a pipeline across slots, then reads back.
const pyWorkload = `
import sys
from redis.cluster import RedisCluster
host, port = sys.argv[1].rsplit(":", 1)
rc = RedisCluster(host=host, port=int(port))
for i in range(200):
    rc.set("py:%d" % i, i)
    rc.incr("py:counter")
    rc.hset("py:h:%d" % (i % 10), "f%d" % i, i)
rc.rpush("py:list", *range(50))
p = rc.pipeline()
for i in range(100):
    p.get("py:%d" % i)
vals = p.execute()
assert vals == [str(i).encode() for i in range(100)], vals
assert int(rc.get("py:counter")) == 200
assert rc.hlen("py:h:3") == 20
assert rc.llen("py:list") == 50
nodes = rc.cluster_nodes()
assert len(nodes) >= 3, nodes
print("ok")
`

func runPyCluster(t *testing.T, addr string) {
	t.Helper()
	py := testenv.PythonRedis(t)
	out, err := exec.Command(py, "-c", pyWorkload, addr).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("redis-py RedisCluster: %v\n%s", err, out)
	}
}

func TestClusterAllAbacusCreateAndFailover(t *testing.T) {
	testenv.Need(t, "redis-cli")
	var nodes []*clusterNode
	for i := 0; i < 6; i++ {
		nodes = append(nodes, startClusterNode(t, false))
	}
	out := redisCli(t, append(append([]string{"--cluster", "create"}, addrs(nodes)...), "--cluster-replicas", "1", "--cluster-yes")...)
	if !strings.Contains(out, "[OK] All 16384 slots covered.") {
		t.Fatalf("--cluster create:\n%s", out)
	}
	waitClusterOK(t, nodes...)
	checkClean(t, nodes[0])

	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs(nodes)})
	defer cc.Close()
	writeKeys(t, cc, "before", 200)
	runPyCluster(t, nodes[0].addr())

	p, r := primaryAndReplica(t, nodes, func(p, r *clusterNode) bool { return true })
	p.kill9()
	eventuallyTrue(t, 30*time.Second, "the replica takes over", func() bool {
		f := r.myself()
		return f != nil && strings.Contains(f[2], "master")
	})
	var alive []*clusterNode
	for _, n := range nodes {
		if n != p {
			alive = append(alive, n)
		}
	}
	waitClusterOK(t, alive...)
	checkKeys(t, cc, "before", 200)

	// The old primary comes back with its nodes.conf and follows the
	// replica that replaced it.
	p.start()
	eventuallyTrue(t, 30*time.Second, "the old primary rejoins as a replica", func() bool {
		f := p.myself()
		return f != nil && strings.Contains(f[2], "slave") && f[3] == r.myself()[0]
	})
	waitClusterOK(t, nodes...)
}

func TestClusterMixedWithRedisServer(t *testing.T) {
	testenv.Need(t, "redis-cli")
	testenv.NeedRedis(t)
	r1, a1, r2 := startClusterNode(t, true), startClusterNode(t, false), startClusterNode(t, true)
	masters := []*clusterNode{r1, a1, r2}
	out := redisCli(t, append(append([]string{"--cluster", "create"}, addrs(masters)...), "--cluster-replicas", "0", "--cluster-yes")...)
	if !strings.Contains(out, "[OK] All 16384 slots covered.") {
		t.Fatalf("--cluster create:\n%s", out)
	}
	waitClusterOK(t, masters...)
	// An Abacus replica for a redis-server primary and the reverse,
	// added as a user adds nodes to a running cluster.
	a2, r3 := startClusterNode(t, false), startClusterNode(t, true)
	redisCli(t, "--cluster", "add-node", a2.addr(), r1.addr(), "--cluster-slave", "--cluster-master-id", r1.myself()[0])
	redisCli(t, "--cluster", "add-node", r3.addr(), a1.addr(), "--cluster-slave", "--cluster-master-id", a1.myself()[0])
	nodes := []*clusterNode{r1, a1, r2, a2, r3}
	eventuallyTrue(t, 30*time.Second, "replicas joined", func() bool {
		f2, f3 := a2.myself(), r3.myself()
		return f2 != nil && f3 != nil && strings.Contains(f2[2], "slave") && strings.Contains(f3[2], "slave") &&
			a1.info("cluster_known_nodes") == "5" && r1.info("cluster_known_nodes") == "5"
	})
	waitClusterOK(t, nodes...)
	checkClean(t, r2)

	runPyCluster(t, r2.addr())
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs(nodes)})
	defer cc.Close()
	ctx := context.Background()
	// WAIT needs every primary to have a replica: r2 has none, so the
	// keys go to r1's and a1's slots only.
	for i := 0; i < 100; i++ {
		key := fmt.Sprintf("k:%d", i)
		if err := cc.Set(ctx, key, i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []*clusterNode{r1, a1} {
		c := m.client()
		// The replica may still be syncing: WAIT until it acknowledges.
		eventuallyTrue(t, 30*time.Second, "WAIT 1 on "+m.addr(), func() bool {
			got, err := c.Do(ctx, "WAIT", 1, 1000).Int()
			return err == nil && got == 1
		})
		c.Close()
	}

	// The redis-server primary dies: its Abacus replica takes over.
	r1.kill9()
	eventuallyTrue(t, 30*time.Second, "the Abacus replica takes over", func() bool {
		f := a2.myself()
		return f != nil && strings.Contains(f[2], "master")
	})
	waitClusterOK(t, a1, r2, a2, r3)
	cc.ReloadState(ctx)
	for i := 0; i < 100; i++ {
		key := fmt.Sprintf("k:%d", i)
		var v string
		eventuallyTrue(t, 10*time.Second, "reading "+key, func() bool {
			var err error
			v, err = cc.Get(ctx, key).Result()
			if err != nil {
				cc.ReloadState(ctx)
			}
			return err == nil
		})
		if v != strconv.Itoa(i) {
			t.Fatalf("%s = %q after the failover", key, v)
		}
	}
	// The redis-server node comes back as the Abacus node's replica.
	r1.start()
	eventuallyTrue(t, 30*time.Second, "the old redis-server primary rejoins as a replica", func() bool {
		f := r1.myself()
		return f != nil && strings.Contains(f[2], "slave") && f[3] == a2.myself()[0]
	})
	// The primary must know the node as its replica before it accepts
	// the replica's MFSTART (it ignores one from a node it still takes
	// for a primary, as Redis does).
	eventuallyTrue(t, 30*time.Second, "the rejoined replica in sync and known to its primary", func() bool {
		c := r1.client()
		s, _ := c.Info(ctx, "replication").Result()
		c.Close()
		c = a2.client()
		reps, _ := c.Do(ctx, "CLUSTER", "REPLICAS", a2.myself()[0]).StringSlice()
		c.Close()
		return strings.Contains(s, "master_link_status:up") && len(reps) == 1 &&
			strings.HasPrefix(reps[0], r1.myself()[0])
	})
	// A manual failover (MFSTART: the Abacus primary pauses writes and
	// reports its final offset, the replica catches up and is elected)
	// makes the redis-server node primary again, under a write load:
	// every write acknowledged before, during or after it is there.
	stop := make(chan struct{})
	acked := make(chan []string)
	go func() {
		var ok []string
		for i := 0; ; i++ {
			select {
			case <-stop:
				acked <- ok
				return
			default:
			}
			k := fmt.Sprintf("fb:%d", i)
			if cc.Set(ctx, k, i, 0).Err() == nil {
				ok = append(ok, k)
			}
		}
	}()
	if err := r1.client().Do(ctx, "CLUSTER", "FAILOVER").Err(); err != nil {
		t.Fatal(err)
	}
	eventuallyTrue(t, 30*time.Second, "the manual failover back to redis-server", func() bool {
		f, g := r1.myself(), a2.myself()
		return f != nil && g != nil && strings.Contains(f[2], "master") && strings.Contains(g[2], "slave")
	})
	waitClusterOK(t, r1, a1, r2, a2, r3)
	close(stop)
	written := <-acked
	cc.ReloadState(ctx)
	for _, k := range append(written, "k:7") {
		if v, err := cc.Get(ctx, k).Result(); err != nil || (k != "k:7" && "fb:"+v != k) {
			t.Fatalf("%s after failing back: %q %v", k, v, err)
		}
	}
	t.Logf("%d writes acknowledged across the manual failover", len(written))

	// The Abacus primary dies: its redis-server replica takes over.
	a1.kill9()
	eventuallyTrue(t, 30*time.Second, "the redis-server replica takes over", func() bool {
		f := r3.myself()
		return f != nil && strings.Contains(f[2], "master")
	})
	waitClusterOK(t, r1, r2, a2, r3)
}

func TestClusterBusBadInput(t *testing.T) {
	n := startClusterNode(t, false)
	c := n.client()
	ctx := context.Background()
	if err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	waitClusterOK(t, n)
	bus := fmt.Sprintf("127.0.0.1:%d", n.cport)
	header := func(total uint32, ver uint16) []byte {
		b := make([]byte, 2256)
		copy(b, "RCmb")
		bin.BigEndian.PutUint32(b[4:], total)
		bin.BigEndian.PutUint16(b[8:], ver)
		return b
	}
	cases := map[string][]byte{
		"garbage":       []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		"short length":  header(100, 1)[:100],
		"wrong version": header(2256, 7),
		// A PING announcing three gossip entries it does not carry.
		"bad count": func() []byte { b := header(2256, 1); bin.BigEndian.PutUint16(b[14:], 3); return b }(),
	}
	for name, msg := range cases {
		conn, err := net.Dial("tcp", bus)
		if err != nil {
			t.Fatal(err)
		}
		conn.Write(msg)
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		// EOF or a reset (unread bytes at close): either is a close;
		// a timeout is not.
		if _, err := io.ReadAll(conn); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Errorf("%s: the node did not close the link: %v", name, err)
			}
		}
		conn.Close()
	}
	// Truncated: a header claiming more than is sent, then the peer goes.
	conn, err := net.Dial("tcp", bus)
	if err != nil {
		t.Fatal(err)
	}
	conn.Write(header(4000, 1)[:1000])
	conn.Close()
	// MEET to a closed port: a handshake that times out and is dropped.
	closed := freePort(t)
	if err := c.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", closed, closed).Err(); err != nil {
		t.Fatal(err)
	}
	eventuallyTrue(t, 30*time.Second, "the failed handshake is dropped", func() bool {
		return n.info("cluster_known_nodes") == "1"
	})
	if s := n.info("cluster_state"); s != "ok" {
		t.Errorf("cluster_state %q after bad input", s)
	}
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Errorf("SET after bad bus input: %v", err)
	}
	if !strings.Contains(n.p.logs(), "Bad message length or signature received from Cluster bus.") {
		t.Errorf("bad input not logged:\n%s", n.p.logs())
	}
}
