// Command dumpbench measures DUMP and RESTORE on Abacus and redis-server in
// one run: the same values on both, redis-benchmark for DUMP, a pipelined
// load of RESTORE ... REPLACE with each server's own payload, rounds A B A B,
// medians, the ratio and server CPU time per request.
//
//	go run ./bench/dumpbench
//	go run ./bench/dumpbench -rounds 5 -n 50000
//
// Only loopback addresses are used.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

type benchValue struct {
	name  string
	build func(c *harness.Conn) // fills key "src"
}

func values() []benchValue {
	rep := func(cmd string, n int, f func(i int) []string) func(c *harness.Conn) {
		return func(c *harness.Conn) {
			for i := 0; i < n; i++ {
				c.Send(append([]string{cmd, "src"}, f(i)...)...)
			}
		}
	}
	return []benchValue{
		{"string 1 KiB", func(c *harness.Conn) { c.Send("SET", "src", strings.Repeat("0123456789abcdef", 64)) }},
		{"hash 100 (listpack)", func(c *harness.Conn) {
			c.Do("CONFIG", "SET", "hash-max-listpack-entries", "128")
			rep("HSET", 100, func(i int) []string { return []string{"field:" + strconv.Itoa(i), "value:" + strconv.Itoa(i*7)} })(c)
		}},
		{"hash 1000", rep("HSET", 1000, func(i int) []string { return []string{"field:" + strconv.Itoa(i), "value:" + strconv.Itoa(i*7)} })},
		{"zset 100 (listpack)", rep("ZADD", 100, func(i int) []string {
			return []string{strconv.FormatFloat(float64(i)*1.5, 'g', -1, 64), "m:" + strconv.Itoa(i)}
		})},
		{"zset 1000", rep("ZADD", 1000, func(i int) []string {
			return []string{strconv.FormatFloat(float64(i)*1.5, 'g', -1, 64), "m:" + strconv.Itoa(i)}
		})},
		{"list 1000", rep("RPUSH", 1000, func(i int) []string { return []string{"element:" + strconv.Itoa(i)} })},
		{"set 500 (intset)", rep("SADD", 500, func(i int) []string { return []string{strconv.Itoa(i * 3)} })},
		{"set 1000", rep("SADD", 1000, func(i int) []string { return []string{"member:" + strconv.Itoa(i)} })},
	}
}

// conn is a minimal RESP client that reads whole replies.
type conn struct {
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

func dial(port int) *conn {
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		harness.Fatal("dial: %v", err)
	}
	return &conn{c: c, r: bufio.NewReaderSize(c, 1<<16), w: bufio.NewWriterSize(c, 1<<16)}
}

func (c *conn) send(args ...string) { c.w.Write(harness.Encode(nil, args...)) }

// reply reads one reply and returns a bulk string's bytes or the line.
func (c *conn) reply() string {
	line, err := c.r.ReadString('\n')
	if err != nil {
		harness.Fatal("read: %v", err)
	}
	if line[0] != '$' {
		return strings.TrimRight(line, "\r\n")
	}
	n, _ := strconv.Atoi(strings.TrimRight(line[1:], "\r\n"))
	if n < 0 {
		return ""
	}
	b := make([]byte, n+2)
	if _, err := readFull(c.r, b); err != nil {
		harness.Fatal("read: %v", err)
	}
	return string(b[:n])
}

func readFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := r.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// restoreLoad runs n RESTORE ... REPLACE of payload from clients
// connections, pipe at a time, over 100 keys per connection, and returns
// requests per second.
func restoreLoad(s *harness.Server, payload string, n, clients, pipe int) float64 {
	var wg sync.WaitGroup
	per := n / clients
	start := time.Now()
	for ci := 0; ci < clients; ci++ {
		wg.Add(1)
		go func(ci int) {
			defer wg.Done()
			c := dial(s.Port)
			defer c.c.Close()
			for done := 0; done < per; {
				k := min(pipe, per-done)
				for j := 0; j < k; j++ {
					c.send("RESTORE", "dst:"+strconv.Itoa(ci)+":"+strconv.Itoa((done+j)%100), "0", payload, "REPLACE")
				}
				c.w.Flush()
				for j := 0; j < k; j++ {
					if r := c.reply(); r != "+OK" {
						harness.Fatal("%s: RESTORE: %s", s.Name, r)
					}
				}
				done += k
			}
		}(ci)
	}
	wg.Wait()
	return float64(per*clients) / time.Since(start).Seconds()
}

func main() {
	rounds := flag.Int("rounds", 3, "rounds (A B A B ...)")
	n := flag.Int("n", 40000, "requests per run")
	clients := flag.Int("c", 50, "parallel clients")
	pipes := flag.String("pipelines", "1,16", "pipeline depths")
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	flag.Parse()
	pipeList := harness.Pipelines(*pipes)
	bin, cleanup := harness.BuildAbacus(*abacusBin)
	defer cleanup()
	servers := harness.StartBoth(bin)
	defer harness.StopAll(servers)

	type key struct {
		value, op, server string
		pipe              int
	}
	rps := map[key][]float64{}
	cpu := map[key][]float64{}
	sizes := map[string][2]int{}
	for r := 0; r < *rounds; r++ {
		for _, v := range values() {
			for si, s := range servers {
				hc := s.Dial()
				hc.Do("FLUSHALL")
				v.build(hc)
				hc.Close()
				c := dial(s.Port)
				c.send("DUMP", "src")
				c.w.Flush()
				payload := c.reply()
				c.c.Close()
				sz := sizes[v.name]
				sz[si] = len(payload)
				sizes[v.name] = sz
				for _, p := range pipeList {
					before := s.CPUTicks()
					x := s.Bench("", p, *n, *clients, 1, "DUMP", "src")
					k := key{v.name, "DUMP", s.Name, p}
					rps[k] = append(rps[k], x)
					cpu[k] = append(cpu[k], float64(s.CPUTicks()-before)*1e4/float64(*n))
					before = s.CPUTicks()
					x = restoreLoad(s, payload, *n, *clients, p)
					k = key{v.name, "RESTORE", s.Name, p}
					rps[k] = append(rps[k], x)
					cpu[k] = append(cpu[k], float64(s.CPUTicks()-before)*1e4/float64(*n))
					fmt.Fprintf(os.Stderr, "round %d %-20s P=%-2d %-6s done\n", r+1, v.name, p, s.Name)
				}
			}
		}
	}
	harness.Header(fmt.Sprintf("%d clients, %d requests per run, %d rounds (A B A B), medians; RESTORE ... REPLACE of each server's own payload.", *clients, *n, *rounds))
	fmt.Println("| value | payload bytes abacus / redis | command | pipeline | abacus req/s | redis req/s | ratio | abacus CPU µs/req | redis CPU µs/req |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, v := range values() {
		for _, op := range []string{"DUMP", "RESTORE"} {
			for _, p := range pipeList {
				a, b := harness.Median(rps[key{v.name, op, "abacus", p}]), harness.Median(rps[key{v.name, op, "redis", p}])
				ca, cb := harness.Median(cpu[key{v.name, op, "abacus", p}]), harness.Median(cpu[key{v.name, op, "redis", p}])
				fmt.Printf("| %s | %d / %d | %s | %d | %.0f | %.0f | %.2fx | %.2f | %.2f |\n", v.name, sizes[v.name][0], sizes[v.name][1], op, p, a, b, a/b, ca, cb)
			}
		}
	}
}
