package keyspace

// Recycling evicted keys' objects. At maxmemory every SET of a new key
// evicts one: without recycling, each makes an Object of garbage and
// allocates another, and the collector, whose room above the live heap is
// small at the limit, runs a cycle marking the whole live heap every few
// MB of such garbage. The Object of an evicted string key goes to a short
// list instead, and StoreString takes the next new key's Object from it.
//
// An Object may be reused only when nothing references it any more: the
// dict, the expiry heaps and the slot index let it go in remove; nothing
// outside the keyspace keeps an Object across commands (StoreString's
// invariant), and eviction runs between commands. Inside the keyspace an
// open snapshot and the undo journal may hold the removed object itself
// as a key's earlier state, so nothing is recycled while either is on.
// Only the Object is reused: the key's bytes (shared with a string value)
// may still be referenced by strings handed out (the eviction pool's
// candidates), and they go to the collector.

// maxSpare bounds the list: one eviction may free several keys for one
// SET, and the rest are garbage as before.
const maxSpare = 64

// DeleteEvicted is Delete for an evicted key: it also keeps the removed
// object for reuse when that is safe.
func (db *DB) DeleteEvicted(key string) bool {
	o := db.del(key)
	if o == nil {
		return false
	}
	ks := db.ks
	if o.Type == TypeString && ks.snap == nil && !ks.undo.on && len(ks.spare) < maxSpare {
		*o = Object{}
		ks.spare = append(ks.spare, o)
	}
	return true
}

// spareObject returns a zero Object from the list, or nil when it is
// empty.
func (ks *Keyspace) spareObject() *Object {
	n := len(ks.spare)
	if n == 0 {
		return nil
	}
	o := ks.spare[n-1]
	ks.spare[n-1] = nil
	ks.spare = ks.spare[:n-1]
	return o
}
