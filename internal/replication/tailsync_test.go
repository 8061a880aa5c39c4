package replication_test

import (
	"bufio"
	"bytes"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// A disk-based sync to a replica that said capa eof sends the file as it
// is written, EOF-marked, and one without capa eof gets it whole after
// its length: redis-server loads the same dataset from either, and the
// file is removed.
func TestDiskSyncForms(t *testing.T) {
	dir := t.TempDir()
	inst := servertest.Start(t, servertest.WithConfig("repl-diskless-sync", "no", "repl-diskless-sync-delay", "0",
		"dir", dir, "enable-debug-command", "yes"))
	pc := inst.Raw(t)
	pc.Do("DEBUG", "POPULATE", "20000", "key", "100")
	loadTypes(t, pc)
	marked, err := rawSync(inst.Addr, true)
	if err != nil {
		t.Fatal(err)
	}
	sized := snapshotOf(t, inst.Addr)
	if h := syncHeader(t, inst.Addr); !strings.HasPrefix(h, "$EOF:") {
		t.Errorf("disk-based sync to a replica with capa eof: header %q", h)
	}
	want := pc.Do("DEBUG", "DIGEST")
	for _, rdb := range [][]byte{marked, sized} {
		if !bytes.HasPrefix(rdb, []byte("REDIS")) {
			t.Fatalf("payload starts %q", rdb[:min(len(rdb), 16)])
		}
		redisLoads(t, rdb, want)
	}
	// The primary removes the file once its last bytes are queued, which
	// may be after the replica read them.
	eventually(t, "the sync files removed", func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "temp-repl-*"))
		return len(m) == 0
	})
}

// syncHeader returns the payload's header line of a full sync asked for
// with capa eof.
func syncHeader(t *testing.T, addr string) string {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	c.Write(servertest.Cat([]string{"REPLCONF", "capa", "eof"}, []string{"PSYNC", "?", "-1"}))
	r := bufio.NewReader(c)
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(l, "$") {
			return strings.TrimRight(l, "\r\n")
		}
	}
}
