package httpapi

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
	"sync"
)

// A gzipped /metrics response is one gzip member whose deflate stream is
// made of segments, each compressed on its own: a fresh compressor, ended
// by a sync flush (an empty stored block, so the next segment starts on a
// byte boundary), with no back-reference outside itself. Concatenated,
// they are one valid deflate stream; an empty final block and the CRC-32
// and length of the whole text end the member. A segment of the series
// family whose text is byte-identical to the same segment of the last
// scrape is sent as the bytes it compressed to then: with 10,000 series,
// compressing was half of a scrape's CPU, and series that were not
// written to since the last scrape (sampled less often than scraped) cost
// a comparison instead. Segments of seriesSegmentLines lines compress to
// within a few per cent of one stream (deflate's window is 32 KiB).

// seriesSegmentLines is how many sample lines of the series family go in
// one segment.
const seriesSegmentLines = 128

// segmentWriter writes one gzip member to w, segment by segment.
type segmentWriter struct {
	w    io.Writer
	crc  uint32
	size uint32
	fw   *flate.Writer
	comp bytes.Buffer
	err  error
}

// flateWriters are reused between scrapes (a compressor's state is large
// to allocate).
var flateWriters = sync.Pool{New: func() any {
	// BestSpeed: a scrape's CPU is taken from the server's cores, and
	// Prometheus scrapes over a local network where the bytes cost less.
	w, _ := flate.NewWriter(nil, flate.BestSpeed)
	return w
}}

// gzipHeader is the member's header as compress/gzip writes it at
// BestSpeed: no name, no time, XFL 4 (fastest), OS unknown.
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 255}

func newSegmentWriter(w io.Writer) *segmentWriter {
	g := &segmentWriter{w: w, fw: flateWriters.Get().(*flate.Writer)}
	g.write(gzipHeader)
	return g
}

func (g *segmentWriter) write(b []byte) {
	if g.err == nil {
		_, g.err = g.w.Write(b)
	}
}

// segment compresses text as a segment, sends it and returns its
// compressed bytes, valid until the next call.
func (g *segmentWriter) segment(text []byte) []byte {
	if len(text) == 0 {
		return nil
	}
	g.comp.Reset()
	g.fw.Reset(&g.comp)
	g.fw.Write(text)
	g.fw.Flush()
	g.sent(text, g.comp.Bytes())
	return g.comp.Bytes()
}

// sent sends comp, the segment text compressed to.
func (g *segmentWriter) sent(text, comp []byte) {
	g.crc = crc32.Update(g.crc, crc32.IEEETable, text)
	g.size += uint32(len(text))
	g.write(comp)
}

// close ends the deflate stream and the member.
func (g *segmentWriter) close() error {
	var tail [10]byte
	tail[0], tail[1] = 3, 0 // a final, empty block with fixed codes
	binary.LittleEndian.PutUint32(tail[2:], g.crc)
	binary.LittleEndian.PutUint32(tail[6:], g.size)
	g.write(tail[:])
	flateWriters.Put(g.fw)
	g.fw = nil
	return g.err
}

// seriesSegments remembers, per format, the text and compressed bytes of
// each segment of the last series family sent gzipped.
type seriesSegments struct {
	mu   sync.Mutex
	last map[bool][]sentSegment
}

type sentSegment struct{ text, comp []byte }

// write sends the series family fam, cut after the lines at ends, through
// g: each segment as it was sent last time when its text is the same.
func (s *seriesSegments) write(g *segmentWriter, fam []byte, ends []int, om bool) {
	s.mu.Lock()
	last := s.last[om]
	s.mu.Unlock()
	next := make([]sentSegment, 0, len(ends))
	start := 0
	for i, end := range ends {
		text := fam[start:end]
		start = end
		if i < len(last) && bytes.Equal(last[i].text, text) {
			g.sent(text, last[i].comp)
			next = append(next, last[i])
			continue
		}
		comp := g.segment(text)
		next = append(next, sentSegment{text: text, comp: bytes.Clone(comp)})
	}
	s.mu.Lock()
	if s.last == nil {
		s.last = map[bool][]sentSegment{}
	}
	s.last[om] = next
	s.mu.Unlock()
}
