package keyspace

// Memory accounting between garbage collections. The server's used memory
// is the live heap the collector measured at its last cycle plus what
// changed since (docs/design.md, "Memory"): the keyspace keeps the second
// part, UsedDelta, from the sizes of the objects it stores and removes.
// Values grown in place (HSET on an existing hash, RPUSH, APPEND) are not
// seen here; the next collection's measure includes them.

// ObjectSize estimates the heap bytes o holds with its key: the Object,
// the key's bytes and the value (its Value's MemoryUsage), rounded as the
// allocator rounds small objects.
func ObjectSize(o *Object) int64 {
	n := int64(objectSize) + roundAlloc(int64(len(o.Key)))
	if o.Type == TypeString {
		if raw := o.Raw(); raw != nil {
			n += roundAlloc(int64(cap(raw)))
		}
		return n
	}
	if v, ok := o.Val().(Value); ok {
		n += int64(v.MemoryUsage())
	}
	return n
}

// objectSize is the Object's allocation plus its share of the dict's
// bucket array (one pointer per key at load factor 1).
const objectSize = 64 + 8

// roundAlloc rounds n up to the 16-byte steps of Go's small size classes.
func roundAlloc(n int64) int64 {
	if n == 0 {
		return 0
	}
	return (n + 15) &^ 15
}

func (ks *Keyspace) accountAdd(o *Object)    { ks.UsedDelta += ObjectSize(o) }
func (ks *Keyspace) accountRemove(o *Object) { ks.UsedDelta -= ObjectSize(o) }
