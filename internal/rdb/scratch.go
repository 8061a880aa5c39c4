package rdb

import "sync"

// Encoding a value builds temporaries that are copied into the output at
// once (a collection's listpack, a string's LZF form, a hash's fields).
// They come from pools rather than the heap: a save or a replica's full
// sync encodes the whole keyspace, and fresh temporaries per key made
// garbage several times the RDB's size, which the collector let the heap
// grow for while the sync ran.

var scratchPool = sync.Pool{New: func() any { return new([]byte) }}

// scratchMax bounds the buffers kept: an outsized value's goes to the
// collector.
const scratchMax = 1 << 20

// getScratch returns an empty buffer of at least n bytes' capacity, for
// putScratch once its bytes are copied out.
func getScratch(n int) *[]byte {
	p := scratchPool.Get().(*[]byte)
	if cap(*p) < n {
		*p = make([]byte, 0, n)
	}
	*p = (*p)[:0]
	return p
}

func putScratch(p *[]byte) {
	if cap(*p) <= scratchMax {
		scratchPool.Put(p)
	}
}

var fieldsPool = sync.Pool{New: func() any { return new([]hashField) }}

// pooledListpack is newListpack in a pooled buffer, given back by free
// once the listpack's bytes are copied out.
func pooledListpack(capHint int) *listpackBuilder {
	p := getScratch(lpHeaderSize + capHint + 1)
	return &listpackBuilder{b: (*p)[:lpHeaderSize], pool: p}
}

// free gives a pooled listpack's buffer back; the listpack's bytes are
// invalid from then on.
func (l *listpackBuilder) free() {
	if l.pool != nil {
		*l.pool = l.b[:0]
		putScratch(l.pool)
		l.pool, l.b = nil, nil
	}
}
