package conn_test

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// Clients that write before they read, through raw sockets, TCP and unix,
// beside redis-server.

// serveUnix adds a unix socket listener to inst and returns its path.
func serveUnix(t *testing.T, inst *servertest.Instance) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "abacus.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Skipf("unix socket: %v", err)
	}
	go inst.Srv.Serve(ln)
	return path
}

// pipelineThenRead writes a 32 MB pipeline of ECHO (32 MB of replies) in
// one write, and only once it is all written reads the replies, as a
// client that sends a file of commands does. The server has no output
// limit: it must go on reading while its replies wait for the client,
// or each waits for the other. The minute allowed is for a loaded
// machine; a deadlock never ends.
func pipelineThenRead(t *testing.T, c net.Conn) {
	t.Helper()
	val := strings.Repeat("v", 4096)
	const n = 8192
	req := bytes.Repeat(servertest.Encode("ECHO", val), n)
	written := make(chan error, 1)
	go func() {
		_, err := c.Write(req)
		written <- err
	}()
	select {
	case err := <-written:
		if err != nil {
			t.Fatalf("writing the pipeline: %v", err)
		}
	case <-time.After(60 * time.Second):
		c.Close()
		t.Fatal("the pipeline was not read while its replies waited: the server and the client wait for each other")
	}
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	r := bufio.NewReaderSize(c, 1<<16)
	want := "$4096\r\n" + val + "\r\n"
	got := make([]byte, len(want))
	for i := 0; i < n; i++ {
		if _, err := io.ReadFull(r, got); err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if string(got) != want {
			t.Fatalf("reply %d: %q", i, got[:min(len(got), 40)])
		}
	}
}

func dialT(t *testing.T, network, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestPipelineBeforeReadingNoLimit(t *testing.T) {
	t.Run("redis", func(t *testing.T) {
		testenv.NeedRedis(t)
		pipelineThenRead(t, dialT(t, "tcp", servertest.Redis(t).Addr))
	})
	bothModes(t, func(t *testing.T, inst *servertest.Instance) {
		pipelineThenRead(t, dialT(t, "tcp", inst.Addr))
		if r := inst.Raw(t).Do("PING"); r != "+PONG\r\n" {
			t.Fatalf("PING: %q", r)
		}
	})
	t.Run("unix", func(t *testing.T) {
		inst := servertest.Start(t)
		pipelineThenRead(t, dialT(t, "unix", serveUnix(t, inst)))
	})
}

// A unix socket client that pipelines large replies and does not read
// them is served on until its output limit closes it, as a TCP client
// (and as redis-server closes either), while the others are served.
func TestUnixClientOverLimit(t *testing.T) {
	inst := servertest.Start(t)
	admin := inst.Raw(t)
	defer setLimit(t, admin, "normal 64mb 16mb 10")()
	bigList(t, admin, "big")
	c := dialT(t, "unix", serveUnix(t, inst))
	c.Write(servertest.Encode("CLIENT", "ID"))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSuffix(strings.TrimPrefix(line, ":"), "\r\n")
	go c.Write(bytes.Repeat(servertest.Encode("LRANGE", "big", "0", "-1"), 1024))
	waitGone(t, admin, id, "the unix socket client over its hard limit closed")
	if r := admin.Do("PING"); r != "+PONG\r\n" {
		t.Fatalf("PING from another client: %q", r)
	}
	if !strings.Contains(inst.Logs.String(), "for overcoming of output buffer limits.") {
		t.Errorf("no log line for the closed client")
	}
}

// The line logged for a client closed at its output limit is its CLIENT
// LIST line, as Redis logs it (catClientInfoString): the same fields in
// the same order as CLIENT LIST shows, omem being what put it over.
func TestOutputLimitLogLine(t *testing.T) {
	inst := servertest.Start(t)
	hardLimitAttack(t, inst.Addr)
	admin := inst.Raw(t)
	keys := func(line string) []string {
		var k []string
		for _, f := range strings.Fields(line) {
			name, _, _ := strings.Cut(f, "=")
			k = append(k, name)
		}
		return k
	}
	info := admin.Do("CLIENT", "INFO") // a bulk string in RESP2
	want := strings.Join(keys(info[strings.Index(info, "\n")+1:]), " ")
	var logged string
	for _, l := range strings.Split(inst.Logs.String(), "\n") {
		if _, rest, ok := strings.Cut(l, "Client id="); ok && strings.Contains(l, "scheduled to be closed ASAP") {
			logged = "id=" + strings.TrimSuffix(strings.TrimSuffix(rest, `"`), " scheduled to be closed ASAP for overcoming of output buffer limits.")
		}
	}
	if got := strings.Join(keys(logged), " "); got != want {
		t.Fatalf("logged fields:\n%s\nCLIENT INFO's:\n%s", got, want)
	}
	t.Logf("logged: %s", logged)
	for _, f := range strings.Fields(logged) {
		if v, ok := strings.CutPrefix(f, "omem="); ok && len(v) < 8 {
			t.Errorf("omem=%s: want the output over the 64 MB limit", v)
		}
	}
}
