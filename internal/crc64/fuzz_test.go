package crc64

import "testing"

// FuzzUpdate feeds the same bytes, split at a fuzzed point and continued from
// a fuzzed register, to every implementation and to the bit-by-bit
// reference, and checks Combine on the split. The seed corpus lives in
// testdata/fuzz/FuzzUpdate, so plain go test runs it.
func FuzzUpdate(f *testing.F) {
	f.Add(uint64(0), uint16(0), []byte("123456789"))
	f.Fuzz(func(t *testing.T, crc uint64, cut uint16, p []byte) {
		want := refUpdate(crc, p)
		for name, fn := range impls() {
			if got := fn(crc, p); got != want {
				t.Fatalf("%s(%#x, len %d) = %#x, want %#x", name, crc, len(p), got, want)
			}
		}
		k := int(cut) % (len(p) + 1)
		if got := Update(Update(crc, p[:k]), p[k:]); got != want {
			t.Fatalf("chained at %d: %#x, want %#x", k, got, want)
		}
		if got := Combine(Update(crc, p[:k]), Checksum(p[k:]), int64(len(p)-k)); got != want {
			t.Fatalf("Combine at %d: %#x, want %#x", k, got, want)
		}
	})
}
