// Command sidebyside benchmarks Abacus and redis-server in one run: it starts
// both, runs redis-benchmark against each in turn (A B A B ...) for several
// rounds, and prints the median requests per second, the ratio
// Abacus/redis-server, and the server CPU time per request.
//
//	go run ./bench/sidebyside -tests set,get,incr,mset -rounds 3
//
// It also measures RSS after loading 1,000,000 "SET key:N <16-byte value>"
// into each server (-rss). Only loopback addresses are used.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

type server struct {
	name string
	cmd  *exec.Cmd
	port int
}

func main() {
	tests := flag.String("tests", "set,get,incr,mset", "redis-benchmark -t tests")
	pipes := flag.String("pipelines", "1,16", "pipeline depths")
	rounds := flag.Int("rounds", 3, "rounds (A B A B ...)")
	n := flag.Int("n", 200000, "requests per run")
	clients := flag.Int("c", 50, "parallel clients")
	rss := flag.Bool("rss", true, "measure RSS after 1,000,000 SETs")
	rssKeys := flag.Int("rss-keys", 1000000, "keys for the RSS measurement")
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	flag.Parse()

	bin := *abacusBin
	if bin == "" {
		dir, _ := os.MkdirTemp("", "abacus-bench-")
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "abacus")
		build := exec.Command("go", "build", "-o", bin, "./cmd/abacus")
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			fatal("build: %v", err)
		}
	}
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		fatal("redis-benchmark not found (apt-get install redis-tools)")
	}

	ab := start("abacus", bin)
	defer stop(ab)
	rd := start("redis", "redis-server")
	defer stop(rd)
	servers := []*server{ab, rd}

	type key struct {
		test, server string
		pipe         int
	}
	rps := map[key][]float64{}
	cpu := map[key][]float64{}
	testList := strings.Split(*tests, ",")
	var pipeList []int
	for _, p := range strings.Split(*pipes, ",") {
		v, _ := strconv.Atoi(p)
		pipeList = append(pipeList, v)
	}
	for r := 0; r < *rounds; r++ {
		for _, t := range testList {
			for _, p := range pipeList {
				for _, s := range servers {
					before := cpuTicks(s)
					v := runBench(s.port, t, p, *n, *clients)
					after := cpuTicks(s)
					k := key{t, s.name, p}
					rps[k] = append(rps[k], v)
					// Linux reports CPU time in clock ticks (USER_HZ, 100/s).
					cpu[k] = append(cpu[k], float64(after-before)*1e4/float64(*n))
					fmt.Fprintf(os.Stderr, "round %d %-5s P=%-2d %-6s %10.0f req/s\n", r+1, t, p, s.name, v)
				}
			}
		}
	}

	host, _ := os.Hostname()
	fmt.Printf("\nDate: %s; host %s; %d cores; %d clients, %d requests per run, %d rounds, medians.\n\n",
		time.Now().Format("2006-01-02"), host, numCPU(), *clients, *n, *rounds)
	fmt.Println("| test | pipeline | abacus req/s | redis req/s | ratio | abacus CPU µs/req | redis CPU µs/req |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, t := range testList {
		for _, p := range pipeList {
			a, b := median(rps[key{t, "abacus", p}]), median(rps[key{t, "redis", p}])
			ca, cb := median(cpu[key{t, "abacus", p}]), median(cpu[key{t, "redis", p}])
			fmt.Printf("| %s | %d | %.0f | %.0f | %.2fx | %.2f | %.2f |\n", strings.ToUpper(t), p, a, b, a/b, ca, cb)
		}
	}
	if *rss {
		fmt.Printf("\nRSS after %d x SET key:N <16-byte value>:\n\n", *rssKeys)
		fmt.Println("| server | RSS MiB | bytes/key |")
		fmt.Println("|---|---|---|")
		for _, s := range servers {
			send(s.port, "FLUSHALL")
			base := rssBytes(s)
			load(s.port, *rssKeys)
			time.Sleep(500 * time.Millisecond)
			v := rssBytes(s)
			fmt.Printf("| %s | %.1f | %.0f |\n", s.name, float64(v)/(1<<20), float64(v-base)/float64(*rssKeys))
		}
	}
}

func fatal(f string, a ...any) {
	fmt.Fprintf(os.Stderr, f+"\n", a...)
	os.Exit(1)
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatal("%v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func start(name, bin string) *server {
	port := freePort()
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning"}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		fatal("start %s: %v", name, err)
	}
	for i := 0; i < 250; i++ {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return &server{name: name, cmd: cmd, port: port}
		}
		time.Sleep(20 * time.Millisecond)
	}
	fatal("%s did not start", name)
	return nil
}

func stop(s *server) {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

func runBench(port int, test string, pipe, n, clients int) float64 {
	args := []string{"-h", "127.0.0.1", "-p", strconv.Itoa(port), "-c", strconv.Itoa(clients),
		"-n", strconv.Itoa(n), "-P", strconv.Itoa(pipe), "-t", test, "-r", "100000", "--csv"}
	out, err := exec.Command("redis-benchmark", args...).Output()
	if err != nil {
		fatal("redis-benchmark: %v", err)
	}
	// CSV: "test","rps",...; the test name for mset is "MSET (10 keys)".
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ",")
		if len(f) < 2 || strings.Contains(f[0], "test") {
			continue
		}
		v, err := strconv.ParseFloat(strings.Trim(f[1], `"`), 64)
		if err == nil {
			return v
		}
	}
	fatal("no result in %q", out)
	return 0
}

func cpuTicks(s *server) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which is in parentheses).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
}

func rssBytes(s *server) int64 {
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

func send(port int, args ...string) {
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		fatal("%v", err)
	}
	defer c.Close()
	c.Write(encode(args...))
	bufio.NewReader(c).ReadString('\n')
}

// load pipelines n SETs of 16-byte values in batches and waits for replies.
func load(port, n int) {
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		fatal("%v", err)
	}
	defer c.Close()
	r := bufio.NewReaderSize(c, 1<<16)
	const batch = 1000
	val := "vvvvvvvvvvvvvvvv"
	for i := 0; i < n; i += batch {
		var buf []byte
		m := 0
		for j := i; j < i+batch && j < n; j++ {
			buf = append(buf, encode("SET", "key:"+strconv.Itoa(j), val)...)
			m++
		}
		c.Write(buf)
		for ; m > 0; m-- {
			if _, err := r.ReadString('\n'); err != nil {
				fatal("load: %v", err)
			}
		}
	}
}

func encode(args ...string) []byte {
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"+a+"\r\n"...)
	}
	return b
}

func median(v []float64) float64 {
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

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}
