package durability_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/enginetest"
	"github.com/abacusdb/abacus/internal/servertest"
)

// BGREWRITEAOF writes its base from the keyspace's snapshot while writes
// go on: the base holds the data at the moment, the new incremental file
// what came after, so loading the AOF gives the data at the end. While it
// runs BGSAVE is refused as by Redis with a child active, and BGSAVE
// SCHEDULE runs after it. Without the RDB preamble the base is RESTORE
// commands, written from the snapshot the same way.
func TestRewriteFromSnapshotUnderWrites(t *testing.T) {
	for _, preamble := range []string{"yes", "no"} {
		t.Run("aof-use-rdb-preamble "+preamble, func(t *testing.T) { rewriteUnderWrites(t, preamble) })
	}
}

func rewriteUnderWrites(t *testing.T, preamble string) {
	dir := t.TempDir()
	inst := servertest.Start(t, servertest.WithConfig("dir", dir, "hz", "100", "appendfsync", "always", "aof-use-rdb-preamble", preamble))
	c := inst.Raw(t)
	c.Do("CONFIG", "SET", "appendonly", "yes")
	waitInfo(t, c, func(s string) bool {
		return servertest.InfoField(s, "aof_enabled") == "1" && servertest.InfoField(s, "aof_rewrite_in_progress") == "0"
	})
	const keys = 20000
	var load [][]string
	for i := 0; i < keys; i++ {
		load = append(load, []string{"SET", "k:" + strconv.Itoa(i), "v0"})
	}
	c.Write(servertest.Cat(load...))
	for range load {
		c.Read()
	}

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w := inst.Raw(t)
		for n := 1; !stop.Load(); n++ {
			w.Do("SET", fmt.Sprint("k:", (n*7919)%keys), "v"+strconv.Itoa(n))
			w.Do("INCR", "ctr")
			w.Do("APPEND", fmt.Sprint("k:", (n*31)%keys), "+")
			w.Do("DEL", fmt.Sprint("k:", (n*104729)%keys))
		}
	}()
	servertest.ExpectReply(t, c.Do("BGREWRITEAOF"), "+Background append only file rewriting started\r\n")
	// While the rewrite runs BGSAVE is refused and SCHEDULE defers; the
	// rewrite may end between any two of these commands, and then they
	// start a save at once.
	const refused = "-ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.\r\n"
	const started = "+Background saving started\r\n"
	if info := c.Do("INFO", "persistence"); servertest.InfoField(info, "aof_rewrite_in_progress") == "1" {
		if r := c.Do("BGSAVE"); r != refused && r != started {
			t.Fatalf("BGSAVE during the rewrite: %q", r)
		} else if r == refused {
			if r := c.Do("BGSAVE", "SCHEDULE"); r != "+Background saving scheduled\r\n" && r != started {
				t.Fatalf("BGSAVE SCHEDULE during the rewrite: %q", r)
			}
		}
	}
	waitInfo(t, c, func(s string) bool {
		return servertest.InfoField(s, "aof_rewrite_in_progress") == "0" && servertest.InfoField(s, "aof_rewrites") == "2"
	})
	stop.Store(true)
	wg.Wait()
	if s := c.Do("INFO", "persistence"); servertest.InfoField(s, "aof_last_bgrewrite_status") != "ok" {
		t.Fatalf("rewrite failed:\n%s", s)
	}
	// The RDB preamble's AUX fields say aof-base once, as redis-server's.
	bases, _ := filepath.Glob(filepath.Join(dir, "appendonlydir", "*.base.rdb"))
	if (len(bases) == 0) != (preamble == "no") {
		t.Fatalf("base files with aof-use-rdb-preamble %s: %v", preamble, bases)
	}
	for _, f := range bases {
		if b, err := os.ReadFile(f); err == nil && bytes.Count(b, []byte("aof-base")) != 1 {
			t.Fatalf("%s has aof-base %d times", f, bytes.Count(b, []byte("aof-base")))
		}
	}
	want := map[string]string{}
	for i := 0; i < keys; i++ {
		want["k:"+strconv.Itoa(i)] = c.Do("GET", "k:"+strconv.Itoa(i))
	}
	want["ctr"] = c.Do("GET", "ctr")
	waitInfo(t, c, func(s string) bool { return servertest.InfoField(s, "rdb_bgsave_in_progress") == "0" })

	cfg := config.New()
	for _, kv := range [][2]string{{"dir", dir}, {"appendonly", "yes"}} {
		p, _ := config.Lookup(kv[0])
		if err := cfg.Set(p, kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	e, s, d := loadEnv(cfg)
	if err := d.LoadAtStartup(); err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		if got := enginetest.Run(e, s, "GET", k); got != v {
			t.Fatalf("%s after loading the rewritten AOF: %q, live %q", k, got, v)
		}
	}
}
