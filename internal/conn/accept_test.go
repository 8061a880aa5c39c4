package conn

import (
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/config"
)

func TestIsLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want bool
	}{
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 1}, true},
		{&net.TCPAddr{IP: net.ParseIP("127.1.2.3"), Port: 1}, true},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 1}, true},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.1"), Port: 1}, true},
		{&net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 1}, false},
		{&net.TCPAddr{IP: net.ParseIP("10.0.0.1"), Port: 1}, false},
		{&net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 1}, false},
		{&net.UnixAddr{Name: "/tmp/abacus.sock", Net: "unix"}, true},
	} {
		if got := isLoopback(tc.addr); got != tc.want {
			t.Errorf("isLoopback(%v) = %v", tc.addr, got)
		}
	}
}

// TestRefusal checks the accept decision: maxclients first, then
// protected mode (no password and a remote client).
func TestRefusal(t *testing.T) {
	remote := &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 5000}
	local := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 5000}
	newServer := func(kv ...string) *Server {
		cfg := config.New()
		for i := 0; i < len(kv); i += 2 {
			p, _ := config.Lookup(kv[i])
			if err := cfg.Set(p, kv[i+1]); err != nil {
				t.Fatal(err)
			}
		}
		s := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		t.Cleanup(s.Close)
		return s
	}
	denied := func(msg string) bool { return strings.HasPrefix(msg, "-DENIED ") && strings.HasSuffix(msg, "\r\n") }
	s := newServer("maxclients", "2")
	if msg := s.refusal(local, 1); msg != "" {
		t.Fatalf("local client refused: %q", msg)
	}
	if msg := s.refusal(remote, 1); !denied(msg) {
		t.Fatalf("remote client without password: %q", msg)
	}
	if msg := s.refusal(remote, 2); msg != "-ERR max number of clients reached\r\n" {
		t.Fatalf("maxclients before protected mode: %q", msg)
	}
	if msg := s.refusal(local, 2); msg != "-ERR max number of clients reached\r\n" {
		t.Fatalf("maxclients: %q", msg)
	}
	if msg := newServer("requirepass", "x").refusal(remote, 0); msg != "" {
		t.Fatalf("remote client with a password set: %q", msg)
	}
	if msg := newServer("protected-mode", "no").refusal(remote, 0); msg != "" {
		t.Fatalf("remote client without protected mode: %q", msg)
	}
}
