// Command streambench benchmarks the stream commands on Abacus and
// redis-server side by side (A B A B ... rounds, medians, ratio, server CPU
// per request): XADD with and without MAXLEN ~, XRANGE of 100 entries,
// XREADGROUP + XACK with 10 consumers, at each pipeline depth; then the
// memory (RSS) of a 1,000,000-entry stream with 3 small fields.
//
//	go run ./bench/streambench
//	go run ./bench/streambench -rounds 5 -pipelines 1,16 -mem-entries 1000000
//	go run ./bench/streambench -cases XRANGE -mem-entries 0
//
// Only loopback addresses are used.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

type benchCase struct {
	name    string
	args    []string
	prepare func(*harness.Server, int)
	load    func(s *harness.Server, pipe, n int) float64
}

const rangeEntries = 100000

// loadRange fills bench:r with entries i-0 for i in 1..100,000, once; the
// XRANGE case starts at a random id (redis-benchmark's zero-padded
// __rand_int__ parses as an id's milliseconds).
func loadRange(s *harness.Server, _ int) {
	c := s.Dial()
	defer c.Close()
	if c.Do("XLEN", "bench:r") == ":"+strconv.Itoa(rangeEntries) {
		return
	}
	c.Do("DEL", "bench:r")
	for i := 1; i <= rangeEntries; i++ {
		c.Send("XADD", "bench:r", strconv.Itoa(i)+"-0", "f1", strconv.Itoa(i), "f2", "ok", "f3", strconv.Itoa(i%97))
	}
}

const consumers = 10

// groupLoad runs XREADGROUP COUNT 1 and XACK from 10 consumers over a
// stream filled with n/2 entries: each client sends pipe reads, then
// acknowledges what they returned with pipe XACKs. It returns requests/s
// (reads and acks).
func groupLoad(s *harness.Server, pipe, n int) float64 {
	c := s.Dial()
	c.Do("DEL", "bench:g")
	c.Do("XGROUP", "CREATE", "bench:g", "g", "0", "MKSTREAM")
	entries := n/2 + consumers*pipe
	for i := 1; i <= entries; i++ {
		c.Send("XADD", "bench:g", strconv.Itoa(i)+"-0", "f1", strconv.Itoa(i), "f2", "ok", "f3", "x")
	}
	c.Close()
	var wg sync.WaitGroup
	per := n / 2 / consumers
	start := time.Now()
	for w := 0; w < consumers; w++ {
		wg.Add(1)
		go func(name string) {
			defer wg.Done()
			if err := groupClient(s.Port, name, pipe, per); err != nil {
				harness.Fatal("%v", err)
			}
		}("c" + strconv.Itoa(w))
	}
	wg.Wait()
	return float64(2*per*consumers) / time.Since(start).Seconds()
}

func groupClient(port int, name string, pipe, reads int) error {
	nc, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return err
	}
	defer nc.Close()
	r := bufio.NewReaderSize(nc, 1<<16)
	var buf []byte
	ids := make([]string, 0, pipe)
	for done := 0; done < reads; {
		k := min(pipe, reads-done)
		buf = buf[:0]
		for i := 0; i < k; i++ {
			buf = harness.Encode(buf, "XREADGROUP", "GROUP", "g", name, "COUNT", "1", "STREAMS", "bench:g", ">")
		}
		if _, err := nc.Write(buf); err != nil {
			return err
		}
		ids = ids[:0]
		for i := 0; i < k; i++ {
			v, err := readValue(r)
			if err != nil {
				return err
			}
			// [[key, [[id, fields]]]]
			if top, ok := v.([]any); ok && len(top) == 1 {
				entries := top[0].([]any)[1].([]any)
				for _, e := range entries {
					ids = append(ids, e.([]any)[0].(string))
				}
			}
		}
		buf = buf[:0]
		for _, id := range ids {
			buf = harness.Encode(buf, "XACK", "bench:g", "g", id)
		}
		if _, err := nc.Write(buf); err != nil {
			return err
		}
		for range ids {
			if _, err := readValue(r); err != nil {
				return err
			}
		}
		done += k
	}
	return nil
}

// readValue reads one RESP2 reply: strings, integers as strings, arrays
// as []any, nil for nulls.
func readValue(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = line[:len(line)-2]
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return nil, fmt.Errorf("server error: %s", line[1:])
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return nil, nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		return string(b[:n]), nil
	case '*':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return nil, nil
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = readValue(r); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("bad reply %q", line)
}

func main() {
	pipes := flag.String("pipelines", "1,16", "pipeline depths")
	rounds := flag.Int("rounds", 3, "rounds (A B A B ...)")
	n := flag.Int("n", 200000, "requests per run")
	clients := flag.Int("c", 50, "parallel clients (redis-benchmark cases)")
	memEntries := flag.Int("mem-entries", 1000000, "entries for the memory measurement (0: skip)")
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	only := flag.String("cases", "", "only the cases whose names match this regular expression")
	flag.Parse()

	cases := []benchCase{
		{name: "XADD", args: []string{"XADD", "bench:a", "*", "f1", "__rand_int__", "f2", "ok", "f3", "x"}},
		{name: "XADD MAXLEN ~ 10000", args: []string{"XADD", "bench:m", "MAXLEN", "~", "10000", "*", "f1", "__rand_int__", "f2", "ok", "f3", "x"}},
		{name: "XRANGE 100", args: []string{"XRANGE", "bench:r", "__rand_int__", "+", "COUNT", "100"}, prepare: loadRange},
		{name: "XREADGROUP+XACK 10 consumers", load: groupLoad},
	}
	cases = harness.Select(cases, func(bc benchCase) string { return bc.name }, *only, "-cases")
	pipeList := harness.Pipelines(*pipes)
	bin, cleanup := harness.BuildAbacus(*abacusBin)
	defer cleanup()
	servers := harness.StartBoth(bin)
	defer harness.StopAll(servers)
	defer measureMemory(bin, *memEntries)

	type key struct {
		c, server string
		pipe      int
	}
	rps := map[key][]float64{}
	cpu := map[key][]float64{}
	for r := 0; r < *rounds; r++ {
		for _, bc := range cases {
			for _, p := range pipeList {
				for _, s := range servers {
					if bc.prepare != nil {
						bc.prepare(s, *n)
					}
					before := s.CPUTicks()
					var v float64
					if bc.load != nil {
						v = bc.load(s, p, *n)
					} else {
						v = s.Bench("", p, *n, *clients, rangeEntries, bc.args...)
					}
					after := s.CPUTicks()
					k := key{bc.name, s.Name, p}
					rps[k] = append(rps[k], v)
					cpu[k] = append(cpu[k], float64(after-before)*1e4/float64(*n))
					fmt.Fprintf(os.Stderr, "round %d %-30s P=%-2d %-6s %10.0f req/s\n", r+1, bc.name, p, s.Name, v)
				}
			}
		}
	}
	harness.Header(fmt.Sprintf("%d clients for redis-benchmark cases (10 consumers for XREADGROUP), %d requests per run, %d rounds (A B A B), medians. The group case's CPU includes filling its stream.", *clients, *n, *rounds))
	fmt.Println("| command | pipeline | abacus req/s | redis req/s | ratio | abacus CPU µs/req | redis CPU µs/req |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, bc := range cases {
		for _, p := range pipeList {
			a, b := harness.Median(rps[key{bc.name, "abacus", p}]), harness.Median(rps[key{bc.name, "redis", p}])
			ca, cb := harness.Median(cpu[key{bc.name, "abacus", p}]), harness.Median(cpu[key{bc.name, "redis", p}])
			fmt.Printf("| %s | %d | %.0f | %.0f | %.2fx | %.2f | %.2f |\n", bc.name, p, a, b, a/b, ca, cb)
		}
	}
}

// measureMemory prints the RSS growth of a stream of entries entries on
// fresh servers.
func measureMemory(bin string, entries int) {
	memEntries := &entries
	if *memEntries > 0 {
		fmt.Printf("\nRSS of one stream of %d entries (XADD i-0 f1 <i> f2 ok f3 <i%%97>):\n\n", *memEntries)
		fmt.Println("| server | RSS MiB | bytes/entry |")
		fmt.Println("|---|---|---|")
		// Fresh servers: what earlier cases left on the heap would count.
		fresh := harness.StartBoth(bin)
		for _, s := range fresh {
			c := s.Dial()
			time.Sleep(time.Second)
			base := s.RSS()
			for i := 1; i <= *memEntries; i++ {
				c.Send("XADD", "bench:mem", strconv.Itoa(i)+"-0", "f1", strconv.Itoa(i), "f2", "ok", "f3", strconv.Itoa(i%97))
			}
			c.Close()
			time.Sleep(time.Second)
			v := s.RSS()
			fmt.Printf("| %s | %.1f | %.1f |\n", s.Name, float64(v)/(1<<20), float64(v-base)/float64(*memEntries))
		}
		harness.StopAll(fresh)
	}
}
