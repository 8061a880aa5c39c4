// Command obufattack measures what clients that ask for large replies and
// never read them cost everyone else: redis-benchmark's GET latency (p50,
// p99, max, pipeline 1) quiet and while eight clients each pipeline
// LRANGE of a 1 MB list without reading (reconnecting when closed), with
// the server's peak RSS, on Abacus and redis-server in turn (A B A B ...).
//
//	go run ./bench/obufattack                          # limit normal 64mb 16mb 10
//	go run ./bench/obufattack -limit "normal 0 0 0" -servers abacus
//
// Without a limit redis-server would keep every reply (8 GB here): run it
// only with one. Only loopback addresses are used.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

func main() {
	bin := flag.String("bin", "", "abacus binary (default: build ./cmd/abacus)")
	limit := flag.String("limit", "normal 64mb 16mb 10", "client-output-buffer-limit")
	servers := flag.String("servers", "abacus,redis", "which servers")
	rounds := flag.Int("rounds", 3, "rounds per server")
	n := flag.Int("n", 100000, "GET requests per run")
	attackers := flag.Int("attackers", 8, "clients pipelining without reading")
	flag.Parse()

	b, cleanup := harness.BuildAbacus(*bin)
	defer cleanup()
	var list []*harness.Server
	for _, name := range strings.Split(*servers, ",") {
		prog := b
		if name == "redis" {
			prog = "redis-server"
		}
		s := harness.Start(name, prog, "--client-output-buffer-limit", *limit)
		defer s.Stop()
		load(s)
		list = append(list, s)
	}
	harness.Header(fmt.Sprintf("GET -P 1 -c 50 -n %d; %d attackers pipelining LRANGE of 1 MB, unread; client-output-buffer-limit %q.", *n, *attackers, *limit))
	type row struct{ quiet, attacked [][3]float64 }
	rows := map[string]*row{}
	var peak = map[string]int64{}
	for r := 0; r < *rounds; r++ {
		for _, s := range list {
			rw := rows[s.Name]
			if rw == nil {
				rw = &row{}
				rows[s.Name] = rw
			}
			rw.quiet = append(rw.quiet, latency(s, *n))
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var cycles atomic.Int64
			for i := 0; i < *attackers; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					attack(s, stop, &cycles)
				}()
			}
			var maxRSS atomic.Int64
			done := make(chan struct{})
			go func() {
				for {
					select {
					case <-done:
						return
					case <-time.After(20 * time.Millisecond):
						if v := s.RSS(); v > maxRSS.Load() {
							maxRSS.Store(v)
						}
					}
				}
			}()
			time.Sleep(500 * time.Millisecond) // the attack under way
			rw.attacked = append(rw.attacked, latency(s, *n))
			close(stop)
			wg.Wait()
			close(done)
			peak[s.Name] = max(peak[s.Name], maxRSS.Load())
			time.Sleep(2 * time.Second)
			fmt.Printf("round %d %-7s attack connections %d, peak RSS %d MB, RSS 2 s after %d MB\n", r+1, s.Name, cycles.Load(), maxRSS.Load()>>20, s.RSS()>>20)
		}
	}
	fmt.Printf("\n| server | quiet p50 / p99 / max (ms) | attacked p50 / p99 / max (ms) | peak RSS |\n|---|---|---|---|\n")
	for _, s := range list {
		rw := rows[s.Name]
		fmt.Printf("| %s | %s | %s | %d MB |\n", s.Name, med(rw.quiet), med(rw.attacked), peak[s.Name]>>20)
	}
}

// load makes the list whose LRANGE 0 -1 reply is about 1 MB.
func load(s *harness.Server) {
	c := s.Dial()
	args := []string{"RPUSH", "big"}
	elem := strings.Repeat("x", 100)
	for i := 0; i < 10000; i++ {
		args = append(args, elem)
	}
	c.Send(args...)
	c.Close()
}

// attack connects and pipelines LRANGE big 0 -1 without reading, 64 at
// a time, until the server closes the connection (or, without a limit,
// stops reading it for a second); then again, until stop.
func attack(s *harness.Server, stop chan struct{}, cycles *atomic.Int64) {
	req := bytes.Repeat(harness.Encode(nil, "LRANGE", "big", "0", "-1"), 64)
	for {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.Port))
		if err != nil {
			return
		}
		cycles.Add(1)
		for {
			select {
			case <-stop:
				c.Close()
				return
			default:
			}
			c.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := c.Write(req); err != nil {
				break
			}
		}
		c.Close()
	}
}

// latency runs redis-benchmark GET at pipeline 1 and returns p50, p99
// and max in ms.
func latency(s *harness.Server, n int) [3]float64 {
	out, err := exec.Command("redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port),
		"-c", "50", "-n", strconv.Itoa(n), "-P", "1", "-t", "get", "--csv").Output()
	if err != nil {
		harness.Fatal("redis-benchmark: %v", err)
	}
	// "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(strings.ReplaceAll(line, `"`, ""), ",")
		if len(f) == 8 && f[0] == "GET" {
			var v [3]float64
			for i, j := range []int{4, 6, 7} {
				v[i], _ = strconv.ParseFloat(f[j], 64)
			}
			return v
		}
	}
	harness.Fatal("no GET result in %q", out)
	return [3]float64{}
}

// med formats the medians of the runs' p50, p99 and max.
func med(runs [][3]float64) string {
	var v [3][]float64
	for _, r := range runs {
		for i := range r {
			v[i] = append(v[i], r[i])
		}
	}
	return fmt.Sprintf("%.3f / %.3f / %.3f", harness.Median(v[0]), harness.Median(v[1]), harness.Median(v[2]))
}
