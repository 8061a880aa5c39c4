package conn_test

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/conn"
	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// TestMain reports the tests skipped for a missing Redis program.
func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

// eventually polls cond until it holds (a wait for the server's own
// goroutines to act, not an assertion on timing: the bound is generous,
// for the race detector on a loaded machine).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestDisconnectMidCommand: a client that leaves in the middle of a
// command leaves no trace: nothing runs, its goroutine ends and the
// client count returns to where it was.
func TestDisconnectMidCommand(t *testing.T) {
	inst := servertest.Start(t)
	rdb := inst.Client(t)
	if err := rdb.Ping(servertest.Ctx).Err(); err != nil {
		t.Fatal(err)
	}
	baseClients := inst.Srv.NumClients()
	baseGoroutines := runtime.NumGoroutine()
	partials := []string{
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nab",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5",
		"*3\r\n$3\r\nSET",
		"*3",
		"SET k v",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\n" + strings.Repeat("v", 50000),
	}
	for i := 0; i < 20; i++ {
		for _, p := range partials {
			conn, err := net.Dial("tcp", inst.Addr)
			if err != nil {
				t.Fatal(err)
			}
			conn.Write([]byte(p))
			if i%2 == 0 {
				// Let the server read the partial command first.
				time.Sleep(time.Millisecond)
			}
			conn.Close()
		}
	}
	eventually(t, "client count back to baseline", func() bool { return inst.Srv.NumClients() == baseClients })
	eventually(t, "goroutines back to baseline", func() bool { return runtime.NumGoroutine() <= baseGoroutines })
	if n := rdb.Exists(servertest.Ctx, "k").Val(); n != 0 {
		t.Fatalf("a partial SET ran: EXISTS k = %d", n)
	}
}

// TestGoroutinesAfterMonitors: monitors have a writer goroutine; it ends
// with the client, whichever way the client goes.
func TestGoroutinesAfterMonitors(t *testing.T) {
	inst := servertest.Start(t)
	rdb := inst.Client(t)
	rdb.Ping(servertest.Ctx)
	base := runtime.NumGoroutine()
	for i := 0; i < 10; i++ {
		c := inst.Raw(t)
		if r := c.Do("MONITOR"); r != "+OK\r\n" {
			t.Fatalf("MONITOR: %q", r)
		}
		rdb.Set(servertest.Ctx, "m", i, 0) // pushes a line to the monitor
		c.Read()
		switch i % 3 {
		case 0:
			c.C.Close()
		case 1:
			if r := c.Do("QUIT"); r != "+OK\r\n" {
				t.Fatalf("QUIT: %q", r)
			}
			c.ExpectClosed()
		case 2:
			id := strings.TrimSpace(strings.TrimPrefix(c.Do("CLIENT", "ID"), ":"))
			if r := c.Read(); !strings.Contains(r, `"CLIENT" "ID"`) {
				t.Fatalf("monitor line for its own command: %q", r)
			}
			if n := rdb.ClientKillByFilter(servertest.Ctx, "ID", id).Val(); n != 1 {
				t.Fatalf("CLIENT KILL ID %s: %d", id, n)
			}
			c.ExpectClosed()
		}
	}
	eventually(t, "goroutines back to baseline", func() bool { return runtime.NumGoroutine() <= base })
}

// TestIdleTimeout: timeout closes clients idle for longer than it
// (seconds, on the server's clock), but not monitors.
func TestIdleTimeout(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(1_700_000_000_000), servertest.WithConfig("timeout", "10"))
	idle := inst.Raw(t)
	busy := inst.Raw(t)
	mon := inst.Raw(t)
	for _, c := range []*servertest.Conn{idle, busy} {
		if r := c.Do("PING"); r != "+PONG\r\n" {
			t.Fatalf("PING: %q", r)
		}
	}
	if r := mon.Do("MONITOR"); r != "+OK\r\n" {
		t.Fatalf("MONITOR: %q", r)
	}
	inst.Clock.Advance(6 * time.Second)
	if r := busy.Do("PING"); r != "+PONG\r\n" {
		t.Fatalf("PING: %q", r)
	}
	mon.Read() // the monitor's line for that PING
	inst.Clock.Advance(6 * time.Second)
	// idle has been idle 12 s > 10 s: closed by the server's cron.
	idle.ExpectClosed()
	if r := busy.Do("PING"); r != "+PONG\r\n" {
		t.Fatalf("busy client: %q", r)
	}
	if r := mon.Read(); !strings.Contains(r, `"PING"`) {
		t.Fatalf("monitor: %q", r)
	}
	inst.Clock.Advance(60 * time.Second)
	busy.ExpectClosed()
	// The monitor stays, and still receives.
	other := inst.Raw(t)
	if r := other.Do("ECHO", "still"); r != "$5\r\nstill\r\n" {
		t.Fatalf("ECHO: %q", r)
	}
	if r := mon.Read(); !strings.Contains(r, `"ECHO" "still"`) {
		t.Fatalf("monitor after timeout: %q", r)
	}
}

// TestMaxClientsDiff compares the refusal past maxclients with Redis.
func TestMaxClientsDiff(t *testing.T) {
	testenv.NeedRedis(t)
	rs, err := servertest.StartRedis("--maxclients", "3")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Stop()
	inst := servertest.Start(t, servertest.WithConfig("maxclients", "3"))
	var outs [2]string
	for i, addr := range []string{inst.Addr, rs.Addr} {
		var conns []*servertest.Conn
		for j := 0; j < 3; j++ {
			c := servertest.Dial(t, addr)
			if r := c.Do("PING"); r != "+PONG\r\n" {
				t.Fatalf("%s client %d: %q", addr, j, r)
			}
			conns = append(conns, c)
		}
		outs[i] = string(exchange(t, addr, servertest.Encode("PING"), 0))
		// With one client gone there is room again.
		conns[0].C.Close()
		eventually(t, "a slot to free up", func() bool {
			return string(exchange(t, addr, servertest.Encode("PING"), 0)) == "+PONG\r\n"
		})
	}
	if outs[0] != outs[1] || outs[0] != "-ERR max number of clients reached\r\n" {
		t.Fatalf("abacus %q, redis %q", outs[0], outs[1])
	}
}

// nonLoopback returns an address of this machine that is not loopback,
// or "" when there is none.
func nonLoopback() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// TestProtectedMode connects from a non-loopback address of this machine:
// without a password the server answers Redis's DENIED text and closes;
// with a password, or protected mode off, the client is served.
func TestProtectedMode(t *testing.T) {
	ip := nonLoopback()
	if ip == "" {
		t.Skip("no non-loopback address on this machine (isLoopback and refusal are unit-tested)")
	}
	start := func(kv ...string) (*conn.Server, string) {
		cfg := config.New()
		for i := 0; i < len(kv); i += 2 {
			p, _ := config.Lookup(kv[i])
			if err := cfg.Set(p, kv[i+1]); err != nil {
				t.Fatal(err)
			}
		}
		srv := conn.New(cfg, conn.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			t.Skipf("cannot listen on %s: %v", ip, err)
		}
		go srv.Serve(ln)
		t.Cleanup(srv.Close)
		return srv, ln.Addr().String()
	}
	dialFrom := func(addr string) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	srv, addr := start()
	c := dialFrom(addr)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	out, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(out), "-DENIED Redis is running in protected mode") || !strings.HasSuffix(string(out), "accepting connections from the outside.\r\n") {
		t.Fatalf("got %q", out)
	}
	if n := srv.Env.Stats.RejectedConns.Load(); n != 1 {
		t.Fatalf("rejected_connections = %d", n)
	}
	for _, kv := range [][]string{{"requirepass", "pw"}, {"protected-mode", "no"}} {
		_, addr := start(kv...)
		c := dialFrom(addr)
		c.Write([]byte("PING\r\n"))
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		want := "-NOAUTH Authentication required.\r\n"
		if kv[0] == "protected-mode" {
			want = "+PONG\r\n"
		}
		if err != nil || line != want {
			t.Fatalf("%v: got %q %v, want %q", kv, line, err, want)
		}
	}
}

// TestIdleTimeoutSparesPaused: a client held by CLIENT PAUSE is not idle
// in the timeout's sense, however long the pause lasts.
func TestIdleTimeoutSparesPaused(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(1_700_000_000_000), servertest.WithConfig("timeout", "5"))
	admin, held, idle := inst.Raw(t), inst.Raw(t), inst.Raw(t)
	idle.Do("PING")
	if r := admin.Do("CLIENT", "PAUSE", "60000", "WRITE"); r != "+OK\r\n" {
		t.Fatalf("PAUSE: %q", r)
	}
	held.Write(servertest.Encode("SET", "held", "1"))
	eventually(t, "the SET to be held by the pause", func() bool {
		return strings.Contains(admin.Do("CLIENT", "LIST"), " flags=b ")
	})
	inst.Clock.Advance(30 * time.Second)
	// The idle client goes: a cron pass has seen the new time.
	idle.ExpectClosed()
	if r := inst.Raw(t).Do("CLIENT", "UNPAUSE"); r != "+OK\r\n" {
		t.Fatalf("UNPAUSE: %q", r)
	}
	if r := held.Read(); r != "+OK\r\n" {
		t.Fatalf("held SET after the pause: %q", r)
	}
}
