package engine

import (
	"fmt"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/internal/keyspace"
)

// InfoBuilder collects an INFO section's "field:value" lines.
type InfoBuilder struct{ strings.Builder }

// KV writes one field.
func (b *InfoBuilder) KV(k, v string) {
	b.WriteString(k)
	b.WriteByte(':')
	b.WriteString(v)
	b.WriteString("\r\n")
}

// Int writes an integer field.
func (b *InfoBuilder) Int(k string, v int64) { b.KV(k, strconv.FormatInt(v, 10)) }

// Float writes a field with two decimals, as Redis's %.2f.
func (b *InfoBuilder) Float(k string, v float64) { b.KV(k, strconv.FormatFloat(v, 'f', 2, 64)) }

// InfoCommandStats writes INFO commandstats: one line per command called.
func InfoCommandStats(e *Env, b *InfoBuilder) {
	e.mu.Lock()
	names := make([]string, 0, len(e.cmdStats))
	for n, st := range e.cmdStats {
		if st.Calls > 0 || st.Failed > 0 || st.Rejected > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		st := e.cmdStats[n]
		per := 0.0
		if st.Calls > 0 {
			per = float64(st.Usec) / float64(st.Calls)
		}
		b.KV("cmdstat_"+n, fmt.Sprintf("calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d",
			st.Calls, st.Usec, per, st.Rejected, st.Failed))
	}
	e.mu.Unlock()
}

// InfoErrorStats writes INFO errorstats: one line per error prefix.
func InfoErrorStats(e *Env, b *InfoBuilder) {
	e.mu.Lock()
	names := make([]string, 0, len(e.errStats))
	for n := range e.errStats {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b.KV("errorstat_"+n, "count="+strconv.FormatInt(e.errStats[n], 10))
	}
	e.mu.Unlock()
}

// InfoState is what INFO samples between calls: Redis's instantaneous
// metrics (a 16-sample average of per-second rates, sampled every 100 ms by
// the server's cron), the memory peak and the replication id.
type InfoState struct {
	mu           sync.Mutex
	lastSample   int64 // unix ms; 0 before the first sample
	ops, in, out metricRing
	Peak         atomic.Int64 // used_memory_peak, in bytes
	Startup      atomic.Int64 // used_memory_startup: the heap at the first cron
	startupOnce  sync.Once
	replid       string // master_replid, drawn on first use
}

type metricRing struct {
	samples   [16]int64
	idx       int
	lastCount int64
}

func (r *metricRing) add(count, elapsedMs int64) {
	r.samples[r.idx] = (count - r.lastCount) * 1000 / elapsedMs
	r.idx = (r.idx + 1) % len(r.samples)
	r.lastCount = count
}

func (r *metricRing) avg() int64 {
	var sum int64
	for _, v := range r.samples {
		sum += v
	}
	return sum / int64(len(r.samples))
}

// instSamplePeriod is how often the instantaneous metrics are sampled.
const instSamplePeriod = 100 // ms

func (s *InfoState) sample(now, ops, in, out int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastSample != 0 && now-s.lastSample < instSamplePeriod {
		return
	}
	if s.lastSample == 0 {
		s.ops.lastCount, s.in.lastCount, s.out.lastCount = ops, in, out
	} else {
		el := now - s.lastSample
		s.ops.add(ops, el)
		s.in.add(in, el)
		s.out.add(out, el)
	}
	s.lastSample = now
}

// Rates are the instantaneous ops/s and input and output bytes/s.
func (s *InfoState) Rates() (ops, in, out int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ops.avg(), s.in.avg(), s.out.avg()
}

// Reset drops the samples and the memory peak (CONFIG RESETSTAT).
func (s *InfoState) Reset() {
	s.mu.Lock()
	s.lastSample = 0
	s.ops, s.in, s.out = metricRing{}, metricRing{}, metricRing{}
	s.mu.Unlock()
	s.Peak.Store(0)
}

// NotePeak raises the memory peak to heap if it is higher.
func (s *InfoState) NotePeak(heap uint64) {
	for {
		p := s.Peak.Load()
		if int64(heap) <= p || s.Peak.CompareAndSwap(p, int64(heap)) {
			return
		}
	}
}

// ReplID is master_replid, drawn on first use.
func (s *InfoState) ReplID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.replid == "" {
		s.replid = newRunID()
	}
	return s.replid
}

// NewReplID draws a new master_replid (DEBUG CHANGE-REPL-ID).
func (s *InfoState) NewReplID() {
	s.mu.Lock()
	s.replid = newRunID()
	s.mu.Unlock()
}

// SetReplID takes id as the replication id (a replica takes its
// primary's).
func (s *InfoState) SetReplID(id string) {
	s.mu.Lock()
	s.replid = id
	s.mu.Unlock()
}

// Cron is the server's periodic hook (hz times a second, without the
// server lock): it samples the instantaneous metrics every 100 ms and
// tracks the memory peak.
func (e *Env) Cron() {
	st := &e.Stats
	st.Info.sample(time.Now().UnixMilli(), st.TotalCommands.Load(), st.NetInputBytes.Load(), st.NetOutputBytes.Load())
	heap := ReadMemStats().Heap
	st.Info.startupOnce.Do(func() { st.Info.Startup.Store(int64(heap)) })
	st.Info.NotePeak(heap)
	e.Persistence().Cron()
}

// MemStats are the Go runtime's memory figures INFO and MEMORY report.
type MemStats struct {
	Heap, Total, Objects, GCCycles, Limit uint64
}

var (
	memMu      sync.Mutex
	memSamples = []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/gc/heap/objects:objects"},
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/gc/gomemlimit:bytes"},
	}
)

// ReadMemStats reads the Go runtime's memory figures without stopping the
// world (runtime/metrics): used_memory is the heap held by objects.
func ReadMemStats() MemStats {
	memMu.Lock()
	defer memMu.Unlock()
	metrics.Read(memSamples)
	v := func(i int) uint64 {
		if memSamples[i].Value.Kind() == metrics.KindUint64 {
			return memSamples[i].Value.Uint64()
		}
		return 0
	}
	return MemStats{Heap: v(0), Total: v(1), Objects: v(2), GCCycles: v(3), Limit: v(4)}
}

// ResetStats clears what CONFIG RESETSTAT clears: the counters of INFO
// stats, commandstats and errorstats, keyspace hits and misses, and the
// memory peak. rdb_changes_since_last_save is kept.
func (e *Env) ResetStats() {
	st := &e.Stats
	for _, a := range []interface{ Store(int64) }{
		&st.TotalConnections, &st.RejectedConns, &st.TotalCommands, &st.NetInputBytes,
		&st.NetOutputBytes, &st.PanicsRecovered, &st.UnexpectedErrors, &st.TotalErrorReplies,
		&st.SyncFull, &st.SyncPartialOK, &st.SyncPartialErr,
	} {
		a.Store(0)
	}
	e.KS.Stats = keyspace.Stats{}
	e.mu.Lock()
	e.cmdStats = map[string]*CmdStat{}
	e.recentStats = [len(e.recentStats)]recentStat{}
	e.errStats = map[string]int64{}
	e.mu.Unlock()
	e.Stats.Info.Reset()
	e.Stats.Decisions.reset()
}
