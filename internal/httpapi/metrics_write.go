package httpapi

import (
	"bufio"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// gzipWriters are reused between scrapes (a gzip.Writer's state is about
// 800 KB to allocate).
var gzipWriters = sync.Pool{New: func() any {
	// BestSpeed: a scrape's CPU is taken from the server's cores, and
	// Prometheus scrapes over a local network where the bytes cost less.
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

// writeMetrics answers /metrics as promhttp's handler does (the format
// negotiated from Accept, OpenMetrics included; gzip when accepted), with
// the registry's families encoded by expfmt and then the exported series
// family written from the collector's rows through the series cache.
func (s *Server) writeMetrics(w http.ResponseWriter, r *http.Request, reg *prometheus.Registry, col *collector) {
	mfs, err := reg.Gather()
	// As promhttp's ContinueOnError: what was gathered is served (the
	// collector skips metrics client_golang refuses, so errors are rare).
	if err != nil && len(mfs) == 0 {
		http.Error(w, "An error has occurred while gathering metrics:\n\n"+err.Error(), http.StatusInternalServerError)
		return
	}
	format := expfmt.NegotiateIncludingOpenMetrics(r.Header)
	h := w.Header()
	h.Add("Vary", "Accept")
	h.Add("Vary", "Accept-Encoding")
	h.Set("Content-Type", string(format))
	var out io.Writer = w
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		gz := gzipWriters.Get().(*gzip.Writer)
		gz.Reset(w)
		defer func() { gz.Close(); gzipWriters.Put(gz) }()
		out = gz
	}
	bw := bufio.NewWriterSize(out, 64*1024)
	defer bw.Flush()
	enc := expfmt.NewEncoder(bw, format)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return
		}
	}
	om := format.FormatType() == expfmt.TypeOpenMetrics
	if err := s.series.write(bw, &col.series, om); err != nil {
		return
	}
	if c, ok := enc.(expfmt.Closer); ok {
		c.Close() // OpenMetrics's "# EOF"
	}
}

// acceptsGzip says whether an Accept-Encoding header admits gzip (with a
// q-value other than 0).
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		q := strings.ReplaceAll(params, " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}
