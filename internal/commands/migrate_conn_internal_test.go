package commands

import (
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/config"
)

// The cache keeps at most migrateCacheItems connections, closing one to
// make room, and closes those idle for migrateCacheTTL.
func TestMigrateCacheBoundAndIdle(t *testing.T) {
	mc := &migrateCache{socks: map[string]*migrateSocket{}}
	var peers []net.Conn
	for i := 0; i < migrateCacheItems+5; i++ {
		a, b := net.Pipe()
		defer b.Close()
		peers = append(peers, b)
		mc.put(fmt.Sprintf("h:%d", i), &migrateSocket{conn: a, lastDB: 0})
	}
	if n := mc.len(); n != migrateCacheItems {
		t.Fatalf("%d cached, want %d", n, migrateCacheItems)
	}
	// Five were closed to make room: their peers read EOF.
	closed := 0
	deadline := time.Now().Add(20 * time.Millisecond)
	for _, p := range peers {
		p.SetReadDeadline(deadline)
		if _, err := p.Read(make([]byte, 1)); errors.Is(err, io.EOF) {
			closed++
		}
	}
	if closed != 5 {
		t.Fatalf("%d closed to make room, want 5", closed)
	}
	// Idle past the TTL: the timer's pass closes them all.
	mc.mu.Lock()
	for _, s := range mc.socks {
		s.lastUse = time.Now().Add(-migrateCacheTTL)
	}
	mc.mu.Unlock()
	mc.closeIdle()
	if n := mc.len(); n != 0 {
		t.Fatalf("%d still cached after the idle TTL", n)
	}
	// A taken connection is out of the cache until it is put back.
	a, b := net.Pipe()
	defer b.Close()
	mc.put("x:1", &migrateSocket{conn: a})
	if s := mc.get(config.New(), "x:1", time.Second); s == nil || s.conn != a || mc.len() != 0 {
		t.Fatal("get did not take the cached connection out")
	}
}
