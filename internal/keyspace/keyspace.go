// Package keyspace holds the databases: key lookup, expiry (lazy on access
// and active in the background), and the notifications that WATCH and
// blocked clients hang on. It knows nothing of commands or connections.
//
// Concurrency: a Keyspace is not safe for concurrent use; the server holds
// one lock around every batch of commands and around the active expiry
// cycle (see docs/design.md).
package keyspace

import (
	"container/heap"
	"math/rand/v2"
	"unsafe"

	"github.com/abacusdb/abacus/internal/ds/hash"
	"github.com/abacusdb/abacus/internal/num"
)

var (
	parseInt  = num.ParseInt
	appendInt = num.AppendInt
)

// Type is a value's type as TYPE reports it.
type Type uint8

// The value types.
const (
	TypeString Type = iota
	TypeList
	TypeSet
	TypeZSet
	TypeHash
	TypeStream
	TypeTimeSeries
)

// String is the name TYPE replies with.
func (t Type) String() string {
	switch t {
	case TypeString:
		return "string"
	case TypeList:
		return "list"
	case TypeSet:
		return "set"
	case TypeZSet:
		return "zset"
	case TypeHash:
		return "hash"
	case TypeStream:
		return "stream"
	case TypeTimeSeries:
		return "TSDB-TYPE"
	}
	return "none"
}

// String encodings, as OBJECT ENCODING names them.
const (
	EncRaw uint8 = iota
	EncEmbstr
	EncInt
)

// EmbstrMaxLen is OBJ_ENCODING_EMBSTR_SIZE_LIMIT: strings up to this length
// set by SET are reported as embstr.
const EmbstrMaxLen = 44

// Object is one key's value. Its value lives in the two-word cell u: a
// string's bytes or integer (see Raw and Int), a hash itself (NewHash), or
// the interface value of any other type's data structure (Val, SetVal).
// So a string or small hash key costs the object, its key bytes and its
// value's bytes, and nothing else.
//
// Layout: 64 bytes, a size class of its own, with no padding; what a dict
// chain walk reads (Key, next, htag) is in the first 32 bytes, which never
// straddle a cache line. Do not copy an Object holding an inline hash by
// value: its Val points into the object.
type Object struct {
	Key    string
	next   *Object // chain in the dict
	Type   Type
	Enc    uint8  // string encoding (EncRaw, EncEmbstr, EncInt); encInline for a hash in u
	Owned  bool   // an int 0..9999 in a private object, not Redis's shared one (COPY): REFCOUNT 1
	htag   uint8  // top byte of the key's hash in its dict (dict.go tagOf)
	LRU    uint32 // access metadata: last access (unix s) or LFU minute and counter (access.go)
	hpos   int32  // 1 + index in the expiry heap; 0 when absent
	fpos   int32  // 1 + index in the field-expiry heap (fieldexpiry.go); 0 when absent
	Expire int64  // unix ms; 0 means no TTL
	u      cell
}

// cell is two words, a pointer the collector follows and a plain word:
//   - a string: its bytes at p, the length in the low 40 bits of n and the
//     spare capacity in the high 24; or an integer in n, with p nil;
//   - a hash made by NewHash: the hash.Hash itself, whose layout is the same
//     {pointer, word} (Enc is encInline);
//   - any other value: an interface value's data word in p and its type
//     word in n. The collector does not see the type word, which is safe
//     because a type descriptor is never freed: those of the binary's types
//     (generic instantiations included) are static data, and the few that
//     reflect makes at run time (StructOf, PointerTo...) live on the heap
//     but stay referenced from reflect's caches for the life of the process.
//     The data word is scanned as any pointer.
type cell struct {
	p unsafe.Pointer
	n uint64
}

// encInline marks a hash object whose hash.Hash is u itself.
const encInline = 0x80

// eface is the runtime's layout of an interface{} value.
type eface struct {
	typ  uintptr
	data unsafe.Pointer
}

// A hash.Hash must be exactly a cell, word for word: the two asserts fail to
// compile when the sizes differ, and hash.Hash documents its layout.
var (
	_ [unsafe.Sizeof(hash.Hash{}) - unsafe.Sizeof(cell{})]struct{}
	_ [unsafe.Sizeof(cell{}) - unsafe.Sizeof(hash.Hash{})]struct{}
	_ [unsafe.Sizeof(eface{}) - unsafe.Sizeof(any(nil))]struct{}
	_ [unsafe.Sizeof(any(nil)) - unsafe.Sizeof(eface{})]struct{}
)

// Val is the data structure of a value that is not a string (a
// *hash.Hash, *zset.Set...); nil for strings.
func (o *Object) Val() any {
	if o.Type == TypeString {
		return nil
	}
	if o.Enc == encInline {
		return (*hash.Hash)(unsafe.Pointer(&o.u))
	}
	e := eface{uintptr(o.u.n), o.u.p}
	return *(*any)(unsafe.Pointer(&e))
}

// SetVal makes v the value of a non-string object. On a string object it
// panics: Raw would read v's type word as the string's length.
func (o *Object) SetVal(v any) {
	if o.Type == TypeString {
		panic("keyspace: SetVal on a string object")
	}
	if o.Enc == encInline {
		o.Enc = 0
	}
	e := (*eface)(unsafe.Pointer(&v))
	o.u = cell{e.data, uint64(e.typ)}
}

const (
	rawLenBits  = 40
	rawLenMask  = 1<<rawLenBits - 1
	rawMaxSlack = 1<<(64-rawLenBits) - 1
)

// Raw returns a raw or embstr string's bytes, with their capacity, or nil
// (integer-encoded strings, empty strings). Writing into the slice writes
// the value; a value that grows past the capacity needs SetRaw.
func (o *Object) Raw() []byte {
	if o.u.p == nil || o.Type != TypeString {
		return nil
	}
	n := o.u.n & rawLenMask
	return unsafe.Slice((*byte)(o.u.p), n+o.u.n>>rawLenBits)[:n]
}

// SetRaw makes b (not copied) the string's bytes; the encoding is the
// caller's to set. Capacity past 16 MiB beyond the length is not kept.
func (o *Object) SetRaw(b []byte) {
	if b == nil {
		o.u = cell{}
		return
	}
	slack := uint64(cap(b) - len(b))
	if slack > rawMaxSlack {
		slack = rawMaxSlack
	}
	o.u = cell{unsafe.Pointer(unsafe.SliceData(b)), uint64(len(b)) | slack<<rawLenBits}
}

// Int is an integer-encoded string's value, 0 for any other object.
func (o *Object) Int() int64 {
	if o.Type != TypeString || o.Enc != EncInt {
		return 0
	}
	return int64(o.u.n)
}

// SetInt makes o the integer-encoded string v.
func (o *Object) SetInt(v int64) {
	o.Enc = EncInt
	o.u = cell{nil, uint64(v)}
}

// NewString makes a string object the way SET stores one: integers that
// Redis would encode as int become EncInt, others embstr or raw by length.
func NewString(b []byte) *Object {
	o := &Object{Type: TypeString}
	o.SetString(b)
	return o
}

// NewInt makes an integer-encoded string object.
func NewInt(v int64) *Object {
	o := &Object{Type: TypeString}
	o.SetInt(v)
	return o
}

// NewRaw makes a raw-encoded string object holding b (not copied).
func NewRaw(b []byte) *Object {
	o := &Object{Type: TypeString, Enc: EncRaw}
	o.SetRaw(b)
	return o
}

// NewValue makes an object of a non-string type.
func NewValue(t Type, v any) *Object {
	o := &Object{Type: t}
	o.SetVal(v)
	return o
}

// NewHash makes an empty hash object whose hash.Hash lives inside the
// object (in u), so that a small hash costs the object and its block: no
// separate header. Val returns it like any other value (o.Val().(*hash.Hash));
// a hash made with hash.New and stored with SetVal works the same, with one
// heap object more.
func NewHash() (*Object, *hash.Hash) {
	o := &Object{Type: TypeHash, Enc: encInline}
	return o, (*hash.Hash)(unsafe.Pointer(&o.u))
}

// SetString replaces the string value of o, choosing the encoding.
func (o *Object) SetString(b []byte) {
	if len(b) <= 20 {
		if v, ok := parseInt(b); ok {
			o.SetInt(v)
			return
		}
	}
	o.SetRaw(append([]byte(nil), b...))
	o.Enc = EncRaw
	if len(b) <= EmbstrMaxLen {
		o.Enc = EncEmbstr
	}
}

// Bytes returns a string object's value. For integer-encoded strings it
// formats into scratch (which may be nil).
func (o *Object) Bytes(scratch []byte) []byte {
	if o.Enc == EncInt {
		return appendInt(scratch[:0], o.Int())
	}
	return o.Raw()
}

// StrLen is the length of a string object's value.
func (o *Object) StrLen() int {
	if o.Enc == EncInt {
		var tmp [24]byte
		return len(appendInt(tmp[:0], o.Int()))
	}
	if o.Type != TypeString {
		return 0
	}
	return int(o.u.n & rawLenMask)
}

// Keyspace is the set of databases plus the state shared by all of them.
type Keyspace struct {
	DBs []*DB
	// Now is the time of the command being executed (unix ms); the server
	// sets it once per command, as Redis caches mstime per command.
	Now int64
	// Touched is called for every key written or deleted, with its
	// database, before the write returns: WATCH and blocking commands use
	// it. It may be nil.
	Touched func(db *DB, key string)
	// Expired is called for every key deleted because its TTL passed
	// (lazily or by the active cycle); the AOF propagates it as DEL. It
	// may be nil.
	Expired func(db *DB, key string)
	Stats   Stats
	// Expiry says what lookups do with a key whose TTL has passed: the
	// server sets it per command (a replica's own clients, its primary's
	// stream, or a primary).
	Expiry ExpiryMode
	// Access says how lookups update keys' access metadata (access.go).
	Access Access
	// UsedDelta is the estimated heap bytes the stored objects gained
	// (negative: lost) since the server last reset it (memacct.go).
	UsedDelta int64
	rnd       *rand.Rand
	spare     []*Object    // evicted keys' objects for new string keys (recycle.go)
	wj        watchJournal // WATCH changes an undone script takes back (watch.go)
	undo      undoLog      // first-touch copies for all-or-nothing scripts (undo.go)
	snap      *snapshot    // the open point-in-time snapshot (snapshot.go)
	followers []Follower   // told of changes Touched does not signal (follow.go)
	slotsOn   bool         // cluster mode: tables index their keys by slot (slots.go)

	// Added is called when a command's write creates a key that did not
	// exist (keyspace notifications' new event). It may be nil.
	Added func(db *DB, key string)
	// Missed is called for every read lookup that finds no live key
	// (counted in Stats.Misses; the keymiss event) when MissWanted says
	// so; both may be nil. The key is copied for it only then: passing
	// the caller's string on would make every read's key escape.
	Missed     func(db *DB, key []byte)
	MissWanted func() bool
	// FieldsExpired is called when expired hash fields of key are
	// reclaimed, lazily or by the active cycle, with deleted set when that
	// left the hash empty and the key went with it. It may be nil.
	FieldsExpired func(db *DB, key string, deleted bool)
	// FieldExpired is called for each expired hash field as it is
	// reclaimed, before FieldsExpired (the AOF and replicas get an HDEL).
	// field is valid only during the call. It may be nil.
	FieldExpired func(db *DB, key string, field []byte)
}

// Stats counts what INFO reports.
type Stats struct {
	Hits, Misses, ExpiredKeys, EvictedKeys int64
	ExpiredFields                          int64 // expired hash fields reclaimed, lazily or by the active cycle (expired_subkeys)
	ExpiredStalePerc                       float64
	ExpireCycleCPUMicros                   int64
}

// New makes n empty databases.
func New(n int) *Keyspace {
	ks := &Keyspace{rnd: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
	ks.DBs = make([]*DB, n)
	for i := range ks.DBs {
		ks.DBs[i] = &DB{ID: i, ks: ks, dict: newDict()}
	}
	return ks
}

// Rand is the keyspace's random source (RANDOMKEY, sampling).
func (ks *Keyspace) Rand() *rand.Rand { return ks.rnd }

// DB is one numbered database.
type DB struct {
	ID      int
	ks      *Keyspace
	dict    *dict
	expires expiryHeap
	fexp    fieldHeap           // values with field TTLs, by next field expiry (fieldexpiry.go)
	watched map[string][]*watch // WATCHed keys (watch.go)
}

// Keyspace returns the keyspace the database belongs to.
func (db *DB) Keyspace() *Keyspace { return db.ks }

// Len is the number of keys, counting keys that have expired but were not
// reclaimed yet (as DBSIZE does in Redis).
func (db *DB) Len() int { return db.dict.Len() }

// ExpiresLen is the number of keys with a TTL.
func (db *DB) ExpiresLen() int { return len(db.expires) }

func (db *DB) touched(key string) {
	if len(db.watched) != 0 {
		db.touchWatched(key)
	}
	if db.ks.Touched != nil {
		db.ks.Touched(db, key)
	}
}

// ExpiryMode is what a lookup does with a key whose TTL has passed.
type ExpiryMode uint8

const (
	// ExpireDelete deletes it (a primary; the Expired hook propagates DEL).
	ExpireDelete ExpiryMode = iota
	// ExpireHide answers as if it were absent but keeps it: a replica
	// serving its own clients, whose keys go only by its primary's DEL
	// (Redis 7.0's expireIfNeeded on a replica).
	ExpireHide
	// ExpireNever treats it as live: a replica applying its primary's
	// stream, which decides when the key goes.
	ExpireNever
	// ExpireKeep answers as if it were absent but keeps it, and its
	// expired hash fields too: a primary while clients are paused (Redis
	// 7.0's expireIfNeeded under a pause), so that the dataset, and what
	// replicas are sent, stays as it is until the pause ends.
	ExpireKeep
)

// expireIfNeeded deletes o if its TTL has passed and reports whether it
// is gone for the caller (under ExpireHide it stays stored).
func (db *DB) expireIfNeeded(o *Object) bool {
	if o.Expire == 0 || o.Expire > db.ks.Now {
		return false
	}
	switch db.ks.Expiry {
	case ExpireHide, ExpireKeep:
		return true
	case ExpireNever:
		return false
	}
	if db.ks.snap != nil {
		db.snapTouch(o.Key)
	}
	if db.ks.undo.on {
		db.journal(o.Key)
	}
	db.remove(o.Key)
	db.ks.Stats.ExpiredKeys++
	db.touched(o.Key)
	if db.ks.Expired != nil {
		db.ks.Expired(db, o.Key)
	}
	return true
}

// Peek returns key's object without expiring it or touching statistics.
func (db *DB) Peek(key string) *Object {
	if db.ks.snap != nil {
		db.snapLookup(key)
	}
	o := db.dict.Get(key)
	if db.ks.undo.on && db.ks.undo.writes {
		db.journalLookup(key, o)
	}
	return o
}

// Lookup returns the live object at key, or nil, without statistics: the
// lookup a write or an existence check does.
func (db *DB) Lookup(key string) *Object {
	if db.ks.snap != nil {
		db.snapLookup(key)
	}
	o := db.dict.Get(key)
	if db.ks.undo.on && db.ks.undo.writes {
		// While the command may write, the key is saved before the
		// caller can change its object in place.
		db.journalLookup(key, o)
	}
	if o == nil || db.expireIfNeeded(o) || db.fieldsDue(o) && db.ks.Expiry != ExpireKeep && db.expireFieldsOf(o) {
		return nil
	}
	return o
}

// LookupRead is Lookup for a read: it counts keyspace hits and misses and
// updates the key's access time.
func (db *DB) LookupRead(key string) *Object {
	o := db.Lookup(key)
	if o == nil {
		db.ks.Stats.Misses++
		if db.ks.MissWanted != nil && db.ks.MissWanted() {
			db.ks.Missed(db, []byte(key))
		}
		return nil
	}
	db.ks.Stats.Hits++
	db.Touch(o)
	return o
}

// Set stores o at key, replacing any value; the key loses any TTL unless
// keepTTL. It signals the write.
func (db *DB) Set(key string, o *Object, keepTTL bool) {
	if db.ks.snap != nil {
		db.snapTouch(key)
	}
	if db.ks.undo.on {
		db.journalPut(key, o)
	}
	o.Key = key
	fresh := o.LRU == 0 // a new object; a moved one (RENAME, MOVE) keeps its access metadata
	if fresh {
		db.ks.initAccess(o)
	}
	old := db.dict.Put(o)
	if old != o {
		db.ks.accountAdd(o)
	}
	if old != nil && old != o {
		db.ks.accountRemove(old)
		if fresh && db.ks.Access.LFU {
			// Redis's setKey: the write lookup touches the old value,
			// whose counter the new one inherits (dbSetValue).
			o.LRU = old.LRU
			db.Touch(o)
		}
		if keepTTL && old.Expire != 0 {
			o.Expire = old.Expire
			db.expires.replace(old, o)
		} else if old.hpos > 0 {
			heap.Remove(&db.expires, int(old.hpos-1))
		}
		db.fexpRemove(old)
	}
	if o.Expire != 0 && o.hpos == 0 {
		heap.Push(&db.expires, o)
	}
	db.indexFields(o)
	db.touched(key)
	if old == nil && db.ks.Added != nil {
		db.ks.Added(db, key)
	}
}

// Add stores o at key, which must not hold a live value.
func (db *DB) Add(key string, o *Object) { db.Set(key, o, false) }

// Modified signals that the value at key was changed in place.
func (db *DB) Modified(key string) { db.touched(key) }

func (db *DB) remove(key string) *Object {
	o := db.dict.Delete(key)
	if o != nil {
		db.ks.accountRemove(o)
	}
	if o != nil && o.hpos > 0 {
		heap.Remove(&db.expires, int(o.hpos-1))
	}
	if o != nil {
		db.fexpRemove(o)
	}
	return o
}

// Delete removes key and reports whether a live value was there.
func (db *DB) Delete(key string) bool { return db.del(key) != nil }

// del is Delete, returning the object it removed.
func (db *DB) del(key string) *Object {
	if db.ks.snap != nil {
		db.snapTouch(key)
	}
	if db.ks.undo.on {
		db.journal(key)
	}
	o := db.dict.Get(key)
	if o == nil {
		return nil
	}
	if db.expireIfNeeded(o) || db.fieldsDue(o) && db.ks.Expiry != ExpireKeep && db.expireFieldsOf(o) {
		return nil
	}
	db.remove(key)
	db.touched(key)
	return o
}

// Take removes key and returns its live object (RENAME, MOVE).
func (db *DB) Take(key string) *Object {
	if db.ks.snap != nil {
		db.snapTouch(key)
	}
	if db.ks.undo.on {
		db.journal(key)
	}
	o := db.Lookup(key)
	if o == nil {
		return nil
	}
	db.remove(key)
	db.touched(key)
	return o
}

// SetExpire sets or clears (at == 0) the TTL of the live object o.
func (db *DB) SetExpire(o *Object, at int64) {
	if db.ks.snap != nil {
		db.snapTouch(o.Key)
	}
	if db.ks.undo.on {
		db.journal(o.Key)
	}
	o.Expire = at
	switch {
	case at == 0 && o.hpos > 0:
		heap.Remove(&db.expires, int(o.hpos-1))
	case at != 0 && o.hpos > 0:
		heap.Fix(&db.expires, int(o.hpos-1))
	case at != 0:
		heap.Push(&db.expires, o)
	}
	db.touched(o.Key)
}

// Flush removes every key, signalling each watched one first.
func (db *DB) Flush() {
	if len(db.watched) != 0 {
		db.touchAllWatched(nil)
	}
	if db.ks.Touched != nil {
		db.ForEach(func(o *Object) { db.ks.Touched(db, o.Key) })
	}
	defer db.ks.emptied(db)
	if db.ks.undo.on {
		db.journalFlush()
		return
	}
	if db.dict.frozen {
		db.flushFrozen()
		return
	}
	db.dict.Clear()
	db.expires = nil
	db.fexpClear()
}

// ForEach calls fn for every stored object, expired or not.
func (db *DB) ForEach(fn func(*Object)) {
	var c uint64
	for {
		c = db.dict.Scan(c, fn)
		if c == 0 {
			return
		}
	}
}

// Scan visits the buckets at cursor, calling fn for each live object, and
// returns the next cursor (0 at the end). See dict.Scan for the guarantee.
func (db *DB) Scan(cursor uint64, fn func(*Object)) uint64 {
	var expired []*Object
	next := db.dict.Scan(cursor, func(o *Object) {
		if o.Expire != 0 && o.Expire <= db.ks.Now {
			expired = append(expired, o)
			return
		}
		fn(o)
	})
	for _, o := range expired {
		db.expireIfNeeded(o)
	}
	return next
}

// RandomKey returns a random live key, or "" and false when empty.
func (db *DB) RandomKey() (string, bool) {
	for tries := 0; db.dict.Len() > 0; tries++ {
		o := db.dict.Random(db.ks.rnd)
		if o.Expire != 0 && o.Expire <= db.ks.Now {
			if tries > 100 && len(db.expires) == db.dict.Len() {
				// Every key is volatile and many are stale: Redis returns
				// an expired key in this case rather than loop forever.
				return o.Key, true
			}
			db.expireIfNeeded(o)
			continue
		}
		return o.Key, true
	}
	return "", false
}

// AvgTTL estimates the average TTL in ms of keys with one (INFO keyspace).
func (db *DB) AvgTTL() int64 {
	n := len(db.expires)
	if n == 0 {
		return 0
	}
	// Sample up to 64 entries spread over the heap.
	step := n/64 + 1
	var sum, cnt int64
	for i := 0; i < n; i += step {
		if d := db.expires[i].Expire - db.ks.Now; d > 0 {
			sum += d
		}
		cnt++
	}
	return sum / cnt
}

// Swap exchanges the contents of two databases (SWAPDB).
func (ks *Keyspace) Swap(a, b int) {
	da, db := ks.DBs[a], ks.DBs[b]
	if len(da.watched) != 0 {
		da.touchAllWatched(db)
	}
	if len(db.watched) != 0 {
		db.touchAllWatched(da)
	}
	if ks.undo.on {
		ks.journalSwap(da, db)
	}
	swapTables(da, db)
	ks.swapped(da, db)
	if ks.Touched != nil {
		for _, d := range []*DB{da, db} {
			d.ForEach(func(o *Object) { ks.Touched(d, o.Key) })
		}
	}
}

// ExpireCycle reclaims keys whose TTL has passed, at most budget keys per
// database, earliest first, then as many expired hash fields (deleting the
// hashes they leave empty; see fieldexpiry.go). It returns how many it
// reclaimed. Unlike Redis's sampling cycle, the heaps find every expired key
// and field without scanning, so the budget alone bounds the work.
func (ks *Keyspace) ExpireCycle(budget int) int {
	ks.Expiry = ExpireDelete // the cycle runs only where keys are deleted
	total := 0
	for _, db := range ks.DBs {
		for n := 0; n < budget && len(db.expires) > 0; n++ {
			o := db.expires[0]
			if o.Expire > ks.Now {
				break
			}
			db.expireIfNeeded(o)
			total++
		}
		total += db.expireFields(budget)
	}
	return total
}

// expiryHeap orders volatile keys by expiry time.
type expiryHeap []*Object

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].Expire < h[j].Expire }
func (h expiryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hpos = int32(i + 1)
	h[j].hpos = int32(j + 1)
}
func (h *expiryHeap) Push(x any) {
	o := x.(*Object)
	o.hpos = int32(len(*h) + 1)
	*h = append(*h, o)
}
func (h *expiryHeap) Pop() any {
	old := *h
	o := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	o.hpos = 0
	return o
}

// replace puts n where old was in the heap (same expiry time).
func (h expiryHeap) replace(old, n *Object) {
	i := old.hpos
	old.hpos = 0
	h[i-1] = n
	n.hpos = i
}
