package keyspace

import "math"

// Active expiry of parts of values: the fields of a hash that carry their own
// TTL (Redis 7.4's hash-field expiration).
//
// Each DB keeps a second min-heap, beside the one of volatile keys: the
// objects whose value has at least one field with an expiry time, ordered by
// the earliest of them (FieldExpirer.NextExpiry) as it was when the object was
// last indexed. Object.fpos is the object's place in it, so that deleting,
// renaming or replacing the key drops or moves the entry in O(log n) without
// a search.
//
// Lookups reclaim too: DB.Lookup and DB.Delete meet an indexed value whose
// next field expiry has passed, remove its expired fields, and delete the key
// when none is left, so that no command sees a hash whose fields have all
// expired (EXISTS, TYPE and the hash commands alike). Keys that nobody looks
// up are reclaimed by the active cycle (ExpireCycle).
//
// Who keeps the index right:
//   - DB.Set indexes the object it stores and drops the one it replaces, so
//     RENAME, MOVE, COPY and a fresh HSET need nothing more;
//   - removal of a key (DEL, expiry, Take, Flush) drops the entry;
//   - a command that changes field TTLs in place calls UpdateFieldExpiry.
//
// A stale entry is harmless in one direction: if the value's real next
// expiry is later than the indexed one (a field was persisted, overwritten or
// deleted), the cycle pops the entry early, finds nothing due and re-indexes
// it. It would only delay reclamation if the real next expiry were earlier
// than the indexed one, which is why every command that sets or lowers a
// TTL calls UpdateFieldExpiry.

// FieldExpirer is implemented by values whose fields expire on their own
// (*hash.Hash). now and the expiry times are unix milliseconds.
type FieldExpirer interface {
	// NextExpiry returns the earliest field expiry time; ok is false when no
	// field has one.
	NextExpiry() (at int64, ok bool)
	// ExpireFields removes up to max fields whose expiry time is <= now and
	// returns how many it removed.
	ExpireFields(now int64, max int, fn func(field []byte)) (removed int)
	// Len is the number of live fields.
	Len(now int64) int
}

// fieldEntry is one object in the field-expiry heap, keyed by at.
type fieldEntry struct {
	at int64
	o  *Object
}

// fieldHeap is a binary min-heap of fieldEntry by at; each entry's object
// records its index + 1 in fpos.
type fieldHeap []fieldEntry

// FieldExpiresLen is the number of keys whose value has fields with a TTL
// (as indexed; see UpdateFieldExpiry).
func (db *DB) FieldExpiresLen() int { return len(db.fexp) }

// UpdateFieldExpiry re-reads the next field expiry of the live object o,
// stored in db, and moves, adds or drops its entry in the field-expiry
// index. Commands call it after changing field TTLs in place.
func (db *DB) UpdateFieldExpiry(o *Object) {
	fe, ok := o.Val().(FieldExpirer)
	if !ok {
		db.fexpRemove(o)
		return
	}
	at, has := fe.NextExpiry()
	switch {
	case !has:
		db.fexpRemove(o)
	case o.fpos > 0:
		i := int(o.fpos - 1)
		old := db.fexp[i].at
		db.fexp[i].at = at
		if at < old {
			db.fexpUp(i)
		} else {
			db.fexpDown(i)
		}
	default:
		db.fexp = append(db.fexp, fieldEntry{at, o})
		o.fpos = int32(len(db.fexp))
		db.fexpUp(len(db.fexp) - 1)
	}
}

// fieldsDue reports whether the live object o is indexed with a field
// expiry time that has passed (the check every lookup makes: one branch for
// values without field TTLs).
func (db *DB) fieldsDue(o *Object) bool {
	return o.fpos > 0 && db.fexp[o.fpos-1].at <= db.ks.Now
}

// expireFieldsOf reclaims every expired field of the live object o, found
// due by a lookup, and deletes the key if that leaves it empty, reporting
// whether it did.
func (db *DB) expireFieldsOf(o *Object) (deleted bool) {
	fe, ok := o.Val().(FieldExpirer)
	if !ok {
		db.fexpRemove(o)
		return false
	}
	if db.ks.snap != nil {
		// The fields and maybe the key go: a save keeps the key as it
		// was, or finishes reading it first.
		db.snapTouch(o.Key)
	}
	now := db.ks.Now
	n := fe.ExpireFields(now, math.MaxInt, db.onFieldExpired(o.Key))
	db.ks.Stats.ExpiredFields += int64(n)
	if fe.Len(now) == 0 {
		key := o.Key
		db.remove(key)
		db.touched(key)
		db.fieldsExpired(key, n, true)
		return true
	}
	db.UpdateFieldExpiry(o)
	db.fieldsExpired(o.Key, n, false)
	return false
}

// onFieldExpired is the callback ExpireFields calls for each field of key
// it removes: the keyspace's FieldExpired hook, or nil without one.
func (db *DB) onFieldExpired(key string) func(field []byte) {
	hook := db.ks.FieldExpired
	if hook == nil {
		return nil
	}
	return func(field []byte) { hook(db, key, field) }
}

// fieldsExpired tells the keyspace's FieldsExpired hook that n expired
// fields of key were reclaimed (nothing when n is 0 and the key stays).
func (db *DB) fieldsExpired(key string, n int, deleted bool) {
	if (n > 0 || deleted) && db.ks.FieldsExpired != nil {
		db.ks.FieldsExpired(db, key, deleted)
	}
}

// indexFields adds o to the field-expiry index if its value has field TTLs
// (DB.Set).
func (db *DB) indexFields(o *Object) {
	if o.Val() == nil {
		return
	}
	if _, ok := o.Val().(FieldExpirer); ok {
		db.UpdateFieldExpiry(o)
	}
}

// fexpRemove drops o from the field-expiry index if it is there.
func (db *DB) fexpRemove(o *Object) {
	if o.fpos == 0 {
		return
	}
	i := int(o.fpos - 1)
	last := len(db.fexp) - 1
	o.fpos = 0
	if i != last {
		db.fexp[i] = db.fexp[last]
		db.fexp[i].o.fpos = int32(i + 1)
	}
	db.fexp[last] = fieldEntry{}
	db.fexp = db.fexp[:last]
	if i != last {
		db.fexpDown(i)
		db.fexpUp(i)
	}
}

// fexpClear empties the index, detaching every object from it (FLUSHDB).
func (db *DB) fexpClear() {
	for _, e := range db.fexp {
		e.o.fpos = 0
	}
	db.fexp = nil
}

func (db *DB) fexpUp(i int) {
	h := db.fexp
	e := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if h[p].at <= e.at {
			break
		}
		h[i] = h[p]
		h[i].o.fpos = int32(i + 1)
		i = p
	}
	h[i] = e
	e.o.fpos = int32(i + 1)
}

func (db *DB) fexpDown(i int) {
	h := db.fexp
	n := len(h)
	e := h[i]
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].at < h[c].at {
			c++
		}
		if e.at <= h[c].at {
			break
		}
		h[i] = h[c]
		h[i].o.fpos = int32(i + 1)
		i = c
	}
	h[i] = e
	e.o.fpos = int32(i + 1)
}

// expireFields is the field half of the active expiry cycle for one
// database: it pops the values whose next field expiry has passed, removes
// their expired fields (at most budget fields in all, soonest value first),
// deletes the keys left empty and re-indexes the others. It returns the
// number of fields and keys it removed.
func (db *DB) expireFields(budget int) int {
	now := db.ks.Now
	done := 0
	for steps := 0; steps < budget && len(db.fexp) > 0 && db.fexp[0].at <= now; steps++ {
		o := db.fexp[0].o
		fe, ok := o.Val().(FieldExpirer)
		if !ok {
			db.fexpRemove(o)
			continue
		}
		n := fe.ExpireFields(now, budget-steps, db.onFieldExpired(o.Key))
		db.ks.Stats.ExpiredFields += int64(n)
		done += n
		if n > 1 {
			steps += n - 1
		}
		if at, has := fe.NextExpiry(); has && at <= now {
			// Out of budget in the middle of this value: it stays first,
			// and the next cycle goes on with it. (Checking Len here would
			// count the expired fields still there.)
			db.UpdateFieldExpiry(o)
			db.fieldsExpired(o.Key, n, false)
			break
		}
		if fe.Len(now) == 0 {
			// The last field expired: the key goes, as Redis deletes an
			// emptied hash, signalled to WATCH and blocked clients.
			key := o.Key
			db.remove(key)
			db.touched(key)
			db.fieldsExpired(key, n, true)
			done++
			continue
		}
		db.UpdateFieldExpiry(o)
		db.fieldsExpired(o.Key, n, false)
	}
	return done
}
