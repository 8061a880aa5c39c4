package cluster_test

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/cluster"
	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// Standalone, CLUSTER answers as redis-server does without cluster mode.
func TestClusterDisabledDiff(t *testing.T) {
	d, _ := servertest.StartDiff(t)
	d.Do("CLUSTER", "INFO")
	d.Do("CLUSTER", "HELP")
	d.Do("CLUSTER", "KEYSLOT", "foo")
	d.Do("CLUSTER", "NOSUCH")
}

// startRedisCluster runs a fresh single redis-server in cluster mode.
func startRedisCluster(t *testing.T) string {
	bin := testenv.NeedRedis(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--dir", dir,
		"--cluster-enabled", "yes", "--cluster-port", "0", "--logfile", filepath.Join(dir, "log"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr
		}
		if i == 200 {
			t.Fatal("redis-server did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A single cluster node of each kind: the replies and errors of the
// CLUSTER subcommands that do not depend on node ids or times. (Keys are
// left out: with slots unassigned Redis answers -CLUSTERDOWN, the
// engine's routing, tested with it.)
func TestClusterNodeDiff(t *testing.T) {
	raddr := startRedisCluster(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bus := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	inst := servertest.Start(t, servertest.WithConfig("cluster-enabled", "yes", "dir", t.TempDir(),
		"cluster-port", strconv.Itoa(bus)))
	cl, err := cluster.New(inst.Srv.Env, inst.Srv, inst.Repl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	d := servertest.DialDiff(t, inst.Addr, raddr)
	d.DoAll([][]string{
		{"CLUSTER", "HELP"},
		{"CLUSTER", "KEYSLOT", "{user1000}.following"},
		{"CLUSTER", "COUNTKEYSINSLOT", "16384"},
		{"CLUSTER", "COUNTKEYSINSLOT", "x"},
		{"CLUSTER", "GETKEYSINSLOT", "0", "-1"},
		{"CLUSTER", "ADDSLOTS", "16384"},
		{"CLUSTER", "ADDSLOTS", "1", "1"},
		{"CLUSTER", "ADDSLOTS", "0", "1", "2"},
		{"CLUSTER", "ADDSLOTS", "2"},
		{"CLUSTER", "DELSLOTS", "5"},
		{"CLUSTER", "ADDSLOTSRANGE", "10", "5"},
		{"CLUSTER", "ADDSLOTSRANGE", "10", "20", "15", "30"},
		{"CLUSTER", "ADDSLOTSRANGE", "10"},
		{"CLUSTER", "ADDSLOTSRANGE", "100", "200", "300"},
		{"CLUSTER", "ADDSLOTSRANGE", "100", "16383"},
		{"CLUSTER", "DELSLOTSRANGE", "100", "200"},
		{"CLUSTER", "COUNTKEYSINSLOT", "150"},
		{"CLUSTER", "FLUSHSLOTS"},
		{"CLUSTER", "RESET"},
		{"CLUSTER", "REPLICATE", "0000000000000000000000000000000000000000"},
		{"CLUSTER", "FORGET", "0000000000000000000000000000000000000000"},
		{"CLUSTER", "REPLICAS", "0000000000000000000000000000000000000000"},
		{"CLUSTER", "COUNT-FAILURE-REPORTS", "0000000000000000000000000000000000000000"},
		{"CLUSTER", "SETSLOT", "0", "MIGRATING", "0000000000000000000000000000000000000000"},
		{"CLUSTER", "SETSLOT", "101", "MIGRATING", "0000000000000000000000000000000000000000"},
		{"CLUSTER", "SETSLOT", "0", "IMPORTING", "0000000000000000000000000000000000000000"},
		{"CLUSTER", "SETSLOT", "0", "NODE", "0000000000000000000000000000000000000000"},
		{"CLUSTER", "SETSLOT", "0", "BOGUS"},
		{"CLUSTER", "SETSLOT", "x", "STABLE"},
		{"CLUSTER", "FAILOVER"},
		{"CLUSTER", "FAILOVER", "BOGUS"},
		{"CLUSTER", "RESET", "BOGUS"},
		{"CLUSTER", "MEET", "127.0.0.1", "x"},
		{"CLUSTER", "MEET", "127.0.0.1", "1", "x"},
		{"CLUSTER", "MEET", "not-an-ip", "1"},
		{"CLUSTER", "SET-CONFIG-EPOCH", "-1"},
		{"CLUSTER", "SET-CONFIG-EPOCH", "5"},
		{"CLUSTER", "SET-CONFIG-EPOCH", "6"},
		{"CLUSTER", "BUMPEPOCH"},
		{"CLUSTER", "BUMPEPOCH"},
		{"CLUSTER", "FLUSHSLOTS"},
		{"CLUSTER", "LINKS"},
	})
}
