package engine

import (
	"bytes"
	"strings"

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
// the caller's buffer, which Publish looks up and frames without making a
// string of it: events nobody listens to allocate nothing.
// keyevent says ch is a __keyevent@ channel, of which there are few.
// (While an all-or-nothing script holds messages, they go the usual way.)
func (e *Env) publishNotify(ch, msg []byte, keyevent bool) {
	if !e.ps.hold && len(e.ps.subs[SubChannel][string(ch)]) == 0 && !e.patternMatches(ch, keyevent) {
		return
	}
	e.Publish(SubChannel, ch, msg)
}

// notifyPats is what notifications keep of the pattern subscriptions for
// one generation of them (pubsubState.patGen): the patterns as a slice,
// cheaper to walk than the map on every write, and for the keyevent
// channels (one per event name and database) whether any pattern matches,
// so that a client waiting for expired events costs the writes that
// publish set events a map lookup instead of a glob match.
type notifyPats struct {
	gen   uint64
	valid bool
	pats  []string
	lits  []string // each pattern's literal prefix, checked before matching
	idx   patIndex // PUBLISH's index of the literal prefixes (pubsub_patidx.go)
	event map[string]bool
}

// patternList returns the pattern subscriptions' slice of this
// generation, made again after a pattern was added or removed (PUBLISH
// uses it too: a slice and a literal-prefix test per pattern cost less
// than a map walk and a glob match, and with many patterns its index of
// the literal prefixes less still).
func (e *Env) patternList() *notifyPats {
	np := &e.ps.notifyPats
	if !np.valid || np.gen != e.ps.patGen {
		np.pats, np.lits = np.pats[:0], np.lits[:0]
		for pat := range e.ps.subs[SubPattern] {
			np.pats = append(np.pats, pat)
			np.lits = append(np.lits, literalPrefix(pat))
		}
		np.idx.build(np.lits)
		clear(np.event)
		np.gen, np.valid = e.ps.patGen, true
	}
	return np
}

// literalPrefix is the part of a glob pattern before its first special
// character: a channel it matches starts with it.
func literalPrefix(pat string) string {
	if i := strings.IndexAny(pat, `*?[\`); i >= 0 {
		return pat[:i]
	}
	return pat
}

// notifyEventCacheMax bounds the keyevent cache (event names are few;
// the bound only matters if a module-like caller invented many).
const notifyEventCacheMax = 4096

// patternMatches reports whether a pattern subscription matches ch.
func (e *Env) patternMatches(ch []byte, keyevent bool) bool {
	if len(e.ps.subs[SubPattern]) == 0 {
		return false
	}
	np := e.patternList()
	if keyevent {
		if m, ok := np.event[string(ch)]; ok {
			return m
		}
	}
	m := false
	for i, pat := range np.pats {
		if bytes.HasPrefix(ch, []byte(np.lits[i])) && glob.Match(pat, ch, false) {
			m = true
			break
		}
	}
	if keyevent {
		if np.event == nil || len(np.event) >= notifyEventCacheMax {
			np.event = map[string]bool{}
		}
		np.event[string(ch)] = m
	}
	return m
}
