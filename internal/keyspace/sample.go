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

// SampleSome calls fn for up to n stored objects, expired or not, from
// neighbouring places of the key table (eviction's pool refill); with
// volatile, n random keys with a TTL.
func (db *DB) SampleSome(volatile bool, n int, fn func(*Object)) {
	if volatile {
		for range n {
			if o := db.Sample(true); o != nil {
				fn(o)
			}
		}
		return
	}
	db.dict.Some(db.ks.rnd, n, fn)
}

// NextExpiry is the key whose TTL ends first, or nil when no key has one.
func (db *DB) NextExpiry() *Object {
	if len(db.expires) == 0 {
		return nil
	}
	return db.expires[0]
}
