package commands

import (
	"runtime/metrics"
	"sync"

	"github.com/abacusdb/abacus/internal/engine"
)

// memReport is what INFO memory and MEMORY STATS/DOCTOR report, computed
// once from the engine's used-memory measure (engine/evict.go) and the Go
// runtime's memory classes, mapped on Redis's fields:
//
//   - used: the live heap at the last collection plus what the keyspace
//     stored or dropped since (what maxmemory compares with);
//   - allocated: the heap's objects, garbage not yet swept included (what
//     jemalloc calls allocated); active: the heap's spans in use (objects
//     and the free slots between them); resident: the runtime's memory
//     less what it returned to the system;
//   - overhead: the memory at startup, the clients' buffers, and the
//     key table's own share per key (the Object, its bucket slot, and a
//     slot in the expiry heap for a key with a TTL).
type memReport struct {
	used, peak, startup, rss                int64
	allocated, active, resident             int64
	clients, overhead, dataset, keys, dicts int64
}

var (
	memClassMu sync.Mutex
	memClasses = []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
)

// perKeyOverhead is the key table's share of one key: the Object and its
// bucket slot.
const perKeyOverhead = 64 + 8

func readMemReport(e *engine.Env) memReport {
	var r memReport
	r.used = e.UsedMemory()
	memClassMu.Lock()
	metrics.Read(memClasses)
	v := func(i int) int64 {
		if memClasses[i].Value.Kind() == metrics.KindUint64 {
			return int64(memClasses[i].Value.Uint64())
		}
		return 0
	}
	r.allocated, r.active, r.resident = v(0), v(0)+v(1), v(2)-v(3)
	memClassMu.Unlock()
	st := &e.Stats.Info
	st.NotePeak(uint64(r.used))
	r.peak = st.Peak.Load()
	r.startup = st.Startup.Load()
	r.rss = int64(processRSS())
	if r.rss == 0 {
		r.rss = r.resident
	}
	if e.Host != nil {
		for _, s := range e.Host.Clients() {
			r.clients += s.QueryBuf.Load() + s.OutBuf.Load()
		}
	}
	for _, db := range e.KS.DBs {
		r.keys += int64(db.Len())
		r.dicts += int64(db.Len())*perKeyOverhead + int64(db.ExpiresLen())*8
	}
	r.overhead = r.startup + r.clients + r.dicts
	r.dataset = max(r.used-r.overhead, 0)
	return r
}

// ratioOf is a/b, 0 when b is 0.
func ratioOf(a, b int64) float64 { return ratio(float64(a), float64(b)) }
