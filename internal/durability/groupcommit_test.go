package durability_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/abacusdb/abacus/internal/aof"
	"github.com/abacusdb/abacus/internal/servertest"
)

// fsyncLog wraps the AOF's fsync: for every file it records how far the
// completed fsyncs covered it (the size when one began, known once it
// returned).
type fsyncLog struct {
	mu      sync.Mutex
	covered map[string]int64
	count   int
}

func (l *fsyncLog) sync(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	name := filepath.Base(f.Name())
	l.covered[name] = max(l.covered[name], st.Size())
	l.count++
	return nil
}

// valueEnd is where the command holding the bulk string val ends in the
// AOF's bytes b.
func valueEnd(t *testing.T, b []byte, val string) int64 {
	t.Helper()
	bulk := "$" + strconv.Itoa(len(val)) + "\r\n" + val + "\r\n"
	at := bytes.Index(b, []byte(bulk))
	if at < 0 {
		t.Fatalf("SET of %s missing from the AOF", val)
	}
	return int64(at + len(bulk))
}

func (l *fsyncLog) coveredOf(name string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.covered[name]
}

// startAlways starts a server on dir with appendfsync always and turns
// the AOF on (its first base written).
func startAlways(t *testing.T, dir string) (*servertest.Instance, *servertest.Conn) {
	inst := servertest.Start(t, servertest.WithConfig("dir", dir, "hz", "100", "appendfsync", "always"))
	c := inst.Raw(t)
	c.Do("CONFIG", "SET", "appendonly", "yes")
	waitInfo(t, c, func(s string) bool {
		return servertest.InfoField(s, "aof_enabled") == "1" && servertest.InfoField(s, "aof_rewrite_in_progress") == "0"
	})
	return inst, c
}

// Under appendfsync always, 50 clients write at once, some pipelining;
// whenever one receives an acknowledgement, the write it acknowledges must
// already lie in the part of the AOF a completed fsync covered. The fsync
// is observed in process, by wrapping it (aof.SetSyncFunc); the kill -9
// test in cmd/abacus checks the same from outside. Fewer fsyncs than
// writes shows that fsyncs were shared (group commit).
func TestGroupCommitAcknowledgesOnlySynced(t *testing.T) {
	log := &fsyncLog{covered: map[string]int64{}}
	old := aof.SetSyncFunc(log.sync)
	defer aof.SetSyncFunc(old)

	dir := t.TempDir()
	inst, admin := startAlways(t, dir)
	m, err := aof.ReadManifest(filepath.Join(dir, "appendonlydir"), "appendonly.aof")
	if err != nil || len(m.Incrs) != 1 {
		t.Fatalf("manifest %+v: %v", m, err)
	}
	incr := m.Incrs[0].Name

	const clients, rounds = 50, 40
	type ack struct {
		val     string
		covered int64
	}
	acks := make([][]ack, clients)
	conns := make([]*servertest.Conn, clients)
	for g := range conns {
		conns[g] = inst.Raw(t)
	}
	var wg sync.WaitGroup
	for g := 0; g < clients; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			c := conns[g]
			depth := 1 + g%4 // pipeline 1 to 4
			for r := 0; r < rounds; r++ {
				var cmds [][]string
				var vals []string
				for p := 0; p < depth; p++ {
					v := fmt.Sprintf("v:%d:%d:%d", g, r, p)
					vals = append(vals, v)
					cmds = append(cmds, []string{"SET", fmt.Sprintf("k:%d:%d", g, p), v})
					if g%5 == 0 {
						cmds = append(cmds, []string{"GET", fmt.Sprintf("k:%d:%d", (g+1)%clients, p)})
					}
				}
				c.Write(servertest.Cat(cmds...))
				for i := range cmds {
					reply := c.Read()
					if cmds[i][0] != "SET" {
						continue
					}
					if reply != "+OK\r\n" {
						t.Errorf("SET reply %q", reply)
						return
					}
					acks[g] = append(acks[g], ack{vals[0], log.coveredOf(incr)})
					vals = vals[1:]
				}
			}
		}(g)
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	b, err := os.ReadFile(filepath.Join(dir, "appendonlydir", incr))
	if err != nil {
		t.Fatal(err)
	}
	writes := 0
	for g := range acks {
		for _, a := range acks[g] {
			writes++
			if end := valueEnd(t, b, a.val); end > a.covered {
				t.Fatalf("SET of %s acknowledged with the AOF synced up to %d, its command ends at %d", a.val, a.covered, end)
			}
		}
	}
	info := admin.Do("INFO", "persistence")
	fsyncs, _ := strconv.ParseInt(servertest.InfoField(info, "aof_fsync_count"), 10, 64)
	cmds, _ := strconv.ParseInt(servertest.InfoField(info, "aof_fsync_commands"), 10, 64)
	if fsyncs == 0 || cmds < int64(writes) {
		t.Fatalf("INFO: aof_fsync_count %d aof_fsync_commands %d after %d acknowledged writes", fsyncs, cmds, writes)
	}
	log.mu.Lock()
	n := log.count
	log.mu.Unlock()
	t.Logf("%d acknowledged writes, %d fsyncs observed, INFO aof_commands_per_fsync %s", writes, n, servertest.InfoField(info, "aof_commands_per_fsync"))
	if n >= writes {
		t.Fatalf("%d fsyncs for %d writes: no fsync was shared", n, writes)
	}
}
