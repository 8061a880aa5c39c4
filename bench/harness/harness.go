// Package harness runs Abacus and redis-server side by side for the
// benchmark programs in bench/: it builds and starts both servers on free
// loopback ports, runs redis-benchmark against each in turn, loads data over
// pipelined connections, and reads each process's CPU time and RSS.
package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Server is a running server process.
type Server struct {
	Name string
	Port int
	cmd  *exec.Cmd
}

// Fatal prints and exits.
func Fatal(f string, a ...any) {
	fmt.Fprintf(os.Stderr, f+"\n", a...)
	os.Exit(1)
}

// BuildAbacus builds ./cmd/abacus into a temporary directory (or returns
// bin when set) and a cleanup function.
func BuildAbacus(bin string) (string, func()) {
	if bin != "" {
		return bin, func() {}
	}
	dir, err := os.MkdirTemp("", "abacus-bench-")
	if err != nil {
		Fatal("%v", err)
	}
	bin = filepath.Join(dir, "abacus")
	build := exec.Command("go", "build", "-o", bin, "./cmd/abacus")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		Fatal("build: %v", err)
	}
	return bin, func() { os.RemoveAll(dir) }
}

// StartBoth starts Abacus (binary bin) and redis-server with the same
// extra arguments; Abacus first.
func StartBoth(bin string, extra ...string) []*Server {
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		Fatal("redis-benchmark not found (apt-get install redis-tools)")
	}
	return []*Server{Start("abacus", bin, extra...), Start("redis", "redis-server", extra...)}
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		Fatal("%v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start starts one server on a free port with persistence off.
func Start(name, bin string, extra ...string) *Server {
	port := freePort()
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		Fatal("start %s: %v", name, err)
	}
	for i := 0; i < 250; i++ {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return &Server{Name: name, cmd: cmd, Port: port}
		}
		time.Sleep(20 * time.Millisecond)
	}
	Fatal("%s did not start", name)
	return nil
}

// Stop kills the server.
func (s *Server) Stop() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// Bench runs redis-benchmark against the server and returns requests/s.
// With args, it benchmarks that command (redis-benchmark's __rand_int__
// placeholders apply); otherwise test names a built-in test (-t).
func (s *Server) Bench(test string, pipe, n, clients, keyspace int, args ...string) float64 {
	a := []string{"-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-c", strconv.Itoa(clients),
		"-n", strconv.Itoa(n), "-P", strconv.Itoa(pipe), "-r", strconv.Itoa(keyspace), "--csv"}
	if len(args) == 0 {
		a = append(a, "-t", test)
	} else {
		a = append(a, args...)
	}
	out, err := exec.Command("redis-benchmark", a...).Output()
	if err != nil {
		Fatal("redis-benchmark: %v", err)
	}
	// Some built-in tests print a preparation line first (lrange_100 prints
	// "LPUSH (needed to benchmark LRANGE)"): take the last result line.
	v, found := 0.0, false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\",\"")
		if len(f) < 2 || strings.Contains(f[0], "\"test") {
			continue
		}
		if x, err := strconv.ParseFloat(strings.Trim(f[1], `"`), 64); err == nil {
			v, found = x, true
		}
	}
	if !found {
		Fatal("no result in %q", out)
	}
	return v
}

// CPUTicks is the process's user+system CPU time in clock ticks (1/100 s).
func (s *Server) CPUTicks() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
}

// RSS is the process's resident set size in bytes.
func (s *Server) RSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// Conn is a pipelining connection for loading data.
type Conn struct {
	c       net.Conn
	r       *bufio.Reader
	buf     []byte
	pending int
}

// Dial connects to the server.
func (s *Server) Dial() *Conn {
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port))
	if err != nil {
		Fatal("%v", err)
	}
	return &Conn{c: c, r: bufio.NewReaderSize(c, 1<<16)}
}

// Close closes the connection after reading pending replies.
func (c *Conn) Close() {
	c.Flush()
	c.c.Close()
}

// Send queues a command; every 1000 commands it flushes and reads replies.
func (c *Conn) Send(args ...string) {
	c.buf = Encode(c.buf, args...)
	c.pending++
	if c.pending >= 1000 {
		c.Flush()
	}
}

// Flush writes queued commands and reads (and discards) their replies.
func (c *Conn) Flush() {
	if c.pending == 0 {
		return
	}
	if _, err := c.c.Write(c.buf); err != nil {
		Fatal("write: %v", err)
	}
	for ; c.pending > 0; c.pending-- {
		if err := skipReply(c.r); err != nil {
			Fatal("read: %v", err)
		}
	}
	c.buf = c.buf[:0]
}

// Do sends one command and returns its first reply line.
func (c *Conn) Do(args ...string) string {
	c.Flush()
	c.c.Write(Encode(nil, args...))
	line, err := c.r.ReadString('\n')
	if err != nil {
		Fatal("read: %v", err)
	}
	if line[0] == '$' || line[0] == '*' {
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		if line[0] == '$' && n >= 0 {
			b := make([]byte, n+2)
			if _, err := readFull(c.r, b); err != nil {
				Fatal("read: %v", err)
			}
			return string(b[:n])
		}
		for i := 0; i < n; i++ {
			skipReply(c.r)
		}
	}
	return strings.TrimSpace(line)
}

func skipReply(r *bufio.Reader) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	switch line[0] {
	case '-':
		// A load that the server refused in part must not be measured.
		return fmt.Errorf("error reply %q", strings.TrimSpace(line))
	case '$':
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		if n >= 0 {
			_, err = r.Discard(n + 2)
		}
		return err
	case '*':
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		for i := 0; i < n; i++ {
			if err := skipReply(r); err != nil {
				return err
			}
		}
	}
	return nil
}

func readFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Encode appends a RESP command.
func Encode(b []byte, args ...string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// Median of v.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Header prints the date/machine line every result table starts with.
func Header(note string) {
	host, _ := os.Hostname()
	b, _ := os.ReadFile("/proc/cpuinfo")
	cores := strings.Count(string(b), "processor\t:")
	model := ""
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "model name") {
			model = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
			break
		}
	}
	fmt.Printf("\nDate: %s; host %s; %d cores (%s). %s\n\n", time.Now().Format("2006-01-02"), host, cores, model, note)
}

// Pipelines parses a -pipelines flag ("1,16") into depths; a bad entry
// stops the program.
func Pipelines(list string) []int {
	var out []int
	for _, p := range strings.Split(list, ",") {
		v, err := strconv.Atoi(p)
		if err != nil || v < 1 {
			Fatal("bad pipeline %q", p)
		}
		out = append(out, v)
	}
	return out
}

// StopAll stops every server of a run.
func StopAll(servers []*Server) {
	for _, s := range servers {
		s.Stop()
	}
}

// LoadAvg is the machine's load average (1, 5, 15 minutes), printed
// beside results measured on a shared machine.
func LoadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// Select keeps the items whose names match the regular expression expr
// (all of them when expr is empty); flagName names the flag in the error.
func Select[T any](items []T, name func(T) string, expr, flagName string) []T {
	if expr == "" {
		return items
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		Fatal("%s: %v", flagName, err)
	}
	kept := items[:0]
	for _, it := range items {
		if re.MatchString(name(it)) {
			kept = append(kept, it)
		}
	}
	return kept
}
