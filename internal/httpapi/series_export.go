package httpapi

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"sync"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/abacusdb/abacus/internal/ds/ts"
	"github.com/abacusdb/abacus/internal/metrics"
)

// The exported series family (abacus_timeseries_value) is written from
// the engine's series export (metrics.ExportLatest), not through const
// metrics and the registry, nor through a RESP reply: with 10,000 series,
// building a label set and a metric per series, Gather's sorting and
// checks and the encoder's work per metric cost nine tenths of a scrape's
// CPU, and writing and reading the labels in TS.MGET's reply a fifth of
// what was left. Each series's sample line up to its value
// ("abacus_timeseries_value{key=...,...}") is made by expfmt once and kept
// with the label index's generation it belongs to; while the generation
// holds (no series made, deleted or relabelled), the engine sends only the
// values, and a scrape appends each one after its line's prefix.

const seriesFamily = "abacus_timeseries_value"

const seriesHelp = "The latest sample of a time series matching http-export-series."

// seriesCache keeps the encoding of the last generation's match set
// between scrapes. Scrapes may run concurrently (up to
// cap(Server.scraping)): an encoding never changes once made, and the
// mutex guards only which one is current and the buffer size.
type seriesCache struct {
	mu   sync.Mutex
	cur  *seriesEncoding
	head map[bool][]byte // "# HELP"/"# TYPE" lines, per format (true: OpenMetrics)
	size int             // the last family's length and an eighth: the next one's buffer
}

// seriesEncoding is the encoded label part of each key of one generation's
// match set.
type seriesEncoding struct {
	gen      uint64
	keys     []string     // sorted; shared with the engine's match cache
	labels   [][]ts.Label // each key's labels, shared with the engine
	prefixes [][]byte     // each key's sample line up to its value; nil: not encodable
}

// seriesOut is what a scrape exports: the engine's answer and the
// encoding of its generation.
type seriesOut struct {
	x   metrics.SeriesExport
	enc *seriesEncoding
	max int // http-export-series-max
}

// current is the encoding of the last generation seen, or nil.
func (c *seriesCache) current() *seriesEncoding {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur
}

// knownGen is the generation of enc, 0 (never a generation) for none.
func knownGen(enc *seriesEncoding) uint64 {
	if enc == nil {
		return 0
	}
	return enc.gen
}

// encoding returns the encoding for x, which was asked for with prev's
// generation: prev itself when x carries no labels (its generation is
// prev's), otherwise a new one, made current, that reuses prev's prefix
// for each key whose labels did not change.
func (c *seriesCache) encoding(prev *seriesEncoding, x *metrics.SeriesExport) *seriesEncoding {
	if x.Labels == nil {
		return prev
	}
	enc := &seriesEncoding{gen: x.Gen, keys: x.Keys, labels: x.Labels, prefixes: make([][]byte, len(x.Keys))}
	j := 0
	for i, k := range x.Keys {
		if prev != nil {
			for j < len(prev.keys) && prev.keys[j] < k {
				j++
			}
			if j < len(prev.keys) && prev.keys[j] == k && ts.SameLabels(prev.labels[j], x.Labels[i]) {
				enc.prefixes[i] = prev.prefixes[j]
				continue
			}
		}
		if p, err := seriesPrefix(k, x.Labels[i]); err == nil {
			enc.prefixes[i] = p // labels client_golang would refuse stay nil: skipped
		}
	}
	c.mu.Lock()
	c.cur = enc
	c.mu.Unlock()
	return enc
}

// counts are the keys out matched (live ones) and those with a sample.
func (out *seriesOut) counts() (matched, sampled int) {
	for _, st := range out.x.State {
		if st != metrics.SeriesGone {
			matched++
		}
		if st == metrics.SeriesSampled {
			sampled++
		}
	}
	return matched, sampled
}

// family is the series family's text in the format of om (OpenMetrics or
// the text format), the first out.max series with a sample in key order,
// and where its segments end (every seriesSegmentLines lines; the first
// one holds the HELP and TYPE lines too); nil when no series has a
// sample. The cache's lock is held while the head is looked up, not while
// the lines are made or sent.
func (c *seriesCache) family(out *seriesOut, om bool) ([]byte, []int) {
	if out.enc == nil {
		return nil, nil
	}
	c.mu.Lock()
	if c.head == nil {
		c.head = map[bool][]byte{}
	}
	head, ok := c.head[om]
	if !ok {
		head = familyHead(om)
		c.head[om] = head
	}
	size := c.size
	c.mu.Unlock()
	x, enc := &out.x, out.enc
	buf := make([]byte, 0, size)
	buf = append(buf, head...)
	var ends []int
	n, lines := 0, 0
	for i := range x.Keys {
		if x.State[i] != metrics.SeriesSampled {
			continue
		}
		if n == out.max {
			break
		}
		n++
		p := enc.prefixes[i]
		if p == nil {
			continue
		}
		buf = append(buf, p...)
		buf = append(buf, ' ')
		buf = appendSampleValue(buf, x.Vals[i], om)
		buf = append(buf, '\n')
		if lines++; lines%seriesSegmentLines == 0 {
			ends = append(ends, len(buf))
		}
	}
	if n == 0 {
		return nil, nil
	}
	if len(ends) == 0 || ends[len(ends)-1] != len(buf) {
		ends = append(ends, len(buf))
	}
	c.mu.Lock()
	c.size = len(buf) + len(buf)/8
	c.mu.Unlock()
	return buf, ends
}

// familyHead is the family's HELP and TYPE lines as expfmt writes them.
func familyHead(om bool) []byte {
	out, err := encodeOne(&dto.Metric{Gauge: &dto.Gauge{Value: new(float64)}}, om)
	if err != nil || len(out) == 0 {
		return nil
	}
	// The last line is the sample; what precedes it is the head.
	i := bytes.LastIndexByte(out[:len(out)-1], '\n')
	return out[:i+1]
}

// seriesPrefix is a series's sample line up to its value, as expfmt
// writes it, for the series's key and labels.
func seriesPrefix(key string, labels []ts.Label) ([]byte, error) {
	names, vals := seriesLabels(key, labels)
	m := &dto.Metric{Gauge: &dto.Gauge{Value: new(float64)}}
	for i := range names {
		m.Label = append(m.Label, &dto.LabelPair{Name: &names[i], Value: &vals[i]})
	}
	// The text format's line; label names are valid and values escaped
	// the same way in OpenMetrics, so one prefix serves both.
	out, err := encodeOne(m, false)
	if err != nil || len(out) == 0 {
		return nil, errors.New("httpapi: series not encodable")
	}
	i := bytes.LastIndexByte(out[:len(out)-1], '\n')
	line := out[i+1 : len(out)-1]
	sp := bytes.LastIndexByte(line, ' ')
	if sp < 0 {
		return nil, errors.New("unexpected sample line")
	}
	return append([]byte(nil), line[:sp]...), nil
}

// encodeOne writes a one-metric family with expfmt.
func encodeOne(m *dto.Metric, om bool) ([]byte, error) {
	name, help := seriesFamily, seriesHelp
	mf := &dto.MetricFamily{Name: &name, Help: &help, Type: dto.MetricType_GAUGE.Enum(), Metric: []*dto.Metric{m}}
	var b bytes.Buffer
	var err error
	if om {
		_, err = expfmt.MetricFamilyToOpenMetrics(&b, mf)
	} else {
		_, err = expfmt.MetricFamilyToText(&b, mf)
	}
	return b.Bytes(), err
}

// appendSampleValue formats v as expfmt does: the text format as Go's
// shortest 'g', OpenMetrics the same with ".0" after an integer.
func appendSampleValue(b []byte, v float64, om bool) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	start := len(b)
	if v == math.Trunc(v) && math.Abs(v) < 1e6 && (v != 0 || !math.Signbit(v)) {
		// What 'g' writes for an integer below its exponent threshold
		// (1e6 at the shortest precision), without the float conversion.
		b = strconv.AppendInt(b, int64(v), 10)
	} else {
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	if om && !bytes.ContainsAny(b[start:], "e.") {
		b = append(b, '.', '0')
	}
	return b
}
