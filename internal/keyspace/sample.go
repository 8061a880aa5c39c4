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
