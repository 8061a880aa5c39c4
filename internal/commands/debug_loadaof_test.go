package commands_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// DEBUG LOADAOF against redis-server: the data emptied and loaded back
// from the AOF (an RDB or RESP base, then the incremental file), TTLs as
// the writes left them: SET ... KEEPTTL keeps the TTL, GETEX PERSIST
// drops it, GETEX EX replaces it.
func TestDebugLoadAOFDiff(t *testing.T) {
	for _, preamble := range []string{"yes", "no"} {
		t.Run("aof-use-rdb-preamble "+preamble, func(t *testing.T) {
			r := servertest.PrivateRedis(t, "--enable-debug-command", "yes", "--appendonly", "yes", "--aof-use-rdb-preamble", preamble)
			inst := servertest.Start(t, servertest.WithConfig("enable-debug-command", "yes", "dir", t.TempDir(),
				"aof-use-rdb-preamble", preamble, "hz", "100"))
			p := servertest.DialDiff(t, inst.Addr, r.Addr)
			p.A.Do("CONFIG", "SET", "appendonly", "yes")
			aofIdle(t, p.A)
			p.Lines(`
SET k v EX 1000
SET k v2 KEEPTTL
SET p v EX 1000
RPUSH l a b c
ZADD z 1 a 2.5 b
HSET h f v g w
INCR n
SELECT 1
SET x y EX 5000
SELECT 0
`)
			p.Do("BGREWRITEAOF")
			aofIdle(t, p.A)
			aofIdle(t, p.R)
			p.Lines(`
GETEX p PERSIST
SET q v PX 500000
GETEX q EX 2000
SET k v3 KEEPTTL
LPOP l
SADD s m1 m2 10
DEL h
DEBUG DIGEST
DBSIZE
`)
			if got := p.Do("DEBUG", "LOADAOF"); got != "+OK\r\n" {
				t.Fatalf("DEBUG LOADAOF: %q", got)
			}
			p.Lines(`
DEBUG DIGEST
DBSIZE
GET k
GET p
GET q
LRANGE l 0 -1
SCARD s
SISMEMBER s 10
EXISTS h
TTL p
SELECT 1
GET x
SELECT 0
`)
			for key, want := range map[string][2]int{"k": {990, 1000}, "q": {1990, 2000}} {
				for _, c := range []*servertest.Conn{p.A, p.R} {
					ttl, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(c.Do("TTL", key), ":")))
					if ttl < want[0] || ttl > want[1] {
						t.Errorf("TTL %s after DEBUG LOADAOF: %d", key, ttl)
					}
				}
			}
			// Nothing the load replayed went back into the AOF: loading it
			// again gives the same data.
			p.Do("DEBUG", "LOADAOF")
			p.Lines(`
DEBUG DIGEST
DBSIZE
`)
		})
	}
}

// aofIdle waits until the AOF is on and no rewrite runs.
func aofIdle(t *testing.T, c *servertest.Conn) {
	t.Helper()
	for i := 0; ; i++ {
		info := c.Do("INFO", "persistence")
		if servertest.InfoField(info, "aof_enabled") == "1" && servertest.InfoField(info, "aof_rewrite_in_progress") == "0" &&
			servertest.InfoField(info, "aof_rewrite_scheduled") == "0" {
			return
		}
		if i > 3000 {
			t.Fatalf("AOF never idle:\n%s", info)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
