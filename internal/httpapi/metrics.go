package httpapi

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/ds/ts"
	"github.com/abacusdb/abacus/internal/engine"
)

// collector makes /metrics at scrape time: it runs INFO ALL, SLOWLOG and,
// when http-export-series is set, reads the exported series, under one
// hold of the server lock, and turns the replies into const metrics, but
// for the exported series, which it leaves for series_export.go to write.
// It keeps no state between scrapes but the scrape count (the series
// cache keeps only encodings), so what /metrics shows is what INFO says at
// that moment. It is an unchecked collector (Describe sends nothing): the
// set of metrics follows INFO and the exported series.
type collector struct {
	b       *backend
	cfg     *config.Config
	scrapes *atomic.Int64
	ctx     context.Context // the request's: its user, its cancellation
	cache   *seriesCache
	// series is what the handler writes after the registry's families
	// (series_export.go).
	series seriesOut
}

func (c *collector) Describe(chan<- *prometheus.Desc) {}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	start := time.Now()
	c.scrapes.Add(1)
	cmds := [][]string{{"INFO", "ALL"}, {"SLOWLOG", "LEN"}, {"SLOWLOG", "GET", "1"}}
	filter := strings.Fields(c.cfg.Str(config.HTTPExportSeries))
	prev := c.cache.current()
	exported := false
	var xerr error
	var then func(*engine.Session, [][]byte)
	if len(filter) > 0 {
		then = func(sess *engine.Session, raw [][]byte) {
			// The series go with INFO: not exported when it is refused.
			if len(raw[0]) > 0 && raw[0][0] != '-' {
				exported = true
				xerr = c.b.exportSeries(sess, filter, knownGen(prev), &c.series.x)
			}
		}
	}
	// A scrape that outlives Prometheus's timeout is of no use; the gate
	// wait is the only part that can be cut short.
	ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
	defer cancel()
	raw, err := c.b.runThen(ctx, nil, then, cmds...)
	var replies []value
	if err == nil {
		replies, err = decodeAll(raw)
	}
	m := emitter{ch: ch}
	up := 0.0
	if err == nil && replies[0].err() == nil {
		up = 1
		info := parseInfo(replies[0].str)
		m.info(info)
		m.slowlog(replies[1], replies[2])
		if exported {
			m.series(c, prev, xerr)
		}
	} else if err == nil {
		err = replies[0].err()
	}
	errText := ""
	if err != nil {
		errText = err.Error()
	}
	m.gauge("redis_exporter_last_scrape_error", "The last scrape error status.", boolFloat(err != nil), []string{"err"}, errText)
	m.gauge("redis_up", "Whether INFO could be read: 0 while the server is loading its data.", up, nil)
	m.counter("redis_exporter_scrapes_total", "Scrapes of /metrics.", float64(c.scrapes.Load()), nil)
	m.gauge("redis_exporter_last_scrape_duration_seconds", "How long this scrape took, the server lock included.", time.Since(start).Seconds(), nil)
}

// emitter sends const metrics; a metric client_golang refuses (an
// invalid label value) is skipped, as redis_exporter skips them.
type emitter struct {
	ch chan<- prometheus.Metric
}

func (m emitter) send(name, help string, t prometheus.ValueType, v float64, labels []string, values ...string) {
	desc := prometheus.NewDesc(name, help, labels, nil)
	if mt, err := prometheus.NewConstMetric(desc, t, v, values...); err == nil {
		m.ch <- mt
	}
}

func (m emitter) gauge(name, help string, v float64, labels []string, values ...string) {
	m.send(name, help, prometheus.GaugeValue, v, labels, values...)
}

func (m emitter) counter(name, help string, v float64, labels []string, values ...string) {
	m.send(name, help, prometheus.CounterValue, v, labels, values...)
}

// infoField is one "field:value" line of INFO and its section.
type infoField struct{ section, key, val string }

func parseInfo(text string) []infoField {
	var out []infoField
	section := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if rest, ok := strings.CutPrefix(line, "# "); ok {
			section = rest
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || k == "" {
			continue
		}
		out = append(out, infoField{section, k, v})
	}
	return out
}

// infoValue reads a field's value as the exporter does: ok/true are 1,
// err/fail/false 0, anything else a number or nothing.
func infoValue(s string) (float64, bool) {
	switch s {
	case "ok", "true":
		return 1, true
	case "err", "fail", "false":
		return 0, true
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

func (m emitter) info(fields []infoField) {
	kv := make(map[string]string, len(fields))
	latency := map[string]map[float64]float64{}
	calls := map[string]uint64{}
	usec := map[string]float64{}
	for _, f := range fields {
		kv[f.key] = f.val
		switch {
		case f.section == "Commandstats" && strings.HasPrefix(f.key, "cmdstat_"):
			cmd := strings.TrimPrefix(f.key, "cmdstat_")
			st := subfields(f.val)
			calls[cmd] = uint64(st["calls"])
			usec[cmd] = st["usec"]
			m.counter("redis_commands_total", "Total number of calls per command", st["calls"], []string{"cmd"}, cmd)
			m.counter("redis_commands_duration_seconds_total", "Total amount of time in seconds spent per command", st["usec"]/1e6, []string{"cmd"}, cmd)
			m.counter("redis_commands_rejected_calls_total", "Total number of errors prior command execution per command", st["rejected_calls"], []string{"cmd"}, cmd)
			m.counter("redis_commands_failed_calls_total", "Total number of errors within command execution per command", st["failed_calls"], []string{"cmd"}, cmd)
		case f.section == "Latencystats" && strings.HasPrefix(f.key, "latency_percentiles_usec_"):
			q := map[float64]float64{}
			for p, v := range subfields(f.val) {
				// p99.9 is quantile 0.999: a summary's quantiles are
				// fractions (OpenMetrics refuses 99.9).
				if pf, err := strconv.ParseFloat(strings.TrimPrefix(p, "p"), 64); err == nil {
					q[pf/100] = v
				}
			}
			latency[strings.TrimPrefix(f.key, "latency_percentiles_usec_")] = q
		case strings.HasPrefix(f.key, "abacus_ratelimit_"):
			cmd := strings.TrimPrefix(f.key, "abacus_ratelimit_")
			st := subfields(f.val)
			m.counter("abacus_ratelimit_allowed_total", "Requests a rate limiter allowed, per command (CL.THROTTLE, GCRA, RATELIMIT.SLIDING)", st["allowed"], []string{"cmd"}, cmd)
			m.counter("abacus_ratelimit_denied_total", "Requests a rate limiter denied, per command (CL.THROTTLE, GCRA, RATELIMIT.SLIDING)", st["denied"], []string{"cmd"}, cmd)
		case f.section == "Errorstats" && strings.HasPrefix(f.key, "errorstat_"):
			m.counter("redis_errors_total", "Total number of errors per error type", subfields(f.val)["count"], []string{"err"}, strings.TrimPrefix(f.key, "errorstat_"))
		case f.section == "Keyspace" && strings.HasPrefix(f.key, "db"):
			st := subfields(f.val)
			m.gauge("redis_db_keys", "Total number of keys by DB", st["keys"], []string{"db"}, f.key)
			m.gauge("redis_db_keys_expiring", "Total number of expiring keys by DB", st["expires"], []string{"db"}, f.key)
			m.gauge("redis_db_avg_ttl_seconds", "Avg TTL in seconds", st["avg_ttl"]/1000, []string{"db"}, f.key)
		default:
			m.field(f)
		}
	}
	// Summaries need a command's count and sum (commandstats) beside its
	// percentiles (latencystats), as the exporter builds them.
	for cmd, q := range latency {
		if n, ok := calls[cmd]; ok {
			desc := prometheus.NewDesc("redis_latency_percentiles_usec", "A summary of latency percentile distribution per command", []string{"cmd"}, nil)
			if s, err := prometheus.NewConstSummary(desc, n, usec[cmd], q, cmd); err == nil {
				m.ch <- s
			}
		}
	}
	if up, ok := infoValue(kv["uptime_in_seconds"]); ok {
		m.gauge("redis_start_time_seconds", "Start time of the Redis instance since unix epoch in seconds.", float64(time.Now().Unix())-up, nil)
	}
	for _, f := range []string{"hz", "configured_hz"} {
		if v, ok := infoValue(kv[f]); ok {
			m.gauge("redis_"+f, f+" metric", v, nil)
		}
	}
	// The exporter reads these two from CONFIG GET; INFO has the same values.
	for _, f := range []string{"maxmemory", "maxclients"} {
		if v, ok := infoValue(kv[f]); ok {
			m.gauge("redis_config_"+f, "config_"+f+" metric", v, nil)
		}
	}
	values := make([]string, len(instanceInfoLabels))
	for i, l := range instanceInfoLabels {
		values[i] = kv[l]
	}
	m.gauge("redis_instance_info", "Information about the Redis instance", 1, instanceInfoLabels, values...)
}

// field exports one plain INFO field under its exporter name (or
// Abacus's own), if it has one.
func (m emitter) field(f infoField) {
	v, ok := infoValue(f.val)
	if !ok {
		return
	}
	if name, ok := infoCounters[f.key]; ok {
		m.counter("redis_"+name, name+" metric", v, nil)
		return
	}
	if name, ok := infoGauges[f.key]; ok {
		if name == "latest_fork_usec" {
			name, v = "latest_fork_seconds", v/1e6
		}
		m.gauge("redis_"+name, name+" metric", v, nil)
		return
	}
	if strings.HasPrefix(f.key, "cluster_") {
		m.gauge("redis_"+sanitizeName(f.key), f.key+" metric", v, nil)
		return
	}
	if a, ok := abacusInfo[f.key]; ok {
		if a.counter {
			m.counter("abacus_"+a.name, "INFO "+f.key, v, nil)
		} else {
			m.gauge("abacus_"+a.name, "INFO "+f.key, v, nil)
		}
	}
}

// subfields reads "a=1,b=2" (commandstats, keyspace, errorstats lines).
func subfields(s string) map[string]float64 {
	out := map[string]float64{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			out[k] = f
		}
	}
	return out
}

func (m emitter) slowlog(length, last value) {
	if length.kind == ':' {
		m.gauge("redis_slowlog_length", "Total slowlog", float64(length.num), nil)
	}
	var id, dur float64
	if len(last.elems) > 0 && len(last.elems[0].elems) > 2 {
		e := last.elems[0].elems
		id, dur = float64(e[0].num), float64(e[2].num)/1e6
	}
	m.gauge("redis_slowlog_last_id", "Last id of slowlog", id, nil)
	m.gauge("redis_last_slow_execution_duration_seconds", "The amount of time needed for last slow execution, in seconds", dur, nil)
}

// series sends the gauges about the export and readies c.series for the
// handler: the encoding of its generation (prev's, or a new one when the
// engine sent labels) and the cap.
func (m emitter) series(c *collector, prev *seriesEncoding, xerr error) {
	if xerr != nil {
		m.gauge("abacus_timeseries_export_error", "1 when http-export-series could not be queried (a bad filter).", 1, []string{"err"}, xerr.Error())
		return
	}
	out := &c.series
	out.enc = c.cache.encoding(prev, &out.x)
	out.max = int(c.cfg.Int(config.HTTPExportSeriesMax))
	// Series without samples have nothing to export and take no place
	// under the cap.
	matched, sampled := out.counts()
	m.gauge("abacus_timeseries_export_matched", "Time series matching http-export-series.", float64(matched), nil)
	m.gauge("abacus_timeseries_export_truncated", "1 when more series match http-export-series than http-export-series-max allows.", boolFloat(sampled > out.max), nil)
}

func seriesKey(r value) string {
	if len(r.elems) == 0 {
		return ""
	}
	return r.elems[0].str
}

// seriesLabels are a series's Prometheus labels: "key" (its key) and its
// own labels, their names made valid ([a-zA-Z_][a-zA-Z0-9_]*) and
// prefixed "label_" where they would clash with "key" or a reserved
// "__" name; a name that still repeats one before it is dropped. Values
// that are not UTF-8 are repaired, as Prometheus requires UTF-8.
func seriesLabels(key string, labels []ts.Label) (names, vals []string) {
	names = []string{"key"}
	vals = []string{utf8Valid(key)}
	seen := map[string]bool{"key": true}
	for _, l := range labels {
		n := sanitizeName(l.Name)
		if n == "key" || strings.HasPrefix(n, "__") {
			n = "label_" + n
		}
		if seen[n] {
			continue
		}
		seen[n] = true
		names = append(names, n)
		vals = append(vals, utf8Valid(l.Value))
	}
	return names, vals
}

// sanitizeName makes s a valid metric or label name: each byte outside
// [a-zA-Z0-9_] becomes "_", and a leading digit gets a "_" before it.
func sanitizeName(s string) string {
	valid := func(c byte) bool {
		return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	ok := s != "" && !(s[0] >= '0' && s[0] <= '9')
	for i := 0; ok && i < len(s); i++ {
		ok = valid(s[i])
	}
	if ok {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if !valid(c) {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] >= '0' && b[0] <= '9' {
		return "_" + string(b)
	}
	return string(b)
}

func utf8Valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
