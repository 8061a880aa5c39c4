package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/abacusdb/abacus/internal/keyspace"
)

// Loading a file as it is read (a replica's full sync): the reader holds
// a window of the stream instead of the whole file. A read past the bytes
// held fills the window from the source, growing it as bytes arrive (never
// by what a length field claims); between records the window drops what
// was decoded, so it stays about one read's size plus the largest record.
// Decoded values never alias the input (DecodeValue's contract), so the
// window's bytes can be reused once their record is done. The checksum is
// computed over the bytes as they are dropped and checked at the end: keys
// reach Loader.Key before it is known, so the caller loads into a keyspace
// of its own and keeps it only when the load succeeded.

// source is the stream a reader fills its window from.
type source struct {
	r      io.Reader
	err    error  // the first read error other than io.EOF
	crc    uint64 // over the file's bytes before b[summed:]
	summed int
	base   int64 // the file offset of b[0]
}

// windowSize is the window's capacity and the size of the reads that fill
// it; a window grown past windowMax for a large record is given back.
const (
	windowSize = 256 << 10
	windowMax  = 4 << 20
)

// fill reads until the window holds n bytes past off. Bytes already held
// stay where they are (slices of the record being decoded alias them); a
// full window moves to a larger array, doubling, so a large record costs
// linear time.
func (r *reader) fill(n uint64) error {
	s := r.src
	for uint64(r.left()) < n {
		if s.err != nil {
			return ErrTruncated
		}
		if len(r.b) == cap(r.b) {
			nb := make([]byte, len(r.b), max(2*cap(r.b), windowSize))
			copy(nb, r.b)
			r.b = nb
		}
		k, err := s.r.Read(r.b[len(r.b):cap(r.b)])
		r.b = r.b[:len(r.b)+k]
		if err != nil {
			// Sticky: a later fill fails at once.
			s.err = err
			if err == io.EOF {
				s.err = io.ErrUnexpectedEOF
			}
		}
	}
	return nil
}

// boundary is called between records: the bytes before off are done with.
// It adds them to the checksum and, once they are half the window, moves
// the rest to the front.
func (r *reader) boundary() {
	s := r.src
	if s == nil || r.off < cap(r.b)/2 {
		return
	}
	s.crc = checksumUpdate(s.crc, r.b[s.summed:r.off])
	s.base += int64(r.off)
	rest := r.b[r.off:]
	if cap(r.b) > windowMax && len(rest) < windowSize {
		r.b = make([]byte, 0, windowSize)
	}
	r.b = r.b[:copy(r.b[:cap(r.b)], rest)]
	r.off, s.summed = 0, 0
}

// base is the file offset of the window's first byte.
func (r *reader) base() int64 {
	if r.src == nil {
		return 0
	}
	return r.src.base
}

// bound is how many bytes at most may follow, for counts read from the
// input: a stream's length is not known.
func (r *reader) bound() int {
	if r.src != nil {
		return math.MaxInt32
	}
	return r.left()
}

// finishStream checks a streamed file's end: the EOF opcode at eof and,
// for version 5 on, the checksum of every byte before the checksum.
func (r *reader) finishStream(eof int, ver int, skip bool, info *FileInfo) error {
	s := r.src
	info.EOFOffset = int(s.base) + eof
	if ver < 5 {
		return nil
	}
	s.crc = checksumUpdate(s.crc, r.b[s.summed:eof+1])
	p, err := r.bytes(8)
	if err != nil {
		return r.eofError(err)
	}
	want := binary.LittleEndian.Uint64(p)
	info.Checksum = want
	if want != 0 && !skip && want != s.crc {
		return &CorruptError{Offset: eof + 1, What: fmt.Sprintf("wrong RDB checksum expected: (%x) got: (%x)", want, s.crc)}
	}
	return nil
}

// LoadFrom loads a file as it is read from src, calling Key for each key
// as its record is decoded, before the checksum at the file's end is
// checked: a caller that must not keep part of a corrupt file loads into
// something of its own and keeps it only on success. It reads from src in
// blocks, so it may read past the file's end: rest holds those bytes. A
// read error from src is returned as it is (a truncated stream is a
// CorruptError naming the offset).
func (l *Loader) LoadFrom(src io.Reader) (info *FileInfo, rest []byte, err error) {
	r := &reader{b: make([]byte, 0, windowSize), src: &source{r: src}}
	info, err = l.load(r)
	if err != nil {
		if r.src.err != nil && r.src.err != io.ErrUnexpectedEOF {
			return nil, nil, r.src.err
		}
		var ce *CorruptError
		if errors.As(err, &ce) {
			ce.Offset += int(r.src.base)
		}
		return nil, nil, err
	}
	return info, r.b[r.off:], nil
}

// LoadKeyspaceFrom is LoadKeyspace reading the file from src as it
// arrives (LoadFrom). On an error ks holds part of the file: the caller
// discards it.
func LoadKeyspaceFrom(ks *keyspace.Keyspace, src io.Reader, opt Options, fn func(code []byte) error) (*FileInfo, []byte, error) {
	return keyspaceLoader(ks, opt, fn).LoadFrom(src)
}
