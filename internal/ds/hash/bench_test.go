package hash

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// fieldName and valueName give ~10-byte fields and values, as in the memory
// goals.
func fieldName(i int) []byte { return fmt.Appendf(nil, "field-%04d", i) }
func valueName(i int) []byte { return fmt.Appendf(nil, "value-%04d", i) }

var benchShapes = []struct {
	name   string
	fields int
	lim    Limits
}{
	{"listpack-5", 5, DefaultLimits()},
	{"listpack-100", 100, DefaultLimits()},
	{"hashtable-1000", 1000, DefaultLimits()},
	{"hashtable-100000", 100000, DefaultLimits()},
}

func benchHash(n int, lim Limits) (*Hash, [][]byte) {
	h := New()
	keys := make([][]byte, n)
	for i := range n {
		keys[i] = fieldName(i)
		h.Set(0, keys[i], valueName(i), lim)
	}
	return h, keys
}

// BenchmarkSet overwrites existing fields with a value of the same length
// (HSET on an existing field).
func BenchmarkSet(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			h, keys := benchHash(s.fields, s.lim)
			v := []byte("value-xxxx")
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				h.Set(0, keys[i%len(keys)], v, s.lim)
				i++
			}
		})
	}
}

// BenchmarkSetNew builds hashes of the given size from empty (HSET of new
// fields, conversion included); the time is per field.
func BenchmarkSetNew(b *testing.B) {
	for _, s := range benchShapes[:3] {
		b.Run(s.name, func(b *testing.B) {
			keys := make([][]byte, s.fields)
			for i := range keys {
				keys[i] = fieldName(i)
			}
			v := []byte("value-xxxx")
			b.ReportAllocs()
			var h *Hash
			i := 0
			for b.Loop() {
				if i%s.fields == 0 {
					h = New()
				}
				h.Set(0, keys[i%s.fields], v, s.lim)
				i++
			}
		})
	}
}

func BenchmarkGet(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			h, keys := benchHash(s.fields, s.lim)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, ok := h.Get(0, keys[i%len(keys)]); !ok {
					b.Fatal("missing")
				}
				i++
			}
		})
	}
}

// BenchmarkGetWithTTLs is Get on a hash where every field has a TTL
// (listpackex, or the hashtable with its heap).
func BenchmarkGetWithTTLs(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			h, keys := benchHash(s.fields, s.lim)
			for i, k := range keys {
				h.SetExpiry(0, k, int64(1_000_000+i), CondNone)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, ok := h.Get(1, keys[i%len(keys)]); !ok {
					b.Fatal("missing")
				}
				i++
			}
		})
	}
}

// BenchmarkIncr is HINCRBY as the command layer would do it: Get, parse,
// add, format, SetKeepTTL.
func BenchmarkIncr(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			h := New()
			keys := make([][]byte, s.fields)
			for i := range keys {
				keys[i] = fieldName(i)
				h.Set(0, keys[i], []byte("100000"), s.lim)
			}
			var buf [20]byte
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				k := keys[i%len(keys)]
				v, _ := h.Get(0, k)
				n, err := strconv.ParseInt(string(v), 10, 64)
				if err != nil {
					b.Fatal(err)
				}
				h.SetKeepTTL(0, k, strconv.AppendInt(buf[:0], n+1, 10), s.lim)
				i++
			}
		})
	}
}

func BenchmarkScanLarge(b *testing.B) {
	h, _ := benchHash(100000, DefaultLimits())
	b.ReportAllocs()
	for b.Loop() {
		for cur := uint64(0); ; {
			cur = h.Scan(0, cur, 100, func(_, _ []byte) {})
			if cur == 0 {
				break
			}
		}
	}
}

// heapBytesPerHash builds n hashes of m fields and returns the heap bytes
// they hold each, measured with runtime.ReadMemStats after GC, and
// MemoryUsage's estimate. The slice holding them is allocated before the
// baseline, so a hash's own 32 bytes count but the pointer to it does not.
func heapBytesPerHash(n, m int) (measured, estimated float64, enc string) {
	fs := make([][]byte, m)
	vs := make([][]byte, m)
	for i := range m {
		fs[i] = fieldName(i)
		vs[i] = valueName(i)
	}
	hs := make([]*Hash, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	lim := DefaultLimits()
	for i := range hs {
		h := New()
		for j := range m {
			h.Set(0, fs[j], vs[j], lim)
		}
		hs[i] = h
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	est := 0
	for _, h := range hs {
		est += h.MemoryUsage()
	}
	enc = hs[0].Encoding()
	runtime.KeepAlive(hs)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n), float64(est) / float64(n), enc
}

// TestHeapBytesPerHash keeps the small form's footprint from creeping up.
// 5 fields of "field-NNNN" = "value-NNNN": a 111-byte block (112-byte size
// class) plus the 32-byte Hash.
func TestHeapBytesPerHash(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates")
	}
	cases := []struct {
		n, m  int
		limit float64
	}{
		{20000, 5, 150},
		{2000, 100, 2400},
	}
	for _, c := range cases {
		got, est, enc := heapBytesPerHash(c.n, c.m)
		t.Logf("%d hashes of %d fields (%s): %.1f heap bytes each (MemoryUsage says %.1f)", c.n, c.m, enc, got, est)
		if got > c.limit {
			t.Errorf("%d fields: %.1f bytes per hash, want <= %.0f", c.m, got, c.limit)
		}
	}
}

// BenchmarkHeapBytesPerHash reports the memory goals' figures: 1,000,000
// hashes of 5 fields and 100,000 hashes of 100 fields (set
// HASH_MEM_FULL=1; the default sizes are a tenth).
func BenchmarkHeapBytesPerHash(b *testing.B) {
	scale := 10
	if os.Getenv("HASH_MEM_FULL") != "" {
		scale = 1
	}
	for _, c := range []struct{ n, m int }{{1_000_000 / scale, 5}, {100_000 / scale, 100}, {1000 / scale, 1000}} {
		b.Run(fmt.Sprintf("%dx%d", c.n, c.m), func(b *testing.B) {
			var got, est float64
			for b.Loop() {
				got, est, _ = heapBytesPerHash(c.n, c.m)
			}
			b.ReportMetric(got, "heapB/hash")
			b.ReportMetric(est, "estB/hash")
			b.ReportMetric(got/float64(c.m), "heapB/field")
		})
	}
}
