package httpapi_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/httpapi"
)

// dialHTTP opens a raw connection to the endpoint.
func dialHTTP(t *testing.T, w *web) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(w.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedByServer waits for the server to close c (a read that ends in EOF
// or a reset). The deadline only keeps a broken server from hanging the
// test: nothing is asserted about how long the close took.
func closedByServer(t *testing.T, c net.Conn) bool {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return true
}

// TestSlowAndManyClients: connections that trickle their headers
// (slowloris) hold the endpoint's connection slots, a connection past the
// limit is closed at once, the data port answers all the while, and the
// header timeout frees the slots again.
func TestSlowAndManyClients(t *testing.T) {
	const slots = 4
	w := startWeb(t, httpapi.Limits{MaxConns: slots, ReadHeaderTimeout: 5 * time.Second})
	data := w.inst.Raw(t)
	var slow []net.Conn
	for range slots {
		c := dialHTTP(t, w)
		if _, err := c.Write([]byte("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")); err != nil {
			t.Fatal(err)
		}
		slow = append(slow, c)
	}
	// Each slot is taken once its connection was accepted; a request on
	// a fifth connection is answered only when a slot is free.
	extra := dialHTTP(t, w)
	extra.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"))
	if got := data.Do("PING"); got != "+PONG\r\n" {
		t.Fatalf("data port while the HTTP slots are held: %q", got)
	}
	extra.SetReadDeadline(time.Now().Add(30 * time.Second))
	got, err := io.ReadAll(extra)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("a connection past the limit stayed open")
	}
	if len(got) != 0 {
		t.Fatalf("a connection past the limit was answered: %q", got)
	}
	for i, c := range slow {
		if !closedByServer(t, c) {
			t.Fatalf("slow connection %d was not closed by the header timeout", i)
		}
	}
	if got := data.Do("PING"); got != "+PONG\r\n" {
		t.Fatalf("data port after the slow clients: %q", got)
	}
	// The slots are free again (a closed connection gives its slot back
	// as it closes, which the server does before the client sees EOF).
	resp, body := w.get(t, "/healthz")
	if resp.StatusCode != 200 || body != "ok\n" {
		t.Fatalf("/healthz after the slow clients: %s %q", resp.Status, body)
	}
}

func TestHugeHeaders(t *testing.T) {
	w := startWeb(t, httpapi.Limits{MaxHeaderBytes: 4 << 10})
	c := dialHTTP(t, w)
	go func() {
		// The server answers before it has read everything: the write may
		// fail, which is the point.
		c.Write([]byte("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 1<<20) + "\r\n\r\n"))
	}()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("1 MiB header: %s, want 431", resp.Status)
	}
	if got := w.inst.Raw(t).Do("PING"); got != "+PONG\r\n" {
		t.Fatalf("data port: %q", got)
	}
}
