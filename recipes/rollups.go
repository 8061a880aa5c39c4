package recipes

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Rollup is one resolution of a Rollups store: buckets of Step, kept for
// Keep.
type Rollup struct {
	Step time.Duration
	Keep time.Duration
}

// Rollups is a time-series store of counts per labelled series (service,
// region ...) rolled up to several resolutions, spread over several
// servers, and queried as sums across series grouped by a label. Buckets
// are aligned to the Unix epoch.
//
// A series lives on the shard its id (metric and sorted labels) hashes to
// on a consistent-hash ring; queries ask every shard and add up.
//
// Native: per series and rollup, a time series with the labels
// metric=<metric>, rollup=<step ms> and the series' own (RETENTION Keep,
// DUPLICATE_POLICY SUM), a sample per bucket at its start; a write is one
// TS.MADD into the current bucket of every rollup, a query one TS.MRANGE
// ... FILTER ... GROUPBY label REDUCE sum per shard. (Not a raw series
// with compaction rules: writes from many clients arrive a little out of
// order, and each such write makes the server aggregate the rules' open
// buckets again from the raw samples; see Counter.)
//
// Fallback (Sentry's layout): a hash per metric, rollup and bucket,
// <metric>:<step ms>:<bucket start ms>, a field per series id, HINCRBY
// into each rollup on a write, expiring Keep after the bucket ends; a
// query reads the range's buckets on every shard and sums in the client.
//
// The shards are a list of clients; one may be a cluster client, which
// spreads the keys over the cluster's nodes by itself: a series' keys
// share a slot (its labels in the id's braces are their hash tag), the
// fallback's hashes are one key per command, and the native query runs
// TS.MRANGE on every primary of the cluster.
//
// Writes made at the same time through one shard's client share round
// trips (combine.go): natively, their samples go in one TS.MADD (each
// write's samples still added together, in one command); in the
// fallback, their commands in one pipeline, as each write's were alone.
type Rollups struct {
	shards  []redis.UniversalClient
	ring    *ring
	metric  string
	rollups []Rollup
	opts    Options
	modes   []modeOf
	created sync.Map      // series id -> *setupOnce: its native series made
	adds    []combinerRef // each shard's client's combiner of Add calls
}

// NewRollups returns the store of metric over the given shards.
func NewRollups(shards []redis.UniversalClient, metric string, rollups []Rollup, opts Options) *Rollups {
	return &Rollups{shards: shards, ring: newRing(len(shards)), metric: metric, rollups: rollups, opts: opts,
		modes: make([]modeOf, len(shards)), adds: make([]combinerRef, len(shards))}
}

// Mode reports the path in use on shard i, detecting it if needed.
func (r *Rollups) Mode(ctx context.Context, i int) (Mode, error) {
	return r.modes[i].get(ctx, r.shards[i], r.opts.Mode)
}

// seriesID is metric{k=v,k=v} with the labels sorted.
func (r *Rollups) seriesID(labels map[string]string) (string, error) {
	keys := make([]string, 0, len(labels))
	for k, v := range labels {
		if strings.ContainsAny(k, ",={}") || strings.ContainsAny(v, ",={}") || k == "" || v == "" ||
			k == "metric" || k == "rollup" {
			return "", fmt.Errorf("recipes: label %q=%q: names and values must be non-empty, without , = { }, and not metric or rollup", k, v)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(r.metric + "{")
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + labels[k])
	}
	b.WriteByte('}')
	return b.String(), nil
}

func parseSeriesID(id string) map[string]string {
	open := strings.IndexByte(id, '{')
	out := map[string]string{}
	if open < 0 || !strings.HasSuffix(id, "}") {
		return out
	}
	for _, kv := range strings.Split(id[open+1:len(id)-1], ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

func (r *Rollups) rollupKey(id string, ru Rollup) string {
	return id + ":" + strconv.FormatInt(ru.Step.Milliseconds(), 10)
}

// series is what Rollups keeps of a native series it has made: a
// setupOnce, so that it can be made again when deleted behind its back.
func (r *Rollups) series(id string) *setupOnce {
	s, _ := r.created.LoadOrStore(id, &setupOnce{})
	return s.(*setupOnce)
}

func (r *Rollups) create(ctx context.Context, c redis.UniversalClient, id string, labels map[string]string) error {
	return r.series(id).do(func() error {
		lbl := []any{"LABELS", "metric", r.metric}
		for k, v := range labels {
			lbl = append(lbl, k, v)
		}
		cmds, _ := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, ru := range r.rollups {
				args := []any{"TS.CREATE", r.rollupKey(id, ru), "RETENTION", ru.Keep.Milliseconds(), "DUPLICATE_POLICY", "SUM"}
				p.Do(ctx, append(append(args, lbl...), "rollup", ru.Step.Milliseconds())...)
			}
			return nil
		})
		for _, cmd := range cmds {
			if err := ignoreErr(cmd.Err(), "already"); err != nil {
				return err
			}
		}
		return nil
	})
}

// Add counts v now in the series with the given labels.
func (r *Rollups) Add(ctx context.Context, labels map[string]string, v int64) error {
	id, err := r.seriesID(labels)
	if err != nil {
		return err
	}
	i := r.ring.get(id)
	c := r.shards[i]
	m, err := r.Mode(ctx, i)
	if err != nil {
		return err
	}
	now := r.opts.nowMs()
	if m == Native {
		in := &maddIn{make([]any, 0, 3*len(r.rollups))}
		for _, ru := range r.rollups {
			st := ru.Step.Milliseconds()
			in.samples = append(in.samples, r.rollupKey(id, ru), now-now%st, v)
		}
		create := func(ctx context.Context) error { return r.create(ctx, c, id, labels) }
		return onSeries(ctx, r.series(id), create, func() error {
			_, err := combined(ctx, c, &r.adds[i], kindMadd, sendMadd, in)
			return err
		})
	}
	_, err = combined(ctx, c, &r.adds[i], kindPipe, sendPiped, piped(func(ctx context.Context, p redis.Pipeliner) func() error {
		cmds := make([]redis.Cmder, 0, 2*len(r.rollups))
		for _, ru := range r.rollups {
			st := ru.Step.Milliseconds()
			start := now - now%st
			k := r.metric + ":" + strconv.FormatInt(st, 10) + ":" + strconv.FormatInt(start, 10)
			cmds = append(cmds, p.HIncrBy(ctx, k, id, v),
				p.PExpire(ctx, k, time.Duration(start+st+ru.Keep.Milliseconds()-now)*time.Millisecond))
		}
		return func() error { return firstErr(cmds) }
	}))
	return err
}

// Query returns, for the rollup of the given step, the buckets starting
// in [from, to] of the series matching every label of filter, summed
// per value of the label groupBy (keyed "label=value"; "" sums all
// matching series under the key ""). The open bucket is included.
func (r *Rollups) Query(ctx context.Context, step time.Duration, from, to time.Time, filter map[string]string, groupBy string) (map[string][]Point, error) {
	sums := map[string]map[int64]float64{}
	add := func(group string, ms int64, v float64) {
		g := sums[group]
		if g == nil {
			g = map[int64]float64{}
			sums[group] = g
		}
		g[ms] += v
	}
	st := step.Milliseconds()
	for i, c := range r.shards {
		m, err := r.Mode(ctx, i)
		if err != nil {
			return nil, err
		}
		if cc, ok := c.(*redis.ClusterClient); ok && m == Native {
			// TS.MRANGE reads the node it runs on: ask every primary.
			var mu sync.Mutex
			err = cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
				return r.queryNative(ctx, node, st, from.UnixMilli(), to.UnixMilli(), filter, groupBy, func(g string, ms int64, v float64) {
					mu.Lock()
					add(g, ms, v)
					mu.Unlock()
				})
			})
		} else if m == Native {
			err = r.queryNative(ctx, c, st, from.UnixMilli(), to.UnixMilli(), filter, groupBy, add)
		} else {
			err = r.queryFallback(ctx, c, st, from.UnixMilli(), to.UnixMilli(), filter, groupBy, add)
		}
		if err != nil {
			return nil, err
		}
	}
	out := make(map[string][]Point, len(sums))
	for g, pts := range sums {
		list := make([]Point, 0, len(pts))
		for ms, v := range pts {
			list = append(list, Point{T: time.UnixMilli(ms), V: v})
		}
		sort.Slice(list, func(a, b int) bool { return list[a].T.Before(list[b].T) })
		out[g] = list
	}
	return out, nil
}

func (r *Rollups) queryNative(ctx context.Context, c redis.UniversalClient, st, from, to int64, filter map[string]string, groupBy string, add func(string, int64, float64)) error {
	args := []any{"TS.MRANGE", max(from, 0), to, "FILTER", "metric=" + r.metric, "rollup=" + strconv.FormatInt(st, 10)}
	for k, v := range filter {
		args = append(args, k+"="+v)
	}
	if groupBy != "" {
		args = append(args, groupBy+"!=") // series without the label are not in any group
		args = append(args, "GROUPBY", groupBy, "REDUCE", "sum")
	} else {
		args = append(args, "GROUPBY", "metric", "REDUCE", "sum")
	}
	reply, err := c.Do(ctx, args...).Result()
	if err != nil {
		return err
	}
	type group struct {
		name    string
		samples any
	}
	var groups []group
	switch x := reply.(type) {
	case []any: // RESP2: [name, labels, samples] per group
		for _, e := range x {
			g, ok := e.([]any)
			if !ok || len(g) < 3 {
				return fmt.Errorf("recipes: unexpected TS.MRANGE entry %v", e)
			}
			name, _ := g[0].(string)
			groups = append(groups, group{name, g[len(g)-1]})
		}
	case map[any]any: // RESP3: name -> [labels, (reducers, sources,) samples]
		for k, v := range x {
			g, ok := v.([]any)
			if !ok || len(g) == 0 {
				return fmt.Errorf("recipes: unexpected TS.MRANGE entry %v", v)
			}
			name, _ := k.(string)
			groups = append(groups, group{name, g[len(g)-1]})
		}
	default:
		return fmt.Errorf("recipes: unexpected TS.MRANGE reply %T", reply)
	}
	for _, g := range groups {
		pts, err := parseSamples(g.samples)
		if err != nil {
			return err
		}
		name := g.name
		if groupBy == "" {
			name = ""
		}
		for _, p := range pts {
			add(name, p.T.UnixMilli(), p.V)
		}
	}
	return nil
}

func (r *Rollups) queryFallback(ctx context.Context, c redis.UniversalClient, st, from, to int64, filter map[string]string, groupBy string, add func(string, int64, float64)) error {
	first := from - from%st
	if first < from {
		first += st
	}
	var starts []int64
	for b := first; b <= to; b += st {
		starts = append(starts, b)
	}
	if len(starts) == 0 {
		return nil
	}
	cmds := make([]*redis.MapStringStringCmd, len(starts))
	if _, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, b := range starts {
			cmds[i] = p.HGetAll(ctx, r.metric+":"+strconv.FormatInt(st, 10)+":"+strconv.FormatInt(b, 10))
		}
		return nil
	}); err != nil {
		return err
	}
	for i, cmd := range cmds {
	series:
		for id, v := range cmd.Val() {
			labels := parseSeriesID(id)
			for k, want := range filter {
				if labels[k] != want {
					continue series
				}
			}
			name := ""
			if groupBy != "" {
				lv, ok := labels[groupBy]
				if !ok {
					continue
				}
				name = groupBy + "=" + lv
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return err
			}
			add(name, starts[i], x)
		}
	}
	return nil
}
