package ts

import (
	"encoding/binary"
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

// ChunkData is one chunk as a snapshot holds it: a compressed chunk's
// Gorilla bit stream as it is in memory (Bits bits, most significant
// first, in ceil(Bits/8) bytes), an uncompressed chunk's samples.
type ChunkData struct {
	N      int // samples
	Bits   uint32
	Stream []byte
	TS     []int64
	VS     []float64
}

// EachChunkData calls fn with each chunk in order, compressed chunks
// without decoding them. d and its slices are reused between calls.
func (s *Series) EachChunkData(fn func(d *ChunkData)) {
	var d ChunkData
	for _, c := range s.chunks {
		d.N = c.n
		if c.raw {
			d.TS, d.VS = c.decode(d.TS[:0], d.VS[:0])
			d.Bits, d.Stream = 0, d.Stream[:0]
		} else {
			d.Bits = c.bw.n
			d.Stream = d.Stream[:0]
			for _, w := range c.bw.w {
				d.Stream = binary.BigEndian.AppendUint64(d.Stream, w)
			}
			d.Stream = d.Stream[:c.bw.bytes()]
		}
		fn(&d)
	}
}

// streamPad is the zero words a loaded stream gets past its end while it
// is checked: one sample reads at most 146 bits, so a walk that stops as
// soon as it passes the stream's end never reads past the padding.
const streamPad = 3

// AppendChunkData adds the chunk d at the end of the series, as
// AppendChunk does; for a compressed series d is a stream, kept as it is
// (not re-encoded) once a walk through it has checked that it holds
// exactly N samples in exactly Bits bits, with timestamps strictly
// increasing and after the series' latest. The walk also recovers the
// encoder's state, so that the last chunk takes appends (and updates of
// its last sample) as if it had never left memory.
func (s *Series) AppendChunkData(d *ChunkData) error {
	if s.Uncompressed {
		return s.AppendChunk(d.TS, d.VS)
	}
	nw := (int(d.Bits) + 63) / 64
	if d.N <= 0 || len(d.Stream) != (int(d.Bits)+7)/8 || d.Bits < 128 || uint64(d.N-1)*2 > uint64(d.Bits-128) {
		return ErrBadChunk
	}
	words := make([]uint64, nw+streamPad)
	for i := 0; i < nw; i++ {
		var tail [8]byte
		copy(tail[:], d.Stream[i*8:])
		words[i] = binary.BigEndian.Uint64(tail[:])
	}
	if r := d.Bits % 64; r != 0 { // bits past the end are zero, as an appending writer needs
		words[nw-1] &= ^uint64(0) << (64 - r)
	}
	c := &chunk{n: d.N, bw: bitWriter{w: words, n: d.Bits}, lead: noWindow}
	it := c.iter()
	lead, trail := uint8(noWindow), uint8(0)
	var prev appendState
	for i := 0; i < d.N; i++ {
		before := appendState{it.r.pos, it.t, it.delta, it.bits, lead, trail}
		it.next()
		if it.r.pos > d.Bits {
			return ErrBadChunk
		}
		if it.win {
			if it.trail > 64 || int(it.lead)+int(it.trail) > 64 {
				return ErrBadChunk
			}
			lead, trail = it.lead, it.trail
		}
		switch {
		case i == 0:
			if s.total > 0 && it.t <= s.lastT {
				return ErrBadChunk
			}
			c.first = it.t
		case it.t <= before.last:
			return ErrBadChunk
		}
		prev = before
		c.smPrev = c.sm
		c.sm.add(it.value(), i == 0)
	}
	if it.r.pos != d.Bits {
		return ErrBadChunk
	}
	// The words are appended one by one, as the encoder wrote them, so that
	// the last chunk's spare capacity (which MEMORY USAGE and TS.INFO
	// count) is what it would be had the samples been added one by one.
	var w []uint64
	for _, x := range words[:nw] {
		w = append(w, x)
	}
	c.bw.w = w
	c.last, c.lastDelta, c.lastBits, c.lead, c.trail, c.prev = it.t, it.delta, it.bits, lead, trail, prev
	if n := len(s.chunks); n > 0 {
		s.chunks[n-1].seal()
	}
	s.chunks = append(s.chunks, c)
	s.total += c.n
	s.lastT, s.lastV = c.last, it.value()
	return nil
}
