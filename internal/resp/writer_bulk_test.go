package resp

import (
	"strconv"
	"strings"
	"testing"
)

// TestBulkHeaderLengths checks the bulk headers on both sides of the
// precomputed table's end against formatting them.
func TestBulkHeaderLengths(t *testing.T) {
	for n := 0; n <= len(bulkHeaders)+70; n++ {
		s := strings.Repeat("x", n)
		want := "$" + strconv.Itoa(n) + "\r\n" + s + "\r\n"
		var w Writer
		w.BulkString(s)
		w.Bulk([]byte(s))
		if got := string(w.Buf); got != want+want {
			t.Fatalf("length %d: %q, want %q", n, got, want+want)
		}
	}
}

// BenchmarkBulkString100 writes a reply of 100 members of 14 bytes, the
// shape of ZRANGEBYSCORE ... LIMIT 0 100 in the types benchmark.
func BenchmarkBulkString100(b *testing.B) {
	var w Writer
	m := "m:000000012345"
	b.SetBytes(100 * int64(len("$14\r\n")+len(m)+2))
	for range b.N {
		w.Reset()
		for range 100 {
			w.BulkString(m)
		}
	}
}
