package replication_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// aofText is every incremental AOF file of dir, concatenated.
func aofText(t *testing.T, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "appendonlydir", "*.incr.aof"))
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// A hash field whose TTL passes leaves HDEL key field in the AOF, both
// when a lookup reclaims it and when the active cycle does (no command
// touches the key), and nothing else for it (no DEL when the hash went
// with its last field).
func TestExpiredFieldPropagatesHDEL(t *testing.T) {
	dir := t.TempDir()
	inst := servertest.Start(t, servertest.WithConfig("dir", dir, "appendonly", "yes", "appendfsync", "always", "hz", "100"))
	c := inst.Raw(t)
	// The AOF's first base is written as it starts: what came before it
	// is in the base, not the incremental file read here.
	eventually(t, "the AOF's first base written", func() bool {
		return field(t, c, "persistence", "aof_rewrite_in_progress") == "0" &&
			field(t, c, "persistence", "aof_rewrite_scheduled") == "0" &&
			field(t, c, "persistence", "aof_rewrites") != "0"
	})
	c.Do("HSET", "lazy", "a", "1", "b", "2")
	c.Do("HSET", "active", "x", "1")
	c.Do("HPEXPIRE", "lazy", "1", "FIELDS", "1", "a")
	c.Do("HPEXPIRE", "active", "1", "FIELDS", "1", "x")
	eventually(t, "field a reclaimed", func() bool { return c.Do("HEXISTS", "lazy", "a") == ":0\r\n" })
	hdel := func(key, field string) string { return string(servertest.Encode("HDEL", key, field)) }
	defer func() {
		if t.Failed() {
			t.Logf("AOF:\n%q", aofText(t, dir))
		}
	}()
	eventually(t, "HDELs in the AOF", func() bool {
		s := aofText(t, dir)
		return strings.Contains(s, hdel("lazy", "a")) && strings.Contains(s, hdel("active", "x"))
	})
	if s := aofText(t, dir); strings.Contains(s, string(servertest.Encode("DEL", "active"))) {
		t.Errorf("a DEL followed the last field's HDEL:\n%q", s)
	}
}
