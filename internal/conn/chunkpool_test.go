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
		if cap(c.b) > bigChunk {
			t.Fatalf("a chunk of capacity %d", cap(c.b))
		}
		got = append(got, c.b...)
	}
	if !bytes.Equal(got, want) || q.n != int64(len(want)) {
		t.Fatalf("queued %d bytes (n %d), want %d in order", len(got), q.n, len(want))
	}

	lent := make([]byte, bigChunk)
	q.chunks = append(q.chunks, outChunk{b: lent})
	q.owned = append(q.owned, ownedChunk{last: &lent[len(lent)-1], release: func() {}})
	if !q.lent(lent) || q.lent(q.chunks[0].b) {
		t.Fatal("lent() does not tell the lent chunk apart")
	}
	q.fail()
	if q.chunks != nil || q.n != 0 {
		t.Fatal("fail kept chunks")
	}
}

// A queued client's large reply buffer is queued as it is and comes back
// for the next replies once written; a smaller recycled one is not
// handed out for replies it could not hold.
func TestReplyBufRecycled(t *testing.T) {
	b := make([]byte, 0, 2*bigChunk)
	putChunk(b)
	if r := getReplyBuf(3 * bigChunk); cap(r) < 3*bigChunk || len(r) != 0 {
		t.Fatalf("getReplyBuf(%d) gave capacity %d, length %d", 3*bigChunk, cap(r), len(r))
	}
	putChunk(make([]byte, 5, keepReplyBuf+1)) // too large to keep: not pooled
	if r := getReplyBuf(bigChunk + 1); cap(r) > keepReplyBuf || len(r) != 0 {
		t.Fatalf("getReplyBuf gave capacity %d, length %d", cap(r), len(r))
	}
}
