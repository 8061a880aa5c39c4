package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/httpapi"
	"github.com/abacusdb/abacus/internal/servertest"
)

// BenchmarkScrape10k is one /metrics scrape exporting 10,000 series.
func BenchmarkScrape10k(b *testing.B) { benchScrape(b, 10000, false) }

// BenchmarkScrape10kChanging is the same with a new sample in every
// series before each scrape (not counted in cpu-ms/op): no line and no
// gzip segment is the same as the last scrape's.
func BenchmarkScrape10kChanging(b *testing.B) { benchScrape(b, 10000, true) }

// BenchmarkScrapeNoSeries is one /metrics scrape of INFO and SLOWLOG
// alone, 10,000 series stored but none exported.
func BenchmarkScrapeNoSeries(b *testing.B) { benchScrape(b, 0, false) }

func benchScrape(b *testing.B, exported int, changing bool) {
	w := startWeb(b, httpapi.Limits{}, servertest.WithConfig("http-export-series", "exported=yes"),
		servertest.WithConfig("http-export-series-max", strconv.Itoa(exported)))
	c := w.inst.Raw(b)
	if exported == 0 {
		c.Do("CONFIG", "SET", "http-export-series", "")
	}
	var batch []byte
	for i := range 10000 {
		batch = append(batch, servertest.Encode("TS.ADD", fmt.Sprintf("export:%05d", i), "1000", strconv.Itoa(i),
			"LABELS", "exported", "yes", "sensor", strconv.Itoa(i), "site", fmt.Sprint("site-", i%20))...)
	}
	c.Write(batch)
	for range 10000 {
		c.Read()
	}
	// As Prometheus asks: gzip, which the client here does not undo, so
	// that the profile is the server's.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	b.ResetTimer()
	var writeCPU time.Duration
	cpu0 := cpuTime()
	round := 0
	for b.Loop() {
		if changing {
			round++
			w0 := cpuTime()
			batch = batch[:0]
			for i := range 10000 {
				batch = append(batch, servertest.Encode("TS.ADD", fmt.Sprintf("export:%05d", i), strconv.Itoa(1000+round), fmt.Sprint(float64(i)+float64(round)/7))...)
			}
			c.Write(batch)
			for range 10000 {
				c.Read()
			}
			writeCPU += cpuTime() - w0
		}
		req, _ := http.NewRequest("GET", w.base+"/metrics", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		b.SetBytes(n)
	}
	b.ReportMetric(float64(cpuTime()-cpu0-writeCPU)/1e6/float64(b.N), "cpu-ms/op")
}
