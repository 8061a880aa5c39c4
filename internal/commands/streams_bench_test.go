package commands

import (
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/ds/stream"
	"github.com/abacusdb/abacus/internal/resp"
)

// BenchmarkXrangeReply is XRANGE ... COUNT 100's reply without the
// server: streambench's stream (ids i-0, three small fields) from a
// varying start.
func BenchmarkXrangeReply(b *testing.B) {
	s := stream.New()
	for i := 1; i <= 100000; i++ {
		v := []byte(strconv.Itoa(i))
		s.Append(stream.ID{Ms: uint64(i)}, [][]byte{[]byte("f1"), v, []byte("f2"), []byte("ok"), []byte("f3"), []byte(strconv.Itoa(i % 97))}, stream.DefaultLimits())
	}
	var w resp.Writer
	w.Proto = 2
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.Buf = w.Buf[:0]
		start := stream.ID{Ms: uint64(1 + (i*7919)%99000)}
		writeRange(&w, s, start, stream.MaxID, 100, false)
	}
	b.SetBytes(int64(len(w.Buf)))
}
