package durability_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/aof"
	"github.com/abacusdb/abacus/internal/servertest"
)

// Under appendfsync always, Redis writes no client's output before
// beforeSleep has fsynced the AOF, so what a write makes other clients
// receive (a message PUBLISHed after it, its keyspace event, a BCAST
// invalidation) never arrives before the write is on disk. Each frame a
// subscriber and a tracking client receive is checked against the part
// of the AOF the completed fsyncs covered at that moment. Each fsync is
// made slow (a pause before it) so that output sent too early would be
// seen; with the event loop and with a goroutine per client.
func TestPushesFollowFsync(t *testing.T) {
	log := slowSyncLog(t)
	for _, loop := range []string{"yes", "no"} {
		t.Run("io-event-loop="+loop, func(t *testing.T) {
			dir := t.TempDir()
			inst, _, incr := startAlwaysIn(t, dir, "io-event-loop", loop, "notify-keyspace-events", "KA")

			sub := inst.Raw(t)
			sub.Do("SUBSCRIBE", "pushsync")
			sub.Do("PSUBSCRIBE", "__keyspace@0__:ps:*")
			trk := inst.Raw(t)
			trk.Do("HELLO", "3")
			trk.Do("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ps:")
			w := inst.Raw(t)

			const n = 40
			type got struct {
				frame   string
				covered int64
			}
			var mu sync.Mutex
			var frames []got
			var wg sync.WaitGroup
			read := func(c *servertest.Conn, count int) {
				defer wg.Done()
				for i := 0; i < count; i++ {
					f, err := c.ReadErr(10 * time.Second)
					cov := log.coveredOf(incr)
					if err != nil {
						t.Errorf("read %d: %v", i, err)
						return
					}
					mu.Lock()
					frames = append(frames, got{f, cov})
					mu.Unlock()
				}
			}
			wg.Add(2)
			go read(sub, 2*n) // the keyspace event and the message of each round
			go read(trk, n)   // one invalidation a round
			for i := 0; i < n; i++ {
				v := fmt.Sprintf("v%03d", i)
				w.Write(servertest.Cat([]string{"SET", "ps:" + v, v}, []string{"PUBLISH", "pushsync", v}))
				if r := w.Read(); r != "+OK\r\n" {
					t.Fatalf("SET: %q", r)
				}
				if r := w.Read(); r != ":1\r\n" {
					t.Fatalf("PUBLISH: %q", r)
				}
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			b, err := os.ReadFile(filepath.Join(dir, "appendonlydir", incr))
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range frames {
				k := strings.Index(g.frame, "v0")
				if k < 0 {
					t.Fatalf("frame names no write: %q", g.frame)
				}
				if end := valueEnd(t, b, g.frame[k:k+4]); end > g.covered {
					t.Errorf("%q received with the AOF synced up to %d, the write behind it ends at %d", g.frame, g.covered, end)
				}
			}
		})
	}
}

// slowSyncLog makes every fsync of the AOF's files pause first, widening
// the window in which output sent too early would be seen, and records
// what each covered; the test's end restores the plain fsync.
func slowSyncLog(t *testing.T) *fsyncLog {
	log := &fsyncLog{covered: map[string]int64{}}
	old := aof.SetSyncFunc(func(f *os.File) error {
		time.Sleep(2 * time.Millisecond)
		return log.sync(f)
	})
	t.Cleanup(func() { aof.SetSyncFunc(old) })
	return log
}

// startAlwaysIn starts a server on dir with appendfsync always and cfg,
// turns the AOF on and returns an admin connection and the name of the
// incremental file the writes go to.
func startAlwaysIn(t *testing.T, dir string, cfg ...string) (*servertest.Instance, *servertest.Conn, string) {
	inst := servertest.Start(t, servertest.WithConfig(append([]string{"dir", dir, "appendfsync", "always"}, cfg...)...))
	admin := inst.Raw(t)
	admin.Do("CONFIG", "SET", "appendonly", "yes")
	waitInfo(t, admin, func(s string) bool {
		return servertest.InfoField(s, "aof_enabled") == "1" && servertest.InfoField(s, "aof_rewrite_in_progress") == "0"
	})
	m, err := aof.ReadManifest(filepath.Join(dir, "appendonlydir"), "appendonly.aof")
	if err != nil || len(m.Incrs) != 1 {
		t.Fatalf("manifest %+v: %v", m, err)
	}
	return inst, admin, m.Incrs[0].Name
}
