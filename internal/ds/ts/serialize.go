package ts

import (
	"errors"
	"math"
)

// Serialization support (internal/rdb): a series is written as its chunks'
// samples, settings, labels and rules with their open-bucket state, and
// rebuilt chunk by chunk.

// ErrBadChunk is a chunk that cannot follow the series' samples: empty,
// timestamps not strictly increasing, or too large for the chunk size.
var ErrBadChunk = errors.New("malformed chunk")

// EachChunk calls fn with the samples of each chunk in order. The slices
// are reused between calls.
func (s *Series) EachChunk(fn func(ts []int64, vs []float64)) {
	var ts []int64
	var vs []float64
	for _, c := range s.chunks {
		ts, vs = c.decode(ts[:0], vs[:0])
		fn(ts, vs)
	}
}

// AppendChunk adds a chunk holding samples ts, vs (timestamps strictly
// increasing, all after the series' latest sample) at the end of the
// series, without retention trimming or compaction. It is how a decoder
// rebuilds a series; Uncompressed must be set first.
func (s *Series) AppendChunk(ts []int64, vs []float64) error {
	if len(ts) == 0 || len(ts) != len(vs) {
		return ErrBadChunk
	}
	if s.total > 0 && ts[0] <= s.lastT {
		return ErrBadChunk
	}
	for i := 1; i < len(ts); i++ {
		if ts[i] <= ts[i-1] {
			return ErrBadChunk
		}
	}
	// no size limit: TS.ALTER may have shrunk CHUNK_SIZE below the size
	// of chunks made before
	cs := encodeChunks(ts, vs, s.Uncompressed, math.MaxInt32)
	if len(cs) != 1 {
		return ErrBadChunk
	}
	if n := len(s.chunks); n > 0 {
		s.chunks[n-1].seal()
	}
	s.chunks = append(s.chunks, cs[0])
	s.total += len(ts)
	s.lastT, s.lastV = ts[len(ts)-1], vs[len(vs)-1]
	return nil
}

// RuleState is a compaction rule's progress: the bucket it has open and
// what it accumulated there, so that a reloaded source goes on compacting
// exactly where it stopped.
type RuleState struct {
	Open, Used    bool
	Origin, Start int64
	Count         int64
	Sum, Min, Max float64
	First, Last   float64
	DSum, DSq     float64
	FirstT, LastT int64
	Area          float64
	Prev          Sample
	HasPrev       bool
}

// State is r's progress.
func (r *Rule) State() RuleState {
	b := &r.cur
	return RuleState{
		Open: r.open, Used: r.used, Origin: r.origin, Start: r.start,
		Count: b.n, Sum: b.sum, Min: b.min, Max: b.max, First: b.first, Last: b.last,
		DSum: b.dsum, DSq: b.dsq, FirstT: b.firstT, LastT: b.lastT, Area: b.area,
		Prev: r.prev, HasPrev: r.hasPrev,
	}
}

// SetState restores r's progress.
func (r *Rule) SetState(st RuleState) {
	r.open, r.used, r.origin, r.start = st.Open, st.Used, st.Origin, st.Start
	r.cur = bucket{n: st.Count, sum: st.Sum, min: st.Min, max: st.Max, first: st.First, last: st.Last,
		dsum: st.DSum, dsq: st.DSq, firstT: st.FirstT, lastT: st.LastT, area: st.Area}
	r.prev, r.hasPrev = st.Prev, st.HasPrev
}

// ValidAgg reports whether a is an aggregation type ParseAgg can return.
func ValidAgg(a Agg) bool { return int(a) < len(aggNames) && aggNames[a] != "" }

// validFloat is NaN-free for settings that must compare.
func validFloat(f float64) bool { return !math.IsNaN(f) }

// ValidSettings reports whether s's settings are within what TS.CREATE
// accepts (so a decoded series behaves like one the commands made).
func (s *Series) ValidSettings() bool {
	return s.Retention >= 0 && s.ChunkSize >= 48 && s.ChunkSize <= 1048576 && s.ChunkSize%8 == 0 &&
		s.Policy <= PolicySum && s.IgnoreMaxTime >= 0 && s.IgnoreMaxVal >= 0 && validFloat(s.IgnoreMaxVal)
}
