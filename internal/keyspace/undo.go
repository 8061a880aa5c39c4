package keyspace

import (
	"container/heap"
	"unsafe"
)

// The undo journal behind all-or-nothing scripts.
//
// While a journal is open, the first time a key is about to change its
// current state is saved: a deep copy of its object (value, encoding, TTL),
// or "absent". Rollback puts every saved state back, newest first, so the
// keyspace is as it was when the journal opened; Commit drops the copies.
// The cost is proportional to what the script touches, not to the size of
// the keyspace: one copy per distinct key written (FLUSHDB and SWAPDB save
// whole tables by moving them, in O(1)).
//
// Where the copies are taken: every path that changes a key goes through
// this package (Set, StoreString, Delete, Take, SetExpire, Flush, Swap,
// lazy expiry), and in-place changes start with a lookup. While the command
// being run may write (SetUndoWrites), every lookup journals its key before
// returning the object, so a handler that changes a value in place has had
// it saved first. Lookups by read-only commands take no copies.
//
// WATCH state and keyspace statistics are restored too (watch.go keeps the
// watchers a script dirtied), so that after a rollback nothing a client can
// observe tells that the script ran.

// UndoCloner deep-copies a non-string value (the command layer supplies
// it: it knows every data type's copy).
type UndoCloner func(t Type, v any) any

type undoEntry struct {
	db  *DB
	key string // in the journal's key arena (keys)
	// prev is the saved object when had is set (the key was present).
	// It is kept by value: a journal of small values allocates nothing
	// per key, and an object is made from it only by Rollback.
	prev Object
	had  bool
	// forgotten marks an entry whose database was flushed or swapped
	// after it: the key must be saved again on its next change.
	forgotten bool
	// Whole-table entries: a flushed table, or a swap of two databases.
	flushed *tables
	swapped *DB
}

// tables is a database's storage, moved aside by a journaled FLUSHDB.
type tables struct {
	dict    *dict
	expires expiryHeap
	fexp    fieldHeap
}

// seenScan is how many entries are searched one by one for a key already
// saved; past it the journal indexes its keys in a map. Scripts mostly
// write a handful of keys, for which a scan beats hashing.
const seenScan = 16

// keyArenaKeep is the key arena capacity kept from one journal to the next.
const keyArenaKeep = 64 << 10

type undoLog struct {
	on      bool
	writes  bool // the running command may write: lookups journal
	clone   UndoCloner
	seen    map[undoKey]struct{} // the saved keys, once entries pass seenScan
	indexed bool                 // seen is in use
	entries []undoEntry
	// keys holds the saved keys' bytes: lookups pass keys that alias the
	// request, and a copy each would be an allocation per key. A string
	// made from the arena stays valid when the arena grows (it keeps the
	// old array); the arena is reused only once the journal is closed and
	// no entry refers to it.
	keys  []byte
	stats Stats
}

type undoKey struct {
	db  *DB
	key string
}

// BeginUndo opens a journal. The server lock must be held until Commit or
// Rollback. Journals do not nest: BeginUndo while one is open panics.
func (ks *Keyspace) BeginUndo(clone UndoCloner) {
	if ks.undo.on {
		panic("keyspace: undo journal already open")
	}
	// The map and the entry slice are kept from script to script, so a
	// journal costs no allocation but its copies.
	u := &ks.undo
	u.on, u.writes, u.clone, u.stats = true, false, clone, ks.Stats
	ks.StartWatchJournal()
}

// UndoOpen reports whether a journal is open.
func (ks *Keyspace) UndoOpen() bool { return ks.undo.on }

// SetUndoWrites tells the journal whether the command about to run may
// write; while it may, lookups save the keys they return.
func (ks *Keyspace) SetUndoWrites(w bool) { ks.undo.writes = w }

// UndoLen is the number of saved states (for tests and statistics).
func (ks *Keyspace) UndoLen() int { return len(ks.undo.entries) }

// Commit keeps every change and closes the journal.
func (ks *Keyspace) Commit() {
	if !ks.undo.on {
		return
	}
	ks.undo.reset()
	ks.EndWatchJournal(false)
}

// reset closes the journal, keeping its memory for the next one.
func (u *undoLog) reset() {
	u.on, u.writes, u.clone = false, false, nil
	if u.indexed {
		clear(u.seen)
		u.indexed = false
	}
	clear(u.entries)
	u.entries = u.entries[:0]
	if cap(u.keys) > keyArenaKeep {
		u.keys = nil
	} else {
		u.keys = u.keys[:0]
	}
}

// Rollback puts back every saved state, newest first, restores the
// statistics and WATCH state, and closes the journal. Nothing is signalled:
// to every observer the keyspace never changed.
func (ks *Keyspace) Rollback() {
	if !ks.undo.on {
		return
	}
	u := &ks.undo
	u.on = false // restoring must not journal
	for i := len(u.entries) - 1; i >= 0; i-- {
		e := u.entries[i]
		switch {
		case e.flushed != nil:
			e.db.dict, e.db.expires, e.db.fexp = e.flushed.dict, e.flushed.expires, e.flushed.fexp
		case e.swapped != nil:
			swapTables(e.db, e.swapped)
		case e.had:
			prev := new(Object)
			*prev = e.prev
			e.db.restore(e.key, prev)
		default:
			e.db.restore(e.key, nil)
		}
	}
	ks.Stats = u.stats
	u.reset()
	ks.EndWatchJournal(true)
}

// journal saves key's current state if this is its first change.
func (db *DB) journal(key string) {
	u := &db.ks.undo
	if u.saved(db, key) {
		return
	}
	start := len(u.keys)
	u.keys = append(u.keys, key...)
	k := unsafe.String(unsafe.SliceData(u.keys[start:]), len(key))
	u.entries = append(u.entries, undoEntry{db: db, key: k})
	e := &u.entries[len(u.entries)-1]
	if o := db.dict.Get(key); o != nil {
		o.cloneInto(&e.prev, u.clone)
		e.had = true
	}
	if u.indexed {
		u.seen[undoKey{db, k}] = struct{}{}
	} else if len(u.entries) > seenScan {
		u.index()
	}
}

// saved reports whether key of db has been saved since the journal opened
// (or since db was last flushed or swapped).
func (u *undoLog) saved(db *DB, key string) bool {
	if u.indexed {
		_, ok := u.seen[undoKey{db, key}]
		return ok
	}
	for i := range u.entries {
		e := &u.entries[i]
		if e.db == db && e.key == key && !e.forgotten && e.flushed == nil && e.swapped == nil {
			return true
		}
	}
	return false
}

// index moves the saved keys into the seen map.
func (u *undoLog) index() {
	if u.seen == nil {
		u.seen = map[undoKey]struct{}{}
	}
	for i := range u.entries {
		e := &u.entries[i]
		if !e.forgotten && e.flushed == nil && e.swapped == nil {
			u.seen[undoKey{e.db, e.key}] = struct{}{}
		}
	}
	u.indexed = true
}

// journalLookup is the lookup-time hook: it saves key when the running
// command may write.
func (db *DB) journalLookup(key string) {
	if db.ks.undo.writes {
		db.journal(key)
	}
}

// journalFlush moves the database's tables aside instead of clearing them.
func (db *DB) journalFlush() {
	u := &db.ks.undo
	u.entries = append(u.entries, undoEntry{db: db, flushed: &tables{db.dict, db.expires, db.fexp}})
	db.dict, db.expires, db.fexp = newDict(), nil, nil
	u.forget(db)
}

// journalSwap records SWAPDB a b (applied by the caller).
func (ks *Keyspace) journalSwap(a, b *DB) {
	ks.undo.entries = append(ks.undo.entries, undoEntry{db: a, swapped: b})
	// Keys seen in either database now live in the other: start over.
	ks.undo.forget(a)
	ks.undo.forget(b)
}

// forget drops db's keys from the saved ones, so they are saved again.
func (u *undoLog) forget(db *DB) {
	for i := range u.entries {
		if u.entries[i].db == db {
			u.entries[i].forgotten = true
		}
	}
	if !u.indexed {
		return
	}
	for k := range u.seen {
		if k.db == db {
			delete(u.seen, k)
		}
	}
}

func swapTables(a, b *DB) {
	a.dict, b.dict = b.dict, a.dict
	a.expires, b.expires = b.expires, a.expires
	a.fexp, b.fexp = b.fexp, a.fexp
}

// restore puts prev (nil: absent) back at key, without signalling.
func (db *DB) restore(key string, prev *Object) {
	if db.dict.Get(key) != nil {
		db.remove(key)
	}
	if prev == nil {
		return
	}
	db.dict.Put(prev)
	if prev.Expire != 0 {
		heap.Push(&db.expires, prev)
	}
	db.indexFields(prev)
}

// cloneInto deep-copies o into c for the journal: the copy owns its bytes
// and value and sits in no table or heap.
func (o *Object) cloneInto(c *Object, clone UndoCloner) {
	*c = Object{Type: o.Type, Enc: o.Enc, LRU: o.LRU, Expire: o.Expire, Key: o.Key, Owned: o.Owned}
	switch {
	case o.Type != TypeString:
	case o.Enc == EncInt:
		c.u = o.u
	case o.Raw() != nil:
		c.SetRaw(append([]byte(nil), o.Raw()...))
	}
	if o.Val() != nil {
		c.SetVal(clone(o.Type, o.Val()))
	}
}
