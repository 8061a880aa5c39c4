package engine

import (
	"github.com/abacusdb/abacus/internal/glob"
	"github.com/abacusdb/abacus/internal/keyspace"
)

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

func (e *Env) keyMissed(db *keyspace.DB, key []byte) {
	e.notify(NotifyKeyMiss, "keymiss", key, db.ID)
}

func (e *Env) missWanted() bool { return e.notifyBits()&NotifyKeyMiss != 0 }

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

// publishNotify publishes msg on the notification channel ch, built in
// the caller's buffer: the channel becomes a string only when somebody
// receives the message, so events nobody listens to allocate nothing.
// (While an all-or-nothing script holds messages, they go the usual way.)
func (e *Env) publishNotify(ch, msg []byte) {
	if !e.ps.hold && len(e.ps.subs[SubChannel][string(ch)]) == 0 && !e.patternMatches(ch) {
		return
	}
	e.Publish(SubChannel, string(ch), msg)
}

// patternMatches reports whether a pattern subscription matches ch.
func (e *Env) patternMatches(ch []byte) bool {
	for pat := range e.ps.subs[SubPattern] {
		if glob.Match(pat, ch, false) {
			return true
		}
	}
	return false
}
