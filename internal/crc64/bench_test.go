package crc64

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc64"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var benchSizes = []struct {
	name string
	n    int
}{{"16B", 16}, {"64B", 64}, {"1KiB", 1 << 10}, {"64KiB", 64 << 10}, {"1MiB", 1 << 20}, {"64MiB", 64 << 20}}

var (
	benchBufOnce sync.Once
	benchBuf     []byte
)

func benchData(n int) []byte {
	benchBufOnce.Do(func() {
		benchBuf = randBytes(rand.New(rand.NewPCG(1, 1)), 64<<20)
	})
	return benchBuf[:n]
}

var sink uint64

// cpuStart and cpuReport bracket a benchmark loop: bytes per CPU-second,
// as "cpuMB/s" (see cpuTime).
func cpuReport(b *testing.B, start time.Duration, bytes int64) {
	if d := cpuTime() - start; d > 0 && start > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/d.Seconds()/1e6, "cpuMB/s")
	}
}

// BenchmarkUpdate runs every implementation and Go's hash/crc64 with the
// same polynomial (its table built once, outside the loop) on each size.
func BenchmarkUpdate(b *testing.B) {
	goTable := crc64.MakeTable(Poly)
	fns := impls()
	fns["hashcrc64"] = func(crc uint64, p []byte) uint64 { return ^crc64.Update(^crc, goTable, p) }
	delete(fns, "bytes")
	delete(fns, "generic")
	names := []string{"hashcrc64", "slicing8", "slicing16", "slicing3", "sse", "avx512", "Update"}
	for _, name := range names {
		f, ok := fns[name]
		if !ok {
			continue
		}
		for _, s := range benchSizes {
			b.Run(fmt.Sprintf("%s/%s", name, s.name), func(b *testing.B) {
				p := benchData(s.n)
				b.SetBytes(int64(len(p)))
				var crc uint64
				t0 := cpuTime()
				for b.Loop() {
					crc = f(crc, p)
				}
				cpuReport(b, t0, int64(len(p)))
				sink = crc
			})
		}
	}
}

func BenchmarkCombine(b *testing.B) {
	lens := []struct {
		name string
		n    int64
	}{{"16B", 16}, {"1KiB", 1 << 10}, {"1MiB", 1 << 20}, {"1000003B", 1000003}, {"3GiB+5", 3<<30 + 5}, {"random", -1}}
	r := rand.New(rand.NewPCG(2, 2))
	var random [256]int64
	for i := range random {
		random[i] = 1 + int64(r.Uint64()>>31) // up to 8 GiB
	}
	for _, l := range lens {
		b.Run(l.name, func(b *testing.B) {
			crc := uint64(0x0123456789abcdef)
			i := 0
			t0 := cpuTime()
			for b.Loop() {
				n := l.n
				if n < 0 {
					n = random[i&255]
					i++
				}
				crc = Combine(crc, 0x5555, n)
			}
			if d := cpuTime() - t0; t0 > 0 && d > 0 {
				b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
			sink = crc
		})
	}
}

var (
	bigOnce sync.Once
	bigBuf  []byte
)

func bigData(b *testing.B) []byte {
	bigOnce.Do(func() {
		bigBuf = make([]byte, 1<<30)
		x := uint64(0x9e3779b97f4a7c15)
		for i := 0; i < len(bigBuf); i += 8 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			binary.LittleEndian.PutUint64(bigBuf[i:], x)
		}
	})
	return bigBuf
}

// BenchmarkParallel1GiB verifies a 1 GiB buffer with ChecksumParallel.
func BenchmarkParallel1GiB(b *testing.B) {
	p := bigData(b)
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			t0 := cpuTime()
			for b.Loop() {
				sink = ChecksumParallel(p, w)
			}
			cpuReport(b, t0, int64(len(p)))
		})
	}
}

// xorSum reads p once, eight bytes at a time with four accumulators: a
// memory bandwidth reference for a read-only pass.
func xorSum(p []byte) uint64 {
	var a, b, c, d uint64
	for len(p) >= 32 {
		a ^= binary.LittleEndian.Uint64(p)
		b ^= binary.LittleEndian.Uint64(p[8:])
		c ^= binary.LittleEndian.Uint64(p[16:])
		d ^= binary.LittleEndian.Uint64(p[24:])
		p = p[32:]
	}
	return a ^ b ^ c ^ d
}

// BenchmarkBandwidth1GiB is the reference for BenchmarkParallel1GiB: the same
// buffer read by bytes.Count (vectorised in the runtime: a read-bandwidth
// bound), by xorSum (scalar), and copied with copy (reads and writes), on one
// and two goroutines.
func BenchmarkBandwidth1GiB(b *testing.B) {
	p := bigData(b)
	var dst []byte
	refs := []struct {
		name string
		f    func(part []byte, off int) uint64
	}{
		{"count", func(part []byte, _ int) uint64 { return uint64(bytes.Count(part, []byte{0x5a})) }},
		{"xorsum", func(part []byte, _ int) uint64 { return xorSum(part) }},
		{"copy", func(part []byte, off int) uint64 { return uint64(copy(dst[off:], part)) }},
	}
	for _, ref := range refs {
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/workers=%d", ref.name, w), func(b *testing.B) {
				if ref.name == "copy" && dst == nil {
					dst = make([]byte, len(p))
				}
				b.SetBytes(int64(len(p)))
				t0 := cpuTime()
				for b.Loop() {
					var wg sync.WaitGroup
					share := len(p) / w
					res := make([]uint64, w)
					for i := range w {
						wg.Add(1)
						go func() {
							defer wg.Done()
							res[i] = ref.f(p[i*share:(i+1)*share], i*share)
						}()
					}
					wg.Wait()
					sink = res[0]
				}
				cpuReport(b, t0, int64(len(p)))
			})
		}
	}
}

// BenchmarkReaderAt256MiB verifies a 256 MiB file (in the page cache after
// the first pass) with ChecksumReaderAt: what check-rdb pays per byte.
func BenchmarkReaderAt256MiB(b *testing.B) {
	p := bigData(b)[:256<<20]
	path := filepath.Join(b.TempDir(), "snapshot")
	if err := os.WriteFile(path, p, 0o600); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	want := Checksum(p)
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			t0 := cpuTime()
			for b.Loop() {
				crc, err := ChecksumReaderAt(f, 0, int64(len(p)), w)
				if err != nil || crc != want {
					b.Fatalf("%#x, %v", crc, err)
				}
			}
			cpuReport(b, t0, int64(len(p)))
		})
	}
}
