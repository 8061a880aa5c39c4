package crc64

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// shortReader returns at most max bytes per ReadAt, to exercise the loop.
type shortReader struct {
	r   io.ReaderAt
	max int
}

func (s shortReader) ReadAt(p []byte, off int64) (int, error) {
	if len(p) > s.max {
		p = p[:s.max]
	}
	return s.r.ReadAt(p, off)
}

func TestChecksumReaderAt(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	buf := randBytes(r, 3*ChunkSize+5000)
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, buf, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases := []struct{ off, n int64 }{
		{0, 0}, {0, 1}, {5, 100}, {0, int64(len(buf))}, {7, int64(len(buf)) - 7},
		{1, 2*ChunkSize + 1}, {ChunkSize - 3, ChunkSize + 6}, {100, 3 * ChunkSize},
	}
	for _, c := range cases {
		want := Checksum(buf[c.off : c.off+c.n])
		for _, w := range []int{0, 1, 2, 3, 8} {
			for name, ra := range map[string]io.ReaderAt{
				"file": f, "bytes": bytes.NewReader(buf), "short": shortReader{bytes.NewReader(buf), 4097},
			} {
				got, err := ChecksumReaderAt(ra, c.off, c.n, w)
				if err != nil || got != want {
					t.Fatalf("%s off %d n %d workers %d: %#x, %v; want %#x", name, c.off, c.n, w, got, err, want)
				}
			}
		}
	}
	// Past the end: an error, never a checksum of fewer bytes.
	for _, w := range []int{1, 2} {
		if _, err := ChecksumReaderAt(f, 10, int64(len(buf)), w); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("workers %d: reading past the end gave %v, want io.ErrUnexpectedEOF", w, err)
		}
	}
}
