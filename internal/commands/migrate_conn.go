package commands

import (
	"bufio"
	"math/rand"
	"net"
	"sync"
	"time"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/tlsconf"
)

// MIGRATE's connections to its targets are kept per host:port, as Redis's
// migrate_cached_sockets keeps them: a reshard sends one MIGRATE per batch
// of keys to the same target, and a connection per call would cost a
// connect (and a SELECT) each time. At most migrateCacheItems are kept (a
// random one is closed to make room) and one idle for migrateCacheTTL is
// closed. MIGRATE runs under the server lock, so one call at a time uses
// the cache; the idle timer runs outside it, hence the cache's own mutex.
// A connection in use is out of the map, so the timer never closes it
// under its user.

const (
	migrateCacheItems = 64
	migrateCacheTTL   = 10 * time.Second
)

// migrateSocket is one cached connection to a target.
type migrateSocket struct {
	conn    net.Conn
	r       *bufio.Reader
	lastDB  int64 // the target's selected DB, -1 when unknown
	lastUse time.Time
}

type migrateCache struct {
	mu    sync.Mutex
	socks map[string]*migrateSocket
	timer *time.Timer
}

var migrateCaches = engine.NewExt(func(*engine.Env) *migrateCache {
	return &migrateCache{socks: map[string]*migrateSocket{}}
})

// len is migrate_cached_sockets.
func (mc *migrateCache) len() int {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	return len(mc.socks)
}

// get takes addr's cached connection out of the cache, or dials one
// within timeout; nil when the target cannot be reached.
func (mc *migrateCache) get(cfg *config.Config, addr string, timeout time.Duration) *migrateSocket {
	mc.mu.Lock()
	s := mc.socks[addr]
	delete(mc.socks, addr)
	mc.mu.Unlock()
	if s != nil {
		return s
	}
	conn, err := dialMigrate(cfg, addr, timeout)
	if err != nil {
		return nil
	}
	return &migrateSocket{conn: conn, r: bufio.NewReader(conn), lastDB: -1}
}

// dialMigrate connects to a MIGRATE target: over TLS when tls-cluster is
// on, as Redis's migrateGetSocket does (in a TLS cluster the addresses
// redis-cli --cluster hands MIGRATE are the nodes' TLS ports), with the
// client certificate and CAs the cluster bus uses; the handshake is
// bounded by the same timeout as the connect.
func dialMigrate(cfg *config.Config, addr string, timeout time.Duration) (net.Conn, error) {
	return tlsconf.Dial(cfg, addr, timeout, cfg.Bool(config.TLSCluster))
}

// put returns a healthy connection to the cache after use.
func (mc *migrateCache) put(addr string, s *migrateSocket) {
	s.lastUse = time.Now()
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if old := mc.socks[addr]; old != nil {
		old.conn.Close()
		delete(mc.socks, addr)
	}
	if len(mc.socks) >= migrateCacheItems {
		// Map iteration order is unspecified, not random: draw one.
		skip := rand.Intn(len(mc.socks))
		for a, o := range mc.socks {
			if skip == 0 {
				o.conn.Close()
				delete(mc.socks, a)
				break
			}
			skip--
		}
	}
	mc.socks[addr] = s
	if mc.timer == nil {
		mc.timer = time.AfterFunc(migrateCacheTTL, mc.closeIdle)
	}
}

// closeIdle closes the connections idle for migrateCacheTTL and comes back
// when the next one will be.
func (mc *migrateCache) closeIdle() {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	now := time.Now()
	next := time.Duration(0)
	for a, s := range mc.socks {
		idle := now.Sub(s.lastUse)
		if idle >= migrateCacheTTL {
			s.conn.Close()
			delete(mc.socks, a)
			continue
		}
		if left := migrateCacheTTL - idle; next == 0 || left < next {
			next = left
		}
	}
	if next == 0 {
		mc.timer = nil
		return
	}
	mc.timer = time.AfterFunc(next, mc.closeIdle)
}
