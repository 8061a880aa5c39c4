package main

// A cluster whose bus and replication run over TLS (tls-cluster yes,
// tls-replication yes), driven through TLS ports only: redis-cli --tls
// creates it and adds the replicas, reshards slots while a TLS cluster
// client writes (MIGRATE then dials its target over TLS, as Redis's
// migrateGetSocket does with tls-cluster), and a SIGKILLed primary is
// replaced by its replica, elected over the TLS bus after syncing over
// TLS (all Abacus, the old primary then rejoins as its replica). Once
// all Abacus, once mixed with redis-server 7.0.15 nodes.

import (
	"context"
	"crypto/tls"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

func (n *tlsClusterNode) tlsAddr() string { return fmt.Sprintf("127.0.0.1:%d", n.tlsPort) }

// kill9 kills the node with SIGKILL and waits for it to be gone.
func (n *tlsClusterNode) kill9() {
	if n.cmd != nil {
		n.cmd.Process.Kill()
		<-n.exited
		return
	}
	n.p.cmd.Process.Kill()
	<-n.p.done
}

// flags is the flags field of the node's own CLUSTER NODES line.
func (n *tlsClusterNode) flags() string {
	f := strings.Fields(nodesLine(n, n.plain(), n.id()))
	if len(f) < 3 {
		return ""
	}
	return f[2]
}

// replInfo is one INFO replication field.
func (n *tlsClusterNode) replInfo(field string) string {
	for _, line := range strings.Split(n.do(n.plain(), "info", "replication"), "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}

// cliTLS runs redis-cli over TLS with the test PKI's client certificate.
func cliTLS(t *testing.T, p *servertest.PKI, args ...string) string {
	t.Helper()
	return redisCli(t, append([]string{"--tls", "--cacert", p.CAFile, "--cert", p.ClientCert, "--key", p.ClientKey}, args...)...)
}

func tlsClusterClient(t *testing.T, p *servertest.PKI, nodes []*tlsClusterNode) *redis.ClusterClient {
	cert, err := tls.LoadX509KeyPair(p.ClientCert, p.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	var as []string
	for _, n := range nodes {
		as = append(as, n.tlsAddr())
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: as, MaxRedirects: 16,
		TLSConfig: &tls.Config{RootCAs: p.Pool, Certificates: []tls.Certificate{cert}}})
	t.Cleanup(func() { cc.Close() })
	return cc
}

// setNodeTimeout sets cluster-node-timeout on every node.
func setNodeTimeout(t *testing.T, nodes []*tlsClusterNode, ms string) {
	t.Helper()
	for _, n := range nodes {
		if r := n.do(n.plain(), "config", "set", "cluster-node-timeout", ms); r != "OK" {
			t.Fatalf("CONFIG SET cluster-node-timeout on %d: %s", n.port, r)
		}
	}
}

func reshardTLS(t *testing.T, p *servertest.PKI, from, to *tlsClusterNode) {
	t.Helper()
	out := cliTLS(t, p, "--cluster", "reshard", from.tlsAddr(), "--cluster-from", from.id(),
		"--cluster-to", to.id(), "--cluster-slots", strconv.Itoa(loadSlots), "--cluster-yes",
		"--cluster-pipeline", "10")
	if strings.Contains(out, "[ERR]") {
		t.Fatalf("reshard %s -> %s:\n%s", from.tlsAddr(), to.tlsAddr(), out)
	}
}

// waitAgreedTLS waits until redis-cli --cluster check finds every node
// agreeing about the slots: the replicas learn a reshard's last SETSLOT
// NODE from their primary's next ping, and redis-cli refuses to reshard
// a cluster whose nodes disagree.
func waitAgreedTLS(t *testing.T, p *servertest.PKI, n *tlsClusterNode) {
	t.Helper()
	cli := testenv.Need(t, "redis-cli")
	eventuallyTrue(t, 30*time.Second, "every node agreeing about the slots", func() bool {
		out, _ := exec.Command(cli, "--tls", "--cacert", p.CAFile, "--cert", p.ClientCert, "--key", p.ClientKey,
			"--cluster", "check", n.tlsAddr()).CombinedOutput()
		return strings.Contains(string(out), "[OK] All nodes agree about slots configuration.")
	})
}

func checkCleanTLS(t *testing.T, p *servertest.PKI, n *tlsClusterNode) {
	t.Helper()
	out := cliTLS(t, p, "--cluster", "check", n.tlsAddr())
	for _, want := range []string{"[OK] All nodes agree about slots configuration.", "[OK] All 16384 slots covered."} {
		if !strings.Contains(out, want) {
			t.Fatalf("--cluster check: no %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "[ERR]") || strings.Contains(out, "[WARNING]") {
		t.Fatalf("--cluster check is not clean:\n%s", out)
	}
}

func TestClusterTLSOperations(t *testing.T) {
	testenv.Need(t, "redis-cli")
	testenv.NeedRedis(t)
	for _, mixed := range []bool{false, true} {
		name := map[bool]string{false: "abacus", true: "mixed"}[mixed]
		t.Run(name, func(t *testing.T) { tlsClusterOperations(t, mixed) })
	}
}

// tlsClusterOperations: primaries p0, p1, p2 and a replica of p1 (Abacus);
// mixed, p1 is a redis-server and a redis-server replica follows p0 (an
// Abacus primary feeding a redis-server replica over TLS).
func tlsClusterOperations(t *testing.T, mixed bool) {
	p := servertest.NewPKI(t)
	start := time.Now()
	repl := []string{"--tls-replication", "yes"}
	primaries := []*tlsClusterNode{startTLSClusterNode(t, p, false, repl...),
		startTLSClusterNode(t, p, mixed, repl...), startTLSClusterNode(t, p, false, repl...)}
	r1 := startTLSClusterNode(t, p, false, repl...)
	replicas := map[*tlsClusterNode]*tlsClusterNode{r1: primaries[1]}
	if mixed {
		replicas[startTLSClusterNode(t, p, true, repl...)] = primaries[0]
	}
	all := append([]*tlsClusterNode{}, primaries...)
	for r := range replicas {
		all = append(all, r)
	}

	args := []string{"--cluster", "create"}
	for _, n := range primaries {
		args = append(args, n.tlsAddr())
	}
	if out := cliTLS(t, p, append(args, "--cluster-yes")...); !strings.Contains(out, "[OK] All 16384 slots covered.") {
		t.Fatalf("--cluster create:\n%s", out)
	}
	for r, m := range replicas {
		cliTLS(t, p, "--cluster", "add-node", r.tlsAddr(), primaries[0].tlsAddr(), "--cluster-slave", "--cluster-master-id", m.id())
	}
	eventuallyTrue(t, 30*time.Second, "every node ok, the replicas linked", func() bool {
		for _, n := range all {
			if n.info("cluster_state") != "ok" || n.info("cluster_known_nodes") != strconv.Itoa(len(all)) {
				return false
			}
		}
		for r := range replicas {
			if r.replInfo("master_link_status") != "up" {
				return false
			}
		}
		return true
	})
	t.Logf("created after %v", time.Since(start))

	// Reshards under load, with Redis's default node timeout so that a
	// loaded machine does not fail a node over meanwhile.
	setNodeTimeout(t, all, "15000")
	cc := tlsClusterClient(t, p, primaries)
	ctx := context.Background()
	pre := keysInSlots("pre:", 1000, loadSlots)
	pipe := cc.Pipeline()
	for _, k := range pre {
		pipe.Set(ctx, k, k, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	w := startReshardLoad(cc, 3)
	reshardTLS(t, p, primaries[0], primaries[1])
	waitAgreedTLS(t, p, primaries[0])
	reshardTLS(t, p, primaries[1], primaries[0])
	waitAgreedTLS(t, p, primaries[0])
	time.Sleep(100 * time.Millisecond)
	w.finish()
	sets := len(w.acked)
	if sets == 0 {
		t.Fatal("the load wrote nothing")
	}
	w.acked = append(w.acked, pre...)
	w.verify(t, cc)
	checkCleanTLS(t, p, primaries[0])
	t.Logf("resharded both ways after %v: %d SETs and %d INCRs acknowledged, all read back (%d errors)",
		time.Since(start), sets, sum(w.incrAcked), w.errs)

	// Writes to p1's slots acknowledged by its replica (WAIT 1), then p1
	// is killed: the replica takes over over the TLS bus and has them.
	victim := primaries[1]
	const n = 100
	for i := 0; i < n; i++ {
		if err := cc.Set(ctx, fmt.Sprintf("{c}:%d", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if got := victim.do(victim.plain(), "wait", 1, 5000); got != "1" {
		t.Fatalf("WAIT 1 on the primary: %s", got)
	}
	if mixed {
		if got := primaries[0].do(primaries[0].plain(), "wait", 1, 5000); got != "1" {
			t.Fatalf("WAIT 1 on the Abacus primary of a redis-server replica: %s", got)
		}
	}
	setNodeTimeout(t, all, testNodeTimeout)
	victim.kill9()
	killed := time.Now()
	eventuallyTrue(t, 30*time.Second, "the replica takes over", func() bool {
		return strings.Contains(r1.flags(), "master")
	})
	t.Logf("replica promoted %v after the kill", time.Since(killed))
	var alive []*tlsClusterNode
	for _, x := range all {
		if x != victim {
			alive = append(alive, x)
		}
	}
	eventuallyTrue(t, 30*time.Second, "cluster_state ok on the survivors", func() bool {
		for _, x := range alive {
			if x.info("cluster_state") != "ok" {
				return false
			}
		}
		return true
	})
	cc.ReloadState(ctx)
	for i := 0; i < n; i++ {
		var v string
		var err error
		eventuallyTrue(t, 10*time.Second, "reading {c}", func() bool {
			v, err = cc.Get(ctx, fmt.Sprintf("{c}:%d", i)).Result()
			if err != nil {
				cc.ReloadState(ctx)
			}
			return err == nil
		})
		if v != strconv.Itoa(i) {
			t.Fatalf("{c}:%d = %q, want %d", i, v, i)
		}
	}
	if !mixed {
		// The old primary comes back with its nodes.conf and follows its
		// replacement, syncing over TLS.
		victim.p = startIn(t, victim.dir, victim.port, append(tlsClusterArgs(p, victim.tlsPort), repl...)...)
		eventuallyTrue(t, 30*time.Second, "the old primary rejoins as a replica, linked", func() bool {
			f := strings.Fields(nodesLine(victim, victim.plain(), victim.id()))
			return len(f) > 3 && strings.Contains(f[2], "slave") && f[3] == r1.id() &&
				victim.replInfo("master_link_status") == "up"
		})
	}
	t.Logf("done after %v", time.Since(start))
}
