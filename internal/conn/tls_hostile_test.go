package conn_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// TLS clients that do not read their replies are treated as plaintext
// ones (tlssock.go): the server's writes to them never wait, so one with
// an output limit is served on and closed at the limit, and one without
// waits for its socket on its own goroutine, holding no lock.

// dialTLSClient connects to the TLS port and returns the connection and
// its CLIENT ID.
func dialTLSClient(t *testing.T, p *servertest.PKI, addr string) (*tls.Conn, string) {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{RootCAs: p.Pool, ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.Write(servertest.Encode("CLIENT", "ID"))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return c, strings.TrimSuffix(strings.TrimPrefix(line, ":"), "\r\n")
}

// A TLS client pipelining 1,024 LRANGE of a 1 MB list without reading is
// closed at its hard limit, as a plaintext one (TestOutputLimitHard, where
// redis-server does the same), while TLS and plaintext clients are
// served; the server's memory stays near the limit.
func TestTLSClientOverLimit(t *testing.T) {
	p := newTestPKI(t)
	inst, tlsAddr := startTLS(t, p, "no")
	admin := inst.Raw(t)
	defer setLimit(t, admin, "normal 64mb 16mb 10")()
	bigList(t, admin, "big")
	base := resetPeak(t, "self")
	bad, id := dialTLSClient(t, p, tlsAddr)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		bad.Write(bytes.Repeat(servertest.Encode("LRANGE", "big", "0", "-1"), 1024))
	}()
	// Another TLS client is served meanwhile.
	good, _ := dialTLSClient(t, p, tlsAddr)
	good.Write(servertest.Encode("PING"))
	if line, err := bufio.NewReader(good).ReadString('\n'); err != nil || line != "+PONG\r\n" {
		t.Fatalf("PING from another TLS client: %q %v", line, err)
	}
	waitGone(t, admin, id, "the TLS client over its hard limit closed")
	wg.Wait()
	if r := admin.Do("PING"); r != "+PONG\r\n" {
		t.Fatalf("PING from a plaintext client: %q", r)
	}
	if !strings.Contains(inst.Logs.String(), "for overcoming of output buffer limits.") {
		t.Errorf("no log line for the closed client")
	}
	if n := inst.Srv.OutputLimitDisconnections(); n != 1 {
		t.Errorf("OutputLimitDisconnections = %d, want 1", n)
	}
	// Generous: the limit is 64 MB, and this process holds the test's
	// clients too; without the limit the replies would be 1 GB.
	if peak := procKB(t, "self", "VmHWM"); peak-base > 512<<20 {
		t.Errorf("peak resident size grew %d MB under one TLS client limited to 64 MB", (peak-base)>>20)
	}
}

// Without a limit, a TLS client that does not read waits for its socket
// (its pipeline does not become memory) and holds nothing the others
// need: they are served, and CLIENT KILL closes it at once.
func TestTLSClientNotReadingNoLimit(t *testing.T) {
	p := newTestPKI(t)
	inst, tlsAddr := startTLS(t, p, "no")
	admin := inst.Raw(t)
	bigList(t, admin, "big")
	bad, id := dialTLSClient(t, p, tlsAddr)
	go bad.Write(bytes.Repeat(servertest.Encode("LRANGE", "big", "0", "-1"), 256))
	eventually(t, "the TLS client's replies waiting for its socket", func() bool {
		omem, _ := clientField(t, admin, id, "omem")
		return omem != "" && omem != "0"
	})
	good, _ := dialTLSClient(t, p, tlsAddr)
	good.Write(servertest.Encode("LLEN", "big"))
	if line, err := bufio.NewReader(good).ReadString('\n'); err != nil || line != ":10000\r\n" {
		t.Fatalf("LLEN from another TLS client: %q %v", line, err)
	}
	if r := admin.Do("CLIENT", "KILL", "ID", id); r != ":1\r\n" {
		t.Fatalf("CLIENT KILL: %q", r)
	}
	waitGone(t, admin, id, "the killed TLS client closed")
	if r := admin.Do("PING"); r != "+PONG\r\n" {
		t.Fatalf("PING after: %q", r)
	}
}

// A TLS client without a limit that writes its whole pipeline before it
// reads is served as a plaintext one (TestPipelineBeforeReadingNoLimit):
// its input is read while its replies wait for it.
func TestTLSPipelineBeforeReadingNoLimit(t *testing.T) {
	p := newTestPKI(t)
	inst, tlsAddr := startTLS(t, p, "no")
	c, _ := dialTLSClient(t, p, tlsAddr)
	pipelineThenRead(t, c)
	if r := inst.Raw(t).Do("PING"); r != "+PONG\r\n" {
		t.Fatalf("PING: %q", r)
	}
}
