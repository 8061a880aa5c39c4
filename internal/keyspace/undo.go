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
// Every write asks whether its key is saved already, so that question is
// the hot path; it is answered by the key's object rather than its bytes
// (find, journalLookup).
//
// WATCH state and keyspace statistics are restored too (watch.go keeps the
// watchers a script dirtied), so that after a rollback nothing a client can
// observe tells that the script ran.

type undoEntry struct {
	db  *DB
	key string // the saved object's own key, or a copy in the key arena (keys)
	// prev is the saved object when had is set (the key was present).
	// It is kept by value: a journal of small values allocates nothing
	// per key, and an object is made from it only by Rollback.
	prev Object
	had  bool
	// forgotten marks an entry whose database was flushed or swapped
	// after it: the key must be saved again on its next change. Whole-table
	// entries are forgotten from the start (they save no key).
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

// entriesKeep is how many entries' room (about 120 bytes each, with objs)
// and map slots are kept from one journal to the next: one script that
// wrote a million keys must not pin their journal's memory for good.
const entriesKeep = 1024

type undoLog struct {
	on      bool
	writes  bool              // the running command may write: lookups journal
	seen    map[undoKey]int32 // the saved keys' entries, once entries pass seenScan
	indexed bool              // seen is in use
	entries []undoEntry
	// objs[i] is the object that was at entries[i].key when it was saved,
	// or the one a later Set put there (nil while there was none; nil for
	// whole-table entries). A lookup that finds objs[i] at the key knows
	// the key is saved (find): a scan of this dense slice is a pointer
	// comparison per entry.
	objs []*Object
	// objBits has bit objBit(p) set for every p ever put in objs since
	// the journal opened: a clear bit tells, without the scan, that an
	// object is in no slot (the first write to a key, the common case).
	objBits uint64
	// keys holds the bytes of keys saved as absent: lookups pass keys that
	// alias the request, and a copy each would be an allocation per key
	// (a present key's entry uses its object's key, which never changes
	// and is kept alive by the entry). A string
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
func (ks *Keyspace) BeginUndo() {
	if ks.undo.on {
		panic("keyspace: undo journal already open")
	}
	// The map and the entry slice are kept from script to script, so a
	// journal costs no allocation but its copies.
	u := &ks.undo
	u.on, u.writes, u.stats = true, false, ks.Stats
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
	u.on, u.writes = false, false
	if u.indexed {
		if len(u.seen) > entriesKeep {
			u.seen = nil // a cleared map keeps its size
		} else {
			clear(u.seen)
		}
		u.indexed = false
	}
	// Cleared slots are what save relies on to fill only non-zero fields
	// (a new array is zeroed too).
	if cap(u.entries) > entriesKeep {
		u.entries, u.objs = nil, nil
	} else {
		clear(u.entries)
		u.entries = u.entries[:0]
		clear(u.objs)
		u.objs = u.objs[:0]
	}
	u.objBits = 0
	if cap(u.keys) > keyArenaKeep {
		u.keys = nil
	} else {
		u.keys = u.keys[:0]
	}
}

// Rollback puts back every saved state, newest first, restores the
// statistics and WATCH state, and closes the journal. Nothing is signalled
// through Touched: to every observer the keyspace never changed; only
// followers (follow.go), which keep derived structures, are told.
func (ks *Keyspace) Rollback() {
	if !ks.undo.on {
		return
	}
	u := &ks.undo
	u.on = false // restoring must not journal
	for i := len(u.entries) - 1; i >= 0; i-- {
		e := u.entries[i]
		// Followers are told in the same order, so that each sees the
		// state its own change left (a key restored before a SWAPDB is
		// taken back is in the other database after it).
		switch {
		case e.flushed != nil:
			e.db.dict, e.db.expires, e.db.fexp = e.flushed.dict, e.flushed.expires, e.flushed.fexp
			ks.replaced(e.db)
		case e.swapped != nil:
			swapTables(e.db, e.swapped)
			ks.swapped(e.db, e.swapped)
		case e.had:
			prev := new(Object)
			*prev = e.prev
			e.db.restore(e.key, prev)
			ks.restored(e.db, e.key)
		default:
			e.db.restore(e.key, nil)
			ks.restored(e.db, e.key)
		}
	}
	ks.Stats = u.stats
	u.reset()
	ks.EndWatchJournal(true)
}

// journal saves key's current state if this is its first change, and
// returns the index of the entry that holds the saved state.
func (db *DB) journal(key string) int {
	return db.ks.undo.saveOnce(db, key, db.dict.Get(key))
}

// journalLookup is the lookup-time hook, called while the running command
// may write: it saves key, whose object o (nil: absent) the caller has just
// found with db.dict.Get(key), expired or not.
func (db *DB) journalLookup(key string, o *Object) {
	db.ks.undo.saveOnce(db, key, o)
}

// saveOnce saves key, whose object is o, unless it is saved already, and
// returns the index of its entry.
func (u *undoLog) saveOnce(db *DB, key string, o *Object) int {
	if i := u.find(db, key, o); i >= 0 {
		return i
	}
	return u.save(db, key, o)
}

// objBit is o's bit in objBits: objects are 64 bytes or more apart, and
// a script's keys made one after another often sit side by side, so the
// address's next bits spread them well.
func objBit(o *Object) uint64 { return 1 << (uintptr(unsafe.Pointer(o)) >> 6 & 63) }

// find returns the index of the entry holding key's saved state, or -1
// when key has not been saved since the journal opened (or since db was
// last flushed or swapped). o is the object at key, nil when absent.
//
// A present key is found by its object: while a key is saved and present,
// its entry's objs slot is the object at the key, because only Set puts an
// object at a key and Set points the key's entry at it (journalPut). So
// the scan compares pointers, and a key written for the first time costs
// one comparison per entry and no string comparison. Should the rule ever
// miss, the cost is a second, redundant entry for the key, never a wrong
// rollback: Rollback goes newest first, so the oldest saved state of a key
// is the one that stays.
func (u *undoLog) find(db *DB, key string, o *Object) int {
	if u.indexed {
		if i, ok := u.seen[undoKey{db, key}]; ok {
			return int(i)
		}
		return -1
	}
	if o != nil {
		// A present key in a journal of a few entries (a script writing a
		// handful of keys, the common case) is the path kept short:
		// written the first time, a bit test; written again, a pointer
		// comparison per entry.
		if u.objBits&objBit(o) == 0 {
			return -1
		}
		for i, p := range u.objs {
			if p == o && u.live(i, db, key) {
				return i
			}
		}
		return -1
	}
	for i := range u.entries {
		if u.live(i, db, key) {
			return i
		}
	}
	return -1
}

// live reports whether entry i holds the saved state of key of db.
func (u *undoLog) live(i int, db *DB, key string) bool {
	e := &u.entries[i]
	return e.db == db && !e.forgotten && e.key == key
}

// save appends an entry saving key's current state, o (nil: absent), and
// returns its index.
func (u *undoLog) save(db *DB, key string, o *Object) int {
	// The slot past the end is zero (reset clears what it keeps, append
	// grows into zeroed memory): only the fields that differ are written.
	i := len(u.entries)
	if i < cap(u.entries) {
		u.entries = u.entries[:i+1]
	} else {
		u.entries = append(u.entries, undoEntry{})
	}
	u.objs = append(u.objs, o)
	if o != nil {
		u.objBits |= objBit(o)
	}
	e := &u.entries[i]
	e.db = db
	if o != nil {
		e.key, e.had = o.Key, true
		if o.Type == TypeString && o.Enc == EncInt {
			// An integer (a counter) owns nothing: its copy is the
			// object, taken out of its table and heap (cloneInto's
			// result, in one move).
			e.prev = *o
			e.prev.next, e.prev.htag, e.prev.hpos, e.prev.fpos = nil, 0, 0, 0
		} else {
			o.cloneInto(&e.prev)
		}
	} else {
		start := len(u.keys)
		u.keys = append(u.keys, key...)
		e.key = unsafe.String(unsafe.SliceData(u.keys[start:]), len(key))
	}
	if u.indexed {
		u.seen[undoKey{db, e.key}] = int32(i)
	} else if len(u.entries) > seenScan {
		u.index()
	}
	return i
}

// index moves the saved keys into the seen map.
func (u *undoLog) index() {
	if u.seen == nil {
		u.seen = map[undoKey]int32{}
	}
	for i := range u.entries {
		e := &u.entries[i]
		if !e.forgotten {
			u.seen[undoKey{e.db, e.key}] = int32(i)
		}
	}
	u.indexed = true
}

// journalPut records that Set is about to put o at key: key is saved if it
// was not, and its entry points at o from now on (see find).
func (db *DB) journalPut(key string, o *Object) {
	u := &db.ks.undo
	i := db.journal(key)
	u.objs[i] = o
	u.objBits |= objBit(o)
}

// journalFlush moves the database's tables aside instead of clearing them.
func (db *DB) journalFlush() {
	u := &db.ks.undo
	u.entries = append(u.entries, undoEntry{db: db, forgotten: true, flushed: &tables{db.dict, db.expires, db.fexp}})
	u.objs = append(u.objs, nil)
	db.dict, db.expires, db.fexp = db.ks.emptyDict(), nil, nil
	u.forget(db)
}

// journalSwap records SWAPDB a b (applied by the caller).
func (ks *Keyspace) journalSwap(a, b *DB) {
	ks.undo.entries = append(ks.undo.entries, undoEntry{db: a, forgotten: true, swapped: b})
	ks.undo.objs = append(ks.undo.objs, nil)
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
	if s := db.ks.snap; s != nil && s.guard != nil {
		if _, ok := s.kept[db.dict]; ok {
			// No first touch here (the script's kept the state at the
			// moment), but the chains of the key's buckets change, and a
			// saver may have been handed them (NextSnapshotRange).
			s.guardBuckets(db.ks, db.dict, key)
		}
	}
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

// cloneInto deep-copies o into c for the journal and snapshots: the copy
// owns its bytes and value (a copy through the Value contract) and sits in
// no table or heap.
func (o *Object) cloneInto(c *Object) {
	*c = Object{Type: o.Type, Enc: o.Enc, LRU: o.LRU, Expire: o.Expire, Key: o.Key, Owned: o.Owned}
	switch {
	case o.Type != TypeString:
	case o.Enc == EncInt:
		c.u = o.u
	case o.Raw() != nil:
		c.SetRaw(append([]byte(nil), o.Raw()...))
	}
	if v := o.Val(); v != nil {
		c.SetVal(cloneValue(v))
	}
}
