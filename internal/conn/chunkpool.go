package conn

import "sync"

// Large outputs queue in pooled buffers: copies of replies in chunks of
// bigChunk bytes, and a queued client's reply buffer itself when it
// holds more than bigChunk (client.stage), the client building its next
// replies in a recycled one (replyBufs). A client that
// does not read its replies queues them until its output limit closes it,
// and the next such client queues as many again: with a fresh buffer per
// large reply, every one of them cost page faults and zeroing of memory
// the previous client just dropped, and made the collector run every few
// replies, all on the event loop between other clients' requests. The
// chunks of a queue go back to bigChunks once written whole or dropped
// with the queue (outQueue.fail), and the next large reply is copied into
// them. sync.Pool lets the collector take back chunks not reused between
// two collections, so the memory still returns to the system after an
// attack (ReleaseMemory's collections).
const bigChunk = 256 << 10

var bigChunks = sync.Pool{New: func() any { return new([bigChunk]byte) }}

// replyBufs holds reply buffers of more than bigChunk bytes, up to
// keepReplyBuf, that a queue wrote or dropped.
var replyBufs sync.Pool

// getReplyBuf returns an empty buffer for replies, n bytes of them
// expected: a recycled one if there is one that large (a smaller one,
// such as the rest of a buffer the socket took part of, would be grown
// by copying, and is left to the collector).
func getReplyBuf(n int) []byte {
	if p, ok := replyBufs.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]byte, 0, n)
}

// smallChunks holds chunks of chunkBytes, into which small outputs are
// copied, that queues wrote whole beyond the one each keeps
// (outQueue.free): a subscriber's round of messages from fifty pipelining
// publishers spans a few of them, and a fresh one each round cost its
// allocation and zeroing on the event loop.
var smallChunks = sync.Pool{New: func() any { return new([chunkBytes]byte) }}

// getSmallChunk returns an empty chunk of capacity chunkBytes.
func getSmallChunk() []byte { return smallChunks.Get().(*[chunkBytes]byte)[:0] }

// getChunk returns an empty chunk of capacity bigChunk.
func getChunk() []byte { return bigChunks.Get().(*[bigChunk]byte)[:0] }

// putChunk gives b back for reuse if it is a chunk of one of the pools'
// sizes or a reply buffer (getReplyBuf). The caller must hold the only
// reference to b's bytes.
func putChunk(b []byte) {
	switch {
	case cap(b) == chunkBytes:
		smallChunks.Put((*[chunkBytes]byte)(b[:chunkBytes]))
	case cap(b) == bigChunk:
		bigChunks.Put((*[bigChunk]byte)(b[:bigChunk]))
	case cap(b) > bigChunk && cap(b) <= keepReplyBuf:
		b = b[:0]
		replyBufs.Put(&b)
	}
}

// appendChunked appends b to chunks, filling the last chunk's room first
// (when last is true, the last chunk may take bytes) and then pooled
// chunks.
func appendChunked(chunks []outChunk, b []byte, last bool) []outChunk {
	if k := len(chunks) - 1; last && k >= 0 {
		room := min(cap(chunks[k].b)-len(chunks[k].b), len(b))
		chunks[k].b = append(chunks[k].b, b[:room]...)
		b = b[room:]
	}
	for len(b) > 0 {
		c := getChunk()
		n := min(len(b), bigChunk)
		chunks = append(chunks, outChunk{b: append(c, b[:n]...)})
		b = b[n:]
	}
	return chunks
}
