package keyspace

// OnTouched adds fn to what Touched calls for every key written or
// deleted, after the functions already there: several features hang on the
// same signal (blocked clients waiting for a key, WATCH), and none of them
// replaces another's hook. Call it with the server lock held.
func (ks *Keyspace) OnTouched(fn func(db *DB, key string)) {
	prev := ks.Touched
	if prev == nil {
		ks.Touched = fn
		return
	}
	ks.Touched = func(db *DB, key string) {
		prev(db, key)
		fn(db, key)
	}
}
