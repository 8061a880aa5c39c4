package keyspace

// Sample returns a random stored object, expired or not (eviction's
// sampling), or nil when there is none; with volatile, one of the keys
// with a TTL.
func (db *DB) Sample(volatile bool) *Object {
	if volatile {
		if len(db.expires) == 0 {
			return nil
		}
		return db.expires[db.ks.rnd.IntN(len(db.expires))]
	}
	return db.dict.Random(db.ks.rnd)
}

// NextExpiry is the key whose TTL ends first, or nil when no key has one.
func (db *DB) NextExpiry() *Object {
	if len(db.expires) == 0 {
		return nil
	}
	return db.expires[0]
}

// SampleN fills out with random stored objects as len(out) calls of Sample
// would (the same key may come twice), or returns false, filling nothing,
// when there is none. For the key table it draws them level by level,
// every bucket slot first, then every chain, so that the cache misses of
// the draws overlap (prefetch.go's reasoning) where Sample's come one
// after another.
func (db *DB) SampleN(volatile bool, out []*Object) bool {
	if volatile {
		if len(db.expires) == 0 {
			return false
		}
		for i := range out {
			out[i] = db.expires[db.ks.rnd.IntN(len(db.expires))]
		}
		return true
	}
	return db.dict.randomN(db.ks.rnd, out)
}
