package keyspace

import "sync/atomic"

// Point-in-time snapshots without fork(): the machinery behind BGSAVE
// (docs/persistence.md).
//
// BeginSnapshot fixes the moment. From then on a saver walks every
// database's key table bucket by bucket, a slice at a time under the
// server lock (NextSnapshotSlice), while commands keep running between the
// slices. Two rules keep what it sees equal to the keyspace at the moment:
//
//   - The tables do not move: while a snapshot is open no table grows,
//     shrinks or rehashes (dict.frozen), so a key present at the moment
//     stays in its bucket, and "the saver has passed it" is a comparison
//     of its bucket with the saver's position.
//   - First touch: the first time a key the saver has not passed is about
//     to change (the same places that feed the undo journal, undo.go), its
//     state at the moment is kept: a deep copy, or "absent" for a key that
//     did not exist. The saver writes the kept copy instead of the live
//     object, skips keys kept as absent, and at the end writes the kept
//     copies of keys that were deleted or moved away before it got there.
//
// A saver may instead be handed runs of buckets whole (NextSnapshotRange)
// and read their chains later, off the lock: then the guard
// (SetSnapshotGuard) is told, before the change, of every change at a
// place the walk has passed, to an object or to a bucket's chain, and
// takes the bucket over or waits for the saver to be done with it.
//
// FLUSHDB/FLUSHALL swap a fresh table in instead of clearing a table the
// saver still reads, and SWAPDB moves tables, which the saver follows by
// identity: it saves the table that was database i at the moment as
// database i. A rolled-back script restores keys without passing through
// the hooks, which is right: their first touch kept the pre-script state.

// snapshot is an open snapshot's state.
type snapshot struct {
	now  int64
	srcs []*dict // database i's table at the moment; nil when it was empty
	// kept holds the first-touch copies of each source table's keys:
	// a nil *Object means the key was absent at the moment.
	kept map[*dict]map[string]*Object
	// marks has a bit per bucket of each source table, set where a kept
	// copy's key may be met (mark).
	marks map[*dict]*[2][]uint64
	// The saver's position: source db, table (0/1), bucket. Everything
	// before it has been written.
	db, tab, bucket int
	ahead           int   // touchAhead read the buckets before this one
	sink            int64 // what touchAhead read, kept so that it reads it
	done            bool  // the walk is over: only the leftovers remain
	writes          bool  // the running command may write: lookups keep
	// guard, when set, is told of every change to a key the saver has
	// passed, before the change (SetSnapshotGuard).
	guard func(p SnapshotPos, o *Object)
	// Stats for INFO and tests.
	Kept int
}

// SnapshotItem is one key of a snapshot as the saver hands it over.
type SnapshotItem struct {
	DB  int
	Obj *Object
}

// BeginSnapshot opens a snapshot of the keyspace as it is now (unix ms now
// decides which keys have expired). Call it with the server lock held.
// It panics if a snapshot is already open.
func (ks *Keyspace) BeginSnapshot(now int64) {
	if ks.snap != nil {
		panic("keyspace: snapshot already open")
	}
	s := &snapshot{now: now, srcs: make([]*dict, len(ks.DBs)), kept: map[*dict]map[string]*Object{}}
	for i, db := range ks.DBs {
		if db.dict.Len() == 0 {
			continue
		}
		db.dict.frozen = true
		s.srcs[i] = db.dict
		s.kept[db.dict] = map[string]*Object{}
	}
	ks.snap = s
}

// SnapshotOpen reports whether a snapshot is open.
func (ks *Keyspace) SnapshotOpen() bool { return ks.snap != nil }

// SetSnapshotWrites tells an open snapshot whether the command about to
// run may write; while it may, lookups keep the keys they return.
func (ks *Keyspace) SetSnapshotWrites(w bool) {
	if ks.snap != nil {
		ks.snap.writes = w
	}
}

// SnapshotSizes returns, per database, the number of keys at the moment
// (a hint for RESIZEDB; 0 for databases that were empty).
func (ks *Keyspace) SnapshotSizes() []int {
	n := make([]int, len(ks.snap.srcs))
	for i, d := range ks.snap.srcs {
		if d != nil {
			n[i] = d.Len() // may have moved since; a hint only
		}
	}
	return n
}

// SnapshotKept is how many first-touch copies the snapshot holds now.
func (ks *Keyspace) SnapshotKept() int {
	n := 0
	for _, m := range ks.snap.kept {
		n += len(m)
	}
	return n
}

// NextSnapshotSlice hands fn the snapshot's next keys, about budget of
// them (whole buckets, so a little more), in database order, and reports
// whether keys remain. Call it with the server lock held; fn must not
// keep the objects past the call (they may change once the lock is
// released). Keys whose TTL had passed at the moment are left out.
func (ks *Keyspace) NextSnapshotSlice(budget int, fn func(db int, o *Object)) bool {
	s := ks.snap
	emit := func(db int, o *Object) {
		if o.Expire != 0 && o.Expire <= s.now {
			return
		}
		budget--
		fn(db, o)
	}
	for !s.done && budget > 0 {
		d := s.current()
		if d == nil {
			break
		}
		if s.bucket >= s.ahead {
			s.touchAhead(d.t[s.tab])
		}
		kept := s.kept[d]
		look := len(kept) > 0 && s.marked(d, s.tab, s.bucket)
		for o := d.t[s.tab][s.bucket]; o != nil; o = o.next {
			if !look {
				emit(s.db, o) // no lookup: it would read the key's bytes
				continue
			}
			if k, ok := kept[o.Key]; ok {
				delete(kept, o.Key)
				if k != nil {
					emit(s.db, k)
				}
				continue
			}
			emit(s.db, o)
		}
		s.bucket++
	}
	if !s.done {
		return true
	}
	// Leftovers: keys deleted, renamed or expired before the saver got to
	// them, written from their kept copies.
	for i, d := range s.srcs {
		if d == nil {
			continue
		}
		for key, k := range s.kept[d] {
			if budget <= 0 {
				return true
			}
			delete(s.kept[d], key)
			if k != nil {
				emit(i, k)
			}
		}
	}
	return false
}

// walkAhead is how many buckets touchAhead reads ahead of the walk.
const walkAhead = 32

// touchAhead reads the first object of the walkAhead buckets from the
// walk's place on, before the walk does: the loads do not depend on each
// other, so their cache misses overlap, where the walk, which follows each
// chain, would meet them one after another. Most of a save's time on the
// loop is those misses (a table of 10M keys is far larger than the cache).
func (s *snapshot) touchAhead(tab []*Object) {
	end := min(s.bucket+walkAhead, len(tab))
	var x int64
	for _, o := range tab[s.bucket:end] {
		if o != nil {
			x += o.Expire
		}
	}
	s.ahead, s.sink = end, x
}

// EndSnapshot closes the snapshot and lets the tables resize again.
func (ks *Keyspace) EndSnapshot() {
	s := ks.snap
	if s == nil {
		return
	}
	for _, d := range s.srcs {
		if d != nil {
			d.frozen = false
		}
	}
	for _, db := range ks.DBs {
		db.dict.frozen = false
	}
	ks.snap = nil
}

// SnapshotPos is a place in an open snapshot's walk. NextSnapshotSlice
// hands out the keys in the order of their places.
type SnapshotPos struct{ src, tab, bucket int }

// Before reports whether p comes before q in the walk.
func (p SnapshotPos) Before(q SnapshotPos) bool {
	if p.src != q.src {
		return p.src < q.src
	}
	if p.tab != q.tab {
		return p.tab < q.tab
	}
	return p.bucket < q.bucket
}

// SnapshotPosition is the walk's place now: every key at a place before
// it has been handed out. Once the walk is over it is after every place.
func (ks *Keyspace) SnapshotPosition() SnapshotPos {
	s := ks.snap
	if s.done {
		return SnapshotPos{src: len(s.srcs)}
	}
	return SnapshotPos{s.db, s.tab, s.bucket}
}

// SetSnapshotGuard makes the open snapshot call fn, under the lock, before
// any change to a live object the saver has already handed out, with the
// place it was handed out at: a saver that encodes the objects it was
// handed after NextSnapshotSlice returned (on another goroutine) finishes
// with o or copies it there. fn may be called for objects that were never
// handed out (a key added at a passed place) and must ignore them. Leftover
// keys (kept copies) are the saver's own and never reported.
func (ks *Keyspace) SetSnapshotGuard(fn func(p SnapshotPos, o *Object)) {
	ks.snap.guard = fn
}

// guardBuckets tells the guard of a change to the chains of key's buckets
// in table d (an insertion of an absent key, dict.Put; a rolled-back
// script putting a key back), which a saver that was handed those buckets
// whole (NextSnapshotRange) may be reading: each of d's tables is
// reported at the key's bucket there, with a nil object, when the walk
// has passed it.
func (s *snapshot) guardBuckets(ks *Keyspace, d *dict, key string) {
	if d.Len() == 0 {
		return
	}
	h := d.hash(key)
	for t := 0; t < 2; t++ {
		tab := d.t[t]
		if tab == nil {
			break
		}
		b := int(h & uint64(len(tab)-1))
		if s.passed(ks, d, t, b) {
			s.guard(SnapshotPos{s.srcIndex(d), t, b}, nil)
		}
	}
}

// SnapshotRange is a run of buckets of one source table that the walk
// handed out whole (NextSnapshotRange): the saver reads their chains
// itself, off the lock, except the buckets it was handed objects for.
// Reading them is safe because the table is frozen and every change to a
// bucket's chain or to an object in it is reported to the guard first
// (SetSnapshotGuard): the guard then takes the bucket over (Bucket, under
// the lock) if the saver has not started on the range, or waits until it
// is done with it.
type SnapshotRange struct {
	DB     int // the database the keys go to in the file
	tab    []*Object
	t      int // which of the table's two arrays
	Lo, Hi int // the buckets [Lo, Hi)
	now    int64
}

// Has reports whether place p is one of r's buckets, and which.
func (r *SnapshotRange) Has(p SnapshotPos) (int, bool) {
	return p.bucket, r.tab != nil && p.src == r.DB && p.tab == r.t && p.bucket >= r.Lo && p.bucket < r.Hi
}

// Empty reports whether r has no buckets.
func (r *SnapshotRange) Empty() bool { return r.Lo >= r.Hi }

// Bucket calls fn with each object of bucket b (an index into the run:
// Lo <= b < Hi) whose TTL had not passed at the moment. Under the lock it
// may be called for any bucket; off it, only for buckets the guard has not
// taken over, until the guard may next run.
func (r *SnapshotRange) Bucket(b int, fn func(o *Object)) {
	for o := r.tab[b]; o != nil; o = o.next {
		if o.Expire != 0 && o.Expire <= r.now {
			continue
		}
		fn(o)
	}
}

// TouchHeads reads the first object of buckets [from, to) of r (at most
// 64), as touchAhead does for the walk: the loads are independent, so
// their cache misses overlap. Bit i of skip leaves bucket from+i out (one
// taken over, which the saver must not read).
func (r *SnapshotRange) TouchHeads(from, to int, skip uint64) int64 {
	var x int64
	for i := range to - from {
		if skip&(1<<i) != 0 {
			continue
		}
		if o := r.tab[from+i]; o != nil {
			x += o.Expire
		}
	}
	return x
}

// SnapshotLoad copies into dst what a save writes of o (key, type,
// encoding, TTL, value reference, access metadata): the fields that only
// change after the guard was told, and the metadata, which reads change
// unreported, read atomically (Touch stores it so while a snapshot is
// open). Unlike a copy of the whole Object it never reads the fields the
// loop changes for other keys (the expiry heap's places).
func SnapshotLoad(dst, o *Object) {
	*dst = Object{Key: o.Key, Type: o.Type, Enc: o.Enc, Owned: o.Owned, Expire: o.Expire, u: o.u, LRU: atomic.LoadUint32(&o.LRU)}
}

// current returns the source table the walk is in, first moving past
// the tables and databases it has ended; nil, with done set, once the
// walk is over.
func (s *snapshot) current() *dict {
	for {
		if s.db >= len(s.srcs) {
			s.done = true
			return nil
		}
		d := s.srcs[s.db]
		if d == nil || s.tab > 1 || d.t[s.tab] == nil || s.bucket >= len(d.t[s.tab]) {
			if d != nil && s.tab < 1 {
				s.tab, s.bucket, s.ahead = s.tab+1, 0, 0
				continue
			}
			s.db, s.tab, s.bucket, s.ahead = s.db+1, 0, 0, 0
			continue
		}
		return d
	}
}

// NextSnapshotRange hands out the walk's next buckets, up to n of them in
// the table the walk is in, as a run for the saver to read itself, and
// reports whether keys remain. Buckets where kept copies may be met are
// walked here instead: fn gets their keys (kept copies in place of the
// live objects changed since the moment) and taken is called with each
// such bucket's offset in the run (b - Lo): the saver must skip them. Once the walk is
// over the run is empty and fn gets up to n leftover keys (kept copies of
// keys removed before the walk reached them). Call it with the server
// lock held; fn must not keep the objects past the guard's next call.
func (ks *Keyspace) NextSnapshotRange(n int, fn func(db int, o *Object), taken func(b int)) (SnapshotRange, bool) {
	s := ks.snap
	for !s.done {
		d := s.current()
		if d == nil {
			break
		}
		tab := d.t[s.tab]
		r := SnapshotRange{DB: s.db, tab: tab, t: s.tab, Lo: s.bucket, Hi: min(s.bucket+n, len(tab)), now: s.now}
		if kept := s.kept[d]; len(kept) > 0 {
			for b := r.Lo; b < r.Hi; b++ {
				if !s.marked(d, s.tab, b) {
					continue
				}
				taken(b - r.Lo)
				for o := tab[b]; o != nil; o = o.next {
					if k, ok := kept[o.Key]; ok {
						delete(kept, o.Key)
						if k != nil && (k.Expire == 0 || k.Expire > s.now) {
							fn(s.db, k)
						}
						continue
					}
					if o.Expire == 0 || o.Expire > s.now {
						fn(s.db, o)
					}
				}
			}
		}
		s.bucket = r.Hi
		return r, true
	}
	more := ks.NextSnapshotSlice(n, fn)
	return SnapshotRange{}, more
}

// SnapshotCopy returns a deep copy of o, for a saver that must keep an
// object it was handed as it is while the live one changes.
func SnapshotCopy(o *Object) *Object {
	c := new(Object)
	o.cloneInto(c)
	return c
}

// snapTouch keeps key's state at the moment if the saver has not passed
// it yet and this is its first change since; for a key it has passed it
// tells the guard.
func (db *DB) snapTouch(key string) {
	s := db.ks.snap
	d := db.dict
	kept, ok := s.kept[d]
	if !ok {
		return // a table made after the moment
	}
	if s.done && len(kept) == 0 {
		if s.guard != nil {
			if tab, bucket, o := d.locate(key); o != nil {
				s.guard(SnapshotPos{s.srcIndex(d), tab, bucket}, o)
			} else {
				s.guardBuckets(db.ks, d, key)
			}
		}
		return // already written
	}
	if _, ok := kept[key]; ok {
		if s.guard != nil {
			// Kept before the walk passed it, the key may come back at
			// a passed place (a key that went to the second table
			// during a rehash comes back to the first: dict.Put).
			if _, _, o := d.locate(key); o == nil {
				s.guardBuckets(db.ks, d, key)
			}
		}
		return
	}
	tab, bucket, o := d.locate(key)
	if o != nil && s.passed(db.ks, d, tab, bucket) {
		if s.guard != nil {
			s.guard(SnapshotPos{s.srcIndex(d), tab, bucket}, o)
		}
		return
	}
	if o == nil && s.guard != nil {
		s.guardBuckets(db.ks, d, key)
	}
	var c *Object
	if o != nil {
		c = new(Object)
		o.cloneInto(c)
	}
	kept[string([]byte(key))] = c
	s.mark(d, key)
	s.Kept++
}

// mark records that a key kept for table d may be met in its bucket: the
// walk looks kept copies up only in marked buckets (a lookup hashes the
// key, and reading each key's bytes is a cache miss). A key kept as absent
// has no bucket yet, so the bucket its hash gives in each of d's tables is
// marked: it is inserted in one of them (dict.frozen).
func (s *snapshot) mark(d *dict, key string) {
	if s.marks == nil {
		s.marks = map[*dict]*[2][]uint64{}
	}
	m := s.marks[d]
	if m == nil {
		m = new([2][]uint64)
		s.marks[d] = m
	}
	h := d.hash(key)
	for t := 0; t < 2; t++ {
		tab := d.t[t]
		if tab == nil {
			continue
		}
		if m[t] == nil {
			m[t] = make([]uint64, (len(tab)+63)/64)
		}
		b := h & uint64(len(tab)-1)
		m[t][b/64] |= 1 << (b % 64)
	}
}

// marked reports whether mark marked bucket b of table t of d.
func (s *snapshot) marked(d *dict, t, b int) bool {
	m := s.marks[d]
	return m != nil && m[t] != nil && m[t][b/64]&(1<<(b%64)) != 0
}

// snapLookup is the lookup-time hook: a command that may write keeps the
// keys it looks up before it can change them in place.
func (db *DB) snapLookup(key string) {
	if db.ks.snap.writes {
		db.snapTouch(key)
	}
}

// passed reports whether the saver has written position (tab, bucket) of
// table d.
func (s *snapshot) passed(ks *Keyspace, d *dict, tab, bucket int) bool {
	if s.done {
		return true
	}
	i := s.srcIndex(d)
	switch {
	case i < s.db:
		return true
	case i > s.db:
		return false
	case tab != s.tab:
		return tab < s.tab
	}
	return bucket < s.bucket
}

// srcIndex is the index of source table d (-1 when it is none).
func (s *snapshot) srcIndex(d *dict) int {
	for j, src := range s.srcs {
		if src == d {
			return j
		}
	}
	return -1
}

// locate finds key without moving anything: its table, bucket and object
// (nil when absent).
func (d *dict) locate(key string) (int, int, *Object) {
	if d.Len() == 0 {
		return 0, 0, nil
	}
	h := d.hash(key)
	for t := 0; t < 2; t++ {
		tab := d.t[t]
		if tab == nil {
			break
		}
		b := int(h & uint64(len(tab)-1))
		for o := tab[b]; o != nil; o = o.next {
			if o.Key == key {
				return t, b, o
			}
		}
	}
	return 0, 0, nil
}

// flushFrozen gives a database whose table the saver still reads a fresh
// one, leaving the old table to the saver untouched.
func (db *DB) flushFrozen() {
	db.dict = db.ks.emptyDict()
	db.expires = nil
	db.fexpClear()
}

// Adopt replaces every database's contents with from's (a keyspace loaded
// from a file: DEBUG RELOAD, startup), signalling the keys it drops as
// FLUSHALL does. from must have as many databases and is emptied.
func (ks *Keyspace) Adopt(from *Keyspace) {
	for i, db := range ks.DBs {
		db.Flush()
		src := from.DBs[i]
		db.dict, db.expires, db.fexp = src.dict, src.expires, src.fexp
		src.dict, src.expires, src.fexp = newDict(), nil, nil
		ks.indexDict(db.dict)
		if ks.Touched != nil {
			db.ForEach(func(o *Object) { ks.Touched(db, o.Key) })
		}
	}
}
