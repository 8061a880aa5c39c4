// Command notifybench measures what keyspace notifications cost, on Abacus
// and on redis-server side by side in one run: SET and HSET through
// redis-benchmark with notify-keyspace-events off and "KEA", each server
// in turn (A B A B ...) for several rounds, printing medians, the on/off
// ratio of each server and the server CPU time per request.
//
//	go run ./bench/notifybench                        # SET HSET, pipeline 16, no listener
//	go run ./bench/notifybench -listener expired      # plus a client waiting for expired events
//	go run ./bench/notifybench -listener all -rounds 5
//
// Listeners: none (nobody subscribed: the cost of having the events on);
// expired (one client PSUBSCRIBEd to __keyevent@*__:expired, the usual
// reason to turn them on: every write's events are matched against its
// pattern but none is delivered); all (one client PSUBSCRIBEd to
// __key*@*__:*, reading every event: the cost of delivering two messages
// per write). Only loopback addresses are used.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/abacusdb/abacus/bench/harness"
)

type benchCase struct {
	name string
	test string   // redis-benchmark -t name, when args is empty
	args []string // a command with __rand_int__ placeholders
}

var cases = []benchCase{
	{name: "SET", test: "set"},
	{name: "HSET", args: []string{"HSET", "bench:h:__rand_int__", "f", "v"}},
}

// modes are the notify-keyspace-events values compared.
var modes = []string{"", "KEA"}

// listen subscribes a connection of its own to pattern and discards what
// it receives until the connection is closed.
func listen(s *harness.Server, pattern string) io.Closer {
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port))
	if err != nil {
		harness.Fatal("%v", err)
	}
	if _, err := c.Write(harness.Encode(nil, "PSUBSCRIBE", pattern)); err != nil {
		harness.Fatal("%v", err)
	}
	go io.Copy(io.Discard, bufio.NewReader(c))
	return c
}

func main() {
	only := flag.String("cases", "", "comma-separated case names (default: SET,HSET)")
	pipes := flag.String("pipelines", "16", "pipeline depths")
	rounds := flag.Int("rounds", 3, "rounds (A B A B ...)")
	n := flag.Int("n", 1000000, "requests per run")
	clients := flag.Int("c", 50, "parallel clients")
	keyspace := flag.Int("r", 100000, "redis-benchmark -r (random key space)")
	listener := flag.String("listener", "none", "none, expired or all")
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	flag.Parse()

	run := cases
	if *only != "" {
		run = nil
		for _, c := range cases {
			for _, w := range strings.Split(*only, ",") {
				if strings.EqualFold(c.name, w) {
					run = append(run, c)
				}
			}
		}
	}
	pattern := map[string]string{"none": "", "expired": "__keyevent@*__:expired", "all": "__key*@*__:*"}[*listener]
	if pattern == "" && *listener != "none" {
		harness.Fatal("unknown listener %q", *listener)
	}
	pipeList := harness.Pipelines(*pipes)

	bin, cleanup := harness.BuildAbacus(*abacusBin)
	defer cleanup()
	servers := harness.StartBoth(bin)
	defer harness.StopAll(servers)
	for _, s := range servers {
		if pattern != "" {
			defer listen(s, pattern).Close()
		}
	}

	type key struct {
		c, server, mode string
		pipe            int
	}
	rps := map[key][]float64{}
	cpu := map[key][]float64{}
	for r := 0; r < *rounds; r++ {
		for _, bc := range run {
			for _, p := range pipeList {
				for _, mode := range modes {
					for _, s := range servers {
						c := s.Dial()
						if got := c.Do("CONFIG", "SET", "notify-keyspace-events", mode); got != "+OK" {
							harness.Fatal("%s: CONFIG SET notify-keyspace-events %q: %s", s.Name, mode, got)
						}
						c.Close()
						before := s.CPUTicks()
						v := s.Bench(bc.test, p, *n, *clients, *keyspace, bc.args...)
						after := s.CPUTicks()
						k := key{bc.name, s.Name, mode, p}
						rps[k] = append(rps[k], v)
						// CPU time is in clock ticks of 10 ms.
						cpu[k] = append(cpu[k], float64(after-before)*1e4/float64(*n))
						fmt.Fprintf(os.Stderr, "round %d %-5s P=%-2d %-4q %-6s %10.0f req/s\n", r+1, bc.name, p, mode, s.Name, v)
					}
				}
			}
		}
	}

	harness.Header(fmt.Sprintf("%d clients, %d requests per run, %d rounds (A B A B), medians; listener: %s.", *clients, *n, *rounds, *listener))
	fmt.Println("| command | pipeline | abacus off req/s | abacus KEA req/s | abacus KEA/off | redis off req/s | redis KEA req/s | redis KEA/off | abacus CPU µs/req off / KEA | redis CPU µs/req off / KEA |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, bc := range run {
		for _, p := range pipeList {
			m := func(srv, mode string) (float64, float64) {
				k := key{bc.name, srv, mode, p}
				return harness.Median(rps[k]), harness.Median(cpu[k])
			}
			aOff, caOff := m("abacus", "")
			aOn, caOn := m("abacus", "KEA")
			rOff, crOff := m("redis", "")
			rOn, crOn := m("redis", "KEA")
			fmt.Printf("| %s | %d | %.0f | %.0f | %.3f | %.0f | %.0f | %.3f | %.2f / %.2f | %.2f / %.2f |\n",
				bc.name, p, aOff, aOn, aOn/aOff, rOff, rOn, rOn/rOff, caOff, caOn, crOff, crOn)
		}
	}
}
