package metrics

import (
	"math"
	"sort"
	"strings"

	"github.com/abacusdb/abacus/internal/ascii"
	"github.com/abacusdb/abacus/internal/ds/ts"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/num"
	"github.com/abacusdb/abacus/internal/resp"
)

// The time-series queries: TS.RANGE, TS.REVRANGE, TS.MRANGE, TS.MREVRANGE
// and TS.MGET (see timeseries.go for the family).

func init() {
	const (
		grp = "timeseries"
		acl = "@timeseries"
	)
	ro := engine.FlagReadonly
	engine.Register(
		&engine.Command{Name: "ts.range", Arity: -4, Flags: ro, First: 1, Last: 1, Step: 1, KeyFlags: "RO access", ACL: acl, Group: grp,
			Summary: "Query a range in forward direction", Since: "1.0.0", Complexity: "O(n/m+k) where n = Number of data points, m = Chunk size (data points per chunk), k = Number of data points that are in the requested range",
			Handler: cmdTSRange},
		&engine.Command{Name: "ts.revrange", Arity: -4, Flags: ro, First: 1, Last: 1, Step: 1, KeyFlags: "RO access", ACL: acl, Group: grp,
			Summary: "Query a range in reverse direction", Since: "1.4.0", Complexity: "O(n/m+k) where n = Number of data points, m = Chunk size (data points per chunk), k = Number of data points that are in the requested range",
			Handler: cmdTSRange},
		&engine.Command{Name: "ts.mrange", Arity: -4, Flags: ro, ACL: acl, Group: grp,
			Summary: "Query a range across multiple time series by filters in forward direction", Since: "1.0.0",
			Complexity: "O(n/m+k) where n = Number of data points, m = Chunk size (data points per chunk), k = Number of data points that are in the requested ranges",
			Handler:    cmdTSMrange},
		&engine.Command{Name: "ts.mrevrange", Arity: -4, Flags: ro, ACL: acl, Group: grp,
			Summary: "Query a range across multiple time-series by filters in reverse direction", Since: "1.4.0",
			Complexity: "O(n/m+k) where n = Number of data points, m = Chunk size (data points per chunk), k = Number of data points that are in the requested ranges",
			Handler:    cmdTSMrange},
		&engine.Command{Name: "ts.sum", Arity: 4, Flags: ro, First: 1, Last: 1, Step: 1, KeyFlags: "RO access", ACL: acl, Group: grp,
			Summary: "Get the sum of the sample values in a time range, as one value", Since: "Abacus 0.1.0",
			Complexity: "O(log(n)+m) where n = Number of chunks, m = Chunk size (the window's two edge chunks are decoded)",
			Handler:    cmdTSSum},
		&engine.Command{Name: "ts.mget", Arity: -3, Flags: ro, ACL: acl, Group: grp,
			Summary: "Get the sample with the highest timestamp from each time series matching a specific filter", Since: "1.0.0",
			Complexity: "O(n) where n is the number of time-series that match the filters", Handler: cmdTSMget},
	)
}

// rangeQuery is a parsed TS.RANGE / TS.MRANGE.
type rangeQuery struct {
	opts     ts.RangeOpts
	latest   bool
	labels   int // 0 none, 1 WITHLABELS, 2 SELECTED_LABELS
	selected []string
	filters  []ts.Matcher
	groupBy  string
	reducer  ts.Agg
	grouped  bool
	agg      ts.Aggregation // the AGGREGATION clause, when hasAgg (opts.Agg is nil)
	hasAgg   bool
}

// the words that end SELECTED_LABELS' list
var rangeWords = map[string]bool{
	"LATEST": true, "FILTER_BY_TS": true, "FILTER_BY_VALUE": true, "COUNT": true, "ALIGN": true,
	"AGGREGATION": true, "BUCKETTIMESTAMP": true, "EMPTY": true, "WITHLABELS": true,
	"SELECTED_LABELS": true, "FILTER": true, "GROUPBY": true, "REDUCE": true,
}

// parseRangeQuery reads fromTimestamp, toTimestamp and the options that
// follow into q (a zero rangeQuery, the caller's: TS.RANGE allocates
// nothing to parse); multi enables the TS.MRANGE clauses.
func parseRangeQuery(c *engine.Ctx, args [][]byte, multi bool, q *rangeQuery) bool {
	q.opts.Count = -1
	o := &q.opts
	fromMin := len(args[0]) == 1 && args[0][0] == '-'
	toMax := len(args[1]) == 1 && args[1][0] == '+'
	var ok bool
	if o.From, ok = parseRangeBound(c, args[0], true); !ok {
		return false
	}
	if o.To, ok = parseRangeBound(c, args[1], false); !ok {
		return false
	}
	var agg *ts.Aggregation
	alignWord := ""
	var alignTS int64
	hasAlign, hasEmpty := false, false
	bt := ts.BucketStart
	filterAt := -1
	for i := 2; i < len(args); i++ {
		word := strings.ToUpper(string(args[i]))
		switch word {
		case "LATEST":
			q.latest = true
		case "FILTER_BY_TS":
			j := i + 1
			for ; j < len(args); j++ {
				v, ok := num.ParseInt(args[j])
				if !ok || v < 0 {
					break
				}
				o.FilterTS = append(o.FilterTS, v)
			}
			if j == i+1 {
				c.Error("ERR TSDB: FILTER_BY_TS one or more arguments are missing")
				return false
			}
			sort.Slice(o.FilterTS, func(a, b int) bool { return o.FilterTS[a] < o.FilterTS[b] })
			o.HasFilterTS = true
			i = j - 1
		case "FILTER_BY_VALUE":
			if i+2 >= len(args) {
				c.Error("ERR TSDB: FILTER_BY_VALUE one or more arguments are missing")
				return false
			}
			if o.MinV, ok = num.ParseFloat(args[i+1]); !ok {
				c.Error("ERR TSDB: Couldn't parse MIN")
				return false
			}
			if o.MaxV, ok = num.ParseFloat(args[i+2]); !ok {
				c.Error("ERR TSDB: Couldn't parse MAX")
				return false
			}
			o.HasValue = true
			i += 2
		case "COUNT":
			if i+1 >= len(args) {
				c.Error("ERR TSDB: COUNT argument is missing")
				return false
			}
			n, ok := num.ParseInt(args[i+1])
			if !ok {
				c.Error("ERR TSDB: Couldn't parse COUNT")
				return false
			}
			if n <= 0 {
				c.Error("ERR TSDB: Invalid COUNT value")
				return false
			}
			o.Count = int(min(n, math.MaxInt32))
			i++
		case "ALIGN":
			if i+1 >= len(args) {
				c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
				return false
			}
			switch a := args[i+1]; {
			case ascii.EqualFold(a, "start") || string(a) == "-":
				alignWord = "start"
			case ascii.EqualFold(a, "end") || string(a) == "+":
				alignWord = "end"
			default:
				v, ok := num.ParseInt(args[i+1])
				if !ok || v < 0 {
					c.Error("ERR TSDB: unknown ALIGN parameter")
					return false
				}
				alignTS = v
			}
			hasAlign = true
			i++
		case "AGGREGATION":
			if i+2 >= len(args) {
				c.Error("ERR TSDB: Couldn't parse AGGREGATION")
				return false
			}
			a, ok := ts.ParseAgg(string(args[i+1]))
			if !ok {
				c.Error(errTSUnknownAgg)
				return false
			}
			d, ok := num.ParseInt(args[i+2])
			if !ok {
				c.Error("ERR TSDB: Couldn't parse AGGREGATION")
				return false
			}
			if d <= 0 {
				c.Error("ERR TSDB: bucketDuration must be greater than zero")
				return false
			}
			q.agg = ts.Aggregation{Type: a, Bucket: d}
			agg = &q.agg
			i += 2
		case "BUCKETTIMESTAMP":
			if i+1 >= len(args) {
				c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
				return false
			}
			switch strings.ToLower(string(args[i+1])) {
			case "-", "start", "low":
				bt = ts.BucketStart
			case "+", "end", "high":
				bt = ts.BucketEnd
			case "~", "mid":
				bt = ts.BucketMid
			default:
				c.Error("ERR TSDB: unknown BUCKETTIMESTAMP parameter")
				return false
			}
			i++
		case "EMPTY":
			hasEmpty = true
		case "WITHLABELS", "SELECTED_LABELS":
			if !multi {
				c.Errorf("ERR TSDB: unknown argument '%s'", args[i])
				return false
			}
			if i, ok = parseLabelsOpt(c, args, i, &q.labels, &q.selected); !ok {
				return false
			}
		case "FILTER":
			if !multi {
				c.Errorf("ERR TSDB: unknown argument '%s'", args[i])
				return false
			}
			j := i + 1
			for ; j < len(args) && !strings.EqualFold(string(args[j]), "GROUPBY"); j++ {
			}
			if j == i+1 {
				c.Error("ERR TSDB: missing labels for filter argument")
				return false
			}
			if q.filters, ok = parseFilters(c, args[i+1:j]); !ok {
				return false
			}
			filterAt = i
			i = j - 1
		case "GROUPBY":
			if !multi {
				c.Errorf("ERR TSDB: unknown argument '%s'", args[i])
				return false
			}
			if filterAt < 0 {
				c.Error("ERR TSDB: GROUPBY should always come after filter")
				return false
			}
			if i+4 != len(args) || !strings.EqualFold(string(args[i+2]), "REDUCE") {
				c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
				return false
			}
			r, ok := ts.ParseAgg(string(args[i+3]))
			if !ok || r == ts.AggFirst || r == ts.AggLast || r == ts.AggTwa {
				c.Error("ERR TSDB: Invalid reducer type")
				return false
			}
			q.grouped, q.groupBy, q.reducer = true, string(args[i+1]), r
			i = len(args)
		default:
			c.Errorf("ERR TSDB: unknown argument '%s'", args[i])
			return false
		}
	}
	if hasAlign {
		if agg == nil {
			c.Error("ERR TSDB: ALIGN parameter can only be used with AGGREGATION")
			return false
		}
		switch alignWord {
		case "start":
			if fromMin {
				c.Error("ERR TSDB: start alignment can only be used with explicit start timestamp")
				return false
			}
			alignTS = o.From
		case "end":
			if toMax {
				c.Error("ERR TSDB: end alignment can only be used with explicit end timestamp")
				return false
			}
			alignTS = o.To
		}
	}
	if agg != nil {
		agg.Align, agg.TS, agg.Empty = alignTS, bt, hasEmpty
		q.hasAgg = true
	}
	if multi && filterAt < 0 {
		c.Error("ERR TSDB: missing FILTER argument")
		return false
	}
	return true
}

// parseLabelsOpt reads the WITHLABELS or SELECTED_LABELS option at
// args[i] of TS.MRANGE / TS.MGET into mode (1 or 2) and selected,
// returning the index of its last argument; the two do not combine.
func parseLabelsOpt(c *engine.Ctx, args [][]byte, i int, mode *int, selected *[]string) (int, bool) {
	if strings.EqualFold(string(args[i]), "WITHLABELS") {
		if *mode == 2 {
			c.Error("ERR TSDB: cannot accept WITHLABELS and SELECT_LABELS together")
			return i, false
		}
		*mode = 1
		return i, true
	}
	if *mode == 1 {
		c.Error("ERR TSDB: cannot accept WITHLABELS and SELECT_LABELS together")
		return i, false
	}
	j := i + 1
	for ; j < len(args) && !rangeWords[strings.ToUpper(string(args[j]))]; j++ {
		*selected = append(*selected, string(args[j]))
	}
	if j == i+1 {
		c.Error("ERR TSDB: SELECT_LABELS should have at least 1 parameter")
		return i, false
	}
	*mode = 2
	return j - 1, true
}

// samples runs the query on one series (at key).
func (q *rangeQuery) samples(c *engine.Ctx, key string, s *ts.Series, reverse bool) []ts.Sample {
	o := q.opts
	o.Reverse = reverse
	o.Extra = nil
	agg := q.agg
	if q.hasAgg {
		o.Agg = &agg
	}
	if q.latest {
		if p, ok := latestBucket(c.DB, key, s); ok {
			if last, lok := s.Last(); !lok || p.T > last.T {
				o.Extra = &p
			}
		}
	}
	return s.Range(&o)
}

func writeSamples(c *engine.Ctx, sms []ts.Sample) {
	c.W.Array(len(sms))
	for _, sm := range sms {
		writeSample(c, sm)
	}
}

func cmdTSRange(c *engine.Ctx) {
	key := c.Key(1)
	var q rangeQuery
	if !parseRangeQuery(c, c.Args[2:], false, &q) {
		return
	}
	s := tsLookup(c, key, false)
	if s == nil {
		return
	}
	writeSamples(c, q.samples(c, key, s, c.Cmd.Name == "ts.revrange"))
}

// sumBucket is TS.SUM's bucket: one bucket from 0 holds every timestamp
// below 2^62, and its end does not overflow.
const sumBucket int64 = 1 << 62

// cmdTSSum is TS.SUM key fromTimestamp toTimestamp: the sum of the values
// of the samples in the range, as TS.GET writes a value; 0 for a range
// without samples. It is the value of TS.RANGE key from to AGGREGATION
// sum with one bucket spanning the range, bit for bit (the same
// aggregation: whole chunks from their summaries, the edges decoded),
// with a reply of one value where TS.RANGE's is a list of pairs: the
// cheapest reply for a count of events in a window (recipes.Events).
func cmdTSSum(c *engine.Ctx) {
	_, s, from, to := keyRange(c, false)
	if s == nil {
		return
	}
	agg := ts.Aggregation{Type: ts.AggSum, Bucket: sumBucket}
	o := ts.RangeOpts{From: from, To: to, Count: -1, Agg: &agg}
	// Timestamps from 2^62 on fall in a second bucket.
	sum := 0.0
	for _, b := range s.Range(&o) {
		sum += b.V
	}
	writeTSValue(c, sum)
}

// mapOrArray starts the n entries of a TS.MRANGE / TS.MGET reply or of a
// series' labels: a RESP3 map, a RESP2 array of n (not 2n) elements.
func mapOrArray(w *resp.Writer, n int) {
	if w.Proto == 3 {
		w.Map(n)
	} else {
		w.Array(n)
	}
}

// writeSeriesLabels writes the labels part of a TS.MRANGE / TS.MGET entry.
func writeSeriesLabels(c *engine.Ctx, s *ts.Series, mode int, selected []string) {
	switch mode {
	case 1:
		writeLabels(c, s.Labels)
		return
	case 0:
		mapOrArray(c.W, 0)
		return
	}
	w := c.W
	mapOrArray(w, len(selected))
	for _, name := range selected {
		if w.Proto != 3 {
			w.Array(2)
		}
		w.BulkString(name)
		found := false
		for _, l := range s.Labels {
			if l.Name == name {
				w.BulkString(l.Value)
				found = true
				break
			}
		}
		if !found {
			w.Null()
		}
	}
}

// matchedSeries is the series the filters select, by key.
func matchedSeries(c *engine.Ctx, ms []ts.Matcher) ([]string, []*ts.Series) {
	keys := queryIndex(c, ms)
	series := make([]*ts.Series, len(keys))
	for i, k := range keys {
		series[i] = seriesAt(c.DB, k)
	}
	return keys, series
}

func cmdTSMrange(c *engine.Ctx) {
	q := &rangeQuery{}
	if !parseRangeQuery(c, c.Args[1:], true, q) {
		return
	}
	reverse := c.Cmd.Name == "ts.mrevrange"
	keys, series := matchedSeries(c, q.filters)
	if q.grouped {
		writeGroups(c, q, keys, series, reverse)
		return
	}
	w := c.W
	mapOrArray(w, len(keys))
	for i, key := range keys {
		s := series[i]
		entryHead(c, key, 2)
		writeSeriesLabels(c, s, q.labels, q.selected)
		if w.Proto == 3 {
			w.Map(1)
			w.BulkString("aggregators")
			if q.hasAgg {
				w.Array(1)
				w.BulkString(q.agg.Type.String())
			} else {
				w.Array(0)
			}
		}
		writeSamples(c, q.samples(c, key, s, reverse))
	}
}

// entryHead starts one series' entry of TS.MRANGE / TS.MGET: RESP3 a map
// key and an array of n (labels, metadata, samples...), RESP2 an array of
// the name and the n parts.
func entryHead(c *engine.Ctx, name string, n int) {
	if c.W.Proto == 3 {
		c.W.BulkString(name)
		c.W.Array(n + 1)
		return
	}
	c.W.Array(n + 1)
	c.W.BulkString(name)
}

// writeGroups answers TS.MRANGE ... GROUPBY label REDUCE reducer: the
// series with the label, grouped by its value, their samples reduced per
// timestamp.
func writeGroups(c *engine.Ctx, q *rangeQuery, keys []string, series []*ts.Series, reverse bool) {
	type group struct {
		value   string
		sources []string
		byTS    map[int64][]float64
	}
	groups := map[string]*group{}
	var order []string
	for i, key := range keys {
		val := ""
		has := false
		for _, l := range series[i].Labels {
			if l.Name == q.groupBy {
				val, has = l.Value, true
			}
		}
		if !has {
			continue
		}
		g := groups[val]
		if g == nil {
			g = &group{value: val, byTS: map[int64][]float64{}}
			groups[val] = g
			order = append(order, val)
		}
		g.sources = append(g.sources, key)
		for _, sm := range q.samples(c, key, series[i], false) {
			g.byTS[sm.T] = append(g.byTS[sm.T], sm.V)
		}
	}
	sort.Strings(order)
	w := c.W
	mapOrArray(w, len(order))
	for _, val := range order {
		g := groups[val]
		name := q.groupBy + "=" + val
		if w.Proto == 3 {
			entryHead(c, name, 3) // labels, reducers, sources, samples
		} else {
			entryHead(c, name, 2)
		}
		srcs := strings.Join(g.sources, ",")
		if q.labels == 0 {
			mapOrArray(w, 0)
		} else {
			writeLabels(c, []ts.Label{{Name: q.groupBy, Value: val}, {Name: "__reducer__", Value: q.reducer.String()}, {Name: "__source__", Value: srcs}})
		}
		if w.Proto == 3 {
			w.Map(1)
			w.BulkString("reducers")
			w.Array(1)
			w.BulkString(q.reducer.String())
			w.Map(1)
			w.BulkString("sources")
			w.Array(len(g.sources))
			for _, s := range g.sources {
				w.BulkString(s)
			}
		}
		tss := make([]int64, 0, len(g.byTS))
		for t := range g.byTS {
			tss = append(tss, t)
		}
		sort.Slice(tss, func(a, b int) bool { return tss[a] < tss[b] != reverse })
		if q.opts.Count >= 0 && len(tss) > q.opts.Count {
			tss = tss[:q.opts.Count]
		}
		w.Array(len(tss))
		for _, t := range tss {
			writeSample(c, ts.Sample{T: t, V: ts.Reduce(q.reducer, g.byTS[t])})
		}
	}
}

func cmdTSMget(c *engine.Ctx) {
	latest := false
	mode := 0
	var selected []string
	var ms []ts.Matcher
	args := c.Args[1:]
	found := false
	for i := 0; i < len(args) && !found; i++ {
		switch strings.ToUpper(string(args[i])) {
		case "LATEST":
			latest = true
		case "WITHLABELS", "SELECTED_LABELS":
			var ok bool
			if i, ok = parseLabelsOpt(c, args, i, &mode, &selected); !ok {
				return
			}
		case "FILTER":
			if i+1 >= len(args) {
				c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
				return
			}
			var ok bool
			if ms, ok = parseFilters(c, args[i+1:]); !ok {
				return
			}
			found = true
		default:
			c.Errorf("ERR TSDB: unknown argument '%s'", args[i])
			return
		}
	}
	if !found {
		c.Errorf("ERR wrong number of arguments for '%s' command", c.Cmd.Name)
		return
	}
	keys, series := matchedSeries(c, ms)
	w := c.W
	mapOrArray(w, len(keys))
	for i, key := range keys {
		s := series[i]
		if w.Proto == 3 {
			w.BulkString(key)
			w.Array(2)
		} else {
			entryHead(c, key, 2)
		}
		writeSeriesLabels(c, s, mode, selected)
		sm, ok := s.Last()
		if latest {
			if p, pok := latestBucket(c.DB, key, s); pok && (!ok || p.T > sm.T) {
				sm, ok = p, true
			}
		}
		if ok {
			writeSample(c, sm)
		} else {
			w.Array(0)
		}
	}
}
