package replication_test

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// rawSync takes a full sync over a raw connection as a redis-server
// replica would, reading the payload slowly when slow is set (so that
// the primary's window fills and its socket takes chunks in parts). It
// returns the RDB payload.
func rawSync(addr string, slow bool) ([]byte, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Minute))
	r := bufio.NewReaderSize(c, 4096)
	c.Write(servertest.Cat([]string{"REPLCONF", "capa", "eof", "capa", "psync2"}, []string{"PSYNC", "?", "-1"}))
	line := func() (string, error) {
		for {
			l, err := r.ReadString('\n')
			if err != nil || strings.TrimSpace(l) != "" {
				return strings.TrimRight(l, "\r\n"), err
			}
		}
	}
	if l, err := line(); err != nil || l != "+OK" {
		return nil, err
	}
	if l, err := line(); err != nil || !strings.HasPrefix(l, "+FULLRESYNC") {
		return nil, err
	}
	head, err := line()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	chunk := make([]byte, 16<<10)
	read := func() error {
		n, err := r.Read(chunk)
		out.Write(chunk[:n])
		if slow && out.Len()%(256<<10) < n {
			time.Sleep(2 * time.Millisecond)
		}
		return err
	}
	if mark, ok := strings.CutPrefix(head, "$EOF:"); ok {
		for !bytes.HasSuffix(out.Bytes(), []byte(mark)) {
			if err := read(); err != nil {
				return nil, err
			}
		}
		return out.Bytes()[:out.Len()-len(mark)], nil
	}
	n, err := strconv.Atoi(head[1:])
	if err != nil {
		return nil, err
	}
	for out.Len() < n {
		if err := read(); err != nil {
			return nil, err
		}
	}
	return out.Bytes()[:n], nil
}

// A full sync lends the encoded chunks to the replicas' output queues
// and fills them again once every replica has written them: two
// replicas, one reading slowly, each get the whole RDB (diskless: one
// snapshot, byte for byte the same), and a redis-server that loads it
// has the primary's dataset, diskless and from a file. The snapshot is many
// times the sync's window, so the chunks go round many times.
func TestFullSyncLentChunks(t *testing.T) {
	for _, diskless := range []string{"yes", "no"} {
		t.Run("diskless="+diskless, func(t *testing.T) {
			inst := servertest.Start(t, servertest.WithConfig("repl-diskless-sync", diskless, "repl-diskless-sync-delay", "5",
				"repl-diskless-sync-max-replicas", "2", "rdbcompression", "no", "dir", t.TempDir(), "enable-debug-command", "yes"))
			pc := inst.Raw(t)
			pc.Do("DEBUG", "POPULATE", "10000", "key", "3500")
			loadTypes(t, pc)
			type result struct {
				rdb []byte
				err error
			}
			done := make(chan result, 2)
			for _, slow := range []bool{false, true} {
				go func() {
					b, err := rawSync(inst.Addr, slow)
					done <- result{b, err}
				}()
			}
			var got [][]byte
			for range 2 {
				r := <-done
				if r.err != nil {
					t.Fatal(r.err)
				}
				got = append(got, r.rdb)
			}
			if len(got[0]) < 30<<20 || len(got[1]) < 30<<20 {
				t.Fatalf("payloads of %d and %d bytes", len(got[0]), len(got[1]))
			}
			if diskless == "yes" {
				// One snapshot for both (repl-diskless-sync-max-replicas).
				if n := strings.Count(inst.Logs.String(), "Starting BGSAVE for SYNC"); n != 1 || !bytes.Equal(got[0], got[1]) {
					t.Fatalf("%d snapshots, payloads equal %v", n, bytes.Equal(got[0], got[1]))
				}
			}
			want := pc.Do("DEBUG", "DIGEST")
			for _, rdb := range got {
				redisLoads(t, rdb, want)
			}
		})
	}
}

// redisLoads checks that redis-server loads rdb into a dataset of DEBUG
// DIGEST want.
func redisLoads(t *testing.T, rdb []byte, want string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), rdb, 0o644); err != nil {
		t.Fatal(err)
	}
	r := servertest.PrivateRedis(t, "--dir", dir, "--dbfilename", "dump.rdb", "--enable-debug-command", "yes")
	if d := servertest.Dial(t, r.Addr).Do("DEBUG", "DIGEST"); d != want {
		t.Fatalf("DEBUG DIGEST: primary %q, loaded payload %q", want, d)
	}
}
