// Command bgsavebench measures what a BGSAVE costs clients while writes go
// on, Abacus (no fork: a snapshot walked in slices with first-touch copies)
// against redis-server (fork and copy-on-write), one server after the
// other on the same data:
//
//	go run ./bench/bgsavebench [-mb 1024] [-value 1000] [-rounds 2]
//
// For each server it loads -mb MiB of string values, then runs a probe
// client (PING and GET in a loop, recording every latency) and a writer
// client (SET over random existing keys) for a baseline second, then
// during a BGSAVE. It reports the probe's max and p99.9 latency with and
// without the save, the save's duration, and its extra memory: the peak
// RSS during the save above the RSS before it (for redis-server plus the
// child's copy-on-write, rdb_last_cow_size).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

func main() {
	mb := flag.Int("mb", 1024, "MiB of values to load")
	valSize := flag.Int("value", 1000, "value size in bytes")
	rounds := flag.Int("rounds", 1, "BGSAVEs per server")
	bin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	flag.Parse()
	abacus, cleanup := harness.BuildAbacus(*bin)
	defer cleanup()
	keys := *mb << 20 / *valSize
	harness.Header(fmt.Sprintf("BGSAVE of %d MiB (%d keys x %d B) while a writer SETs; load average %s", *mb, keys, *valSize, harness.LoadAvg()))
	fmt.Println("| server | save s | probe max ms (save) | probe p99.9 ms (save) | probe max ms (no save) | probes (save) | writes (save) | RSS before MiB | extra MiB |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, name := range []string{"abacus", "redis"} {
		dir, err := os.MkdirTemp("", "bgsavebench-")
		if err != nil {
			harness.Fatal("%v", err)
		}
		b := abacus
		if name == "redis" {
			b = "redis-server"
		}
		// Notice level: Abacus logs each save's longest hold of the lock.
		s := harness.Start(name, b, "--dir", dir, "--rdbcompression", "no", "--loglevel", "notice")
		load(s, keys, *valSize)
		for r := 0; r < *rounds; r++ {
			res := measure(s, keys, *valSize)
			fmt.Printf("| %s | %.1f | %.2f | %.2f | %.2f | %d | %d | %d | %d |\n", name, res.saveSec, res.maxSave, res.p999Save, res.maxBase,
				res.probesSave, res.writesSave, res.rssBefore>>20, res.extra>>20)
		}
		s.Stop()
		os.RemoveAll(dir)
	}
	fmt.Printf("\nload average after: %s\n", harness.LoadAvg())
}

func value(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}

func load(s *harness.Server, keys, size int) {
	var wg sync.WaitGroup
	const conns = 4
	for c := 0; c < conns; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			conn := s.Dial()
			r := rand.New(rand.NewPCG(uint64(c), 7))
			v := value(r, size)
			for i := c; i < keys; i += conns {
				// Vary a few bytes so values are not all equal.
				vb := []byte(v)
				copy(vb, strconv.Itoa(i))
				conn.Send("SET", "key:"+strconv.Itoa(i), string(vb))
			}
			conn.Close()
		}(c)
	}
	wg.Wait()
}

type result struct {
	saveSec                    float64
	maxSave, p999Save, maxBase float64
	probesSave, writesSave     int
	rssBefore, extra           int64
}

// probe runs PING and GET round trips until stop, returning latencies (ms).
func probe(port int, keys int, stop *atomic.Bool) []float64 {
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		harness.Fatal("%v", err)
	}
	defer c.Close()
	r := bufio.NewReaderSize(c, 1<<16)
	rnd := rand.New(rand.NewPCG(1, 2))
	var lat []float64
	for i := 0; !stop.Load(); i++ {
		var cmd []byte
		if i%2 == 0 {
			cmd = harness.Encode(nil, "PING")
		} else {
			cmd = harness.Encode(nil, "GET", "key:"+strconv.Itoa(rnd.IntN(keys)))
		}
		t := time.Now()
		c.Write(cmd)
		line, err := r.ReadString('\n')
		if err != nil {
			harness.Fatal("probe: %v", err)
		}
		if line[0] == '$' {
			n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
			if n >= 0 {
				buf := make([]byte, n+2)
				if _, err := io.ReadFull(r, buf); err != nil {
					harness.Fatal("probe: %v", err)
				}
			}
		}
		lat = append(lat, float64(time.Since(t).Microseconds())/1000)
	}
	return lat
}

// writer SETs random existing keys until stop and returns how many.
func writer(port, keys, size int, stop *atomic.Bool) int {
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		harness.Fatal("%v", err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	rnd := rand.New(rand.NewPCG(3, 4))
	v := value(rnd, size)
	n := 0
	for ; !stop.Load(); n++ {
		c.Write(harness.Encode(nil, "SET", "key:"+strconv.Itoa(rnd.IntN(keys)), v))
		if _, err := r.ReadString('\n'); err != nil {
			harness.Fatal("writer: %v", err)
		}
	}
	return n
}

func phase(s *harness.Server, keys, size int, during func()) (lat []float64, writes int) {
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); lat = probe(s.Port, keys, &stop) }()
	go func() { defer wg.Done(); writes = writer(s.Port, keys, size, &stop) }()
	during()
	stop.Store(true)
	wg.Wait()
	sort.Float64s(lat)
	return lat, writes
}

func measure(s *harness.Server, keys, size int) result {
	var res result
	base, _ := phase(s, keys, size, func() { time.Sleep(2 * time.Second) })
	res.maxBase = base[len(base)-1]
	ctl := s.Dial()
	res.rssBefore = s.RSS()
	peak := res.rssBefore
	lat, writes := phase(s, keys, size, func() {
		time.Sleep(200 * time.Millisecond)
		start := time.Now()
		if r := ctl.Do("BGSAVE"); !strings.Contains(r, "started") {
			harness.Fatal("BGSAVE: %s", r)
		}
		for {
			if rss := s.RSS(); rss > peak {
				peak = rss
			}
			if !strings.Contains(info(ctl), "rdb_bgsave_in_progress:1") {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		res.saveSec = time.Since(start).Seconds()
	})
	inf := info(ctl)
	if !strings.Contains(inf, "rdb_last_bgsave_status:ok") {
		harness.Fatal("%s: save failed", s.Name)
	}
	cow := int64(0)
	for _, l := range strings.Split(inf, "\r\n") {
		if v, ok := strings.CutPrefix(l, "rdb_last_cow_size:"); ok {
			cow, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	ctl.Close()
	res.extra = peak - res.rssBefore + cow
	res.maxSave = lat[len(lat)-1]
	res.p999Save = lat[len(lat)*999/1000]
	res.probesSave, res.writesSave = len(lat), writes
	return res
}

func info(c *harness.Conn) string {
	return c.Do("INFO", "persistence")
}
