// Command clusterbench measures Redis Cluster mode side by side: a
// cluster of 3 Abacus primaries and one of 3 redis-server primaries on
// this machine, driven by redis-benchmark --cluster (GET, SET, INCR at
// pipeline 1 and 16, rounds alternating A B A B, medians, the ratio and
// the CPU time the three servers spent per request); then the keys moved
// per second by redis-cli --cluster reshard, and the time a replica takes
// to replace a primary killed with SIGKILL.
//
//	go run ./bench/clusterbench
//	go run ./bench/clusterbench -rounds 5 -n 200000 -pipelines 16
//
// Only loopback addresses are used.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// cluster is one cluster of primaries (and the replica added for the
// failover measurement).
type cluster struct {
	kind  string
	nodes []*harness.Server
	ids   []string
}

var (
	nodeTimeout = flag.Int("node-timeout", 2000, "cluster-node-timeout (ms)")
	dir         string
)

func main() {
	bin := flag.String("bin", "", "Abacus binary (default: build ./cmd/abacus)")
	rounds := flag.Int("rounds", 3, "rounds per row (medians)")
	pipes := flag.String("pipelines", "1,16", "pipeline depths")
	tests := flag.String("tests", "set,get,incr", "redis-benchmark tests")
	n := flag.Int("n", 100000, "requests per measurement")
	clients := flag.Int("clients", 50, "redis-benchmark connections")
	reshardKeys := flag.Int("reshard-keys", 20000, "keys moved by the reshard measurement")
	reshardRounds := flag.Int("reshard-rounds", 1, "reshards per cluster (A B A B, slots moved back and forth; medians)")
	failover := flag.Bool("failover", true, "measure the failover time")
	flag.Parse()
	for _, tool := range []string{"redis-benchmark", "redis-cli", "redis-server"} {
		if _, err := exec.LookPath(tool); err != nil {
			harness.Fatal("%s not found", tool)
		}
	}
	var err error
	dir, err = os.MkdirTemp("", "clusterbench-")
	if err != nil {
		harness.Fatal("%v", err)
	}
	defer os.RemoveAll(dir)
	b, cleanup := harness.BuildAbacus(*bin)
	defer cleanup()

	cls := []*cluster{startCluster("abacus", b), startCluster("redis", "redis-server")}
	defer func() {
		for _, c := range cls {
			harness.StopAll(c.nodes)
		}
	}()

	harness.Header(fmt.Sprintf("3 primaries per cluster, redis-benchmark --cluster, %d clients, %d requests, medians of %d rounds; load average %s.",
		*clients, *n, *rounds, harness.LoadAvg()))
	if *tests != "" {
		fmt.Println("| test | pipeline | abacus req/s | redis req/s | ratio | abacus CPU µs/req | redis CPU µs/req |")
		fmt.Println("|---|---|---|---|---|---|---|")
		for _, test := range strings.Split(*tests, ",") {
			for _, p := range harness.Pipelines(*pipes) {
				var rate, cpu [2][]float64
				for i := 0; i < *rounds; i++ {
					for k, c := range cls {
						r, u := c.bench(test, p, *n, *clients)
						rate[k] = append(rate[k], r)
						cpu[k] = append(cpu[k], u)
					}
				}
				ra, rr := harness.Median(rate[0]), harness.Median(rate[1])
				fmt.Printf("| %s | %d | %.0f | %.0f | %.2fx | %.2f | %.2f |\n", strings.ToUpper(test), p, ra, rr, ra/rr,
					harness.Median(cpu[0]), harness.Median(cpu[1]))
			}
		}
	}
	fmt.Println()
	fmt.Println("| cluster | reshard: keys moved | slots | seconds | keys/s | CPU µs/key (source+target) | failover: kill -9 to replica is primary (ms) | to cluster_state:ok (ms) |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	var secs, cpus [2][]float64
	rerr := ""
	for i := 0; i < *reshardRounds && rerr == ""; i++ {
		for k, c := range cls {
			// Odd rounds move the slots back, so every round moves the
			// same keys.
			from, to := i%2, 1-i%2
			var sec, cpu float64
			if sec, cpu, rerr = c.reshard(*reshardKeys, 1000, from, to, i == 0); rerr != "" {
				rerr = c.kind + ": " + rerr
				break
			}
			secs[k], cpus[k] = append(secs[k], sec), append(cpus[k], cpu)
		}
	}
	for k, c := range cls {
		var promoted, ok int64
		if *failover {
			promoted, ok = c.failover(b)
		}
		rs := fmt.Sprintf("%d | 1000 | %.1f | %.0f | %.1f", *reshardKeys, harness.Median(secs[k]),
			float64(*reshardKeys)/harness.Median(secs[k]), harness.Median(cpus[k]))
		if rerr != "" {
			rs = "failed: " + rerr + " | 1000 | - | - | -"
		}
		fmt.Printf("| %s | %s | %d | %d |\n", c.kind, rs, promoted, ok)
	}
}

// busPort picks a free port below the kernel's ephemeral range (32768 and
// up), where the servers' own ports come from, so that a bus port handed
// out and not yet bound cannot also become a later server's port.
func busPort() int {
	for {
		p := 20000 + rand.Intn(12000)
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			l.Close()
			return p
		}
	}
}

var started int

func startNode(kind, bin string) *harness.Server {
	started++
	// Each node has its own directory: nodes.conf, and the snapshot a
	// replica receives.
	d := filepath.Join(dir, strconv.Itoa(started))
	if err := os.Mkdir(d, 0o755); err != nil {
		harness.Fatal("%v", err)
	}
	return harness.Start(kind, bin, "--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(busPort()),
		"--cluster-node-timeout", strconv.Itoa(*nodeTimeout), "--dir", d)
}

func addr(s *harness.Server) string { return fmt.Sprintf("127.0.0.1:%d", s.Port) }

func cli(args ...string) (string, error) {
	out, err := exec.Command("redis-cli", args...).CombinedOutput()
	return string(out), err
}

func startCluster(kind, bin string) *cluster {
	c := &cluster{kind: kind}
	args := []string{"--cluster", "create"}
	for i := 0; i < 3; i++ {
		s := startNode(kind, bin)
		c.nodes = append(c.nodes, s)
		args = append(args, addr(s))
	}
	if out, err := cli(append(args, "--cluster-replicas", "0", "--cluster-yes")...); err != nil || !strings.Contains(out, "[OK] All 16384 slots covered.") {
		harness.Fatal("%s: --cluster create: %v\n%s", kind, err, out)
	}
	for _, s := range c.nodes {
		waitFor(30*time.Second, kind+" cluster_state:ok", func() bool { return clusterInfo(s, "cluster_state") == "ok" })
		c.ids = append(c.ids, strings.TrimSpace(mustCli("-p", strconv.Itoa(s.Port), "CLUSTER", "MYID")))
	}
	return c
}

func mustCli(args ...string) string {
	out, err := cli(args...)
	if err != nil {
		harness.Fatal("redis-cli %v: %v %s", args, err, out)
	}
	return out
}

func clusterInfo(s *harness.Server, field string) string {
	out, _ := cli("-p", strconv.Itoa(s.Port), "CLUSTER", "INFO")
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), field+":"); ok {
			return v
		}
	}
	return ""
}

func waitFor(within time.Duration, what string, cond func() bool) time.Duration {
	start := time.Now()
	for !cond() {
		if time.Since(start) > within {
			harness.Fatal("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// bench runs one redis-benchmark --cluster measurement: requests/s and
// the CPU µs the cluster's servers spent per request.
func (c *cluster) bench(test string, pipe, n, clients int) (float64, float64) {
	var before int64
	for _, s := range c.nodes {
		before += s.CPUTicks()
	}
	out, err := exec.Command("redis-benchmark", "--cluster", "-h", "127.0.0.1", "-p", strconv.Itoa(c.nodes[0].Port),
		"-c", strconv.Itoa(clients), "-n", strconv.Itoa(n), "-P", strconv.Itoa(pipe), "-r", "100000",
		"-t", test, "--csv").Output()
	if err != nil {
		harness.Fatal("redis-benchmark: %v\n%s", err, out)
	}
	var after int64
	for _, s := range c.nodes {
		after += s.CPUTicks()
	}
	rate := 0.0
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Split(l, "\",\"")
		if len(f) < 2 || strings.Contains(f[0], "test") {
			continue
		}
		if v, err := strconv.ParseFloat(strings.Trim(f[1], `"`), 64); err == nil {
			rate = v
		}
	}
	if rate == 0 {
		harness.Fatal("no result from redis-benchmark:\n%s", out)
	}
	return rate, float64(after-before) * 10_000 / float64(n)
}

// reshard stores keys in slots 0..slots-1 (node from's) when fill, and
// times moving those slots from node from to node to with redis-cli
// --cluster reshard: seconds, and the CPU µs the two nodes spent per key.
func (c *cluster) reshard(keys, slots, from, to int, fill bool) (float64, float64, string) {
	if fill {
		conn := c.nodes[from].Dial()
		stored := 0
		for i := 0; stored < keys; i++ {
			k := "rk:" + strconv.Itoa(i)
			if keyspace.HashSlot([]byte(k)) >= slots {
				continue
			}
			conn.Send("SET", k, "value-"+strconv.Itoa(i))
			stored++
			if stored%1000 == 0 {
				conn.Flush()
			}
		}
		conn.Flush()
		conn.Close()
	}
	// The previous round's last SETSLOTs may still be spreading.
	waitFor(30*time.Second, "the nodes to agree", func() bool {
		out, _ := cli("--cluster", "check", addr(c.nodes[from]))
		return strings.Contains(out, "[OK] All nodes agree about slots configuration.") && !strings.Contains(out, "[WARNING]")
	})
	cpu := func() int64 { return c.nodes[from].CPUTicks() + c.nodes[to].CPUTicks() }
	before := cpu()
	start := time.Now()
	out, err := cli("--cluster", "reshard", addr(c.nodes[from]), "--cluster-from", c.ids[from], "--cluster-to", c.ids[to],
		"--cluster-slots", strconv.Itoa(slots), "--cluster-yes", "--cluster-pipeline", "100")
	secs := time.Since(start).Seconds()
	if err != nil {
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return 0, 0, strings.TrimSpace(lines[len(lines)-1])
	}
	return secs, float64(cpu()-before) * 10_000 / float64(keys), ""
}

// failover adds a replica to node 2, kills node 2 with SIGKILL and times
// until the replica is a primary and until it sees the cluster ok.
func (c *cluster) failover(abacusBin string) (int64, int64) {
	bin := abacusBin
	if c.kind == "redis" {
		bin = "redis-server"
	}
	r := startNode(c.kind, bin)
	c.nodes = append(c.nodes, r)
	p := c.nodes[2]
	mustCli("--cluster", "add-node", addr(r), addr(p), "--cluster-slave", "--cluster-master-id", c.ids[2])
	waitFor(30*time.Second, "the replica in sync", func() bool {
		out, _ := cli("-p", strconv.Itoa(r.Port), "INFO", "replication")
		return strings.Contains(out, "master_link_status:up") && clusterInfo(r, "cluster_state") == "ok"
	})
	start := time.Now()
	p.Stop()
	promoted := waitFor(60*time.Second, "the replica promoted", func() bool {
		out, _ := cli("-p", strconv.Itoa(r.Port), "ROLE")
		return bytes.HasPrefix([]byte(out), []byte("master"))
	})
	waitFor(60*time.Second, "cluster_state:ok", func() bool { return clusterInfo(r, "cluster_state") == "ok" })
	return promoted.Milliseconds(), time.Since(start).Milliseconds()
}
