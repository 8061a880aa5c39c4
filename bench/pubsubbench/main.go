// Command pubsubbench measures pub/sub side by side with redis-server:
// PUBLISH throughput and end-to-end delivery with 1, 10, 100 and 1,000
// subscribers on one channel, and with 1,000 patterns subscribed, at
// pipeline 1 and 16, rounds alternating between the servers (A B A B),
// printing medians, the ratio Abacus/redis-server and the server's CPU
// time per PUBLISH (bench/notifybench times keyspace notifications).
//
//	go run ./bench/pubsubbench
//	go run ./bench/pubsubbench -rounds 5 -subs 1,100 -pipelines 16
//
// Only loopback addresses are used.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

func main() {
	bin := flag.String("bin", "", "Abacus binary (default: build ./cmd/abacus)")
	rounds := flag.Int("rounds", 3, "rounds per row (medians)")
	pipes := flag.String("pipelines", "1,16", "pipeline depths")
	subsList := flag.String("subs", "1,10,100,1000", "subscriber counts on one channel")
	patterns := flag.Int("patterns", 1000, "patterns for the pattern row (0: none)")
	publishers := flag.Int("publishers", 50, "publishing connections")
	deliveries := flag.Int("deliveries", 2000000, "messages delivered per measurement (publishes = deliveries / subscribers)")
	flag.Parse()

	b, cleanup := harness.BuildAbacus(*bin)
	defer cleanup()
	servers := harness.StartBoth(b)
	defer harness.StopAll(servers)

	harness.Header(fmt.Sprintf("%d publishers, %d-byte messages, medians of %d rounds.", *publishers, len(payload), *rounds))
	fmt.Println("| case | pipeline | abacus publish/s | redis publish/s | ratio | abacus deliveries/s | redis deliveries/s | ratio | abacus CPU µs/publish | redis CPU µs/publish |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	type row struct {
		name    string
		subs    int
		pattern bool
	}
	var rows []row
	for _, f := range strings.Split(*subsList, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			harness.Fatal("bad -subs entry %q", f)
		}
		rows = append(rows, row{fmt.Sprintf("%d subscribers", n), n, false})
	}
	if *patterns > 0 {
		rows = append(rows, row{fmt.Sprintf("%d patterns (1 matching)", *patterns), *patterns, true})
	}
	for _, r := range rows {
		for _, p := range harness.Pipelines(*pipes) {
			var pub, del, cpu [2][]float64
			for i := 0; i < *rounds; i++ {
				for k, s := range servers {
					res := runRow(s, r.subs, r.pattern, p, *publishers, *deliveries)
					pub[k] = append(pub[k], res.publishRate)
					del[k] = append(del[k], res.deliveryRate)
					cpu[k] = append(cpu[k], res.cpuPerPublish)
				}
			}
			pa, pr := harness.Median(pub[0]), harness.Median(pub[1])
			da, dr := harness.Median(del[0]), harness.Median(del[1])
			fmt.Printf("| %s | %d | %.0f | %.0f | %.2fx | %.0f | %.0f | %.2fx | %.2f | %.2f |\n",
				r.name, p, pa, pr, pa/pr, da, dr, da/dr, harness.Median(cpu[0]), harness.Median(cpu[1]))
		}
	}
}

var payload = "metric:cpu=97.5%"

type result struct {
	publishRate, deliveryRate, cpuPerPublish float64
}

// runRow subscribes subs connections (or, for the pattern row, one
// connection to n patterns of which one matches), publishes until
// deliveries messages have been delivered, and measures.
func runRow(s *harness.Server, subs int, pattern bool, pipe, publishers, deliveries int) result {
	channel := "bench:ch"
	var got atomic.Int64
	var conns []net.Conn
	receivers := subs
	if pattern {
		c := dial(s)
		var cmd []byte
		for i := 0; i < subs-1; i++ {
			cmd = harness.Encode(cmd, "PSUBSCRIBE", "other:"+strconv.Itoa(i)+":*")
		}
		cmd = harness.Encode(cmd, "PSUBSCRIBE", "bench:*")
		subscribe(c, cmd, subs)
		conns = append(conns, c)
		receivers = 1
	} else {
		for i := 0; i < subs; i++ {
			c := dial(s)
			subscribe(c, harness.Encode(nil, "SUBSCRIBE", channel), 1)
			conns = append(conns, c)
		}
	}
	var readers sync.WaitGroup
	for _, c := range conns {
		readers.Add(1)
		go func(c net.Conn) {
			defer readers.Done()
			countMessages(c, &got)
		}(c)
	}
	n := deliveries / receivers
	if n < 20000 {
		n = 20000
	}
	want := int64(n * receivers)
	cpu0 := s.CPUTicks()
	start := time.Now()
	var wg sync.WaitGroup
	per := n / publishers
	for i := 0; i < publishers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			publish(s, channel, per, pipe)
		}()
	}
	wg.Wait()
	pubDone := time.Since(start)
	want = int64(per*publishers) * int64(receivers)
	deadline := time.Now().Add(60 * time.Second)
	for got.Load() < want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	allDone := time.Since(start)
	cpu := float64(s.CPUTicks()-cpu0) * 10000 // µs
	if got.Load() < want {
		fmt.Printf("<!-- %s: %d of %d messages delivered within 60 s -->\n", s.Name, got.Load(), want)
	}
	for _, c := range conns {
		c.Close()
	}
	readers.Wait()
	published := float64(per * publishers)
	return result{published / pubDone.Seconds(), float64(got.Load()) / allDone.Seconds(), cpu / published}
}

func dial(s *harness.Server) net.Conn {
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.Port))
	if err != nil {
		harness.Fatal("%v", err)
	}
	return c
}

// subscribe sends the subscription commands and reads their n
// confirmations.
func subscribe(c net.Conn, cmd []byte, n int) {
	if _, err := c.Write(cmd); err != nil {
		harness.Fatal("%v", err)
	}
	r := bufio.NewReader(c)
	for i := 0; i < n; i++ {
		for j := 0; j < 6; j++ { // *3, $len, verb, $len, name, :count
			if _, err := r.ReadString('\n'); err != nil {
				harness.Fatal("subscribe: %v", err)
			}
		}
	}
	if r.Buffered() > 0 {
		harness.Fatal("unexpected bytes after the confirmations")
	}
}

// countMessages counts message frames until the connection closes: each
// one holds the word "message" exactly once (the channel names and the
// payload do not contain it).
func countMessages(c net.Conn, got *atomic.Int64) {
	buf := make([]byte, 256<<10)
	var carry []byte
	word := []byte("message\r\n")
	for {
		k, err := c.Read(buf)
		if k > 0 {
			data := append(carry, buf[:k]...)
			got.Add(int64(bytes.Count(data, word)))
			// The last len(word)-1 bytes may start a word split across
			// reads; they cannot hold a whole one, so none counts twice.
			tail := min(len(word)-1, len(data))
			carry = append(carry[:0], data[len(data)-tail:]...)
		}
		if err != nil {
			return
		}
	}
}

// publish sends n PUBLISH commands, pipe at a time, reading the replies.
func publish(s *harness.Server, channel string, n, pipe int) {
	c := dial(s)
	defer c.Close()
	r := bufio.NewReaderSize(c, 64<<10)
	one := harness.Encode(nil, "PUBLISH", channel, payload)
	batch := bytes.Repeat(one, pipe)
	for sent := 0; sent < n; sent += pipe {
		k := pipe
		if n-sent < k {
			k = n - sent
		}
		if _, err := c.Write(batch[:k*len(one)]); err != nil {
			harness.Fatal("%v", err)
		}
		for i := 0; i < k; i++ {
			line, err := r.ReadSlice('\n')
			if err != nil || line[0] != ':' {
				harness.Fatal("PUBLISH reply %q: %v", line, err)
			}
		}
	}
}
