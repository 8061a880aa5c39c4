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
