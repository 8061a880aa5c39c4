package conn_test

import (
	"bufio"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// TLS clients on the event loop (tlssock.go): the loop deciphers what
// the socket holds without waiting, whatever the way the ciphertext and
// the requests in it are cut.

// choppyConn writes what the TLS layer gives it a few bytes at a time,
// so that records reach the server cut across many reads.
type choppyConn struct {
	net.Conn
	step int
}

func (c *choppyConn) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		c.step = c.step%7 + 1
		k := min(c.step, len(b)-done)
		n, err := c.Conn.Write(b[done : done+k])
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// readReplies reads n RESP simple or bulk replies of a pipeline and
// returns them as their raw lines (a bulk's payload after its header).
func readReplies(t *testing.T, r *bufio.Reader, n int) []string {
	t.Helper()
	var out []string
	for len(out) < n {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reply %d: %v", len(out), err)
		}
		if line[0] == '$' {
			var size int
			fmt.Sscanf(line, "$%d", &size)
			if size >= 0 {
				body := make([]byte, size+2)
				if _, err := io.ReadFull(r, body); err != nil {
					t.Fatalf("reply %d: %v", len(out), err)
				}
				line = string(body[:size])
			}
		}
		out = append(out, line)
	}
	return out
}

// A pipeline whose requests are cut across TLS records (each Write is a
// record, cut in the middle of requests), and whose records are cut
// across the server's reads, is answered in order.
func TestTLSRecordsSplitAcrossReads(t *testing.T) {
	p := newTestPKI(t)
	_, tlsAddr := startTLS(t, p, "no")
	raw, err := net.Dial("tcp", tlsAddr)
	if err != nil {
		t.Fatal(err)
	}
	c := tls.Client(&choppyConn{Conn: raw}, &tls.Config{RootCAs: p.Pool, ServerName: "localhost"})
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	const n = 300
	var req []byte
	for i := 0; i < n; i++ {
		req = append(req, servertest.Encode("SET", fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i))...)
		req = append(req, servertest.Encode("GET", fmt.Sprintf("k%d", i))...)
	}
	go func() {
		for len(req) > 0 {
			k := min(13, len(req))
			if _, err := c.Write(req[:k]); err != nil {
				return
			}
			req = req[k:]
		}
	}()
	got := readReplies(t, bufio.NewReader(c), 2*n)
	for i := 0; i < n; i++ {
		if got[2*i] != "+OK\r\n" || got[2*i+1] != fmt.Sprintf("v%d", i) {
			t.Fatalf("replies %d: %q %q", i, got[2*i], got[2*i+1])
		}
	}
}

// Replies of several megabytes reach a TLS client whole, and a request
// of several megabytes from one is read whole, while another TLS client
// is served.
func TestTLSLargeReplies(t *testing.T) {
	p := newTestPKI(t)
	_, tlsAddr := startTLS(t, p, "no")
	val := make([]byte, 6<<20)
	rand.Read(val)
	c, _ := dialTLSClient(t, p, tlsAddr)
	c.SetDeadline(time.Now().Add(60 * time.Second))
	var req []byte
	req = append(req, servertest.Encode("SET", "big", string(val))...)
	for i := 0; i < 4; i++ {
		req = append(req, servertest.Encode("GET", "big")...)
	}
	go c.Write(req)
	other, _ := dialTLSClient(t, p, tlsAddr)
	other.Write(servertest.Encode("PING"))
	if line, err := bufio.NewReader(other).ReadString('\n'); err != nil || line != "+PONG\r\n" {
		t.Fatalf("PING from another TLS client: %q %v", line, err)
	}
	got := readReplies(t, bufio.NewReaderSize(c, 1<<16), 5)
	if got[0] != "+OK\r\n" {
		t.Fatalf("SET: %q", got[0])
	}
	for i, g := range got[1:] {
		if g != string(val) {
			t.Fatalf("GET %d: %d bytes, not the value set", i, len(g))
		}
	}
}

// A client's close_notify closes its connection on the server, and the
// server's close after QUIT reaches the client as the end of the
// stream.
func TestTLSCloseNotify(t *testing.T) {
	p := newTestPKI(t)
	inst, tlsAddr := startTLS(t, p, "no")
	admin := inst.Raw(t)
	c, id := dialTLSClient(t, p, tlsAddr)
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, admin, id, "the TLS client that sent close_notify closed")
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if n, err := c.Read(make([]byte, 16)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("read after close_notify: %d %v", n, err)
	}

	q, id := dialTLSClient(t, p, tlsAddr)
	q.SetReadDeadline(time.Now().Add(30 * time.Second))
	q.Write(servertest.Encode("QUIT"))
	r := bufio.NewReader(q)
	if line, err := r.ReadString('\n'); err != nil || line != "+OK\r\n" {
		t.Fatalf("QUIT: %q %v", line, err)
	}
	if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("read after QUIT: %v", err)
	}
	waitGone(t, admin, id, "the TLS client that sent QUIT closed")
}

// opensslClient runs openssl s_client against addr with args; send
// writes a line to it, expect reads its output until a line contains s.
type opensslClient struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	seen strings.Builder
}

func startOpenSSL(t *testing.T, p *servertest.PKI, addr string, args ...string) *opensslClient {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
	all := append([]string{"s_client", "-connect", addr, "-CAfile", p.CAFile, "-servername", "localhost", "-crlf"}, args...)
	cmd := exec.Command("openssl", all...)
	in, _ := cmd.StdinPipe()
	outR, outW := io.Pipe()
	cmd.Stdout, cmd.Stderr = outW, outW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); outW.Close(); close(done) }()
	// Whatever happens, openssl is gone within a minute: the output
	// then ends, and so does expect.
	stop := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	t.Cleanup(func() {
		stop.Stop()
		in.Close()
		outR.Close()
		cmd.Process.Kill()
		<-done
	})
	return &opensslClient{cmd: cmd, in: in, out: bufio.NewReader(outR)}
}

func (o *opensslClient) send(line string) { io.WriteString(o.in, line+"\n") }

// expect reads output until a line contains s; false when the output
// ends first.
func (o *opensslClient) expect(s string) bool {
	for {
		line, err := o.out.ReadString('\n')
		o.seen.WriteString(line)
		if strings.Contains(line, s) {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// A TLS 1.3 key update from the client, asking for the server's too, is
// followed on both sides: commands go on being answered after it.
func TestTLSKeyUpdate(t *testing.T) {
	p := newTestPKI(t)
	_, tlsAddr := startTLS(t, p, "no")
	o := startOpenSSL(t, p, tlsAddr, "-tls1_3", "-msg")
	o.send("PING")
	if !o.expect("+PONG") {
		t.Fatalf("no PONG before the key update:\n%s", o.seen.String())
	}
	for i := 0; i < 3; i++ {
		// A key update that asks for the server's; openssl drops what
		// else it read with the command, so the next line waits for the
		// server's answer.
		o.send("K")
		if !o.expect("<<< TLS 1.3, Handshake [length 0005], KeyUpdate") {
			t.Fatalf("no key update from the server after the client's %d:\n%s", i, o.seen.String())
		}
		o.send("ECHO after-update-" + fmt.Sprint(i))
		if !o.expect("after-update-" + fmt.Sprint(i)) {
			t.Fatalf("no reply after key update %d:\n%s", i, o.seen.String())
		}
	}
}

// A TLS 1.2 client asking to renegotiate is refused: its connection is
// closed, and other clients are served.
func TestTLSRenegotiationRefused(t *testing.T) {
	p := newTestPKI(t)
	inst, tlsAddr := startTLS(t, p, "no")
	o := startOpenSSL(t, p, tlsAddr, "-tls1_2", "-msg")
	o.send("PING")
	if !o.expect("+PONG") {
		t.Fatalf("no PONG before renegotiation:\n%s", o.seen.String())
	}
	o.send("R")
	if !o.expect("RENEGOTIATING") {
		t.Fatalf("openssl did not renegotiate:\n%s", o.seen.String())
	}
	o.send("PING")
	for o.expect("+PONG") {
		// Output until openssl's connection ends: no PONG may follow
		// the renegotiation, which the server refuses with an alert.
	}
	if n := strings.Count(o.seen.String(), "+PONG"); n != 1 {
		t.Fatalf("%d PONGs; want 1 (none after RENEGOTIATING):\n%s", n, o.seen.String())
	}
	if !strings.Contains(o.seen.String(), "<<< TLS 1.2, Alert") {
		t.Fatalf("no alert from the server:\n%s", o.seen.String())
	}
	if r := inst.Raw(t).Do("PING"); r != "+PONG\r\n" {
		t.Fatalf("PING after: %q", r)
	}
}

// A TLS client the loop hands to a goroutine (a blocking command parks
// it) gets its reply when the wait ends and is served on from there;
// one that runs MONITOR gets the other clients' commands through its
// pushed-output queue.
func TestTLSHandoffAndMonitor(t *testing.T) {
	p := newTestPKI(t)
	inst, tlsAddr := startTLS(t, p, "no")
	admin := inst.Raw(t)
	mon, _ := dialTLSClient(t, p, tlsAddr)
	mon.SetReadDeadline(time.Now().Add(60 * time.Second))
	mon.Write(servertest.Encode("MONITOR"))
	mr := bufio.NewReader(mon)
	if line, err := mr.ReadString('\n'); err != nil || line != "+OK\r\n" {
		t.Fatalf("MONITOR: %q %v", line, err)
	}
	c, _ := dialTLSClient(t, p, tlsAddr)
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	r := bufio.NewReader(c)
	c.Write(servertest.Encode("BLPOP", "q", "0"))
	eventually(t, "the TLS client blocked", func() bool {
		return strings.Contains(admin.Do("CLIENT", "LIST"), "cmd=blpop")
	})
	if got := admin.Do("RPUSH", "q", "x"); got != ":1\r\n" {
		t.Fatalf("RPUSH: %q", got)
	}
	if got := readReplies(t, r, 3); got[0] != "*2\r\n" || got[1] != "q" || got[2] != "x" {
		t.Fatalf("BLPOP: %q", got)
	}
	for i := 0; i < 50; i++ {
		c.Write(servertest.Encode("ECHO", fmt.Sprint(i)))
		if got := readReplies(t, r, 1); got[0] != fmt.Sprint(i) {
			t.Fatalf("ECHO %d after the handoff: %q", i, got[0])
		}
	}
	for _, want := range []string{`"BLPOP" "q" "0"`, `"RPUSH" "q" "x"`, `"ECHO" "49"`} {
		for {
			line, err := mr.ReadString('\n')
			if err != nil {
				t.Fatalf("MONITOR stream, waiting for %s: %v", want, err)
			}
			if strings.Contains(line, want) {
				break
			}
		}
	}
}

// A long pipeline of requests whose replies make the loop yield to other
// clients between batches: the requests the TLS layer has deciphered
// ahead, which no new event announces, are all answered.
func TestTLSLongPipelineYields(t *testing.T) {
	p := newTestPKI(t)
	inst, tlsAddr := startTLS(t, p, "no")
	if r := inst.Raw(t).Do("SET", "v", strings.Repeat("x", 1024)); r != "+OK\r\n" {
		t.Fatalf("SET: %q", r)
	}
	c, _ := dialTLSClient(t, p, tlsAddr)
	c.SetDeadline(time.Now().Add(60 * time.Second))
	const n = 20000
	var req []byte
	for i := 0; i < n; i++ {
		req = append(req, servertest.Encode("GET", "v")...)
	}
	req = append(req, servertest.Encode("ECHO", "end")...)
	go c.Write(req)
	got := readReplies(t, bufio.NewReaderSize(c, 1<<16), n+1)
	if got[n-1] != strings.Repeat("x", 1024) || got[n] != "end" {
		t.Fatalf("last replies: %.20q %q", got[n-1], got[n])
	}
}
