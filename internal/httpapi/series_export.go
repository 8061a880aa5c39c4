package httpapi

import (
	"bytes"
	"errors"
	"io"
	"math"
	"sort"
	"strconv"
	"sync"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// The exported series family (abacus_timeseries_value) is written
// straight from TS.MGET WITHLABELS's raw reply, not through const metrics
// and the registry: with 10,000 series, building a label set and a
// metric per series, then Gather's sorting and checks and the encoder's
// work per metric, cost nine tenths of a scrape's CPU. Each series's
// sample line up to its value ("abacus_timeseries_value{key=...,...}")
// is made by expfmt once and kept while the series's labels stay what
// they were (compared as the reply's raw bytes, so TS.ALTER, a new series
// or a deleted one is seen at the next scrape without any hook in the
// engine); a scrape only appends each value.

const seriesFamily = "abacus_timeseries_value"

const seriesHelp = "The latest sample of a time series matching http-export-series."

// seriesCache keeps the encoded label part of each exported series
// between scrapes. Its mutex makes it single-writer: scrapes may run
// concurrently (up to cap(Server.scraping)).
type seriesCache struct {
	mu      sync.Mutex
	gen     uint64
	entries map[string]*seriesEntry
	head    map[bool][]byte // "# HELP"/"# TYPE" lines, per format (true: OpenMetrics)
	size    int             // the last family's length and an eighth: the next one's buffer
}

type seriesEntry struct {
	labels string // the raw RESP bytes of the series's labels in the reply
	prefix []byte // the sample line up to its value, without the space
	gen    uint64 // the last scrape that saw the series
}

// seriesRow is one exported series of a scrape: its key and latest value.
type seriesRow struct {
	key    string
	labels []byte // raw RESP, aliasing the reply
	val    float64
}

// scanSeries reads TS.MGET WITHLABELS's raw RESP2 reply: every series
// with a sample, in key order, and how many series matched. It decodes no
// more than the keys and values; labels stay raw bytes.
func scanSeries(raw []byte) (rows []seriesRow, matched int, err error) {
	n, at, err := header(raw, 0, '*')
	if err != nil {
		return nil, 0, err
	}
	rows = make([]seriesRow, 0, n)
	sorted := true
	for range n {
		var parts int
		if parts, at, err = header(raw, at, '*'); err != nil {
			return nil, 0, err
		}
		if parts != 3 {
			return nil, 0, errors.New("httpapi: unexpected TS.MGET entry")
		}
		var key []byte
		if key, at, err = bulk(raw, at); err != nil {
			return nil, 0, err
		}
		lstart := at
		if at, err = skipValue(raw, at); err != nil {
			return nil, 0, err
		}
		labels := raw[lstart:at]
		var sparts int
		if sparts, at, err = header(raw, at, '*'); err != nil {
			return nil, 0, err
		}
		var vtext []byte
		for i := range sparts {
			start := at
			if at, err = skipValue(raw, at); err != nil {
				return nil, 0, err
			}
			if i == 1 {
				vtext = scalarText(raw[start:at])
			}
		}
		if sparts < 2 {
			continue
		}
		v, perr := strconv.ParseFloat(string(vtext), 64)
		if perr != nil {
			continue
		}
		k := string(key)
		if len(rows) > 0 && rows[len(rows)-1].key > k {
			sorted = false
		}
		rows = append(rows, seriesRow{key: k, labels: labels, val: v})
	}
	if at != len(raw) {
		return nil, 0, errors.New("httpapi: trailing bytes after the reply")
	}
	if !sorted {
		sort.Slice(rows, func(i, j int) bool { return rows[i].key < rows[j].key })
	}
	return rows, n, nil
}

// header reads a "<kind><n>\r\n" line at at, n not negative.
func header(b []byte, at int, kind byte) (int, int, error) {
	if at >= len(b) || b[at] != kind {
		return 0, 0, errShortReply
	}
	n, next, err := lengthLine(b, at)
	if err == nil && n < 0 {
		err = errors.New("httpapi: bad length in reply")
	}
	return n, next, err
}

// lengthLine reads the length of the bulk or array whose header is at at.
func lengthLine(b []byte, at int) (int, int, error) {
	end := bytes.Index(b[at:], []byte("\r\n"))
	if end < 1 {
		return 0, 0, errShortReply
	}
	n, err := strconv.Atoi(string(b[at+1 : at+end]))
	if err != nil {
		return 0, 0, errors.New("httpapi: bad length in reply")
	}
	return n, at + end + 2, nil
}

// bulk reads a bulk string at at.
func bulk(b []byte, at int) ([]byte, int, error) {
	n, at, err := header(b, at, '$')
	if err != nil {
		return nil, 0, err
	}
	if at+n+2 > len(b) {
		return nil, 0, errShortReply
	}
	return b[at : at+n], at + n + 2, nil
}

// skipValue returns where the reply value at at ends.
func skipValue(b []byte, at int) (int, error) {
	if at >= len(b) {
		return 0, errShortReply
	}
	switch b[at] {
	case '$':
		n, next, err := lengthLine(b, at)
		if err != nil || n < 0 {
			return next, err
		}
		if next+n+2 > len(b) {
			return 0, errShortReply
		}
		return next + n + 2, nil
	case '*':
		n, next, err := lengthLine(b, at)
		for range max(n, 0) {
			if err != nil {
				break
			}
			next, err = skipValue(b, next)
		}
		return next, err
	case '+', '-', ':':
		end := bytes.Index(b[at:], []byte("\r\n"))
		if end < 1 {
			return 0, errShortReply
		}
		return at + end + 2, nil
	}
	return 0, errors.New("httpapi: unexpected reply type " + strconv.Quote(string(b[at])))
}

// scalarText is the text of a simple string, integer or bulk reply.
func scalarText(v []byte) []byte {
	if len(v) < 3 {
		return nil
	}
	if v[0] == '$' {
		if i := bytes.Index(v, []byte("\r\n")); i > 0 {
			return v[i+2 : len(v)-2]
		}
		return nil
	}
	return v[1 : len(v)-2]
}

// write appends the series family to w in the format of om (OpenMetrics
// or the text format), through the cache: the label part of a series
// whose raw labels are unchanged since the last scrape is reused.
func (c *seriesCache) write(w io.Writer, rows []seriesRow, om bool) error {
	if len(rows) == 0 {
		return nil
	}
	_, err := w.Write(c.family(rows, om))
	return err
}

// family is the series family's text. The cache's lock is held while it
// is built, not while it is sent: a slow HTTP client does not hold up
// another scrape.
func (c *seriesCache) family(rows []seriesRow, om bool) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]*seriesEntry{}
		c.head = map[bool][]byte{}
	}
	c.gen++
	head, ok := c.head[om]
	if !ok {
		head = familyHead(om)
		c.head[om] = head
	}
	buf := make([]byte, 0, c.size)
	buf = append(buf, head...)
	for _, r := range rows {
		e := c.entries[r.key]
		if e == nil || e.labels != string(r.labels) {
			p, err := seriesPrefix(r.key, r.labels)
			if err != nil {
				continue // labels client_golang would refuse are skipped
			}
			e = &seriesEntry{labels: string(r.labels), prefix: p}
			c.entries[r.key] = e
		}
		e.gen = c.gen
		buf = append(buf, e.prefix...)
		buf = append(buf, ' ')
		buf = appendSampleValue(buf, r.val, om)
		buf = append(buf, '\n')
	}
	for k, e := range c.entries {
		if e.gen != c.gen {
			delete(c.entries, k)
		}
	}
	c.size = len(buf) + len(buf)/8
	return buf
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
// writes it, for the series's key and raw RESP labels.
func seriesPrefix(key string, rawLabels []byte) ([]byte, error) {
	lv, err := decode(rawLabels)
	if err != nil {
		return nil, err
	}
	names, vals := seriesLabels(value{elems: []value{{str: key}, lv}})
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
	b = strconv.AppendFloat(b, v, 'g', -1, 64)
	if om && !bytes.ContainsAny(b[start:], "e.") {
		b = append(b, '.', '0')
	}
	return b
}
