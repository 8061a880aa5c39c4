package harness

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Clients that hurt the others, shared by bench/trickle, bench/obufattack
// and bench/hostile, and the latency the others see meanwhile.

// Latency is one redis-benchmark run's figures: requests/s and p50, p99
// and max in milliseconds.
type Latency struct{ RPS, P50, P99, Max float64 }

// GetLatency runs redis-benchmark GET at pipeline 1 with clients
// connections and n requests, and returns its figures.
func (s *Server) GetLatency(n, clients int) Latency {
	l, _ := s.GetLatencyWithin(n, clients, 0)
	return l
}

// GetLatencyWithin is GetLatency stopped after limit (none when 0): a
// run that did not end in time reports false, and limit as its p50, p99
// and max, lower bounds of what it would have measured.
func (s *Server) GetLatencyWithin(n, clients int, limit time.Duration) (Latency, bool) {
	ctx := context.Background()
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	out, err := exec.CommandContext(ctx, "redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port),
		"-t", "get", "-P", "1", "-c", strconv.Itoa(clients), "-n", strconv.Itoa(n), "-r", "100000", "--csv").Output()
	if ctx.Err() != nil {
		ms := float64(limit.Milliseconds())
		return Latency{P50: ms, P99: ms, Max: ms}, false
	}
	if err != nil {
		Fatal("redis-benchmark: %v", err)
	}
	// "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(strings.ReplaceAll(line, `"`, ""), ",")
		if len(f) == 8 && f[0] == "GET" {
			num := func(i int) float64 {
				v, _ := strconv.ParseFloat(f[i], 64)
				return v
			}
			return Latency{RPS: num(1), P50: num(4), P99: num(6), Max: num(7)}, true
		}
	}
	Fatal("no GET result in %q", out)
	return Latency{}, false
}

// RPush encodes RPUSH key 0 1 2 ... of n arguments after the key.
func RPush(key string, n int) []byte {
	var b []byte
	b = fmt.Appendf(b, "*%d\r\n$5\r\nRPUSH\r\n$%d\r\n%s\r\n", n+2, len(key), key)
	for i := 0; i < n; i++ {
		v := strconv.Itoa(i)
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(v), v)
	}
	return b
}

// Trickle sends cmd to the server in small writes spread evenly over d
// and waits for its reply; done is closed at the end.
func (s *Server) Trickle(cmd []byte, d time.Duration, done chan struct{}) {
	defer close(done)
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port))
	if err != nil {
		Fatal("%v", err)
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

// LoadBigList makes the list key whose LRANGE 0 -1 reply is about 1 MB
// (10,000 elements of 100 bytes).
func (s *Server) LoadBigList(key string) {
	c := s.Dial()
	args := []string{"RPUSH", key}
	elem := strings.Repeat("x", 100)
	for i := 0; i < 10000; i++ {
		args = append(args, elem)
	}
	c.Send(args...)
	c.Close()
}

// BigKinds are the kinds of value LoadBig makes, each read whole by its
// command in BigRead: about 1 MB of reply.
var BigKinds = []string{"list", "zset", "hash", "set", "stream"}

// LoadBig makes key a value of kind (BigKinds) of about 1 MB: 10,000
// elements of 100 bytes (a hash: 5,000 fields of 6 bytes and values of
// 100; a stream: 10,000 entries of one field).
func (s *Server) LoadBig(kind, key string) {
	if kind == "list" {
		s.LoadBigList(key)
		return
	}
	c := s.Dial()
	defer c.Close()
	elem := func(i int) string { return fmt.Sprintf("%06d%s", i, strings.Repeat("x", 94)) }
	for i := 0; i < 10000; i++ {
		switch kind {
		case "zset":
			c.Send("ZADD", key, strconv.Itoa(i), elem(i))
		case "hash":
			if i < 5000 {
				c.Send("HSET", key, fmt.Sprintf("f%05d", i), elem(i))
			}
		case "set":
			c.Send("SADD", key, elem(i))
		case "stream":
			c.Send("XADD", key, "*", "f", elem(i))
		default:
			Fatal("no kind %q", kind)
		}
	}
}

// BigRead is the command that reads a LoadBig value of kind whole.
func BigRead(kind, key string) []string {
	return map[string][]string{
		"list":   {"LRANGE", key, "0", "-1"},
		"zset":   {"ZRANGE", key, "0", "-1"},
		"hash":   {"HGETALL", key},
		"set":    {"SMEMBERS", key},
		"stream": {"XRANGE", key, "-", "+"},
	}[kind]
}

// UnreadAttack connects and pipelines LRANGE key 0 -1 without reading,
// 64 at a time, until the server closes the connection (or stops reading
// it for a second); then again, until stop. cycles counts connections.
func (s *Server) UnreadAttack(key string, stop chan struct{}, cycles *atomic.Int64) {
	s.UnreadAttackWith(BigRead("list", key), stop, cycles)
}

// UnreadAttackWith is UnreadAttack pipelining the command args.
func (s *Server) UnreadAttackWith(args []string, stop chan struct{}, cycles *atomic.Int64) {
	req := bytes.Repeat(Encode(nil, args...), 64)
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

// CPUNanos is the process's CPU time in nanoseconds, summed over its
// threads (/proc/PID/task/*/schedstat): finer than CPUTicks' 10 ms.
func (s *Server) CPUNanos() int64 {
	dirs, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", s.cmd.Process.Pid))
	var sum int64
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			v, _ := strconv.ParseInt(f[0], 10, 64)
			sum += v
		}
	}
	return sum
}

// UnreadAttackers runs n UnreadAttack loops on key until the returned stop
// is called; stop waits for them and returns how many connections they
// made.
func (s *Server) UnreadAttackers(n int, key string) (stop func() int64) {
	return s.UnreadAttackersWith(n, BigRead("list", key))
}

// UnreadAttackersWith is UnreadAttackers pipelining the command args.
func (s *Server) UnreadAttackersWith(n int, args []string) (stop func() int64) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var cycles atomic.Int64
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.UnreadAttackWith(args, done, &cycles)
		}()
	}
	return func() int64 {
		close(done)
		wg.Wait()
		return cycles.Load()
	}
}

// Settle waits until the server is idle: its CPU over the last window
// (sampled every window/5) below frac of one core, or limit passed. It
// returns how long it waited and whether the server went idle. Applied
// the same way to both servers, it lets the work a load left behind (a
// collection's mark, a rewrite) finish before a measurement starts.
func (s *Server) Settle(frac float64, window, limit time.Duration) (time.Duration, bool) {
	const steps = 5
	step := window / steps
	start := time.Now()
	var ring [steps + 1]int64
	ring[0] = s.CPUNanos()
	for i := 1; ; i++ {
		time.Sleep(step)
		ring[i%(steps+1)] = s.CPUNanos()
		if i >= steps {
			used := ring[i%(steps+1)] - ring[(i-steps)%(steps+1)]
			if float64(used) < frac*float64(window.Nanoseconds()) {
				return time.Since(start), true
			}
		}
		if time.Since(start) >= limit {
			return time.Since(start), false
		}
	}
}

// machineBusy is the machine's busy and total jiffies so far, summed
// over its cores (/proc/stat's "cpu" line; idle and iowait count as
// idle).
func machineBusy() (busy, total int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	for i, s := range f[1:] {
		v, _ := strconv.ParseInt(s, 10, 64)
		if i >= 8 { // guest and guest_nice are already in user and nice
			break
		}
		total += v
		if i != 3 && i != 4 {
			busy += v
		}
	}
	return busy, total
}

// WaitIdle waits until the machine and the servers are idle: over the
// last window (sampled every window/5), the cores busy below machineFrac
// of their time, and each server's process below serverFrac of one core;
// or limit passed. It returns how long it waited and whether both held.
// Called before every measured window of every server alike, it keeps
// the teardown of the previous window (a server freeing its closed
// clients' buffers, the kernel closing their sockets, a collection)
// out of the next one, whichever server comes next.
func WaitIdle(servers []*Server, machineFrac, serverFrac float64, window, limit time.Duration) (time.Duration, bool) {
	const steps = 5
	type sample struct {
		busy, total int64
		cpu         []int64
	}
	take := func() sample {
		var s sample
		s.busy, s.total = machineBusy()
		for _, srv := range servers {
			s.cpu = append(s.cpu, srv.CPUNanos())
		}
		return s
	}
	start := time.Now()
	var ring [steps + 1]sample
	ring[0] = take()
	for i := 1; ; i++ {
		time.Sleep(window / steps)
		ring[i%(steps+1)] = take()
		if i >= steps {
			now, then := ring[i%(steps+1)], ring[(i-steps)%(steps+1)]
			idle := now.total > then.total && float64(now.busy-then.busy) < machineFrac*float64(now.total-then.total)
			for k := range now.cpu {
				if float64(now.cpu[k]-then.cpu[k]) >= serverFrac*float64(window.Nanoseconds()) {
					idle = false
				}
			}
			if idle {
				return time.Since(start), true
			}
		}
		if time.Since(start) >= limit {
			return time.Since(start), false
		}
	}
}
