package keyspace

import (
	"bytes"
	"container/heap"
	"unsafe"
)

// SET's store, the hottest write path, shaped to cost one dict walk and no
// allocation when the key already holds a string (a cache entry or a
// counter being overwritten), and two allocations (the Object, and key and
// value bytes together) when the key is new.

// StoreString stores val at key as SET does (createStringObject and
// tryObjectEncoding: int when canonical, embstr up to 44 bytes, raw
// beyond). cur must be the live object at key as the caller just looked it
// up (nil when there is none). The key's TTL becomes at (0: none), or is
// kept when keepTTL. It signals the write, like Set.
//
// A string object is updated in place, reusing its value buffer when the
// new value fits: nothing outside the keyspace may keep a reference to an
// Object or to its Str across commands (commands copy what they reply).
func (db *DB) StoreString(cur *Object, key, val []byte, at int64, keepTTL bool) {
	if db.ks.snap != nil {
		db.snapTouch(string(key))
	}
	if db.ks.undo.on {
		db.journal(string(key))
	}
	if cur == nil || cur.Type != TypeString {
		k, o := newStringObject(db.ks.spareObject(), key, val)
		o.Expire = at
		db.Set(k, o, keepTTL)
		return
	}
	before := ObjectSize(cur)
	cur.overwriteString(val)
	db.ks.UsedDelta += ObjectSize(cur) - before
	cur.Owned = false
	if db.ks.Access.LFU {
		db.Touch(cur) // the write lookup's touch; the counter carries over
	} else {
		db.ks.initAccess(cur)
	}
	if !keepTTL {
		db.setTTL(cur, at)
	}
	db.touched(cur.Key)
}

// overwriteString replaces a string object's value as SetString does, but
// writes into the current buffer when the new value fits in it.
func (o *Object) overwriteString(b []byte) {
	if len(b) <= 20 {
		if v, ok := parseInt(b); ok {
			o.SetInt(v)
			return
		}
	}
	// A buffer much larger than the value (left by APPEND) is let go, as
	// Redis frees the old object.
	if cur := o.Raw(); o.Enc != EncInt && cap(cur) >= len(b) && cap(cur) <= 2*len(b)+32 {
		o.SetRaw(append(cur[:0], b...))
	} else {
		o.SetRaw(append([]byte(nil), b...))
	}
	o.Enc = EncRaw
	if len(b) <= EmbstrMaxLen {
		o.Enc = EncEmbstr
	}
}

// newStringObject makes the key string and the object SET stores for a
// new key. A value that is not an integer shares one allocation with the
// key's bytes, so a read finds both in the same cache line or two. The key
// part is never written again: the value part is handed out with its
// capacity capped, so an append reallocates instead of running into it.
// o is a zero Object to fill, or nil for a new one.
func newStringObject(o *Object, key, val []byte) (string, *Object) {
	if o == nil {
		o = new(Object)
	}
	o.Type = TypeString
	if len(val) <= 20 {
		if v, ok := parseInt(val); ok {
			o.SetInt(v)
			return string(key), o
		}
	}
	o.Enc = EncRaw
	if len(val) <= EmbstrMaxLen {
		o.Enc = EncEmbstr
	}
	// bytes.Join allocates without zeroing what it then copies over
	// (make then copy cleared the value's part first: a quarter of the
	// CPU of a churn of 8 KB values).
	buf := bytes.Join([][]byte{key, val}, nil)
	o.SetRaw(buf[len(key):len(buf):len(buf)])
	if len(key) == 0 {
		return "", o
	}
	return unsafe.String(&buf[0], len(key)), o
}

// setTTL sets o's expiry to at (0: none), keeping the expiry heap in step,
// without signalling (the caller does).
func (db *DB) setTTL(o *Object, at int64) {
	o.Expire = at
	switch {
	case at == 0 && o.hpos > 0:
		heap.Remove(&db.expires, int(o.hpos-1))
	case at != 0 && o.hpos > 0:
		heap.Fix(&db.expires, int(o.hpos-1))
	case at != 0:
		heap.Push(&db.expires, o)
	}
}
