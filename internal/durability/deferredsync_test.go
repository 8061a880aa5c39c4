package durability_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Under appendfsync always, a reply that joins a client's output queue
// unencoded in the middle of a batch (a large LRANGE of a client with an
// output limit, internal/conn's deferReply) must not carry the batch's
// earlier replies out before the batch's writes are on disk: each SET's
// +OK, pipelined ahead of a large LRANGE, is checked against the part of
// the AOF the completed fsyncs covered when it arrived. Each fsync is made
// slow so that a reply sent too early would be seen; with the event loop
// and with a goroutine per client.
func TestDeferredRepliesFollowFsync(t *testing.T) {
	log := slowSyncLog(t)
	for _, loop := range []string{"yes", "no"} {
		t.Run("io-event-loop="+loop, func(t *testing.T) {
			dir := t.TempDir()
			inst, admin, incr := startAlwaysIn(t, dir, "io-event-loop", loop, "client-output-buffer-limit", "normal 64mb 16mb 10")

			// A list whose full range is large enough to be queued
			// unencoded (4,096 elements, about 400 KB).
			elem := strings.Repeat("e", 100)
			for i := 0; i < 4096; i += 512 {
				args := []string{"RPUSH", "big"}
				for j := 0; j < 512; j++ {
					args = append(args, elem)
				}
				admin.Do(args...)
			}
			c := inst.Raw(t)
			if r := c.Do("LRANGE", "big", "0", "-1"); !strings.HasPrefix(r, "*4096\r\n") {
				t.Fatalf("LRANGE: %.40q", r)
			}
			const n = 30
			for i := 0; i < n; i++ {
				v := fmt.Sprintf("v%03d", i)
				c.Write(servertest.Cat([]string{"SET", "ds:" + v, v}, []string{"LRANGE", "big", "0", "-1"}))
				r, err := c.ReadErr(10 * time.Second)
				covered := log.coveredOf(incr)
				if err != nil || r != "+OK\r\n" {
					t.Fatalf("SET: %q %v", r, err)
				}
				if r := c.Read(); !strings.HasPrefix(r, "*4096\r\n") {
					t.Fatalf("LRANGE: %.40q", r)
				}
				b, err := os.ReadFile(filepath.Join(dir, "appendonlydir", incr))
				if err != nil {
					t.Fatal(err)
				}
				if end := valueEnd(t, b, v); end > covered {
					t.Errorf("SET %s acknowledged with the AOF synced up to %d, the write ends at %d", v, covered, end)
				}
			}
		})
	}
}
