package httpapi

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// The dashboard's JSON: the page polls /api/status every second and
// /api/series while a filter is shown; every handler runs fixed commands
// whose only inputs from the request are a filter and a window name.

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	if errors.Is(err, errNotReady) {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, map[string]string{"error": err.Error()})
}

// status is the status panel's data: INFO's fields as numbers, totals
// over the databases and the command statistics; the page turns the
// cumulative counters into rates between two polls.
type status struct {
	ServerTimeMs    int64              `json:"serverTimeMs"`
	Version         string             `json:"version"`
	RedisVersion    string             `json:"redisVersion"`
	UptimeSeconds   int64              `json:"uptimeSeconds"`
	OpsPerSec       int64              `json:"opsPerSec"`
	Clients         int64              `json:"clients"`
	BlockedClients  int64              `json:"blockedClients"`
	MaxClients      int64              `json:"maxClients"`
	UsedMemory      int64              `json:"usedMemory"`
	UsedMemoryRSS   int64              `json:"usedMemoryRss"`
	UsedMemoryPeak  int64              `json:"usedMemoryPeak"`
	MaxMemory       int64              `json:"maxMemory"`
	MaxMemoryPolicy string             `json:"maxMemoryPolicy"`
	Keys            int64              `json:"keys"`
	Expires         int64              `json:"expires"`
	Hits            int64              `json:"hits"`
	Misses          int64              `json:"misses"`
	Commands        int64              `json:"commands"`
	CommandCalls    int64              `json:"commandCalls"`
	CommandUsec     int64              `json:"commandUsec"`
	NetInput        int64              `json:"netInputBytes"`
	NetOutput       int64              `json:"netOutputBytes"`
	ExpiredKeys     int64              `json:"expiredKeys"`
	EvictedKeys     int64              `json:"evictedKeys"`
	Latency         map[string]latency `json:"latency,omitempty"`
}

// latency is one command's INFO latencystats percentiles (µs), present
// when INFO prints them.
type latency struct {
	Calls       int64              `json:"calls"`
	Percentiles map[string]float64 `json:"percentiles"`
}

func (s *Server) apiStatus(w http.ResponseWriter, r *http.Request) {
	replies, err := s.b.run(r.Context(), nil, []string{"INFO", "ALL"})
	if err == nil {
		err = replies[0].err()
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, statusFromInfo(parseInfo(replies[0].str)))
}

func statusFromInfo(fields []infoField) status {
	var st status
	n := func(s string) int64 { v, _ := strconv.ParseInt(s, 10, 64); return v }
	for _, f := range fields {
		switch f.key {
		case "server_time_usec":
			st.ServerTimeMs = n(f.val) / 1000
		case "abacus_version":
			st.Version = f.val
		case "redis_version":
			st.RedisVersion = f.val
		case "uptime_in_seconds":
			st.UptimeSeconds = n(f.val)
		case "instantaneous_ops_per_sec":
			st.OpsPerSec = n(f.val)
		case "connected_clients":
			st.Clients = n(f.val)
		case "blocked_clients":
			st.BlockedClients = n(f.val)
		case "maxclients":
			st.MaxClients = n(f.val)
		case "used_memory":
			st.UsedMemory = n(f.val)
		case "used_memory_rss":
			st.UsedMemoryRSS = n(f.val)
		case "used_memory_peak":
			st.UsedMemoryPeak = n(f.val)
		case "maxmemory":
			st.MaxMemory = n(f.val)
		case "maxmemory_policy":
			st.MaxMemoryPolicy = f.val
		case "keyspace_hits":
			st.Hits = n(f.val)
		case "keyspace_misses":
			st.Misses = n(f.val)
		case "total_commands_processed":
			st.Commands = n(f.val)
		case "total_net_input_bytes":
			st.NetInput = n(f.val)
		case "total_net_output_bytes":
			st.NetOutput = n(f.val)
		case "expired_keys":
			st.ExpiredKeys = n(f.val)
		case "evicted_keys":
			st.EvictedKeys = n(f.val)
		}
		switch {
		case f.section == "Keyspace" && strings.HasPrefix(f.key, "db"):
			sub := subfields(f.val)
			st.Keys += int64(sub["keys"])
			st.Expires += int64(sub["expires"])
		case f.section == "Commandstats" && strings.HasPrefix(f.key, "cmdstat_"):
			sub := subfields(f.val)
			st.CommandCalls += int64(sub["calls"])
			st.CommandUsec += int64(sub["usec"])
		case f.section == "Latencystats" && strings.HasPrefix(f.key, "latency_percentiles_usec_"):
			if st.Latency == nil {
				st.Latency = map[string]latency{}
			}
			st.Latency[strings.TrimPrefix(f.key, "latency_percentiles_usec_")] = latency{Percentiles: subfields(f.val)}
		}
	}
	return st
}

// A window of the series explorer and the aggregation bucket that draws
// it in about 300 points.
type window struct {
	name           string
	spanMs, bucket int64
}

var windows = []window{
	{"5m", 5 * 60e3, 1e3},
	{"1h", 3600e3, 10e3},
	{"24h", 86400e3, 300e3},
	{"7d", 7 * 86400e3, 1800e3},
}

// Limits of the series explorer: the filter's size, how many matching
// keys are listed and how many series are drawn.
const (
	maxFilterLen   = 1024
	maxFilterExprs = 16
	maxListed      = 200
	maxCharted     = 50
)

type seriesReply struct {
	Window      string       `json:"window"`
	FromMs      int64        `json:"fromMs"`
	ToMs        int64        `json:"toMs"`
	BucketMs    int64        `json:"bucketMs"`
	Aggregation string       `json:"aggregation"`
	Matched     int          `json:"matched"`
	Keys        []string     `json:"keys"`
	Charted     int          `json:"charted"`
	X           []float64    `json:"x"` // bucket starts, unix seconds
	Series      []seriesData `json:"series"`
}

type seriesData struct {
	Key    string            `json:"key"`
	Labels map[string]string `json:"labels"`
	// Values has one entry per X; null where the bucket has no sample.
	Values []*float64 `json:"values"`
}

func (s *Server) apiSeries(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	filter := q.Get("filter")
	exprs := strings.Fields(filter)
	if len(filter) > maxFilterLen || len(exprs) > maxFilterExprs || len(exprs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the filter needs 1 to 16 label expressions, such as type=temp"})
		return
	}
	win := windows[0]
	for _, c := range windows {
		if c.name == q.Get("window") {
			win = c
		}
	}
	var now int64
	replies, err := s.b.run(r.Context(), &now, append([]string{"TS.QUERYINDEX"}, exprs...))
	if err != nil {
		writeError(w, err)
		return
	}
	if err := replies[0].err(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	keys := make([]string, 0, len(replies[0].elems))
	for _, k := range replies[0].elems {
		keys = append(keys, k.str)
	}
	from := (now-win.spanMs)/win.bucket*win.bucket + win.bucket
	out := seriesReply{Window: win.name, FromMs: from, ToMs: now, BucketMs: win.bucket, Aggregation: "avg",
		Matched: len(keys), Keys: keys[:min(len(keys), maxListed)], Series: []seriesData{}}
	for t := from; t <= now; t += win.bucket {
		out.X = append(out.X, float64(t)/1000)
	}
	if len(keys) > 0 {
		agg := []string{strconv.FormatInt(from, 10), strconv.FormatInt(now, 10), "AGGREGATION", "avg", strconv.FormatInt(win.bucket, 10)}
		var cmds [][]string
		if len(keys) <= maxCharted {
			cmds = [][]string{append(append([]string{"TS.MRANGE"}, agg...), append([]string{"WITHLABELS", "FILTER"}, exprs...)...)}
		} else {
			// Too many to draw: the first maxCharted keys, one TS.RANGE each
			// (MRANGE's FILTER cannot be cut short).
			for _, k := range keys[:maxCharted] {
				cmds = append(cmds, append([]string{"TS.RANGE", k}, agg...))
			}
		}
		replies, err := s.b.run(r.Context(), nil, cmds...)
		if err != nil {
			writeError(w, err)
			return
		}
		if len(keys) <= maxCharted {
			for _, row := range replies[0].elems {
				if len(row.elems) == 3 {
					out.Series = append(out.Series, bucketed(seriesKey(row), row.elems[1], row.elems[2], from, win.bucket, len(out.X)))
				}
			}
		} else {
			for i, rep := range replies {
				out.Series = append(out.Series, bucketed(keys[i], value{}, rep, from, win.bucket, len(out.X)))
			}
		}
	}
	out.Charted = len(out.Series)
	writeJSON(w, http.StatusOK, out)
}

// bucketed places a range reply's samples on the window's buckets.
func bucketed(key string, labels, samples value, from, bucket int64, n int) seriesData {
	d := seriesData{Key: key, Labels: map[string]string{}, Values: make([]*float64, n)}
	for _, l := range labels.elems {
		if len(l.elems) == 2 {
			d.Labels[l.elems[0].str] = l.elems[1].str
		}
	}
	for _, smp := range samples.elems {
		if len(smp.elems) != 2 {
			continue
		}
		i := (smp.elems[0].num - from) / bucket
		v, err := strconv.ParseFloat(smp.elems[1].str, 64)
		// JSON has no NaN or infinities: such a bucket is drawn as a gap.
		if err != nil || i < 0 || i >= int64(n) || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		d.Values[i] = &v
	}
	return d
}

type slowEntry struct {
	ID         int64    `json:"id"`
	Time       int64    `json:"time"` // unix seconds
	DurationUs int64    `json:"durationUs"`
	Args       []string `json:"args"`
	Client     string   `json:"client"`
	Name       string   `json:"name"`
}

func (s *Server) apiSlowlog(w http.ResponseWriter, r *http.Request) {
	replies, err := s.b.run(r.Context(), nil, []string{"SLOWLOG", "GET", "50"}, []string{"SLOWLOG", "LEN"})
	if err != nil {
		writeError(w, err)
		return
	}
	entries := []slowEntry{}
	for _, e := range replies[0].elems {
		if len(e.elems) < 6 {
			continue
		}
		se := slowEntry{ID: e.elems[0].num, Time: e.elems[1].num, DurationUs: e.elems[2].num,
			Client: e.elems[4].str, Name: e.elems[5].str}
		for _, a := range e.elems[3].elems {
			se.Args = append(se.Args, a.str)
		}
		entries = append(entries, se)
	}
	writeJSON(w, http.StatusOK, map[string]any{"length": replies[1].num, "entries": entries})
}
