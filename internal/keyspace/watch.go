package keyspace

// WATCH: optimistic locking for MULTI/EXEC.
//
// Each DB maps a watched key to the watches on it; each Watcher (one per
// client) lists its watches. A write to a watched key marks its watchers
// dirty, and their next EXEC fails. The hook in DB.touched costs one map
// length check per write while nobody watches anything in that database.
//
// Expiry follows Redis 7.0: a watch remembers whether its key had already
// expired (but was not yet reclaimed) when it was taken. Such a key is
// logically absent, so its reclamation later is no change; a key that was
// live when watched and has expired by EXEC time is one, even if nothing
// reclaimed it yet (Watcher.Expired checks that at EXEC).

// Watcher is one client's WATCH state. The zero value watches nothing.
type Watcher struct {
	// Dirty is set when a watched key changed since it was watched.
	Dirty bool
	keys  []*watch
}

// watch is one (db, key) watched by one Watcher.
type watch struct {
	w   *Watcher
	db  *DB
	key string
	// expired: the key was logically expired, though still stored, when
	// WATCH ran; its reclamation does not count as a change.
	expired bool
}

// Len is the number of keys w watches.
func (w *Watcher) Len() int { return len(w.keys) }

// Watch adds key of db to w's watched keys (nothing if it already is).
func (db *DB) Watch(w *Watcher, key string) {
	list := db.watched[key]
	for _, wk := range list {
		if wk.w == w {
			return
		}
	}
	wk := &watch{w: w, db: db, key: key, expired: db.storedExpired(key)}
	if db.watched == nil {
		db.watched = map[string][]*watch{}
	}
	db.watched[key] = append(list, wk)
	w.keys = append(w.keys, wk)
}

// Unwatch forgets every key w watches and clears Dirty.
func (w *Watcher) Unwatch() {
	for i, wk := range w.keys {
		wk.db.unlinkWatch(wk)
		w.keys[i] = nil
	}
	w.keys = w.keys[:0]
	w.Dirty = false
}

func (db *DB) unlinkWatch(wk *watch) {
	list := db.watched[wk.key]
	for i, x := range list {
		if x == wk {
			last := len(list) - 1
			list[i] = list[last]
			list[last] = nil
			list = list[:last]
			break
		}
	}
	if len(list) == 0 {
		delete(db.watched, wk.key)
	} else {
		db.watched[wk.key] = list
	}
}

// Expired reports whether a key that was live when watched has expired
// since, whether or not it was reclaimed (EXEC fails then, as in Redis 7).
func (w *Watcher) Expired() bool {
	for _, wk := range w.keys {
		if !wk.expired && wk.db.storedExpired(wk.key) {
			return true
		}
	}
	return false
}

// storedExpired reports whether key is stored but its TTL has passed
// (Redis's keyIsExpired).
func (db *DB) storedExpired(key string) bool {
	o := db.dict.Get(key)
	return o != nil && o.Expire != 0 && o.Expire <= db.ks.Now
}

// Watched is the number of distinct keys watched in db.
func (db *DB) Watched() int { return len(db.watched) }

// touchWatched marks the watchers of key dirty; called after key was
// written or deleted.
func (db *DB) touchWatched(key string) {
	for _, wk := range db.watched[key] {
		if wk.expired {
			// Watched while logically absent: reclaiming it (or any change
			// that leaves it absent or still expired) is no change. The key
			// is then watched as absent.
			if o := db.dict.Get(key); o == nil || (o.Expire != 0 && o.Expire <= db.ks.Now) {
				if o == nil {
					db.ks.setExpired(wk, false)
				}
				continue
			}
		}
		db.ks.dirty(wk.w)
	}
}

func (ks *Keyspace) dirty(w *Watcher) {
	if !w.Dirty && ks.wj.on {
		ks.wj.dirtied = append(ks.wj.dirtied, w)
	}
	w.Dirty = true
}

func (ks *Keyspace) setExpired(wk *watch, v bool) {
	if wk.expired != v && ks.wj.on {
		ks.wj.flipped = append(ks.wj.flipped, wk)
	}
	wk.expired = v
}

// watchJournal records what writes did to watches while a script that may
// be undone runs.
type watchJournal struct {
	on      bool
	dirtied []*Watcher // made dirty
	flipped []*watch   // expired flag changed
}

// StartWatchJournal begins recording the watchers that writes make dirty,
// for a script whose writes may all be undone (all-or-nothing scripts):
// afterwards a client that watched a key the script touched must still be
// able to EXEC. The server lock must be held until EndWatchJournal, so no
// client can watch or unwatch in between.
func (ks *Keyspace) StartWatchJournal() {
	ks.wj.on = true
}

// EndWatchJournal stops recording. With undo, every watcher made dirty
// since StartWatchJournal is clean again and every watch is as it was:
// call it after the writes have been undone (the undoing writes touch keys
// too, and are taken back as well).
func (ks *Keyspace) EndWatchJournal(undo bool) {
	if undo {
		for _, w := range ks.wj.dirtied {
			w.Dirty = false
		}
		for i := len(ks.wj.flipped) - 1; i >= 0; i-- {
			wk := ks.wj.flipped[i]
			wk.expired = !wk.expired
		}
	}
	clear(ks.wj.dirtied)
	clear(ks.wj.flipped)
	ks.wj = watchJournal{dirtied: ks.wj.dirtied[:0], flipped: ks.wj.flipped[:0]}
}

// touchAllWatched is called before db's contents are dropped (FLUSHDB,
// FLUSHALL; with is nil) or replaced by those of with (SWAPDB). A watched
// key is changed when it is stored in db or in with; an expired key that
// disappears or stays expired is not, and a watched absent key replaced by
// an expired one stays unchanged (it becomes an expired watch).
func (db *DB) touchAllWatched(with *DB) {
	for key, list := range db.watched {
		inDB := db.dict.Get(key) != nil
		var repl *Object
		if with != nil {
			repl = with.dict.Get(key)
		}
		if !inDB && repl == nil {
			continue
		}
		replExpired := repl != nil && repl.Expire != 0 && repl.Expire <= db.ks.Now
		for _, wk := range list {
			switch {
			case wk.expired && repl == nil:
				db.ks.setExpired(wk, false)
				continue
			case wk.expired && replExpired:
				continue
			case !wk.expired && !inDB && replExpired:
				db.ks.setExpired(wk, true)
				continue
			}
			db.ks.dirty(wk.w)
		}
	}
}
