package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// writeMetrics answers /metrics as promhttp's handler does (the format
// negotiated from Accept, OpenMetrics included; gzip when accepted), with
// the registry's families encoded by expfmt and then the exported series
// family written from the collector's rows through the series cache.
// Gzipped, the body is sent in segments (gzip_segments.go): the
// registry's families, the series family's segments, the end.
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
	// The registry's families, then the series family, then the end
	// ("# EOF" in OpenMetrics), each part cut short by an encoding error
	// as promhttp's output is.
	var head, tail bytes.Buffer
	to := &switchWriter{w: &head}
	enc := expfmt.NewEncoder(to, format)
	failed := false
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			failed = true
			break
		}
	}
	om := format.FormatType() == expfmt.TypeOpenMetrics
	var fam []byte
	var ends []int
	if !failed {
		fam, ends = s.series.family(&col.series, om)
		to.w = &tail
		if c, ok := enc.(expfmt.Closer); ok {
			c.Close() // OpenMetrics's "# EOF"
		}
	}
	if !acceptsGzip(r.Header.Get("Accept-Encoding")) {
		for _, b := range [][]byte{head.Bytes(), fam, tail.Bytes()} {
			if _, err := w.Write(b); err != nil {
				return
			}
		}
		return
	}
	h.Set("Content-Encoding", "gzip")
	g := newSegmentWriter(w)
	g.segment(head.Bytes())
	if fam != nil {
		s.segments.write(g, fam, ends, om)
	}
	g.segment(tail.Bytes())
	g.close()
}

// switchWriter writes to w, which its owner may change between writes.
type switchWriter struct{ w io.Writer }

func (s *switchWriter) Write(b []byte) (int, error) { return s.w.Write(b) }

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
