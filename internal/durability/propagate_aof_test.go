package durability_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// waitInfo polls INFO persistence until cond holds (the cron acts at hz).
func waitInfo(t *testing.T, c *servertest.Conn, cond func(string) bool) string {
	t.Helper()
	for i := 0; ; i++ {
		info := c.Do("INFO", "persistence")
		if cond(info) {
			return info
		}
		if i > 3000 {
			t.Fatalf("INFO persistence never matched:\n%s", info)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// CONFIG SET appendonly yes starts the AOF (INFO aof_enabled), the
// automatic rewrite starts when the file has doubled past the minimum
// size, and appendonly no stops it.
func TestAOFAutoRewriteInProcess(t *testing.T) {
	dir := t.TempDir()
	inst := servertest.Start(t, servertest.WithConfig("dir", dir, "hz", "100",
		"auto-aof-rewrite-min-size", "4096", "auto-aof-rewrite-percentage", "100"))
	c := inst.Raw(t)
	if got := servertest.InfoField(c.Do("INFO", "persistence"), "aof_enabled"); got != "0" {
		t.Fatalf("aof_enabled %q before", got)
	}
	c.Do("CONFIG", "SET", "appendonly", "yes")
	// Turning the AOF on writes its first base: rewrite number 1.
	waitInfo(t, c, func(s string) bool {
		return servertest.InfoField(s, "aof_enabled") == "1" && servertest.InfoField(s, "aof_rewrite_in_progress") == "0"
	})
	if r := servertest.InfoField(c.Do("INFO", "persistence"), "aof_rewrites"); r != "1" {
		t.Fatalf("aof_rewrites %s after CONFIG SET appendonly yes", r)
	}
	for i := 0; i < 400; i++ {
		c.Do("SET", "key", strings.Repeat("v", 100))
	}
	// Rewrites follow until the growth rule no longer holds. Like Redis,
	// the base size after a rewrite counts the incremental file kept
	// from it, so on a slow machine (writes landing while the rewrite
	// runs) the file need not end under the minimum size: wait for the
	// state from which no further automatic rewrite can start.
	info := waitInfo(t, c, func(s string) bool {
		size, _ := strconv.Atoi(servertest.InfoField(s, "aof_current_size"))
		base, _ := strconv.Atoi(servertest.InfoField(s, "aof_base_size"))
		n, _ := strconv.Atoi(servertest.InfoField(s, "aof_rewrites"))
		settled := size <= 4096 || size < 2*base
		return servertest.InfoField(s, "aof_rewrite_in_progress") == "0" && n >= 2 && size > 0 && settled
	})
	// aof_rewrites >= 2 is the automatic rewrite. The file's size says
	// nothing more: when the writes land while a rewrite runs (a slow
	// machine), all of them stay in the incremental file kept from it.
	if servertest.InfoField(info, "aof_last_bgrewrite_status") != "ok" {
		t.Fatalf("automatic rewrite failed:\n%s", info)
	}
	man, err := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
	if err != nil || strings.Contains(string(man), "seq 1 type b") || strings.Count(string(man), "\n") != 2 {
		t.Fatalf("manifest after automatic rewrite (%v):\n%s", err, man)
	}
	if r := c.Do("BGREWRITEAOF"); r != "+Background append only file rewriting started\r\n" {
		t.Fatalf("BGREWRITEAOF %q", r)
	}
	waitInfo(t, c, func(s string) bool { return servertest.InfoField(s, "aof_rewrite_in_progress") == "0" })
	c.Do("CONFIG", "SET", "appendonly", "no")
	waitInfo(t, c, func(s string) bool { return servertest.InfoField(s, "aof_enabled") == "0" })
}

// BGREWRITEAOF inside EXEC is scheduled, not started, as in redis-server
// (which cannot fork there); the cron then runs it.
func TestBgrewriteaofInExecScheduled(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("dir", t.TempDir(), "hz", "100", "appendonly", "yes"))
	r := servertest.PrivateRedis(t, "--appendonly", "yes")
	for _, c := range []*servertest.Conn{inst.Raw(t), servertest.Dial(t, r.Addr)} {
		waitInfo(t, c, func(s string) bool { return servertest.InfoField(s, "aof_rewrite_in_progress") == "0" })
		before, _ := strconv.Atoi(servertest.InfoField(c.Do("INFO", "persistence"), "aof_rewrites"))
		c.Do("MULTI")
		c.Do("SET", "foo", "bar")
		c.Do("BGREWRITEAOF")
		servertest.ExpectReply(t, c.Do("EXEC"), "*2\r\n+OK\r\n+Background append only file rewriting scheduled\r\n")
		waitInfo(t, c, func(s string) bool {
			n, _ := strconv.Atoi(servertest.InfoField(s, "aof_rewrites"))
			return n > before && servertest.InfoField(s, "aof_rewrite_in_progress") == "0"
		})
	}
}
