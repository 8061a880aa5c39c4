// Package crc64 computes CRC-64/Jones the way Redis does: the reflected
// polynomial 0x95ac9329ac4bc9b5 (x^64 + x^63 + x^61 + ... + 1 written
// least-significant-bit first, as Go's hash/crc64 tables expect it), an
// initial register of zero and no final inversion. The check value of
// "123456789" is 0xe9c6d914c4b8d9ca. RDB files end with this checksum and
// DUMP payloads carry it.
//
// Because the register starts at zero and is never inverted, the CRC is a
// linear function of the message: Update(crc, p) continues a running CRC
// exactly as Redis's crc64(crc, p, len) does, and Combine joins the CRCs of
// two adjacent pieces without touching their bytes, which is what lets
// ChecksumParallel verify large buffers on several cores.
//
// The fastest implementation for the platform sits behind Update: carry-less
// multiplication folding on amd64 CPUs with PCLMULQDQ (or VPCLMULQDQ with
// AVX-512), interleaved slicing-by-8 tables everywhere else. Build with the
// purego (or noasm) tag to force the table implementation. docs/crc64.md
// describes the methods and how their constants are derived.
package crc64

import (
	"hash"
	"runtime"
	"sync"
)

// Poly is the CRC-64/Jones polynomial in reflected form: bit 63-i holds the
// coefficient of x^i, and the x^64 term is implicit.
const Poly = 0x95ac9329ac4bc9b5

// Size is the size of a CRC-64 checksum in bytes.
const Size = 8

// Update returns the CRC of the bytes that gave crc followed by p. Update(0, p)
// is the checksum of p, and Update(Update(0, a), b) == Update(0, a||b).
func Update(crc uint64, p []byte) uint64 {
	return update(crc, p)
}

// Checksum returns the CRC-64/Jones checksum of p (Redis's crc64(0, p, len)).
func Checksum(p []byte) uint64 {
	return update(0, p)
}

// Combine returns the CRC of a||b given crc1 = Checksum(a), crc2 = Checksum(b)
// and len2 = len(b). It costs a few multiplications in GF(2)[x]/P, not a pass
// over b. A negative len2 is treated as zero.
func Combine(crc1, crc2 uint64, len2 int64) uint64 {
	if len2 <= 0 {
		return crc1 ^ crc2
	}
	return shift(crc1, uint64(len2)) ^ crc2
}

// ChunkSize is the smallest piece ChecksumParallel hands to a worker. Smaller
// buffers are checksummed on the calling goroutine.
const ChunkSize = 1 << 20

// ChecksumParallel returns Checksum(p), computed by up to workers goroutines
// on contiguous chunks of p whose CRCs are then joined with Combine. workers
// 0 or less means runtime.GOMAXPROCS(0); 1 (or a buffer under two chunks)
// computes it on the caller.
func ChecksumParallel(p []byte, workers int) uint64 {
	pieces := split(int64(len(p)), workers)
	if len(pieces) < 2 {
		return update(0, p)
	}
	crc, _ := combinePieces(pieces, func(off, n int64) (uint64, error) {
		return update(0, p[off:off+n]), nil
	})
	return crc
}

// split cuts n bytes into at most workers contiguous pieces (workers 0 or
// less: GOMAXPROCS) of at least ChunkSize bytes, rounded up to 4 KiB so they
// start on page boundaries relative to the start; the last takes the rest.
// It returns the pieces' lengths.
func split(n int64, workers int) []int64 {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = int(max(min(int64(workers), n/ChunkSize), 1))
	share := (n + int64(workers) - 1) / int64(workers)
	share = (share + 4095) &^ 4095
	var lens []int64
	for lo := int64(0); lo < n; lo += share {
		lens = append(lens, min(share, n-lo))
	}
	return lens
}

// combinePieces runs crcOf on each piece (offset and length) in its own
// goroutine and joins the CRCs in order; the first error in piece order wins.
func combinePieces(lens []int64, crcOf func(off, n int64) (uint64, error)) (uint64, error) {
	crcs := make([]uint64, len(lens))
	errs := make([]error, len(lens))
	var wg sync.WaitGroup
	off := int64(0)
	for i, n := range lens {
		wg.Add(1)
		go func(i int, off, n int64) {
			defer wg.Done()
			crcs[i], errs[i] = crcOf(off, n)
		}(i, off, n)
		off += n
	}
	wg.Wait()
	crc := uint64(0)
	for i, n := range lens {
		if errs[i] != nil {
			return 0, errs[i]
		}
		crc = Combine(crc, crcs[i], n)
	}
	return crc, nil
}

// digest is the hash.Hash64 returned by New.
type digest struct{ crc uint64 }

// New returns a hash.Hash64 computing CRC-64/Jones, for streaming writers.
// Its Sum appends the checksum big-endian, as hash/crc64 does; Redis stores
// it little-endian in RDB files and DUMP payloads, so use Sum64 there.
func New() hash.Hash64 { return &digest{} }

func (d *digest) Size() int      { return Size }
func (d *digest) BlockSize() int { return 1 }
func (d *digest) Reset()         { d.crc = 0 }
func (d *digest) Sum64() uint64  { return d.crc }

func (d *digest) Write(p []byte) (int, error) {
	d.crc = update(d.crc, p)
	return len(p), nil
}

func (d *digest) Sum(in []byte) []byte {
	s := d.crc
	return append(in, byte(s>>56), byte(s>>48), byte(s>>40), byte(s>>32),
		byte(s>>24), byte(s>>16), byte(s>>8), byte(s))
}
