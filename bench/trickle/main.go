// Command trickle measures what one client sending a huge command slowly
// costs everybody else: while it trickles an RPUSH of 1,000,000 small
// arguments, redis-benchmark runs GET at pipeline 1, and the latency the
// other clients see (p50, p99, max) is printed beside the quiet figures,
// for Abacus and redis-server in turn (A B A B ...), with the server CPU
// time the attack window cost.
//
//	go run ./bench/trickle                       # 1,000,000 arguments over 40 s
//	go run ./bench/trickle -args 300000 -over 20s -rounds 1
//
// Only loopback addresses are used.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

// latency is one redis-benchmark run's figures, in milliseconds.
type latency struct{ rps, p50, p99, max float64 }

// benchGet runs redis-benchmark GET at pipeline 1 and returns its figures.
func benchGet(s *harness.Server, n, clients int) latency {
	out, err := exec.Command("redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port),
		"-t", "get", "-P", "1", "-c", strconv.Itoa(clients), "-n", strconv.Itoa(n), "-r", "100000", "--csv").Output()
	if err != nil {
		harness.Fatal("redis-benchmark: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(strings.Trim(sc.Text(), `"`), `","`)
		if len(f) < 8 || f[0] != "GET" {
			continue
		}
		num := func(i int) float64 {
			v, _ := strconv.ParseFloat(f[i], 64)
			return v
		}
		return latency{rps: num(1), p50: num(4), p99: num(6), max: num(7)}
	}
	harness.Fatal("no GET result in %q", out)
	return latency{}
}

// trickle sends cmd to the server in small writes spread evenly over d
// and waits for its reply; done is closed at the end.
func trickle(s *harness.Server, cmd []byte, d time.Duration, done chan struct{}) {
	defer close(done)
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port))
	if err != nil {
		harness.Fatal("%v", err)
	}
	defer c.Close()
	const tick = 5 * time.Millisecond
	chunk := max(1, int(int64(len(cmd))*int64(tick)/int64(d)))
	t := time.NewTicker(tick)
	defer t.Stop()
	for len(cmd) > 0 {
		<-t.C
		n := min(chunk, len(cmd))
		if _, err := c.Write(cmd[:n]); err != nil {
			return
		}
		cmd = cmd[n:]
	}
	// Wait for the reply: the server has parsed and run it all.
	c.SetReadDeadline(time.Now().Add(time.Minute))
	bufio.NewReader(c).ReadString('\n')
}

// rpush encodes RPUSH key v0 v1 ... of n arguments.
func rpush(n int) []byte {
	var b []byte
	b = fmt.Appendf(b, "*%d\r\n$5\r\nRPUSH\r\n$7\r\ntrickle\r\n", n+2)
	for i := 0; i < n; i++ {
		v := strconv.Itoa(i)
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(v), v)
	}
	return b
}

func main() {
	nargs := flag.Int("args", 1000000, "arguments of the trickled RPUSH")
	over := flag.Duration("over", 40*time.Second, "how long the trickle takes")
	rounds := flag.Int("rounds", 1, "rounds (A B A B ...)")
	n := flag.Int("n", 200000, "GET requests per redis-benchmark run")
	clients := flag.Int("c", 50, "redis-benchmark clients")
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	flag.Parse()

	bin, cleanup := harness.BuildAbacus(*abacusBin)
	defer cleanup()
	servers := harness.StartBoth(bin)
	defer harness.StopAll(servers)
	cmd := rpush(*nargs)
	fmt.Printf("RPUSH of %d arguments (%d bytes) trickled over %v; redis-benchmark GET -P 1 -c %d -n %d\n\n",
		*nargs, len(cmd), *over, *clients, *n)
	fmt.Printf("%-7s %5s  %-26s  %-26s  %s\n", "server", "round", "quiet p50/p99/max ms", "attacked p50/p99/max ms", "server CPU s of the trickle alone")
	for r := 0; r < *rounds; r++ {
		for _, s := range servers {
			// The trickle alone: what parsing it costs the server.
			cpu0 := s.CPUTicks()
			done := make(chan struct{})
			go trickle(s, cmd, *over, done)
			<-done
			cpu := float64(s.CPUTicks()-cpu0) / 100
			del(s)

			quiet := benchGet(s, *n, *clients)
			// The GET runs repeat while the trickle goes on; the worst
			// figures are reported, as the attack's cost is in the tail.
			done = make(chan struct{})
			go trickle(s, cmd, *over, done)
			var hit latency
			for attacked := true; attacked; {
				l := benchGet(s, *n, *clients)
				hit.p50, hit.p99, hit.max = max(hit.p50, l.p50), max(hit.p99, l.p99), max(hit.max, l.max)
				select {
				case <-done:
					attacked = false
				default:
				}
			}
			fmt.Printf("%-7s %5d  %8.3f %8.3f %8.3f  %8.3f %8.3f %8.3f  %8.2f\n", s.Name, r+1,
				quiet.p50, quiet.p99, quiet.max, hit.p50, hit.p99, hit.max, cpu)
			del(s)
		}
	}
}

// del empties the trickled list for the next run.
func del(s *harness.Server) {
	c := s.Dial()
	c.Send("DEL", "trickle")
	c.Close()
}
