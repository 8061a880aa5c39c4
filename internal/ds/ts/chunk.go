package ts

import (
	"math"
	"math/bits"
)

// A chunk holds consecutive samples of a series in timestamp order, with
// strictly increasing timestamps.
//
// Compressed chunks follow Facebook's Gorilla paper (Pelkonen et al., VLDB
// 2015): the first sample is written whole (64-bit timestamp, 64-bit value);
// then each timestamp is written as the difference between its delta and
// the previous delta (delta-of-delta, 1 bit when samples are evenly spaced),
// and each value as the XOR of its bits with the previous value's bits (1
// bit when unchanged; otherwise the meaningful bits, reusing the previous
// leading/trailing-zero window when they fit in it). Values are handled as
// raw bits, so every float64 (NaN payloads, -0, ±Inf) comes back exactly.
//
// A chunk is full when the next sample would take it past its size in bytes
// (CHUNK_SIZE): for compressed chunks that is the encoded stream, for
// uncompressed ones 16 bytes a sample, as RedisTimeSeries counts them.
type chunk struct {
	n     int   // samples
	first int64 // first timestamp
	last  int64 // last timestamp

	// compressed
	bw        bitWriter
	lastDelta int64
	lastBits  uint64
	lead      uint8 // window of the last explicitly written XOR; lead == noWindow before the first
	trail     uint8
	prev      appendState // the state before the last append, to rewrite the last value in place

	sm     summary // of the samples (summary.go)
	smPrev summary // before the last append, to rewrite the last value in place
	pre    prefix  // the series' totals through this chunk; valid below Series.prefixN

	// uncompressed
	raw bool
	ts  []int64
	vs  []float64
}

const noWindow = 0xff

// appendState is what an append changes in a compressed chunk.
type appendState struct {
	nbits     uint32
	last      int64
	lastDelta int64
	lastBits  uint64
	lead      uint8
	trail     uint8
}

func newChunk(raw bool) *chunk {
	return &chunk{raw: raw, lead: noWindow}
}

// Timestamp delta-of-delta classes: prefix, prefix length, payload bits.
// The payload is dod plus bias (the class's lower bound negated).
var dodClasses = [...]struct {
	prefix  uint64
	plen    uint
	payload uint
	lo, hi  int64
}{
	{0b10, 2, 7, -63, 64},
	{0b110, 3, 9, -255, 256},
	{0b1110, 4, 12, -2047, 2048},
	{0b11110, 5, 32, -(1<<31 - 1), 1 << 31},
}

// dodBits is how many bits a delta-of-delta takes.
func dodBits(dod int64) uint {
	if dod == 0 {
		return 1
	}
	for _, c := range dodClasses {
		if dod >= c.lo && dod <= c.hi {
			return c.plen + c.payload
		}
	}
	return 5 + 64
}

// xorBits is how many bits the value v takes after the chunk's last value,
// and the window a new explicit encoding would use.
func (c *chunk) xorBits(v uint64) (n uint, lead, trail uint8, reuse bool) {
	x := v ^ c.lastBits
	if x == 0 {
		return 1, 0, 0, false
	}
	lead = uint8(min(bits.LeadingZeros64(x), 31))
	trail = uint8(bits.TrailingZeros64(x))
	if c.lead != noWindow && lead >= c.lead && trail >= c.trail {
		return 2 + uint(64-c.lead-c.trail), c.lead, c.trail, true
	}
	return 2 + 5 + 6 + uint(64-lead-trail), lead, trail, false
}

// fits says whether a sample (t, v), later than the chunk's last, can be
// appended without the chunk passing size bytes.
func (c *chunk) fits(t int64, v uint64, size int) bool {
	if c.raw {
		return (c.n+1)*16 <= size
	}
	if c.n == 0 {
		return 16 <= size
	}
	delta := t - c.last
	need := dodBits(delta - c.lastDelta)
	xb, _, _, _ := c.xorBits(v)
	return int(uint(c.bw.n)+need+xb+7)/8 <= size
}

// append adds a sample later than the chunk's last (the caller checked
// fits).
func (c *chunk) append(t int64, v uint64) {
	if c.n == 0 {
		c.first = t
	}
	c.smPrev = c.sm
	c.sm.add(math.Float64frombits(v), c.n == 0)
	if c.raw {
		c.ts = append(c.ts, t)
		c.vs = append(c.vs, math.Float64frombits(v))
		c.n++
		c.last = t
		return
	}
	w := &c.bw
	c.prev = appendState{w.n, c.last, c.lastDelta, c.lastBits, c.lead, c.trail}
	if c.n == 0 {
		w.write(uint64(t), 64)
		w.write(v, 64)
	} else {
		delta := t - c.last
		dod := delta - c.lastDelta
		c.lastDelta = delta
		if dod == 0 {
			w.write(0, 1)
		} else {
			done := false
			for _, k := range dodClasses {
				if dod >= k.lo && dod <= k.hi {
					w.write(k.prefix, k.plen)
					w.write(uint64(dod-k.lo), k.payload)
					done = true
					break
				}
			}
			if !done {
				w.write(0b11111, 5)
				w.write(uint64(dod), 64)
			}
		}
		x := v ^ c.lastBits
		if x == 0 {
			w.write(0, 1)
		} else {
			_, lead, trail, reuse := c.xorBits(v)
			sig := uint(64 - lead - trail)
			if reuse {
				w.write(0b10, 2)
			} else {
				w.write(0b11, 2)
				w.write(uint64(lead), 5)
				w.write(uint64(sig&63), 6)
				c.lead, c.trail = lead, trail
			}
			w.write(x>>trail, sig)
		}
	}
	c.lastBits = v
	c.last = t
	c.n++
}

// setLast replaces the value of the chunk's last sample in place: the
// update of the latest sample (a duplicate at the latest timestamp) costs
// an append, not a re-encoding. It reports false, changing nothing, when
// the new value would take the chunk past size bytes.
func (c *chunk) setLast(v uint64, size int) bool {
	if c.raw {
		c.vs[c.n-1] = math.Float64frombits(v)
		c.sm = c.smPrev
		c.sm.add(c.vs[c.n-1], c.n == 1)
		return true
	}
	t, old, cur := c.last, c.lastBits, c.prev
	c.rewind(cur)
	if c.n > 0 && !c.fits(t, v, size) {
		c.append(t, old)
		return false
	}
	c.append(t, v)
	return true
}

// rewind undoes the last append of a compressed chunk.
func (c *chunk) rewind(st appendState) {
	w := &c.bw
	w.n = st.nbits
	w.w = w.w[:(st.nbits+63)/64]
	if r := st.nbits % 64; r != 0 {
		w.w[len(w.w)-1] &= ^uint64(0) << (64 - r)
	}
	c.last, c.lastDelta, c.lastBits, c.lead, c.trail = st.last, st.lastDelta, st.lastBits, st.lead, st.trail
	c.sm = c.smPrev
	c.n--
}

// bytes is the chunk's data size as CHUNK_SIZE measures it.
func (c *chunk) bytes() int {
	if c.raw {
		return c.n * 16
	}
	return c.bw.bytes()
}

// seal drops the spare capacity of a chunk that will take no more appends.
func (c *chunk) seal() {
	if c.raw {
		c.ts = c.ts[:len(c.ts):len(c.ts)]
		c.vs = c.vs[:len(c.vs):len(c.vs)]
		return
	}
	if cap(c.bw.w) > len(c.bw.w) {
		c.bw.w = append([]uint64(nil), c.bw.w...)
	}
}

// iter walks a chunk's samples in order.
type chunkIter struct {
	c     *chunk
	r     bitReader
	i     int
	t     int64
	delta int64
	bits  uint64
	lead  uint8
	trail uint8
	win   bool // a window (lead, trail) has been read
}

func (c *chunk) iter() chunkIter {
	return chunkIter{c: c, r: bitReader{w: c.bw.w}}
}

// next moves to the next sample; false at the end.
func (it *chunkIter) next() bool {
	c := it.c
	if it.i >= c.n {
		return false
	}
	if c.raw {
		it.t, it.bits = c.ts[it.i], math.Float64bits(c.vs[it.i])
		it.i++
		return true
	}
	r := &it.r
	if it.i == 0 {
		it.t = int64(r.read(64))
		it.bits = r.read(64)
		it.i++
		return true
	}
	var dod int64
	if r.bit() {
		k := 0
		for k < len(dodClasses) && r.bit() {
			k++
		}
		if k == len(dodClasses) {
			dod = int64(r.read(64))
		} else {
			cl := dodClasses[k]
			dod = int64(r.read(cl.payload)) + cl.lo
		}
	}
	it.delta += dod
	it.t += it.delta
	if r.bit() {
		if r.bit() {
			it.lead = uint8(r.read(5))
			sig := uint8(r.read(6))
			if sig == 0 {
				sig = 64
			}
			it.trail = 64 - it.lead - sig
			it.win = true
		}
		sig := uint(64 - it.lead - it.trail)
		it.bits ^= r.read(sig) << it.trail
	}
	it.i++
	return true
}

// value is the current sample's value.
func (it *chunkIter) value() float64 { return math.Float64frombits(it.bits) }

// decode appends the chunk's samples to ts and vs.
func (c *chunk) decode(ts []int64, vs []float64) ([]int64, []float64) {
	if c.raw {
		return append(ts, c.ts...), append(vs, c.vs...)
	}
	it := c.iter()
	for it.next() {
		ts = append(ts, it.t)
		vs = append(vs, it.value())
	}
	return ts, vs
}

// lastValue is the value of the chunk's last sample.
func (c *chunk) lastValue() float64 {
	if c.raw {
		return c.vs[c.n-1]
	}
	return math.Float64frombits(c.lastBits)
}

// encodeChunks packs sorted samples into chunks of at most size bytes.
func encodeChunks(ts []int64, vs []float64, raw bool, size int) []*chunk {
	var out []*chunk
	c := newChunk(raw)
	for i, t := range ts {
		b := math.Float64bits(vs[i])
		if !c.fits(t, b, size) {
			c.seal()
			out = append(out, c)
			c = newChunk(raw)
		}
		c.append(t, b)
	}
	if c.n > 0 {
		out = append(out, c)
	}
	return out
}
