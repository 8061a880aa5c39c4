package hash

import (
	"bytes"
	"strconv"
	"testing"
)

// A built hash is the one Set makes from the same fields, byte for byte.
func TestBuilderMatchesSet(t *testing.T) {
	lim := DefaultLimits()
	var b Builder
	for _, n := range []int{1, 5, 63, 64, 128} {
		b.Reset()
		var want Hash
		for i := range n {
			f := []byte("field:" + strconv.Itoa(i))
			v := bytes.Repeat([]byte{'v'}, i%(lim.MaxListpackValue+1))
			if !b.Fits(len(f), len(v), lim) {
				t.Fatalf("n=%d: field %d does not fit", n, i)
			}
			if !b.Add(f, v) {
				t.Fatalf("n=%d: field %d reported as a duplicate", n, i)
			}
			want.Set(0, f, v, lim)
		}
		if b.Add([]byte("field:0"), nil) {
			t.Fatalf("n=%d: a repeated field was added", n)
		}
		var got Hash
		b.Build(&got)
		if !bytes.Equal(got.block(), want.block()) || cap(got.block()) != len(got.block()) {
			t.Fatalf("n=%d: built block differs from Set's (cap %d)", n, cap(got.block()))
		}
	}
	b.Reset()
	for i := range lim.MaxListpackEntries {
		b.Add([]byte(strconv.Itoa(i)), nil)
	}
	if b.Fits(1, 1, lim) || b.Fits(0, lim.MaxListpackValue+1, lim) {
		t.Fatal("Fits past the limits")
	}
}
