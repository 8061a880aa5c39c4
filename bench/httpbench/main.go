// Command httpbench measures what the HTTP endpoint (internal/httpapi)
// costs the data port, side by side with redis-server in one run:
//
//   - scraping: redis-benchmark SET at pipeline 16 (50 clients) on Abacus
//     while /metrics, exporting 10,000 time series (http-export-series),
//     is scraped every second and every 5 seconds (-every), against the
//     same load unscraped, rounds rotating the order, medians; throughput,
//     server CPU per
//     request (/proc/PID/stat, the scrapes' CPU included), scrape time and
//     size; redis-server's throughput on the same load for reference;
//
//   - the dashboard's 24-hour query: TS.MRANGE over 20 series of 86,400
//     one-second samples with AGGREGATION avg 300000 (what the explorer
//     asks for a 24 h window), latency over the data port and through
//     /api/series.
//
//     go run ./bench/httpbench [-rounds 5] [-n 3000000] [-series 10000] [-every 1s,5s] [-more=false]
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/abacusdb/abacus/bench/harness"
)

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		harness.Fatal("%v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// scraper GETs url every period until stopped, recording each scrape's
// duration and size.
type scraper struct {
	stop  chan struct{}
	done  sync.WaitGroup
	times []time.Duration
	bytes int
}

func scrape(url string, period time.Duration) *scraper {
	s := &scraper{stop: make(chan struct{})}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			start := time.Now()
			resp, err := http.Get(url)
			if err != nil {
				harness.Fatal("scrape: %v", err)
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			s.times = append(s.times, time.Since(start))
			s.bytes = int(n)
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *scraper) end() {
	close(s.stop)
	s.done.Wait()
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func medianDur(v []time.Duration) time.Duration {
	f := make([]float64, len(v))
	for i, d := range v {
		f[i] = float64(d)
	}
	return time.Duration(harness.Median(f))
}

func quantile(v []time.Duration, q float64) time.Duration {
	s := append([]time.Duration(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(q*float64(len(s)-1))]
}

func main() {
	rounds := flag.Int("rounds", 5, "rounds (A B A B ...)")
	n := flag.Int("n", 3000000, "SET requests per run")
	clients := flag.Int("c", 50, "parallel clients")
	nseries := flag.Int("series", 10000, "time series exported on /metrics")
	queries := flag.Int("queries", 41, "TS.MRANGE queries timed")
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	every := flag.String("every", "1s,5s", "scrape periods, comma-separated, each run beside an unscraped one")
	more := flag.Bool("more", true, "also the idle scrape's cost and the 24-hour dashboard query")
	flag.Parse()

	bin, cleanup := harness.BuildAbacus(*abacusBin)
	defer cleanup()
	httpPort := freePort()
	ab := harness.Start("abacus", bin, "--http-port", strconv.Itoa(httpPort),
		"--http-export-series", "exported=yes", "--http-export-series-max", strconv.Itoa(*nseries))
	rd := harness.Start("redis", "redis-server")
	defer harness.StopAll([]*harness.Server{ab, rd})
	base := fmt.Sprintf("http://127.0.0.1:%d", httpPort)

	c := ab.Dial()
	now := time.Now().UnixMilli()
	for i := range *nseries {
		c.Send("TS.ADD", fmt.Sprintf("export:%05d", i), strconv.FormatInt(now, 10), strconv.Itoa(i),
			"LABELS", "exported", "yes", "sensor", strconv.Itoa(i), "site", fmt.Sprint("site-", i%20))
	}
	c.Flush()

	var periods []time.Duration
	for _, f := range strings.Split(*every, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d <= 0 {
			harness.Fatal("-every: %q", f)
		}
		periods = append(periods, d)
	}
	harness.Header(fmt.Sprintf("SET -P 16, %d clients, %d requests per run, %d rounds (the order rotating), medians; /metrics exports %d series.",
		*clients, *n, *rounds, *nseries))
	// Mode 0 is unscraped; mode i scrapes every periods[i-1].
	modes := len(periods) + 1
	rps, cpu := make([][]float64, modes), make([][]float64, modes)
	var rpsRedis, cpuRedis []float64
	var scrapes []time.Duration
	size := 0
	run := func(mode int) {
		var s *scraper
		if mode > 0 {
			s = scrape(base+"/metrics", periods[mode-1])
		}
		t0 := ab.CPUTicks()
		r := ab.Bench("set", 16, *n, *clients, 100000)
		c := float64(ab.CPUTicks()-t0) * 1e4 / float64(*n) // µs per request
		if s != nil {
			s.end()
			scrapes = append(scrapes, s.times...)
			size = s.bytes
		}
		rps[mode], cpu[mode] = append(rps[mode], r), append(cpu[mode], c)
	}
	for r := range *rounds {
		for i := range modes {
			run((r + i) % modes)
		}
		t0 := rd.CPUTicks()
		rpsRedis = append(rpsRedis, rd.Bench("set", 16, *n, *clients, 100000))
		cpuRedis = append(cpuRedis, float64(rd.CPUTicks()-t0)*1e4/float64(*n))
		fmt.Printf("round %d: abacus", r+1)
		for m := range modes {
			fmt.Printf(" %.0f", rps[m][r])
		}
		fmt.Printf(" (unscraped, then every %v); redis %.0f\n", periods, rpsRedis[r])
	}
	fmt.Println()
	fmt.Println("| SET -P 16 | requests/s | ratio to unscraped | server CPU µs/request | CPU ratio to unscraped |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: |")
	for m := range modes {
		name := "abacus, not scraped"
		if m > 0 {
			name = fmt.Sprintf("abacus, /metrics every %v", periods[m-1])
		}
		fmt.Printf("| %s | %.0f | %.3f | %.3f | %.3f |\n", name, harness.Median(rps[m]), harness.Median(rps[m])/harness.Median(rps[0]),
			harness.Median(cpu[m]), harness.Median(cpu[m])/harness.Median(cpu[0]))
	}
	fmt.Printf("| redis-server 7, not scraped | %.0f | | %.3f | |\n", harness.Median(rpsRedis), harness.Median(cpuRedis))
	fmt.Printf("\nScrapes during the load: %d, median %.1f ms, p90 %.1f ms, max %.1f ms; %d bytes each.\n",
		len(scrapes), ms(medianDur(scrapes)), ms(quantile(scrapes, 0.9)), ms(quantile(scrapes, 1)), size)
	if !*more {
		return
	}
	// An idle server scraped back to back: the scrape's own CPU, and what
	// a client of the data port waits meanwhile (PING round trips, against
	// the same loop unscraped).
	pings := func(d time.Duration) []time.Duration {
		var out []time.Duration
		for stop := time.Now().Add(d); time.Now().Before(stop); {
			t := time.Now()
			c.Do("PING")
			out = append(out, time.Since(t))
		}
		return out
	}
	quiet := pings(3 * time.Second)
	t0 := ab.CPUTicks()
	idle := scrape(base+"/metrics", 200*time.Millisecond)
	busy := pings(5 * time.Second)
	idle.end()
	cpuPer := float64(ab.CPUTicks()-t0) * 10 / float64(len(idle.times)) // ms
	fmt.Printf("Scrapes of an idle server: %d, median %.1f ms, max %.1f ms; server CPU %.0f ms per scrape.\n",
		len(idle.times), ms(medianDur(idle.times)), ms(quantile(idle.times, 1)), cpuPer)
	fmt.Printf("PING round trip meanwhile: p50 %.3f ms, p99 %.3f ms, max %.1f ms (unscraped: p50 %.3f, p99 %.3f, max %.1f).\n",
		ms(medianDur(busy)), ms(quantile(busy, 0.99)), ms(quantile(busy, 1)), ms(medianDur(quiet)), ms(quantile(quiet, 0.99)), ms(quantile(quiet, 1)))

	// The 24-hour dashboard query: 20 series of 86,400 one-second samples.
	const perSeries = 86400
	end := time.Now().UnixMilli() / 1000 * 1000
	for s := range 20 {
		key := fmt.Sprintf("day:%02d", s)
		c.Do("TS.CREATE", key, "LABELS", "bench", "day", "sensor", strconv.Itoa(s))
		args := []string{"TS.MADD"}
		for i := range perSeries {
			args = append(args, key, strconv.FormatInt(end-int64(perSeries-1-i)*1000, 10), strconv.Itoa((i*7+s)%1000))
			if len(args) > 3*1000 {
				c.Send(args...)
				args = args[:1]
			}
		}
		if len(args) > 1 {
			c.Send(args...)
		}
	}
	c.Flush()
	from := strconv.FormatInt(end-86400_000, 10)
	var lat, api []time.Duration
	t0 = ab.CPUTicks()
	for range *queries {
		t := time.Now()
		c.Do("TS.MRANGE", from, strconv.FormatInt(end, 10), "AGGREGATION", "avg", "300000", "WITHLABELS", "FILTER", "bench=day")
		lat = append(lat, time.Since(t))
		t = time.Now()
		resp, err := http.Get(base + "/api/series?filter=bench%3Dday&window=24h")
		if err != nil {
			harness.Fatal("api/series: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		api = append(api, time.Since(t))
	}
	cpuQ := float64(ab.CPUTicks()-t0) * 10 / float64(*queries) // ms per TS.MRANGE + /api/series pair
	fmt.Printf("\n| 20 x 86,400 samples, avg per 5 min (288 buckets) | median ms | p90 ms | max ms |\n| --- | --- | --- | --- |\n")
	fmt.Printf("| TS.MRANGE over the data port | %.2f | %.2f | %.2f |\n", ms(medianDur(lat)), ms(quantile(lat, 0.9)), ms(quantile(lat, 1)))
	fmt.Printf("| /api/series?window=24h (TS.QUERYINDEX + TS.MRANGE + JSON) | %.2f | %.2f | %.2f |\n", ms(medianDur(api)), ms(quantile(api, 0.9)), ms(quantile(api, 1)))
	fmt.Printf("\nServer CPU per pair of the two (TS.MRANGE, then /api/series): %.1f ms.\n", cpuQ)
}
