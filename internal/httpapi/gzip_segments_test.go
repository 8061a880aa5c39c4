package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/httpapi"
)

// The gzipped /metrics body is one gzip member made of segments, some
// resent as they were compressed at an earlier scrape: Go's gzip reader
// (which checks the CRC and length) reads it, and its series lines are
// those of an uncompressed scrape of the same data, in both formats, as
// values change, series come and go, and nothing changes.
func TestMetricsGzipSegments(t *testing.T) {
	w := startWeb(t, httpapi.Limits{})
	w.do(t, "CONFIG", "SET", "http-export-series", "exported=yes")
	for i := range 1000 {
		w.do(t, "TS.ADD", fmt.Sprintf("s:%04d", i), "1000", fmt.Sprint(i), "LABELS", "exported", "yes", "n", fmt.Sprint(i))
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	fetch := func(accept, encoding string) (string, int) {
		t.Helper()
		req, _ := http.NewRequest("GET", w.base+"/metrics", nil)
		req.Header.Set("Accept", accept)
		req.Header.Set("Accept-Encoding", encoding)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Header.Get("Content-Encoding") != "gzip" {
			return string(body), len(body)
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		text, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("gzip body: %v", err)
		}
		if rest, _ := io.ReadAll(zr); len(rest) != 0 {
			t.Fatal("bytes after the gzip member")
		}
		return string(text), len(body)
	}
	series := func(body string) string {
		var out []string
		for _, l := range strings.Split(body, "\n") {
			if strings.HasPrefix(l, "abacus_timeseries_value") || strings.HasPrefix(l, "# EOF") {
				out = append(out, l)
			}
		}
		return strings.Join(out, "\n")
	}
	check := func(step string) {
		t.Helper()
		for _, accept := range []string{"", "application/openmetrics-text; version=1.0.0"} {
			for range 2 { // the second scrape resends every segment
				zipped, zlen := fetch(accept, "gzip")
				plain, plen := fetch(accept, "identity")
				if series(zipped) != series(plain) {
					t.Fatalf("%s, %q: gzipped series lines differ from plain ones", step, accept)
				}
				if !strings.Contains(zipped, "abacus_timeseries_value{key=\"s:0999\"") || !strings.HasPrefix(zipped, "# HELP") {
					t.Fatalf("%s, %q: body incomplete", step, accept)
				}
				if zlen*4 > plen {
					t.Fatalf("%s, %q: %d bytes gzipped, %d plain", step, accept, zlen, plen)
				}
			}
		}
	}
	check("first scrapes")
	w.do(t, "TS.ADD", "s:0500", "2000", "0.25")
	check("a value changed")
	w.do(t, "TS.ADD", "s:0001x", "1000", "7", "LABELS", "exported", "yes")
	w.do(t, "DEL", "s:0700")
	check("a series added and one deleted")
	w.do(t, "TS.ALTER", "s:0002", "LABELS", "exported", "yes", "n", "two")
	check("labels changed")
}
