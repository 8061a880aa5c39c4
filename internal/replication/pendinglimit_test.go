package replication_test

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// A replica that does not read its full sync while the primary takes
// writes: the stream held back for it grows past the replica class's
// client-output-buffer-limit and the primary closes it, redis-server and
// Abacus alike, instead of holding the writes without bound.
func TestSyncingReplicaOverOutputLimit(t *testing.T) {
	cfg := []string{"repl-diskless-sync", "yes", "repl-diskless-sync-delay", "0",
		"client-output-buffer-limit", "replica 8mb 0 0", "enable-debug-command", "yes"}
	inst := servertest.Start(t, servertest.WithConfig(cfg...))
	args := make([]string, len(cfg))
	for i, a := range cfg {
		if i%2 == 0 {
			a = "--" + a
		}
		args[i] = a
	}
	r := servertest.PrivateRedis(t, args...)
	for name, addr := range map[string]string{"abacus": inst.Addr, "redis": r.Addr} {
		t.Run(name, func(t *testing.T) {
			pc := servertest.Dial(t, addr)
			pc.Do("DEBUG", "POPULATE", "200000", "key", "100")
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.(*net.TCPConn).SetReadBuffer(4096)
			c.Write(servertest.Encode("REPLCONF", "capa", "eof", "capa", "psync2"))
			br := bufio.NewReader(c)
			if line, _ := br.ReadString('\n'); line != "+OK\r\n" {
				t.Fatalf("REPLCONF: %q", line)
			}
			c.Write(servertest.Encode("PSYNC", "?", "-1"))
			if line, _ := br.ReadString('\n'); !strings.HasPrefix(line, "+FULLRESYNC") {
				t.Fatalf("PSYNC: %q", line)
			}
			// The replica reads nothing more: the snapshot stalls on its
			// socket while 12 MB of writes arrive (the snapshot keeps at most syncWindow, 4 MB, queued).
			val := strings.Repeat("v", 1000)
			for i := 0; i < 12000; i++ {
				pc.Do("SET", "w:"+strconv.Itoa(i%100), val)
			}
			deadline := time.Now().Add(20 * time.Second)
			for field(t, pc, "replication", "connected_slaves") != "0" && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if n := field(t, pc, "replication", "connected_slaves"); n != "0" {
				t.Fatalf("connected_slaves %s: the replica was not closed", n)
			}
			// redis-server 7.0 has no such field; Abacus counts it as 7.2.
			if n := field(t, pc, "stats", "client_output_buffer_limit_disconnections"); name == "abacus" && n != "1" {
				t.Fatalf("client_output_buffer_limit_disconnections %s", n)
			}
			if got := pc.Do("GET", "w:1"); got != "$1000\r\n"+val+"\r\n" {
				t.Fatalf("primary after closing the replica: %.40q", got)
			}
		})
	}
}
