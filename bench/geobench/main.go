// Command geobench measures the GEO commands side by side with
// redis-server in one run:
//
//   - memory: RSS and INFO used_memory growth for 1,000,000 points (members
//     "p:<i>", uniform over a 10 by 10 degree area) loaded into one geo set
//     with GEOADD, 100 points a command, pipelined;
//
//   - GEOADD of a random point (in a 1 by 1 degree square) with a random
//     member out of 1,000,000, and GEOSEARCH ... BYRADIUS 5 km around a
//     random center over the 1,000,000 points (about 90 matches each; and
//     with COUNT 10 ASC, the nearest ten): redis-benchmark, 50 clients,
//     pipeline 1 and 16, rounds A B A B, medians, server CPU per request
//     from /proc/PID/stat.
//
//     go run ./bench/geobench [-rounds 3] [-n 100000] [-points 1000000]
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

// usedMemory is INFO memory's used_memory.
func usedMemory(c *harness.Conn) int64 {
	for _, l := range strings.Split(c.Do("INFO", "memory"), "\r\n") {
		if v, ok := strings.CutPrefix(l, "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

func main() {
	rounds := flag.Int("rounds", 3, "rounds (A B A B ...)")
	n := flag.Int("n", 100000, "GEOADD requests per run")
	ns := flag.Int("ns", 20000, "GEOSEARCH requests per run")
	clients := flag.Int("c", 50, "parallel clients")
	points := flag.Int("points", 1000000, "points in the searched set")
	pipes := flag.String("pipelines", "1,16", "pipeline depths")
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	flag.Parse()

	bin, cleanup := harness.BuildAbacus(*abacusBin)
	defer cleanup()
	servers := harness.StartBoth(bin)
	defer harness.StopAll(servers)
	ab, rd := servers[0], servers[1]
	harness.Header(fmt.Sprintf("%d clients, %d GEOADD and %d GEOSEARCH requests per run, %d rounds (A B A B), medians; %d points.",
		*clients, *n, *ns, *rounds, *points))

	// Memory first, on fresh servers.
	ca, cr := ab.Dial(), rd.Dial()
	time.Sleep(300 * time.Millisecond)
	rssA0, rssR0 := ab.RSS(), rd.RSS()
	umA0, umR0 := usedMemory(ca), usedMemory(cr)
	rng := rand.New(rand.NewPCG(1, 2))
	args := []string{"GEOADD", "geo:pts"}
	for i := 0; i < *points; i++ {
		lon := strconv.FormatFloat(rng.Float64()*10, 'f', 6, 64)
		lat := strconv.FormatFloat(40+rng.Float64()*10, 'f', 6, 64)
		args = append(args, lon, lat, "p:"+strconv.Itoa(i))
		if len(args) == 2+3*100 || i == *points-1 {
			ca.Send(args...)
			cr.Send(args...)
			args = args[:2]
		}
	}
	ca.Flush()
	cr.Flush()
	time.Sleep(500 * time.Millisecond)
	rssA, rssR := ab.RSS()-rssA0, rd.RSS()-rssR0
	umA, umR := usedMemory(ca)-umA0, usedMemory(cr)-umR0
	fmt.Printf("memory for %d geo points (ZCARD abacus %s, redis %s)\n", *points, ca.Do("ZCARD", "geo:pts"), cr.Do("ZCARD", "geo:pts"))
	fmt.Printf("%-14s %14s %12s %16s %12s\n", "server", "RSS growth", "B/point", "used_memory", "B/point")
	fmt.Printf("%-14s %14d %12.1f %16d %12.1f\n", "abacus", rssA, float64(rssA)/float64(*points), umA, float64(umA)/float64(*points))
	fmt.Printf("%-14s %14d %12.1f %16d %12.1f\n", "redis-server", rssR, float64(rssR)/float64(*points), umR, float64(umR)/float64(*points))
	fmt.Printf("ratio abacus/redis: RSS %.2f, used_memory %.2f\n", float64(rssA)/float64(rssR), float64(umA)/float64(umR))
	ca.Close()
	cr.Close()

	type row struct {
		name string
		n    int
		args []string
	}
	rows := []row{
		{"GEOADD", *n, []string{"GEOADD", "bench:geo", "1.__rand_int__", "2.__rand_int__", "m:__rand_int__"}},
		{"GEOSEARCH BYRADIUS 5 km", *ns, []string{"GEOSEARCH", "geo:pts", "FROMLONLAT", "5.__rand_int__", "45.__rand_int__", "BYRADIUS", "5", "km"}},
		{"GEOSEARCH ... COUNT 10 ASC", *ns, []string{"GEOSEARCH", "geo:pts", "FROMLONLAT", "5.__rand_int__", "45.__rand_int__", "BYRADIUS", "5", "km", "COUNT", "10", "ASC"}},
	}
	for _, pipe := range harness.Pipelines(*pipes) {
		rps := map[string][]float64{}
		cpu := map[string][]float64{}
		for r := 0; r < *rounds; r++ {
			for _, rw := range rows {
				for _, s := range servers {
					key := rw.name + "/" + s.Name
					before := s.CPUTicks()
					v := s.Bench("", pipe, rw.n, *clients, 1000000, rw.args...)
					rps[key] = append(rps[key], v)
					cpu[key] = append(cpu[key], float64(s.CPUTicks()-before)*1e4/float64(rw.n))
				}
			}
		}
		fmt.Printf("\npipeline %d\n%-28s %12s %12s %9s %12s %12s %9s\n", pipe, "command",
			"abacus r/s", "redis r/s", "ratio", "abacus us", "redis us", "CPU ratio")
		for _, rw := range rows {
			a, r := rw.name+"/abacus", rw.name+"/redis"
			fmt.Printf("%-28s %12.0f %12.0f %9.2f %12.2f %12.2f %9.2f\n", rw.name,
				harness.Median(rps[a]), harness.Median(rps[r]), harness.Median(rps[a])/harness.Median(rps[r]),
				harness.Median(cpu[a]), harness.Median(cpu[r]), harness.Median(cpu[r])/harness.Median(cpu[a]))
		}
	}
}
