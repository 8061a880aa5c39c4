package keyspace

import "unsafe"

// Prefetching: a lookup in a table of millions of keys is a chain of
// dependent cache misses (the bucket slot, the Object, the key's bytes,
// the value's bytes), each a trip to memory of 100 ns or more, and on a
// virtual machine often a TLB miss too. One lookup cannot go faster, but
// the lookups of a batch (the keys of MSET, the commands of a pipeline)
// are independent: touching level 1 of every key, then level 2 of every
// key, and so on, lets the processor have all their misses in flight at
// once. The lookups proper then find everything in cache. Redis 8 does the
// same for pipelined commands (memory_prefetch.c).
//
// Prefetching only reads; it is done under the server lock like any other
// access, and a key that is absent, or moved by a rehash, costs nothing
// but the wasted loads.

// prefetchChunk is how many keys are touched together: enough to fill the
// processor's miss buffers, small enough for the scratch to stay on the
// stack.
const prefetchChunk = 16

// Prefetch touches the memory that looking up keys will need: keys[0],
// keys[step], keys[2*step]... (step 2 takes the keys of MSET's key-value
// pairs).
func (db *DB) Prefetch(keys [][]byte, step int) {
	d := db.dict
	if d.Len() == 0 {
		return
	}
	var chunk [prefetchChunk][]byte
	n := 0
	for i := 0; i < len(keys); i += step {
		chunk[n] = keys[i]
		if n++; n == prefetchChunk {
			// Storing what was read keeps the loads from being
			// optimized away.
			d.sink += d.prefetch(chunk[:n])
			n = 0
		}
	}
	if n > 0 {
		d.sink += d.prefetch(chunk[:n])
	}
}

func (d *dict) prefetch(keys [][]byte) uint64 {
	var (
		heads [prefetchChunk]*Object
		tags  [prefetchChunk]uint8
		sink  uint64
	)
	tab := d.t[0]
	if d.rehashing() && len(d.t[1]) > len(tab) {
		tab = d.t[1] // most keys end up in the new table
	}
	mask := uint64(len(tab) - 1)
	// Level 1: the bucket slots.
	for i, k := range keys {
		h := d.hash(unsafeString(k))
		tags[i] = tagOf(h)
		heads[i] = tab[h&mask]
	}
	// Level 2: the first object of each chain, and the one after it when
	// the first is another key.
	for i, o := range heads {
		if o == nil {
			continue
		}
		if o.htag != tags[i] && o.next != nil {
			heads[i] = o.next
		}
	}
	// Level 3: the bytes of keys whose tag matches, and the value's.
	for i, o := range heads {
		if o == nil || o.htag != tags[i] {
			continue
		}
		if len(o.Key) > 0 {
			sink += uint64(o.Key[0])
		}
		if o.Type == TypeString && o.Enc != EncInt && o.StrLen() > 0 {
			sink += uint64(*(*byte)(o.u.p))
		}
	}
	return sink
}

// unsafeString views b as a string for hashing, without copying: the
// string must not outlive the call.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
