package keyspace

// maxReserve bounds the size hint Reserve honours: a file's RESIZEDB
// claims what it likes, and a table of this many buckets costs 128 MiB.
// A larger database still loads, growing past it as it would have anyway.
const maxReserve = 1 << 24

// Reserve sizes an empty database for keys keys, expires of them with a
// TTL (a loaded file's RESIZEDB hint), so that loading it costs no rehash
// of the keys already in: a rehash hashes and moves every key again, and
// the doublings on the way to a million keys did so for about as many
// keys as were loaded. A database that holds keys, or is being
// snapshotted, is left as it is.
func (db *DB) Reserve(keys, expires int) {
	d := db.dict
	if d.Len() != 0 || d.rehashing() || d.frozen || keys <= dictInitSize {
		return
	}
	keys = min(keys, maxReserve)
	if n := nextPow2(keys); n > len(d.t[0]) {
		d.t[0] = make([]*Object, n)
	}
	if expires = min(expires, keys); expires > cap(db.expires) && len(db.expires) == 0 {
		db.expires = make(expiryHeap, 0, expires)
	}
}
