package keyspace

import "sync/atomic"

// Per-key access metadata, as Redis keeps it in the 24 bits of robj.lru,
// here in Object.LRU (32 bits already in the 64-byte Object: no extra
// memory per key). Its meaning depends on the eviction policy in force,
// and changes with it without conversion, as in Redis (OBJECT FREQ and
// IDLETIME warn that the values take time to adjust after a switch):
//
//   - LRU (every policy but the LFU ones): the time of the last access in
//     units of lruTick (unix seconds, as Redis's LRU clock).
//   - LFU: the minute of the last decrement in the top 16 bits of the low
//     24 (unix minutes mod 2^16, Redis's LFUGetTimeInMinutes) and a
//     logarithmic access counter in the low 8 bits.

// LFUInitVal is the counter a new key starts with under an LFU policy
// (Redis's LFU_INIT_VAL), so that a new key is not evicted before it had a
// chance to be read.
const LFUInitVal = 5

// Access is how lookups update the access metadata; the server sets it
// for each command from the configuration and the client.
type Access struct {
	LFU          bool // maxmemory-policy is allkeys-lfu or volatile-lfu
	LFULogFactor int  // lfu-log-factor
	LFUDecayTime int  // lfu-decay-time, minutes per counter decrement
	// NoTouch leaves the metadata alone on lookups (CLIENT NO-TOUCH, for
	// every command but TOUCH).
	NoTouch bool
}

// lruTick is the LRU clock's unit in ms: Redis's LRU_CLOCK_RESOLUTION.
// A finer clock would order keys read within the same second (which
// Redis's LRU cannot tell apart) at the cost of wrapping sooner (10 ms:
// every 497 days).
const lruTick = 1000

// lruClock is the LRU clock now.
func (ks *Keyspace) lruClock() uint32 { return uint32(ks.Now / lruTick) }

// lfuMinutes is Redis's LFUGetTimeInMinutes: the minutes clock in 16 bits.
func (ks *Keyspace) lfuMinutes() uint32 { return uint32(ks.Now/60000) & 0xffff }

// LFUCounter is Redis's LFUDecrAndReturn: o's counter decayed by the
// periods of lfu-decay-time minutes since its last decrement, without
// storing the result (OBJECT FREQ, eviction sampling).
func (ks *Keyspace) LFUCounter(o *Object) uint32 {
	return LFUCounterAt(o.LRU, ks.Now, ks.Access.LFUDecayTime)
}

// LFUCounterAt is LFUCounter for access metadata lru at unix ms now with
// lfu-decay-time decay (a snapshot's writer, which has its own moment).
func LFUCounterAt(lru uint32, now int64, decay int) uint32 {
	ldt := lru >> 8 & 0xffff
	counter := lru & 0xff
	if decay > 0 {
		// Redis's LFUTimeElapsed: minutes since ldt, counting one wrap.
		mins := uint32(now/60000) & 0xffff
		elapsed := mins - ldt
		if mins < ldt {
			elapsed = 65535 - ldt + mins
		}
		periods := elapsed / uint32(decay)
		if periods >= counter {
			return 0
		}
		counter -= periods
	}
	return counter
}

// IdleSecondsAt is the LRU idle time in seconds of access metadata lru at
// unix ms now (0 for an access after now: a key read while a snapshot was
// being written).
func IdleSecondsAt(lru uint32, now int64) uint64 {
	clock := uint32(now / lruTick)
	if lru > clock {
		return 0
	}
	return uint64(clock-lru) * lruTick / 1000
}

// LRUFromIdle and LFUFromFreq are the access metadata of a key loaded at
// unix ms now with an RDB file's IDLE seconds or FREQ counter (Redis's
// objectSetLRUOrLFU): accessed idle seconds ago, or the counter as of
// now's minute. Zero is "new object" to Set, so a result of zero (once in
// 136 years of the LRU clock; a zero counter in one minute of 45 days)
// leaves the key its fresh metadata.
func LRUFromIdle(idle uint64, now int64) uint32 {
	return uint32(now/lruTick) - uint32(idle*1000/lruTick)
}

// LFUFromFreq: see LRUFromIdle.
func LFUFromFreq(freq uint8, now int64) uint32 {
	return (uint32(now/60000)&0xffff)<<8 | uint32(freq)
}

// lfuLogIncr is Redis's LFULogIncr: the counter grows with probability
// 1/((counter-LFUInitVal)*lfu-log-factor+1), saturating at 255.
func (ks *Keyspace) lfuLogIncr(counter uint32) uint32 {
	if counter == 255 {
		return 255
	}
	base := float64(counter) - LFUInitVal
	if base < 0 {
		base = 0
	}
	if ks.rnd.Float64() < 1/(base*float64(ks.Access.LFULogFactor)+1) {
		counter++
	}
	return counter
}

// Touch records an access to o as Redis's lookupKey does (updateLFU or the
// LRU clock), unless the command runs for a NO-TOUCH client.
func (db *DB) Touch(o *Object) {
	ks := db.ks
	if ks.Access.NoTouch {
		return
	}
	v := ks.lruClock()
	if ks.Access.LFU {
		v = ks.lfuMinutes()<<8 | ks.lfuLogIncr(ks.LFUCounter(o))
	}
	if ks.snap != nil {
		// A save's encoder may be reading o's metadata off the lock
		// (SnapshotLoad): reads change it without telling the snapshot.
		atomic.StoreUint32(&o.LRU, v)
		return
	}
	o.LRU = v
}

// initAccess gives a new object the metadata of Redis's createObject: the
// LRU clock now, or under LFU a counter of LFUInitVal as of this minute.
func (ks *Keyspace) initAccess(o *Object) {
	if ks.Access.LFU {
		o.LRU = ks.lfuMinutes()<<8 | LFUInitVal
		return
	}
	o.LRU = ks.lruClock()
}

// Renewed records that Redis would have replaced o's object by a new one
// (dbUnshareStringValue): the LRU time is now, an LFU counter carries over.
func (db *DB) Renewed(o *Object) {
	if !db.ks.Access.LFU {
		db.ks.initAccess(o)
	}
}

// IdleMs is the time since o's last access in ms under an LRU policy
// (Redis's estimateObjectIdleTime).
func (ks *Keyspace) IdleMs(o *Object) int64 {
	return int64(ks.lruClock()-o.LRU) * lruTick // modular: one wrap is counted
}

// SetAccess sets o's metadata as RESTORE and the RDB loader do with the
// FREQ and IDLE they read (Redis's objectSetLRUOrLFU): freq under an LFU
// policy, idle seconds otherwise; a negative value is absent and leaves
// the metadata as it is.
func (ks *Keyspace) SetAccess(o *Object, freq, idle int64) {
	if ks.Access.LFU {
		if freq >= 0 {
			o.LRU = ks.lfuMinutes()<<8 | uint32(min(freq, 255))
		}
		return
	}
	if idle >= 0 {
		o.LRU = ks.lruClock() - uint32(idle*(1000/lruTick))
	}
}
