// Package ts is the time-series engine behind the TS.* commands: series of
// (timestamp, float64) samples in Gorilla-compressed or raw chunks, with
// retention, duplicate policies, aggregation into buckets, compaction rules
// and a label index. It knows nothing of commands or keys beyond the names
// the caller gives it.
package ts

import (
	"errors"
	"math"
	"sort"
	"unsafe"
)

// DefaultChunkSize is CHUNK_SIZE's default, in bytes.
const DefaultChunkSize = 4096

// Policy is a DUPLICATE_POLICY: what adding a sample at a timestamp that
// already holds one does.
type Policy uint8

// The policies; PolicyNone means the series has none of its own (the
// server-wide default applies).
const (
	PolicyNone Policy = iota
	PolicyBlock
	PolicyFirst
	PolicyLast
	PolicyMin
	PolicyMax
	PolicySum
)

var policyNames = [...]string{"", "block", "first", "last", "min", "max", "sum"}

// String is the policy's name as TS.INFO reports it (lower case).
func (p Policy) String() string { return policyNames[p] }

// ParsePolicy reads a policy name, any case.
func ParsePolicy(s string) (Policy, bool) {
	for i, n := range policyNames[1:] {
		if equalFold(s, n) {
			return Policy(i + 1), true
		}
	}
	return PolicyNone, false
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Errors of Add.
var (
	ErrBlocked = errors.New("duplicate blocked")
	ErrOld     = errors.New("timestamp older than retention")
)

// Label is one label of a series.
type Label struct{ Name, Value string }

// Sample is one sample.
type Sample struct {
	T int64
	V float64
}

// Series is one time series.
type Series struct {
	chunks []*chunk

	Retention     int64 // ms; 0 keeps everything
	ChunkSize     int   // bytes
	Uncompressed  bool
	Policy        Policy
	IgnoreMaxTime int64
	IgnoreMaxVal  float64
	Labels        []Label
	Rules         []*Rule // compactions fed by this series
	Source        string  // key of the series this one is a compaction of; "" if none
	Name          string  // the key the caller keeps the series under (to notice renames)

	total   int // samples in chunks
	prefixN int // chunks[:prefixN] have valid prefixes; below len(chunks) (summary.go)
	lastT   int64
	lastV   float64
	scratch struct {
		ts []int64
		vs []float64
	}
}

// New makes an empty series with the default chunk size.
func New() *Series { return &Series{ChunkSize: DefaultChunkSize} }

// Len is the number of samples the series holds (including those past
// retention whose chunk has not been dropped yet, as TS.INFO counts them).
func (s *Series) Len() int { return s.total }

// Chunks is the number of chunks.
func (s *Series) Chunks() int { return len(s.chunks) }

// DataBytes is the size of the samples' encoded data (what CHUNK_SIZE
// bounds), summed over chunks.
func (s *Series) DataBytes() int {
	n := 0
	for _, c := range s.chunks {
		n += c.bytes()
	}
	return n
}

// ChunkBytes are the data sizes of each chunk, for TS.INFO DEBUG.
func (s *Series) ChunkBytes() []int {
	out := make([]int, len(s.chunks))
	for i, c := range s.chunks {
		out[i] = c.bytes()
	}
	return out
}

// ChunkInfo describes a chunk for TS.INFO DEBUG.
type ChunkInfo struct {
	First, Last int64
	Samples     int
	Bytes       int
}

// ChunkInfos lists the chunks.
func (s *Series) ChunkInfos() []ChunkInfo {
	out := make([]ChunkInfo, len(s.chunks))
	for i, c := range s.chunks {
		out[i] = ChunkInfo{c.first, c.last, c.n, c.bytes()}
	}
	return out
}

// First is the first sample's timestamp (0 when empty).
func (s *Series) First() int64 {
	if len(s.chunks) == 0 {
		return 0
	}
	lo := s.minKept()
	if s.chunks[0].first >= lo {
		return s.chunks[0].first
	}
	if sm, ok := s.Next(lo); ok {
		return sm.T
	}
	return 0
}

// Last is the newest sample; ok is false when the series is empty.
func (s *Series) Last() (Sample, bool) {
	if s.total == 0 {
		return Sample{}, false
	}
	return Sample{s.lastT, s.lastV}, true
}

// minKept is the oldest timestamp retention keeps.
func (s *Series) minKept() int64 {
	if s.Retention == 0 || s.total == 0 || s.lastT-s.Retention < 0 {
		return math.MinInt64
	}
	return s.lastT - s.Retention
}

// AddResult says what Add did.
type AddResult uint8

// Add outcomes.
const (
	Appended AddResult = iota // a new latest sample
	Inserted                  // a new sample before the latest
	Updated                   // an existing sample's value changed (or kept, by policy)
	Ignored                   // dropped by the IGNORE filter
)

// Add adds sample (t, v) under policy p (the series' own or an override;
// PolicyNone behaves as BLOCK). It returns what happened and the compaction
// writes the caller must apply to the rules' destinations.
func (s *Series) Add(t int64, v float64, p Policy) (AddResult, []Write, error) {
	if s.ignores(t, v, p) {
		return Ignored, nil, nil
	}
	if s.total == 0 || t > s.lastT {
		s.appendLatest(t, v)
		w := s.feedRules(t, v)
		s.trim()
		return Appended, w, nil
	}
	if s.Retention > 0 && t < s.lastT-s.Retention {
		return 0, nil, ErrOld
	}
	res, err := s.upsert(t, v, p)
	if err != nil {
		return 0, nil, err
	}
	return res, s.recompute(t, t), nil
}

// ignores is the IGNORE filter: under policy LAST, a series that is not a
// compaction drops an in-order sample close in time and value to the
// latest.
func (s *Series) ignores(t int64, v float64, p Policy) bool {
	return s.total > 0 && p == PolicyLast && s.Source == "" && t >= s.lastT &&
		t-s.lastT <= s.IgnoreMaxTime && math.Abs(v-s.lastV) <= s.IgnoreMaxVal
}

// appendLatest appends a sample later than every other.
func (s *Series) appendLatest(t int64, v float64) {
	b := math.Float64bits(v)
	var c *chunk
	if n := len(s.chunks); n > 0 {
		c = s.chunks[n-1]
	}
	if c == nil || !c.fits(t, b, s.ChunkSize) {
		if c != nil {
			c.seal()
		}
		c = newChunk(s.Uncompressed)
		s.chunks = append(s.chunks, c)
	}
	c.append(t, b)
	s.total++
	s.lastT, s.lastV = t, v
}

// trim drops whole chunks that retention no longer keeps.
func (s *Series) trim() {
	lo := s.minKept()
	k := 0
	for k < len(s.chunks)-1 && s.chunks[k].last < lo {
		s.total -= s.chunks[k].n
		k++
	}
	if k > 0 {
		s.chunks = append(s.chunks[:0], s.chunks[k:]...)
		s.prefixN = max(s.prefixN-k, 0)
	}
}

// chunkFor is the index of the chunk a sample at t belongs in: the last
// chunk starting at or before t, or the first chunk.
func (s *Series) chunkFor(t int64) int {
	i := sort.Search(len(s.chunks), func(i int) bool { return s.chunks[i].first > t })
	if i > 0 {
		i--
	}
	return i
}

// upsert places (t, v) at or before the latest sample.
func (s *Series) upsert(t int64, v float64, p Policy) (AddResult, error) {
	if t == s.lastT {
		nv, changed, err := resolve(s.lastV, v, p)
		if err != nil {
			return 0, err
		}
		if !changed {
			return Updated, nil
		}
		if s.chunks[len(s.chunks)-1].setLast(math.Float64bits(nv), s.ChunkSize) {
			s.lastV = nv
			return Updated, nil
		}
	}
	ci := s.chunkFor(t)
	c := s.chunks[ci]
	ts, vs := c.decode(s.scratch.ts[:0], s.scratch.vs[:0])
	i := sort.Search(len(ts), func(i int) bool { return ts[i] >= t })
	res := Inserted
	if i < len(ts) && ts[i] == t {
		nv, changed, err := resolve(vs[i], v, p)
		if err != nil {
			return 0, err
		}
		if !changed {
			return Updated, nil
		}
		vs[i] = nv
		res = Updated
	} else {
		ts = append(ts, 0)
		vs = append(vs, 0)
		copy(ts[i+1:], ts[i:])
		copy(vs[i+1:], vs[i:])
		ts[i], vs[i] = t, v
		s.total++
	}
	s.replaceChunk(ci, ts, vs)
	s.scratch.ts, s.scratch.vs = ts, vs
	return res, nil
}

// resolve applies a duplicate policy to an existing value old and a new
// value v: the value to keep and whether it differs from old (bit for bit).
func resolve(old, v float64, p Policy) (float64, bool, error) {
	nv := old
	switch p {
	case PolicyNone, PolicyBlock:
		return 0, false, ErrBlocked
	case PolicyLast:
		nv = v
	case PolicyMin:
		if v < old {
			nv = v
		}
	case PolicyMax:
		if v > old {
			nv = v
		}
	case PolicySum:
		nv = old + v
	}
	return nv, math.Float64bits(nv) != math.Float64bits(old), nil
}

// replaceChunk re-encodes chunk ci from samples ts, vs (possibly none).
func (s *Series) replaceChunk(ci int, ts []int64, vs []float64) {
	repl := encodeChunks(ts, vs, s.Uncompressed, s.ChunkSize)
	if ci < len(s.chunks)-1 {
		for _, c := range repl {
			c.seal()
		}
	}
	tail := append([]*chunk(nil), s.chunks[ci+1:]...)
	s.chunks = append(append(s.chunks[:ci], repl...), tail...)
	s.invalidatePrefix(ci)
	s.refreshLast()
}

// refreshLast recomputes the latest sample after an edit.
func (s *Series) refreshLast() {
	if len(s.chunks) == 0 {
		s.lastT, s.lastV = 0, 0
		return
	}
	c := s.chunks[len(s.chunks)-1]
	s.lastT, s.lastV = c.last, c.lastValue()
}

// DeleteRange removes the samples with from <= t <= to and returns how many
// it removed, with the compaction writes that follow.
func (s *Series) DeleteRange(from, to int64) (int, []Write) {
	if from > to || len(s.chunks) == 0 {
		return 0, nil
	}
	removed := 0
	for ci := s.chunkFor(from); ci < len(s.chunks); {
		c := s.chunks[ci]
		if c.first > to {
			break
		}
		if c.last < from {
			ci++
			continue
		}
		ts, vs := c.decode(s.scratch.ts[:0], s.scratch.vs[:0])
		lo := sort.Search(len(ts), func(i int) bool { return ts[i] >= from })
		hi := sort.Search(len(ts), func(i int) bool { return ts[i] > to })
		removed += hi - lo
		ts = append(ts[:lo], ts[hi:]...)
		vs = append(vs[:lo], vs[hi:]...)
		before := len(s.chunks)
		s.replaceChunk(ci, ts, vs)
		ci += 1 + len(s.chunks) - before
		s.scratch.ts, s.scratch.vs = ts, vs
	}
	s.total -= removed
	if removed == 0 {
		return 0, nil
	}
	return removed, s.recompute(from, to)
}

// Get returns the sample at t.
func (s *Series) Get(t int64) (Sample, bool) {
	sm, ok := s.Next(t)
	if !ok || sm.T != t {
		return Sample{}, false
	}
	return sm, true
}

// Next is the first sample at or after t that retention keeps.
func (s *Series) Next(t int64) (Sample, bool) {
	var out Sample
	found := false
	s.Scan(t, math.MaxInt64, func(t int64, v float64) bool {
		out, found = Sample{t, v}, true
		return false
	})
	return out, found
}

// Prev is the last sample at or before t that retention keeps.
func (s *Series) Prev(t int64) (Sample, bool) {
	var out Sample
	found := false
	s.ScanReverse(math.MinInt64, t, func(t int64, v float64) bool {
		out, found = Sample{t, v}, true
		return false
	})
	return out, found
}

// Scan calls fn for each sample with from <= t <= to (and within
// retention) in timestamp order until fn returns false.
func (s *Series) Scan(from, to int64, fn func(t int64, v float64) bool) {
	from = max(from, s.minKept())
	if len(s.chunks) == 0 || from > to {
		return
	}
	for ci := s.chunkFor(from); ci < len(s.chunks); ci++ {
		c := s.chunks[ci]
		if c.first > to {
			return
		}
		if c.last < from {
			continue
		}
		if !c.scan(from, to, fn) {
			return
		}
	}
}

// scan calls fn for the chunk's samples with from <= t <= to in order;
// false when fn stopped it or a sample passed to.
func (c *chunk) scan(from, to int64, fn func(t int64, v float64) bool) bool {
	if c.raw {
		i := sort.Search(c.n, func(i int) bool { return c.ts[i] >= from })
		for ; i < c.n; i++ {
			if c.ts[i] > to || !fn(c.ts[i], c.vs[i]) {
				return false
			}
		}
		return true
	}
	it := c.iter()
	for it.next() {
		if it.t < from {
			continue
		}
		if it.t > to || !fn(it.t, it.value()) {
			return false
		}
	}
	return true
}

// ScanReverse is Scan from the newest sample to the oldest.
func (s *Series) ScanReverse(from, to int64, fn func(t int64, v float64) bool) {
	from = max(from, s.minKept())
	if len(s.chunks) == 0 || from > to {
		return
	}
	var ts []int64
	var vs []float64
	for ci := s.chunkFor(to); ci >= 0; ci-- {
		c := s.chunks[ci]
		if c.last < from {
			return
		}
		if c.first > to {
			continue
		}
		ts, vs = c.decode(ts[:0], vs[:0])
		for i := len(ts) - 1; i >= 0; i-- {
			if ts[i] > to {
				continue
			}
			if ts[i] < from || !fn(ts[i], vs[i]) {
				return
			}
		}
	}
}

// Clone is a deep copy (COPY, the undo journal, background saves).
func (s *Series) Clone() *Series {
	c := *s
	c.scratch.ts, c.scratch.vs = nil, nil
	c.chunks = make([]*chunk, len(s.chunks))
	for i, ch := range s.chunks {
		cc := *ch
		cc.bw.w = append([]uint64(nil), ch.bw.w...)
		cc.ts = append([]int64(nil), ch.ts...)
		cc.vs = append([]float64(nil), ch.vs...)
		c.chunks[i] = &cc
	}
	c.Labels = append([]Label(nil), s.Labels...)
	c.Rules = make([]*Rule, len(s.Rules))
	for i, r := range s.Rules {
		rr := *r
		c.Rules[i] = &rr
	}
	return &c
}

// CloneValue is Clone for keyspace's Value contract.
func (s *Series) CloneValue() any { return s.Clone() }

// Encoding is what OBJECT ENCODING says of a series: "raw", as Redis says
// of every module value.
func (s *Series) Encoding() string { return "raw" }

// MemoryUsage estimates the bytes the series holds: its chunks (encoded
// data and their headers), labels and rules.
func (s *Series) MemoryUsage() int {
	n := 200 + len(s.chunks)*(8+int(unsafe.Sizeof(chunk{})))
	for _, c := range s.chunks {
		n += cap(c.bw.w)*8 + cap(c.ts)*8 + cap(c.vs)*8
	}
	for _, l := range s.Labels {
		n += 32 + len(l.Name) + len(l.Value)
	}
	for _, r := range s.Rules {
		n += int(unsafe.Sizeof(*r)) + len(r.Dest)
	}
	return n
}
