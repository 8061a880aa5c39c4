package engine

import (
	"strconv"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// Keyspace notifications: a write handler says what happened to a key
// where it happens (Ctx.Notify, Redis's notifyKeyspaceEvent), with an
// event class and Redis's event name; when notify-keyspace-events selects
// the class, the event is published on __keyspace@<db>__:<key> (K) and
// __keyevent@<db>__:<event> (E). Off by default: Notify then costs one
// load and a comparison, and allocates nothing.

// Event classes, one per notify-keyspace-events letter.
const (
	NotifyKeyspace = 1 << iota // K
	NotifyKeyevent             // E
	NotifyGeneric              // g: DEL, EXPIRE, RENAME ...
	NotifyString               // $
	NotifyList                 // l
	NotifySet                  // s
	NotifyHash                 // h
	NotifyZset                 // z
	NotifyExpired              // x: a key reclaimed because its TTL passed
	NotifyEvicted              // e: a key evicted by maxmemory
	NotifyStream               // t
	NotifyKeyMiss              // m: a read found no key
	NotifyModule               // d: Abacus's own types (time series)
	NotifyNew                  // n: a key created
)

// notifyAll is A: every class but key misses and new keys.
const notifyAll = NotifyGeneric | NotifyString | NotifyList | NotifySet | NotifyHash |
	NotifyZset | NotifyExpired | NotifyEvicted | NotifyStream | NotifyModule

// parseNotify turns notify-keyspace-events into class bits.
func parseNotify(s string) int {
	bits := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 'A':
			bits |= notifyAll
		case 'K':
			bits |= NotifyKeyspace
		case 'E':
			bits |= NotifyKeyevent
		case 'g':
			bits |= NotifyGeneric
		case '$':
			bits |= NotifyString
		case 'l':
			bits |= NotifyList
		case 's':
			bits |= NotifySet
		case 'h':
			bits |= NotifyHash
		case 'z':
			bits |= NotifyZset
		case 'x':
			bits |= NotifyExpired
		case 'e':
			bits |= NotifyEvicted
		case 't':
			bits |= NotifyStream
		case 'm':
			bits |= NotifyKeyMiss
		case 'd':
			bits |= NotifyModule
		case 'n':
			bits |= NotifyNew
		}
	}
	return bits
}

// notifyBits is the selected classes, re-parsed when the parameter's text
// changes. A class is delivered only with K or E beside it.
func (e *Env) notifyBits() int {
	s := e.Cfg.Str(config.NotifyKeyspaceEvents)
	if s == "" {
		return 0
	}
	if s != e.ps.notifyText {
		e.ps.notifyText, e.ps.notifyBits = s, parseNotify(s)
	}
	return e.ps.notifyBits
}

// Notifying reports whether events of class are published now: handlers
// that must compute something to name an event ask first.
func (e *Env) Notifying(class int) bool {
	b := e.notifyBits()
	return b&class != 0 && b&(NotifyKeyspace|NotifyKeyevent) != 0
}

// Notify publishes event for key in the command's database.
func (c *Ctx) Notify(class int, event string, key []byte) {
	if c.Env.notifyBits()&class == 0 {
		return
	}
	c.Env.notify(class, event, key, c.DB.ID)
}

// NotifyDB publishes event for key in database db (expiry and eviction,
// which run outside a command's database).
func (e *Env) NotifyDB(class int, event string, key []byte, db int) {
	if e.notifyBits()&class == 0 {
		return
	}
	e.notify(class, event, key, db)
}

func (e *Env) notify(class int, event string, key []byte, db int) {
	bits := e.ps.notifyBits
	if bits&(NotifyKeyspace|NotifyKeyevent) == 0 {
		return
	}
	var buf [64]byte
	if bits&NotifyKeyspace != 0 {
		ch := append(buf[:0], "__keyspace@"...)
		ch = strconv.AppendInt(ch, int64(db), 10)
		ch = append(ch, "__:"...)
		ch = append(ch, key...)
		e.Publish(SubChannel, string(ch), []byte(event))
	}
	if bits&NotifyKeyevent != 0 {
		ch := append(buf[:0], "__keyevent@"...)
		ch = strconv.AppendInt(ch, int64(db), 10)
		ch = append(ch, "__:"...)
		ch = append(ch, event...)
		e.Publish(SubChannel, string(ch), key)
	}
}

// keyExpired is the keyspace's hook for a key deleted because its TTL
// passed (lazily or by the active cycle): the AOF and replicas get a DEL,
// subscribers an expired event.
func (e *Env) keyExpired(db *keyspace.DB, key string) {
	e.propExpired(db, key)
	if e.notifyBits()&NotifyExpired != 0 {
		e.notify(NotifyExpired, "expired", []byte(key), db.ID)
	}
}
