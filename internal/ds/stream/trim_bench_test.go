package stream

import "testing"

// BenchmarkAppendTrimApprox is XADD ... MAXLEN ~ 10000 at the data
// structure: an append and an approximate trim per entry, a whole node
// removed every NodeMaxEntries appends.
func BenchmarkAppendTrimApprox(b *testing.B) {
	s := New()
	lim := DefaultLimits()
	fv := [][]byte{[]byte("field"), []byte("value")}
	trim := TrimArgs{Strategy: TrimMaxLen, MaxLen: 10000, Approx: true}
	id := ID{Ms: 1}
	for range 20000 {
		id.Seq++
		s.Append(id, fv, lim)
		s.Trim(trim)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		id.Seq++
		s.Append(id, fv, lim)
		s.Trim(trim)
	}
}
