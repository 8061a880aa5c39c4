package conn

import "sync"

// Large replies queue in pooled chunks of bigChunk bytes. A client that
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

// getChunk returns an empty chunk of capacity bigChunk.
func getChunk() []byte { return bigChunks.Get().(*[bigChunk]byte)[:0] }

// putChunk gives b back for reuse if it is a chunk of the pool's size.
// The caller must hold the only reference to b's bytes.
func putChunk(b []byte) {
	if cap(b) == bigChunk {
		bigChunks.Put((*[bigChunk]byte)(b[:bigChunk]))
	}
}

// appendChunked appends b to chunks, filling the last chunk's room first
// (when last is true, the last chunk may take bytes) and then pooled
// chunks.
func appendChunked(chunks [][]byte, b []byte, last bool) [][]byte {
	if k := len(chunks) - 1; last && k >= 0 {
		room := min(cap(chunks[k])-len(chunks[k]), len(b))
		chunks[k] = append(chunks[k], b[:room]...)
		b = b[room:]
	}
	for len(b) > 0 {
		c := getChunk()
		n := min(len(b), bigChunk)
		chunks = append(chunks, append(c, b[:n]...))
		b = b[n:]
	}
	return chunks
}
