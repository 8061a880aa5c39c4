package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

// churn is the churn workload, run against Abacus and redis-server
// at the same time (one load connection each, so both see the same machine
// load): SETs of random sizes from 100 B to 16 KB over a million keys, a
// DEL of a random key after half of them, at maxmemory under allkeys-lru,
// for dur. Every period it prints each server's RSS and used_memory, and
// RSS against maxmemory; at the end, the peaks, the requests served and
// the CPU per request.
func churn(bin string, maxmem int64, dur, period time.Duration) {
	harness.Header(fmt.Sprintf("Churn: SET of 100 B to 16 KB values over 1M keys, DEL after half of them, pipelines of 50, one connection per server, both servers loaded at once; maxmemory %d MB, allkeys-lru, %s; load average %s.",
		maxmem>>20, dur, harness.LoadAvg()))
	servers := harness.StartBoth(bin, "--maxmemory", strconv.FormatInt(maxmem, 10), "--maxmemory-policy", "allkeys-lru")
	defer harness.StopAll(servers)
	cpu0 := make([]int64, len(servers))
	for i, s := range servers {
		cpu0[i] = s.CPUTicks()
	}
	var reqs [2]atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			churnLoad(s, uint64(i+1), &reqs[i], stop)
		}()
	}
	admin := make([]*conn, len(servers))
	for i, s := range servers {
		admin[i] = dial(s)
	}
	// RSS every 250 ms as well: the peaks between the rows' samples.
	var finePeak [2]atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(250 * time.Millisecond):
			}
			for i, s := range servers {
				if rss := s.RSS(); rss > finePeak[i].Load() {
					finePeak[i].Store(rss)
				}
			}
		}
	}()
	fmt.Println("| time s | abacus RSS MB | abacus RSS / maxmemory | abacus used_memory MB | redis RSS MB | redis RSS / maxmemory | redis used_memory MB |")
	fmt.Println("|---|---|---|---|---|---|---|")
	peak := make([]int64, len(servers))
	start := time.Now()
	for t := period; t <= dur; t += period {
		time.Sleep(time.Until(start.Add(t)))
		row := []string{strconv.Itoa(int(t.Seconds()))}
		for i, s := range servers {
			rss := s.RSS()
			peak[i] = max(peak[i], rss)
			used, _ := strconv.ParseInt(admin[i].info("memory", "used_memory"), 10, 64)
			row = append(row, fmt.Sprintf("%.1f", float64(rss)/(1<<20)), fmt.Sprintf("%.2f", float64(rss)/float64(maxmem)),
				fmt.Sprintf("%.1f", float64(used)/(1<<20)))
		}
		fmt.Printf("| %s |\n", strings.Join(row, " | "))
	}
	close(stop)
	wg.Wait()
	fmt.Println()
	for i, s := range servers {
		n := reqs[i].Load()
		cpu := float64(s.CPUTicks()-cpu0[i]) / 100
		fp := finePeak[i].Load()
		fmt.Printf("%s: peak RSS %.1f MB (%.3fx maxmemory) sampled every 250 ms; ", s.Name, float64(fp)/(1<<20), float64(fp)/float64(maxmem))
		fmt.Printf("%.1f MB (%.2fx) at the table's samples; %d requests (%.0f/s), CPU %.1f s (%.1f µs/request), evicted_keys %s\n",
			float64(peak[i])/(1<<20), float64(peak[i])/float64(maxmem), n, float64(n)/dur.Seconds(), cpu, cpu*1e6/float64(n),
			admin[i].info("stats", "evicted_keys"))
		admin[i].c.Close()
	}
}

// churnLoad sends the churn's pipelines until stop is closed.
func churnLoad(s *harness.Server, seed uint64, reqs *atomic.Int64, stop chan struct{}) {
	c := dial(s)
	defer c.c.Close()
	rnd := rand.New(rand.NewPCG(seed, 1))
	val := strings.Repeat("x", 16<<10)
	var buf []byte
	for {
		select {
		case <-stop:
			return
		default:
		}
		buf = buf[:0]
		n := 0
		for range 50 {
			size := 100 + rnd.IntN(16<<10-100)
			buf = harness.Encode(buf, "SET", "k:"+strconv.Itoa(rnd.IntN(1<<20)), val[:size])
			n++
			if rnd.IntN(2) == 0 {
				buf = harness.Encode(buf, "DEL", "k:"+strconv.Itoa(rnd.IntN(1<<20)))
				n++
			}
		}
		c.write(buf)
		for range n {
			if l := c.line(); l[0] == '-' {
				harness.Fatal("%s: %s", s.Name, l)
			}
		}
		reqs.Add(int64(n))
	}
}
