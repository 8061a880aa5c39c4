package engine

import (
	"slices"

	"github.com/abacusdb/abacus/internal/config"
)

// clientMemory is what a client holds for CLIENT LIST's tot-mem and
// maxmemory-clients: its input and unread output buffers and its MULTI
// queue.
func clientMemory(s *Session) int64 {
	return s.QueryBuf.Load() + s.OutBuf.Load() + s.tx.mem
}

// clientEvictMin is the least memory of a client that may be evicted:
// Redis tracks for eviction only clients in its memory buckets, the
// smallest of which starts at 32 KB (CLIENT_MEM_USAGE_BUCKET_MIN_LOG).
const clientEvictMin = 32 << 10

// evictClients is Redis's evictClients for maxmemory-clients (bytes, or
// a percentage of maxmemory): while the clients together hold more, the
// client holding most is closed, and so on; CLIENT NO-EVICT clients are
// neither counted nor closed, nor are clients under clientEvictMin. The
// clients' figures are sampled at most every 100 ms (Redis keeps them in
// memory buckets updated as buffers change).
func (e *Env) evictClients(limit int64) {
	if limit < 0 {
		limit = e.Cfg.Int(config.MaxMemory) * -limit / 100
	}
	if limit == 0 || e.Host == nil || e.KS.Now-e.mem.clientsCheckedAt < 100 {
		return
	}
	e.mem.clientsCheckedAt = e.KS.Now
	clients := e.Host.Clients()
	var total int64
	for _, s := range clients {
		if !s.NoEvict { // Redis does not count them either
			total += clientMemory(s)
		}
	}
	if total <= limit {
		return
	}
	slices.SortFunc(clients, func(a, b *Session) int {
		return int(clientMemory(b) - clientMemory(a))
	})
	for _, s := range clients {
		if total <= limit {
			break
		}
		m := clientMemory(s)
		if s.NoEvict || m < clientEvictMin {
			continue
		}
		e.Log.Info("evicting client for maxmemory-clients", "id", s.ID, "addr", s.Addr, "memory", m)
		e.Host.Kill(s)
		e.mem.evictedClients++
		total -= m
	}
}
