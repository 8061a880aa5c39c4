package keyspace

// Follower is told of the changes to databases' contents that Touched
// does not signal key by key, so that a structure derived from the keys
// (the time-series label index) can stay exact without checking itself
// against the keyspace. Together with Touched, these cover every way a
// key's value comes or goes. Any field may be nil; all are called with
// the server lock held.
type Follower struct {
	// Emptied: db's tables were replaced by empty ones (FLUSHDB,
	// FLUSHALL, a load replacing the data). Touched was called for each
	// key before, while they were still there.
	Emptied func(db *DB)
	// Swapped: the contents of a and b were exchanged (SWAPDB, or its
	// rollback). Touched follows for each key after a SWAPDB, not after a
	// rollback.
	Swapped func(a, b *DB)
	// Replaced: db's tables were replaced by other ones, whose keys were
	// not signalled (a rolled-back flush put the old tables back).
	Replaced func(db *DB)
	// Restored: a rolled-back script put key's saved state back (absent
	// or a value), without any other signal.
	Restored func(db *DB, key string)
}

// OnTables adds f to the followers.
func (ks *Keyspace) OnTables(f Follower) { ks.followers = append(ks.followers, f) }

func (ks *Keyspace) emptied(db *DB) {
	for _, f := range ks.followers {
		if f.Emptied != nil {
			f.Emptied(db)
		}
	}
}

func (ks *Keyspace) swapped(a, b *DB) {
	for _, f := range ks.followers {
		if f.Swapped != nil {
			f.Swapped(a, b)
		}
	}
}

func (ks *Keyspace) replaced(db *DB) {
	for _, f := range ks.followers {
		if f.Replaced != nil {
			f.Replaced(db)
		}
	}
}

func (ks *Keyspace) restored(db *DB, key string) {
	for _, f := range ks.followers {
		if f.Restored != nil {
			f.Restored(db, key)
		}
	}
}
