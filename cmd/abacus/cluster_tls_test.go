package main

// The cluster bus over TLS (tls-cluster yes), as redis-server 7.0.15 runs
// it: a node's port is its tls-port, its pport the plaintext port, the bus
// port tls-port+10000; plaintext clients are shown and redirected to the
// pport, TLS clients to the TLS port; the bus requires a client
// certificate.

import (
	"context"
	"crypto/tls"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

type tlsClusterNode struct {
	t             *testing.T
	pki           *servertest.PKI
	port, tlsPort int
	dir           string
	p             *proc     // Abacus
	cmd           *exec.Cmd // redis-server
	exited        chan struct{}
}

// tlsPortPair picks a TLS port whose bus port (+10000) is free too, both
// below the kernel's ephemeral range so no later freePort takes them.
func tlsPortPair(t *testing.T) int {
	for {
		p := 20000 + rand.Intn(2700)
		a, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		b, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+10000))
		a.Close()
		if err != nil {
			continue
		}
		b.Close()
		return p
	}
}

func tlsClusterArgs(p *servertest.PKI, tlsPort int) []string {
	return []string{"--cluster-enabled", "yes", "--cluster-node-timeout", testNodeTimeout,
		"--save", "", "--appendonly", "no", "--tls-port", strconv.Itoa(tlsPort), "--tls-cluster", "yes",
		"--tls-cert-file", p.CertFile, "--tls-key-file", p.KeyFile, "--tls-ca-cert-file", p.CAFile,
		"--tls-client-cert-file", p.ClientCert, "--tls-client-key-file", p.ClientKey}
}

func startTLSClusterNode(t *testing.T, p *servertest.PKI, redisServer bool, extra ...string) *tlsClusterNode {
	t.Helper()
	n := &tlsClusterNode{t: t, pki: p, port: freePort(t), tlsPort: tlsPortPair(t)}
	dir := t.TempDir()
	n.dir = dir
	args := append(tlsClusterArgs(p, n.tlsPort), extra...)
	if !redisServer {
		n.p = startIn(t, dir, n.port, args...)
		return n
	}
	rs := testenv.Need(t, "redis-server")
	cmd := exec.Command(rs, append([]string{"--port", strconv.Itoa(n.port), "--bind", "127.0.0.1",
		"--dir", dir, "--logfile", "redis.log"}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	n.cmd, n.exited = cmd, exited
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	eventuallyTrue(t, 10*time.Second, "redis-server TLS port", func() bool {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", n.tlsPort), time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return n
}

func (n *tlsClusterNode) plain() *redis.Client {
	return servertest.NewClient(n.t, fmt.Sprintf("127.0.0.1:%d", n.port))
}

func (n *tlsClusterNode) tls() *redis.Client {
	cert, err := tls.LoadX509KeyPair(n.pki.ClientCert, n.pki.ClientKey)
	if err != nil {
		n.t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", n.tlsPort), MaxRetries: -1,
		TLSConfig: &tls.Config{RootCAs: n.pki.Pool, Certificates: []tls.Certificate{cert}}})
	n.t.Cleanup(func() { c.Close() })
	return c
}

func (n *tlsClusterNode) do(c *redis.Client, args ...any) string {
	v, err := c.Do(context.Background(), args...).Result()
	if err != nil {
		return err.Error()
	}
	return fmt.Sprint(v)
}

func (n *tlsClusterNode) info(field string) string {
	s := n.do(n.plain(), "cluster", "info")
	for _, line := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}

func (n *tlsClusterNode) id() string { return n.do(n.plain(), "cluster", "myid") }

// formTLSCluster meets every node with the first over the TLS bus, gives
// each an equal share of the slots and waits for state ok everywhere.
func formTLSCluster(t *testing.T, nodes []*tlsClusterNode) {
	t.Helper()
	for _, n := range nodes[1:] {
		if r := nodes[0].do(nodes[0].plain(), "cluster", "meet", "127.0.0.1", n.tlsPort); r != "OK" {
			t.Fatalf("CLUSTER MEET: %s", r)
		}
	}
	per := 16384 / len(nodes)
	for i, n := range nodes {
		hi := (i+1)*per - 1
		if i == len(nodes)-1 {
			hi = 16383
		}
		if r := n.do(n.plain(), "cluster", "addslotsrange", i*per, hi); r != "OK" {
			t.Fatalf("ADDSLOTSRANGE: %s", r)
		}
	}
	eventuallyTrue(t, 15*time.Second, "cluster_state ok on every node", func() bool {
		for _, n := range nodes {
			if n.info("cluster_state") != "ok" || n.info("cluster_known_nodes") != strconv.Itoa(len(nodes)) {
				return false
			}
		}
		return true
	})
}

// nodesLine is the CLUSTER NODES line of node id as c sees it.
func nodesLine(n *tlsClusterNode, c *redis.Client, id string) string {
	for _, line := range strings.Split(n.do(c, "cluster", "nodes"), "\n") {
		if strings.HasPrefix(line, id+" ") {
			return line
		}
	}
	return ""
}

// checkPorts checks what plaintext and TLS clients of a are told about b.
func checkPorts(t *testing.T, a, b *tlsClusterNode) {
	t.Helper()
	bus := b.tlsPort + 10000
	id := b.id()
	if l, want := nodesLine(a, a.plain(), id), fmt.Sprintf(" 127.0.0.1:%d@%d ", b.port, bus); !strings.Contains(l, want) {
		t.Errorf("CLUSTER NODES (plaintext client) on %d: %q, want %q", a.port, l, want)
	}
	if l, want := nodesLine(a, a.tls(), id), fmt.Sprintf(" 127.0.0.1:%d@%d ", b.tlsPort, bus); !strings.Contains(l, want) {
		t.Errorf("CLUSTER NODES (TLS client) on %d: %q, want %q", a.port, l, want)
	}
	shards := a.do(a.plain(), "cluster", "shards")
	if want := fmt.Sprintf("id %s port %d tls-port %d ", id, b.port, b.tlsPort); !strings.Contains(shards, want) {
		t.Errorf("CLUSTER SHARDS on %d: %s, want %q in it", a.port, shards, want)
	}
}

func TestClusterTLSBus(t *testing.T) {
	testenv.NeedRedis(t)
	p := servertest.NewPKI(t)
	var nodes []*tlsClusterNode
	for i := 0; i < 3; i++ {
		nodes = append(nodes, startTLSClusterNode(t, p, false))
	}
	formTLSCluster(t, nodes)
	a, b := nodes[0], nodes[1]
	checkPorts(t, a, b)
	checkPorts(t, b, a)
	// nodes.conf keeps the TLS port (Redis 7.0 saves no pport).
	eventuallyTrue(t, 5*time.Second, "nodes.conf with b's TLS port", func() bool {
		conf, _ := os.ReadFile(filepath.Join(a.dir, "nodes.conf"))
		return strings.Contains(string(conf), fmt.Sprintf("%s 127.0.0.1:%d@%d ", b.id(), b.tlsPort, b.tlsPort+10000))
	})

	// CLUSTER SLOTS names the port the client's kind connects to.
	slots := a.do(a.plain(), "cluster", "slots")
	if !strings.Contains(slots, fmt.Sprintf("127.0.0.1 %d %s", b.port, b.id())) {
		t.Errorf("CLUSTER SLOTS (plaintext): %s", slots)
	}
	if slots := a.do(a.tls(), "cluster", "slots"); !strings.Contains(slots, fmt.Sprintf("127.0.0.1 %d %s", b.tlsPort, b.id())) {
		t.Errorf("CLUSTER SLOTS (TLS): %s", slots)
	}

	// "c" hashes to slot 7365, b's (the second third).
	if r, want := a.do(a.plain(), "set", "c", "1"), fmt.Sprintf("MOVED 7365 127.0.0.1:%d", b.port); r != want {
		t.Errorf("plaintext client: %q, want %q", r, want)
	}
	if r, want := a.do(a.tls(), "set", "c", "1"), fmt.Sprintf("MOVED 7365 127.0.0.1:%d", b.tlsPort); r != want {
		t.Errorf("TLS client: %q, want %q", r, want)
	}
	// ASK while b migrates the slot to a.
	if r := b.do(b.plain(), "cluster", "setslot", 7365, "migrating", a.id()); r != "OK" {
		t.Fatal(r)
	}
	if r, want := b.do(b.plain(), "get", "c"), fmt.Sprintf("ASK 7365 127.0.0.1:%d", a.port); r != want {
		t.Errorf("plaintext client: %q, want %q", r, want)
	}
	if r, want := b.do(b.tls(), "get", "c"), fmt.Sprintf("ASK 7365 127.0.0.1:%d", a.tlsPort); r != want {
		t.Errorf("TLS client: %q, want %q", r, want)
	}

	// A bus connection without a client certificate is refused; so is a
	// plaintext one. The cluster is unharmed.
	bus := fmt.Sprintf("127.0.0.1:%d", a.tlsPort+10000)
	refused := func(conn net.Conn) bool {
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		conn.Write([]byte("RCmb\x00\x00\x08\x00"))
		_, err := conn.Read(make([]byte, 1))
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return false
		}
		return err != nil
	}
	if conn, err := tls.Dial("tcp", bus, &tls.Config{RootCAs: p.Pool, ServerName: "localhost"}); err == nil {
		if !refused(conn) {
			t.Error("a bus connection without a client certificate was kept")
		}
	}
	if conn, err := net.Dial("tcp", bus); err != nil {
		t.Fatal(err)
	} else if !refused(conn) {
		t.Error("a plaintext bus connection was kept")
	}
	if s := a.info("cluster_state"); s != "ok" {
		t.Errorf("cluster_state %s after refused bus connections", s)
	}
}

// An Abacus node and a redis-server node form a cluster over a TLS bus
// and agree on its state and on each other's ports.
func TestClusterTLSBusMixed(t *testing.T) {
	testenv.NeedRedis(t)
	p := servertest.NewPKI(t)
	ab := startTLSClusterNode(t, p, false)
	rs := startTLSClusterNode(t, p, true)
	formTLSCluster(t, []*tlsClusterNode{ab, rs})
	checkPorts(t, ab, rs)
	checkPorts(t, rs, ab)
	// "b" (slot 3300) is Abacus's: redis-server redirects both kinds of
	// client to the port Abacus announced for each.
	if r, want := rs.do(rs.plain(), "set", "b", "1"), fmt.Sprintf("MOVED 3300 127.0.0.1:%d", ab.port); r != want {
		t.Errorf("redis-server, plaintext client: %q, want %q", r, want)
	}
	if r, want := rs.do(rs.tls(), "set", "b", "1"), fmt.Sprintf("MOVED 3300 127.0.0.1:%d", ab.tlsPort); r != want {
		t.Errorf("redis-server, TLS client: %q, want %q", r, want)
	}
	// "foo" (slot 12182) is redis-server's.
	if r, want := ab.do(ab.plain(), "set", "foo", "1"), fmt.Sprintf("MOVED 12182 127.0.0.1:%d", rs.port); r != want {
		t.Errorf("Abacus, plaintext client: %q, want %q", r, want)
	}
	if r, want := ab.do(ab.tls(), "set", "foo", "1"), fmt.Sprintf("MOVED 12182 127.0.0.1:%d", rs.tlsPort); r != want {
		t.Errorf("Abacus, TLS client: %q, want %q", r, want)
	}
	if r := ab.do(ab.tls(), "set", "b", "1"); r != "OK" {
		t.Errorf("SET on its own slot: %s", r)
	}
}
