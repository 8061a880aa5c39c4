package engine

import "github.com/abacusdb/abacus/internal/keyspace"

// The keyspace's hooks for the events no command names itself: a key
// created (new, class n, fired where Redis's dbAdd fires it), a read that
// found nothing (keymiss, class m, as Redis's lookupKeyRead), and hash
// fields reclaimed because their TTL passed (hexpired, Redis 7.4; with del
// when the hash went with its last field).

func (e *Env) keyAdded(db *keyspace.DB, key string) {
	if e.notifyBits()&NotifyNew != 0 {
		e.notify(NotifyNew, "new", []byte(key), db.ID)
	}
}

func (e *Env) keyMissed(db *keyspace.DB, key string) {
	if e.notifyBits()&NotifyKeyMiss != 0 {
		e.notify(NotifyKeyMiss, "keymiss", []byte(key), db.ID)
	}
}

func (e *Env) fieldsExpired(db *keyspace.DB, key string, deleted bool) {
	bits := e.notifyBits()
	if bits&NotifyHash != 0 {
		e.notify(NotifyHash, "hexpired", []byte(key), db.ID)
	}
	if deleted && bits&NotifyGeneric != 0 {
		e.notify(NotifyGeneric, "del", []byte(key), db.ID)
	}
}

// NotifyKey is Notify for a key held as a string: the conversion is made
// only when the event is published.
func (c *Ctx) NotifyKey(class int, event string, key string) {
	if c.Env.notifyBits()&class == 0 {
		return
	}
	c.Env.notify(class, event, []byte(key), c.DB.ID)
}
