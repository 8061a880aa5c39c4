// Command durabench measures the persistence rows of the side-by-side
// table, Abacus against redis-server on the same machine:
//
//	go run ./bench/durabench [-keys 10000000] [-rounds 3] [-soak 180s]
//		[-only always,everysec,bgsave,rewrite,rewrite-commands,soak]
//		[-servers abacus,redis]
//
// The rows:
//
//   - SET with appendfsync always and everysec, pipeline 1 and 16 (and
//     with -only off, the same without an AOF)
//     (redis-benchmark -t set -c 50 -r 100000), the servers in turn, A B A
//     B for -rounds rounds: median requests/s, ratio, CPU per request, and
//     for Abacus the group commit's fsyncs and commands per fsync (INFO
//     aof_fsync_count, aof_commands_per_fsync).
//   - GET at pipeline 1 from 50 clients while a BGSAVE of -keys keys runs,
//     and while a BGREWRITEAOF of them runs: p95, p99 and max latency and
//     GET/s, measured exactly while the save is in progress, beside the
//     same clients without a save; peak RSS during it and RSS before.
//     Before the window without a save each server waits until it is
//     idle (settle s: its CPU below -settle-cpu of a core over 500 ms),
//     so work the load left running (Abacus's collector marking the new
//     keys) is not measured as either window. Abacus's GODEBUG=gctrace=1
//     output can be matched with the windows' times (@ seconds since the
//     server started) printed to stderr.
//     rewrite-commands is the rewrite with aof-use-rdb-preamble no (a
//     base of RESTORE commands); it is not in the default -only.
//   - RSS after a -soak of redis-benchmark -t
//     set,get,incr,lpush,lpop,sadd,hset,zadd -r 1000000 -c 50 -P 16.
//
// The machine is shared: fsync times and throughput are noisy, so the
// commands per fsync and CPU per request are the robust numbers.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

var (
	keys    = flag.Int("keys", 10_000_000, "keys for the BGSAVE and BGREWRITEAOF rows")
	rounds  = flag.Int("rounds", 3, "A B rounds of the SET rows")
	setN    = flag.Int("n", 100_000, "requests per SET run")
	soak    = flag.Duration("soak", 3*time.Minute, "length of the memory soak")
	only    = flag.String("only", "always,everysec,bgsave,rewrite,soak", "rows to run")
	bin     = flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	servers = flag.String("servers", "abacus,redis", "servers of the save and soak rows")
	// Before the "without a save" window each server waits until its CPU
	// over 500 ms is below settle-cpu of a core (at most settle-max).
	settleCPU = flag.Float64("settle-cpu", 0.03, "share of a core under which a server counts as idle after the load")
	settleMax = flag.Duration("settle-max", time.Minute, "longest wait for a server to go idle after the load")
	clients   = 50
)

func main() {
	flag.Parse()
	abacus, cleanup := harness.BuildAbacus(*bin)
	defer cleanup()
	harness.Header(fmt.Sprintf("durabench, load average %s", harness.LoadAvg()))
	want := map[string]bool{}
	for _, r := range strings.Split(*only, ",") {
		want[r] = true
	}
	for _, policy := range []string{"always", "everysec", "off"} {
		if want[policy] {
			setRows(abacus, policy)
		}
	}
	if want["bgsave"] || want["rewrite"] || want["rewrite-commands"] {
		fmt.Printf("\n#### GET at pipeline 1 (%d clients) during a background save of %d keys\n\n", clients, *keys)
		fmt.Println("| server | during | seconds | GET/s | p50 ms | p95 ms | p99 ms | max ms | GET/s without | p50 ms without | p99 ms without | max ms without | RSS before MiB | peak RSS MiB | settle s |")
		fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
		for _, what := range []string{"bgsave", "rewrite", "rewrite-commands"} {
			if want[what] {
				for _, name := range strings.Split(*servers, ",") {
					saveRow(pick(name, abacus), name, what)
				}
			}
		}
	}
	if want["soak"] {
		soakRow(abacus)
	}
	fmt.Printf("\nload average after: %s\n", harness.LoadAvg())
}

func pick(name, abacus string) string {
	if name == "redis" {
		return "redis-server"
	}
	return abacus
}

func tempDir() string {
	d, err := os.MkdirTemp("", "durabench-")
	if err != nil {
		harness.Fatal("%v", err)
	}
	return d
}

func infoInt(c *harness.Conn, field string) int64 {
	for _, l := range strings.Split(c.Do("INFO", "persistence"), "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}

// setRows runs SET at pipeline 1 and 16 under policy, the servers in turn.
func setRows(abacus, policy string) {
	type sample struct{ rps, cpu []float64 }
	res := map[string]map[int]*sample{}
	var fsyncs, cmds int64
	for r := 0; r < *rounds; r++ {
		for _, name := range []string{"abacus", "redis"} {
			dir := tempDir()
			args := []string{"--dir", dir, "--appendonly", "yes", "--appendfsync", policy}
			if policy == "off" {
				args = []string{"--dir", dir} // the same SETs without an AOF, for reference
			}
			s := harness.Start(name, pick(name, abacus), args...)
			ctl := s.Dial()
			f0, c0 := infoInt(ctl, "aof_fsync_count"), infoInt(ctl, "aof_fsync_commands")
			for _, p := range []int{1, 16} {
				n := *setN
				if p > 1 {
					n *= 4
				}
				t0 := s.CPUTicks()
				rps := s.Bench("set", p, n, clients, 100_000)
				cpu := float64(s.CPUTicks()-t0) * 1e4 / float64(n) // µs per request
				if res[name] == nil {
					res[name] = map[int]*sample{}
				}
				if res[name][p] == nil {
					res[name][p] = &sample{}
				}
				res[name][p].rps = append(res[name][p].rps, rps)
				res[name][p].cpu = append(res[name][p].cpu, cpu)
			}
			if name == "abacus" {
				fsyncs += infoInt(ctl, "aof_fsync_count") - f0
				cmds += infoInt(ctl, "aof_fsync_commands") - c0
			}
			ctl.Close()
			s.Stop()
			os.RemoveAll(dir)
		}
	}
	what := "appendfsync " + policy
	if policy == "off" {
		what = "appendonly no"
	}
	fmt.Printf("\n#### SET, %s, %d clients, 100,000 random keys (median of %d rounds)\n\n", what, clients, *rounds)
	fmt.Println("| pipeline | abacus req/s | redis req/s | ratio | abacus CPU µs/req | redis CPU µs/req | abacus runs | redis runs |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, p := range []int{1, 16} {
		a, b := res["abacus"][p], res["redis"][p]
		fmt.Printf("| %d | %.0f | %.0f | %.2fx | %.1f | %.1f | %s | %s |\n", p, harness.Median(a.rps), harness.Median(b.rps),
			harness.Median(a.rps)/harness.Median(b.rps), harness.Median(a.cpu), harness.Median(b.cpu), runs(a.rps), runs(b.rps))
	}
	if fsyncs > 0 {
		fmt.Printf("\nAbacus: %d fsyncs for %d write commands over the runs: %.1f commands per fsync.\n", fsyncs, cmds, float64(cmds)/float64(fsyncs))
	}
}

func runs(v []float64) string {
	var s []string
	for _, x := range v {
		s = append(s, strconv.FormatFloat(x/1000, 'f', 0, 64)+"k")
	}
	return strings.Join(s, " ")
}

// load sets keys key:0 .. key:n-1 to short values over pipelined
// connections.
func load(s *harness.Server, n int) {
	var wg sync.WaitGroup
	const conns = 4
	for c := 0; c < conns; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			conn := s.Dial()
			for i := c; i < n; i += conns {
				conn.Send("SET", "key:"+strconv.Itoa(i), "value:"+strconv.Itoa(i))
			}
			conn.Close()
		}(c)
	}
	wg.Wait()
}

// getLoad runs clients GET round trips at pipeline 1 until stop and
// returns the sorted latencies (ms).
func getLoad(port, n int, stop *atomic.Bool) []float64 {
	var mu sync.Mutex
	var all []float64
	var wg sync.WaitGroup
	for g := 0; g < clients; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err != nil {
				harness.Fatal("%v", err)
			}
			defer c.Close()
			r := bufio.NewReaderSize(c, 4096)
			rnd := rand.New(rand.NewPCG(uint64(g), 9))
			var lat []float64
			var cmd []byte
			for !stop.Load() {
				cmd = harness.Encode(cmd[:0], "GET", "key:"+strconv.Itoa(rnd.IntN(n)))
				t := time.Now()
				if _, err := c.Write(cmd); err != nil {
					harness.Fatal("GET: %v", err)
				}
				line, err := r.ReadSlice('\n')
				if err != nil {
					harness.Fatal("GET: %v", err)
				}
				if line[0] == '$' {
					if l, _ := strconv.Atoi(strings.TrimSpace(string(line[1:]))); l >= 0 {
						r.Discard(l + 2)
					}
				}
				lat = append(lat, float64(time.Since(t).Nanoseconds())/1e6)
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		}(g)
	}
	// Returns once every client saw stop.
	wg.Wait()
	sort.Float64s(all)
	return all
}

func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return v[min(len(v)-1, int(float64(len(v))*p))]
}

// saveRow loads the keys, measures GETs for 3 s without a save, then
// during a BGSAVE (what "bgsave") or a BGREWRITEAOF ("rewrite").
func saveRow(binPath, name, what string) {
	dir := tempDir()
	defer os.RemoveAll(dir)
	args := []string{"--dir", dir, "--rdbcompression", "no"}
	if what != "bgsave" {
		args = append(args, "--appendonly", "yes", "--appendfsync", "everysec")
	}
	if what == "rewrite-commands" {
		args = append(args, "--aof-use-rdb-preamble", "no")
	}
	s := harness.Start(name, binPath, args...)
	defer s.Stop()
	up := time.Now() // about the server's start: gctrace's @ times count from it
	load(s, *keys)
	ctl := s.Dial()
	defer ctl.Close()
	// Settle: a rewrite the load started, then whatever else the load
	// left running (Abacus's collector marks about 1 GB live after 10M
	// keys, for seconds): both servers wait until idle, the same way.
	for infoInt(ctl, "aof_rewrite_in_progress") == 1 || infoInt(ctl, "rdb_bgsave_in_progress") == 1 {
		time.Sleep(100 * time.Millisecond)
	}
	settled, idle := s.Settle(*settleCPU, 500*time.Millisecond, *settleMax)
	if !idle {
		fmt.Fprintf(os.Stderr, "%s %s: not idle after %v\n", name, what, settled)
	}
	var stop atomic.Bool
	go func() { time.Sleep(3 * time.Second); stop.Store(true) }()
	t0 := time.Now()
	base := getLoad(s.Port, *keys, &stop)
	baseSecs := time.Since(t0).Seconds()
	fmt.Fprintf(os.Stderr, "%s %s: settled in %.1f s; without a save @%.1f-%.1f s\n", name, what, settled.Seconds(),
		t0.Sub(up).Seconds(), time.Since(up).Seconds())

	rssBefore, peak := s.RSS(), s.RSS()
	stop.Store(false)
	var lat []float64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); lat = getLoad(s.Port, *keys, &stop) }()
	time.Sleep(300 * time.Millisecond)
	cmd, field := "BGSAVE", "rdb_bgsave_in_progress"
	if what != "bgsave" {
		cmd, field = "BGREWRITEAOF", "aof_rewrite_in_progress"
	}
	start := time.Now()
	if r := ctl.Do(cmd); !strings.Contains(r, "started") {
		harness.Fatal("%s %s: %s", name, cmd, r)
	}
	// The save's window: from the command until INFO shows it ended
	// (the GETs before the command are also counted, 300 ms of them).
	for {
		if rss := s.RSS(); rss > peak {
			peak = rss
		}
		if infoInt(ctl, field) != 1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	secs := time.Since(start).Seconds()
	stop.Store(true)
	fmt.Fprintf(os.Stderr, "%s %s: save @%.1f-%.1f s\n", name, what, start.Sub(up).Seconds(), time.Since(up).Seconds())
	wg.Wait()
	total := secs + 0.3
	fmt.Printf("| %s | %s | %.1f | %.0f | %.2f | %.2f | %.2f | %.1f | %.0f | %.2f | %.2f | %.1f | %d | %d | %.1f |\n", name, what, secs,
		float64(len(lat))/total, pct(lat, .5), pct(lat, .95), pct(lat, .99), pct(lat, 1), float64(len(base))/baseSecs, pct(base, .5), pct(base, .99), pct(base, 1),
		rssBefore>>20, peak>>20, settled.Seconds())
}

// soakRow runs the soak on each server in turn and reports the RSS after.
func soakRow(abacus string) {
	fmt.Printf("\n#### RSS after a %v soak: redis-benchmark -t set,get,incr,lpush,lpop,sadd,hset,zadd -r 1000000 -c 50 -P 16\n\n", *soak)
	fmt.Println("| server | requests | RSS after MiB | peak RSS MiB |")
	fmt.Println("| --- | --- | --- | --- |")
	for _, name := range strings.Split(*servers, ",") {
		s := harness.Start(name, pick(name, abacus))
		end := time.Now().Add(*soak)
		var reqs int64
		peak := int64(0)
		for time.Now().Before(end) {
			out, err := exec.Command("redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-c", "50", "-P", "16",
				"-r", "1000000", "-n", "200000", "-t", "set,get,incr,lpush,lpop,sadd,hset,zadd", "-q").Output()
			if err != nil {
				harness.Fatal("redis-benchmark: %v %s", err, out)
			}
			reqs += 8 * 200000
			peak = max(peak, s.RSS())
		}
		fmt.Printf("| %s | %d | %d | %d |\n", name, reqs, s.RSS()>>20, peak>>20)
		s.Stop()
	}
}
