package conn

import (
	"bytes"
	"testing"
)

// Large outputs queue in pooled chunks, in order, and a chunk lent by its
// producer is never taken for the pool when the queue fails.
func TestChunkedQueue(t *testing.T) {
	q := newOutQueue(nil)
	var want []byte
	for i, n := range []int{100, chunkBytes + 1, 3*bigChunk + 17, 5, 2 * bigChunk, 40 << 10} {
		b := bytes.Repeat([]byte{byte('a' + i)}, n)
		want = append(want, b...)
		if _, ok := q.append(b, false); !ok {
			t.Fatal("append refused")
		}
	}
	var got []byte
	for _, c := range q.chunks {
		if cap(c) > bigChunk {
			t.Fatalf("a chunk of capacity %d", cap(c))
		}
		got = append(got, c...)
	}
	if !bytes.Equal(got, want) || q.n != int64(len(want)) {
		t.Fatalf("queued %d bytes (n %d), want %d in order", len(got), q.n, len(want))
	}

	lent := make([]byte, bigChunk)
	q.chunks = append(q.chunks, lent)
	q.owned = append(q.owned, ownedChunk{last: &lent[len(lent)-1], release: func() {}})
	if !q.lent(lent) || q.lent(q.chunks[0]) {
		t.Fatal("lent() does not tell the lent chunk apart")
	}
	q.fail()
	if q.chunks != nil || q.n != 0 {
		t.Fatal("fail kept chunks")
	}
}
