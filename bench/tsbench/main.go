// Command tsbench measures Abacus's time series (issue 6) side by side with
// redis-server in one run, against what a Redis user without the module
// does instead:
//
//   - appends: TS.ADD key * value on Abacus against ZADD key score member
//     on redis-server (and on Abacus, for reference), redis-benchmark, 50
//     clients, pipeline 1 and 16, rounds A B A B, medians, server CPU per
//     request from /proc/PID/stat;
//
//   - memory: RSS growth for 1,000,000 samples of a slowly changing gauge
//     at one sample a second, as one series on Abacus and as a sorted set
//     (score = timestamp, member = "timestamp:value") on redis-server;
//
//   - a dashboard query: TS.RANGE - + AGGREGATION avg 3600000 over those
//     1,000,000 samples, median latency of 21 queries.
//
//     go run ./bench/tsbench [-rounds 3] [-n 200000]
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

// infoField is one integer field of TS.INFO gauge (read through a script,
// the harness's connection reads scalar replies only).
func infoField(c *harness.Conn, name string) string {
	return c.Do("EVAL", "local r = redis.call('TS.INFO', KEYS[1]) for i = 1, #r, 2 do if r[i] == ARGV[1] then return r[i+1] end end", "1", "gauge", name)
}

func main() {
	rounds := flag.Int("rounds", 3, "rounds (A B A B ...)")
	n := flag.Int("n", 200000, "requests per run")
	clients := flag.Int("c", 50, "parallel clients")
	samples := flag.Int("samples", 1000000, "samples for the memory and query measurements")
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	flag.Parse()

	bin, cleanup := harness.BuildAbacus(*abacusBin)
	defer cleanup()
	servers := harness.StartBoth(bin)
	defer harness.StopAll(servers)
	ab, rd := servers[0], servers[1]

	harness.Header(fmt.Sprintf("%d clients, %d requests per run, %d rounds (A B A B), medians.", *clients, *n, *rounds))
	type row struct {
		name string
		srv  *harness.Server
		args []string
	}
	rows := []row{
		{"TS.ADD key * v (abacus)", ab, []string{"TS.ADD", "bench:ts", "*", "__rand_int__", "ON_DUPLICATE", "LAST"}},
		{"ZADD key s m (redis)", rd, []string{"ZADD", "bench:z", "__rand_int__", "m:__rand_int__"}},
		{"ZADD key s m (abacus)", ab, []string{"ZADD", "bench:z", "__rand_int__", "m:__rand_int__"}},
	}
	for _, pipe := range []int{1, 16} {
		rps := map[string][]float64{}
		cpu := map[string][]float64{}
		for r := 0; r < *rounds; r++ {
			for _, rw := range rows {
				before := rw.srv.CPUTicks()
				v := rw.srv.Bench("", pipe, *n, *clients, 100000, rw.args...)
				rps[rw.name] = append(rps[rw.name], v)
				cpu[rw.name] = append(cpu[rw.name], float64(rw.srv.CPUTicks()-before)*1e4/float64(*n))
			}
		}
		fmt.Printf("\npipeline %d\n%-26s %12s %12s\n", pipe, "command", "req/s", "CPU us/req")
		for _, rw := range rows {
			fmt.Printf("%-26s %12.0f %12.2f\n", rw.name, harness.Median(rps[rw.name]), harness.Median(cpu[rw.name]))
		}
		fmt.Printf("ratio TS.ADD(abacus)/ZADD(redis): throughput %.2f\n", harness.Median(rps[rows[0].name])/harness.Median(rps[rows[1].name]))
	}

	// memory: one gauge, one sample a second
	gauge := func(yield func(t int64, v string)) {
		r := rand.New(rand.NewPCG(5, 6))
		t, v := int64(1_700_000_000_000), 20.0
		for i := 0; i < *samples; i++ {
			t += 1000
			if r.IntN(10) == 0 {
				v += float64(r.IntN(3)-1) * 0.25
			}
			yield(t, strconv.FormatFloat(v, 'f', -1, 64))
		}
	}
	// fresh servers: the heap the throughput runs grew would hide the growth
	for _, s := range servers {
		s.Stop()
	}
	servers = harness.StartBoth(bin)
	ab, rd = servers[0], servers[1]
	ca, cr := ab.Dial(), rd.Dial()
	ca.Do("TS.CREATE", "gauge")
	time.Sleep(500 * time.Millisecond)
	rssA0, rssR0 := ab.RSS(), rd.RSS()
	gauge(func(t int64, v string) {
		ts := strconv.FormatInt(t, 10)
		ca.Send("TS.ADD", "gauge", ts, v)
		cr.Send("ZADD", "gauge", ts, ts+":"+v)
	})
	ca.Flush()
	cr.Flush()
	time.Sleep(500 * time.Millisecond)
	rssA, rssR := ab.RSS()-rssA0, rd.RSS()-rssR0
	fmt.Printf("\nmemory for %d samples (1/s, slowly changing gauge), RSS growth\n", *samples)
	fmt.Printf("abacus TS series:     %10d bytes  %6.2f bytes/sample\n", rssA, float64(rssA)/float64(*samples))
	fmt.Printf("redis-server zset:    %10d bytes  %6.2f bytes/sample\n", rssR, float64(rssR)/float64(*samples))
	fmt.Printf("abacus TS.INFO totalSamples %s, memoryUsage %s\n", infoField(ca, "totalSamples"), infoField(ca, "memoryUsage"))

	// the dashboard query
	var lat []float64
	for i := 0; i < 21; i++ {
		start := time.Now()
		ca.Do("TS.RANGE", "gauge", "-", "+", "AGGREGATION", "avg", "3600000")
		lat = append(lat, float64(time.Since(start).Microseconds())/1000)
	}
	sort.Float64s(lat)
	fmt.Printf("\nTS.RANGE - + AGGREGATION avg 3600000 over %d samples: median %.2f ms (min %.2f, max %.2f)\n", *samples, harness.Median(lat), lat[0], lat[len(lat)-1])
	ca.Close()
	cr.Close()
}
