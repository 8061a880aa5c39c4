package crc64

import "io"

// readBuf is the size of the reads ChecksumReaderAt issues.
const readBuf = 1 << 20

// ChecksumReaderAt returns the checksum of the n bytes of r starting at off,
// read by up to workers goroutines (0 or less: runtime.GOMAXPROCS(0)), each
// over its own contiguous range in 1 MiB reads, the range CRCs then joined
// with Combine. It is for verifying a large file (an RDB snapshot) without
// holding it in memory. Reading fewer than n bytes is io.ErrUnexpectedEOF.
func ChecksumReaderAt(r io.ReaderAt, off, n int64, workers int) (uint64, error) {
	return combinePieces(split(n, workers), func(lo, k int64) (uint64, error) {
		return checksumRange(r, off+lo, k)
	})
}

// checksumRange is the CRC of r's n bytes at off, read sequentially.
func checksumRange(r io.ReaderAt, off, n int64) (uint64, error) {
	buf := make([]byte, min(n, readBuf))
	var crc uint64
	for n > 0 {
		k, err := r.ReadAt(buf[:min(n, int64(len(buf)))], off)
		crc = update(crc, buf[:k])
		off += int64(k)
		n -= int64(k)
		if n > 0 && err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		if n > 0 && k == 0 {
			return 0, io.ErrUnexpectedEOF
		}
	}
	return crc, nil
}
