// Package hash implements the Redis hash type: a map from field to value in
// which every field may carry its own expiry time (Redis 7.4 hash-field
// expiration).
//
// The package knows nothing of commands, replies or the clock. Every read and
// write takes now, the current time in unix milliseconds, supplied by the
// caller; a field whose expiry time is <= now is invisible to every read at
// once, whether or not it has been physically removed yet.
//
// # Encodings
//
// A hash starts in the small form, one []byte block holding length-prefixed
// fields and values ("listpack"). When the first field gets a TTL the block
// gains one varint per entry and is kept sorted by expiry time, with the
// fields without a TTL last ("listpackex"), so that the next field to expire
// is always the first one. A hash that passes either limit of [Limits] on an
// insert converts, for good, to the large form ("hashtable"): an append-only
// byte arena of records indexed by an open-addressing table of uint64 slots,
// plus a min-heap of expiry times when fields have TTLs. Neither form holds a
// Go pointer per field, so a million hashes cost the garbage collector a few
// million objects at most, not tens of millions.
//
// # Byte slices
//
// Fields and values go in and come out as []byte: the command layer has its
// arguments as []byte already, a []byte key needs no conversion to look up,
// and returning sub-slices of the hash's own storage costs no allocation.
// The flip side:
//
//   - A slice returned by a read (Get, Range, Scan, RandomFields...) aliases
//     the hash's storage. It stays valid memory forever, but its content may
//     change at the next modification of the hash: copy it, or finish with it
//     (encode the reply), before writing to the same hash. GetDel returns a
//     copy for that reason.
//   - Arguments are copied in; the hash keeps no reference to them. They must
//     not alias the same hash's storage.
//
// A Hash is not safe for concurrent use when any goroutine modifies it. All
// read methods are free of side effects (they never reclaim expired fields),
// so concurrent readers are fine.
package hash

import (
	"math/rand/v2"
	"unsafe"
)

// Limits are the thresholds at which a hash leaves the small form, the values
// of Redis's hash-max-listpack-entries and hash-max-listpack-value. They are
// passed to every insert rather than stored, so that CONFIG SET applies to
// existing hashes at their next insert without costing memory per hash.
//
// As in Redis, the zero value means "never use the small form".
type Limits struct {
	// MaxListpackEntries is the largest number of fields a small hash holds.
	MaxListpackEntries int
	// MaxListpackValue is the largest field or value length, in bytes, a
	// small hash holds.
	MaxListpackValue int
}

// DefaultLimits returns Redis's defaults: 128 entries, 64 bytes.
func DefaultLimits() Limits { return Limits{MaxListpackEntries: 128, MaxListpackValue: 64} }

// maxListpackBytes is the size past which a small hash converts no matter
// what the limits say (Redis's lpSafeToAdd uses 1 GiB).
const maxListpackBytes = 1 << 30

// Encoding names, as OBJECT ENCODING reports them.
const (
	EncListpack   = "listpack"
	EncListpackEx = "listpackex"
	EncHashtable  = "hashtable"
)

// Hash is a Redis hash. The zero value is an empty hash ready to use.
//
// It is two words, so that the keyspace can keep it inside its Object rather
// than as a separate heap object (keyspace.NewHash): p is the small form's
// block (its first byte), or the *table of the large form when n has
// tableBit; otherwise n is the block's length and, in the high half, its
// capacity. The layout {pointer, word} is relied upon by package keyspace;
// change both together.
type Hash struct {
	p unsafe.Pointer
	n uint64
}

const tableBit = 1 << 63

// block returns the small form's block (nil for the large form).
func (h *Hash) block() []byte {
	if h.p == nil || h.n&tableBit != 0 {
		return nil
	}
	return unsafe.Slice((*byte)(h.p), h.n>>32)[:uint32(h.n)]
}

// setBlock makes b the small form's block. Blocks stay under
// maxListpackBytes plus slack, so length and capacity fit in 32 bits each.
func (h *Hash) setBlock(b []byte) {
	if cap(b) == 0 {
		h.p, h.n = nil, 0
		return
	}
	if uint64(cap(b)) >= 1<<31 {
		b = b[:len(b):len(b)]
	}
	h.p = unsafe.Pointer(unsafe.SliceData(b))
	h.n = uint64(len(b)) | uint64(cap(b))<<32
}

// tab returns the large form's table, or nil.
func (h *Hash) tab() *table {
	if h.n&tableBit == 0 {
		return nil
	}
	return (*table)(h.p)
}

func (h *Hash) setTable(t *table) { h.p, h.n = unsafe.Pointer(t), tableBit }

// New returns an empty hash.
func New() *Hash { return new(Hash) }

// Rand is the source of randomness for RandomField and RandomFields;
// *math/rand/v2.Rand satisfies it. A nil Rand means math/rand/v2's global
// source.
type Rand interface {
	IntN(n int) int
}

func intN(r Rand, n int) int {
	if r == nil {
		return rand.IntN(n)
	}
	return r.IntN(n)
}

// Encoding reports the current representation: "listpack", "listpackex" or
// "hashtable".
func (h *Hash) Encoding() string {
	switch {
	case h.tab() != nil:
		return EncHashtable
	case lpIsEx(h.block()):
		return EncListpackEx
	default:
		return EncListpack
	}
}

// Len returns the number of live fields. It costs O(1) unless fields have
// expired without being reclaimed, then O(expired).
func (h *Hash) Len(now int64) int {
	if h.tab() != nil {
		return h.tab().count - h.tab().countExpired(now)
	}
	return lpLen(h.block(), now)
}

// Get returns the value of field. The slice aliases the hash (see the package
// comment).
func (h *Hash) Get(now int64, field []byte) (value []byte, ok bool) {
	if h.tab() != nil {
		return h.tab().get(now, field)
	}
	v, ttl, found := lpGet(h.block(), field)
	if !found || ttl != 0 && ttl <= now {
		return nil, false
	}
	return v, true
}

// Exists reports whether field is live.
func (h *Hash) Exists(now int64, field []byte) bool {
	_, ok := h.Get(now, field)
	return ok
}

// ValueLen returns the length of field's value, 0 when field is absent.
func (h *Hash) ValueLen(now int64, field []byte) int {
	v, _ := h.Get(now, field)
	return len(v)
}

// ttl modes for put.
const (
	ttlClear = iota // the field ends without a TTL (HSET)
	ttlKeep         // an existing live field keeps its TTL (HSETEX KEEPTTL, HINCRBY)
	ttlSet          // the field gets the given expiry time
)

// Set sets field to value and clears any TTL the field had (HSET). It
// reports whether the field was created (was absent or expired).
func (h *Hash) Set(now int64, field, value []byte, lim Limits) (created bool) {
	return h.put(now, field, value, ttlClear, 0, lim)
}

// SetKeepTTL sets field to value; an existing live field keeps its TTL, a
// created field has none (HSETEX KEEPTTL, HINCRBY, HINCRBYFLOAT).
func (h *Hash) SetKeepTTL(now int64, field, value []byte, lim Limits) (created bool) {
	return h.put(now, field, value, ttlKeep, 0, lim)
}

// SetWithExpiry sets field to value with expiry time at (unix ms). An at <= 0
// means no expiry, as Set. An at <= now deletes the field instead: it would
// be invisible at once. It reports whether no live field existed before.
func (h *Hash) SetWithExpiry(now int64, field, value []byte, at int64, lim Limits) (created bool) {
	if at <= 0 {
		return h.put(now, field, value, ttlClear, 0, lim)
	}
	if at <= now {
		return !h.Delete(now, field)
	}
	return h.put(now, field, value, ttlSet, at, lim)
}

// SetNX sets field to value only if field is not live, and reports whether
// it did (HSETNX).
func (h *Hash) SetNX(now int64, field, value []byte, lim Limits) (set bool) {
	if h.Exists(now, field) {
		return false
	}
	h.put(now, field, value, ttlClear, 0, lim)
	return true
}

func (h *Hash) put(now int64, field, value []byte, mode int, at int64, lim Limits) bool {
	if h.tab() == nil {
		if len(field) <= lim.MaxListpackValue && len(value) <= lim.MaxListpackValue {
			if created, done := h.lpPut(now, field, value, mode, at, lim); done {
				return created
			}
		}
		h.convert(1)
	}
	return h.tab().put(now, field, value, mode, at)
}

// convert moves a small hash to the large form, with room for extra more
// fields.
func (h *Hash) convert(extra int) {
	b := h.block()
	n, ex, p := lpHeader(b)
	t := newTable(n+extra, len(b))
	for p < len(b) {
		e := lpEntryAt(b, p, ex)
		t.appendNew(b[e.fOff:e.fOff+e.fLen], b[e.vOff:e.vOff+e.vLen], e.ttl)
		p = e.end
	}
	h.setTable(t)
}

// Delete removes field and reports whether it was live. An expired field is
// removed too, but reported as absent.
func (h *Hash) Delete(now int64, field []byte) (deleted bool) {
	if h.tab() != nil {
		return h.tab().delete(now, field)
	}
	e, found := lpFind(h.block(), field)
	if !found {
		return false
	}
	h.setBlock(lpRemove(h.block(), e))
	return !e.expiredAt(now)
}

// GetDel removes field and returns a copy of its value (HGETDEL).
func (h *Hash) GetDel(now int64, field []byte) (value []byte, ok bool) {
	v, ok := h.Get(now, field)
	if !ok {
		return nil, false
	}
	v = append([]byte(nil), v...)
	h.Delete(now, field)
	return v, true
}

// Range calls fn for every live field, in order, until fn returns false. The
// small form yields the order Redis shows: insertion order, and for
// listpackex the fields with a TTL first, soonest expiry first. fn must not
// modify the hash.
func (h *Hash) Range(now int64, fn func(field, value []byte) bool) {
	h.RangeWithExpiry(now, func(f, v []byte, _ int64) bool { return fn(f, v) })
}

// RangeWithExpiry is Range that also passes each field's expiry time (0 for
// none), for persistence and DUMP.
func (h *Hash) RangeWithExpiry(now int64, fn func(field, value []byte, at int64) bool) {
	if h.tab() != nil {
		h.tab().rangeLive(now, fn)
		return
	}
	b := h.block()
	_, ex, p := lpHeader(b)
	for p < len(b) {
		e := lpEntryAt(b, p, ex)
		p = e.end
		if e.expiredAt(now) {
			continue
		}
		if !fn(b[e.fOff:e.fOff+e.fLen], b[e.vOff:e.vOff+e.vLen], e.ttl) {
			return
		}
	}
}

// MemoryUsage estimates the bytes the hash holds on the heap, including the
// Hash itself.
func (h *Hash) MemoryUsage() int {
	const hashSize = 16
	if h.tab() != nil {
		return hashSize + h.tab().memoryUsage()
	}
	return hashSize + cap(h.block())
}
