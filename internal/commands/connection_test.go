package commands_test

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// rawAll sends data, half-closes the connection and returns everything
// the server sends until it closes.
func rawAll(t *testing.T, addr string, data []byte) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write(data)
	conn.(*net.TCPConn).CloseWrite()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	out, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s did not close; read %q", addr, out)
	}
	return string(out)
}

func TestConnectionDiff(t *testing.T) {
	inst := servertest.Start(t)
	p := servertest.DialDiff(t, inst.Addr, servertest.Redis(t).Addr)
	p.Mask = servertest.MaskHello
	p.Lines(`
		PING
		ping hello
		PING a b
		ECHO
		ECHO x
		ECHO x y
		SELECT
		SELECT x
		SELECT 16
		SELECT -1
		SELECT 01
		SELECT 15
		SELECT 0
		AUTH
		AUTH x
		AUTH default anything
		AUTH default
		AUTH nobody x
		AUTH x y z
		HELLO x
		HELLO 1
		HELLO 4
		HELLO -1
		HELLO 99999999999999999999
		HELLO 2 FOO
		HELLO 2 AUTH default
		HELLO 2 SETNAME
		HELLO 2 SETNAME a\x01b
		HELLO 2 AUTH bob x
		HELLO 2 AUTH default anything
		HELLO
		HELLO 3
		HELLO
		PING
		HELLO 2
		HELLO 3 SETNAME conn1 AUTH default x
		CLIENT GETNAME
		HELLO 2 SETNAME ok FOO
		RESET x
		RESET
		CLIENT GETNAME
	`)
	p.Do("ECHO", "bin\x00\r\nary")
	p.Do("PING", "")
	p.Do("HELLO", "2", "SETNAME", "a b")
	p.Do("HELLO", "2", "SETNAME", "é")
	p.Do("HELLO", "2", "FOO", "SETNAME", "a b")
	p.Do("HELLO", "2", "SETNAME", "a b", "FOO")
	p.Do("SELECT", "3")
	p.Do("SET", "dbkey", "in3")
	p.Do("GET", "dbkey")
	p.Do("SELECT", "0")
	p.Do("GET", "dbkey")
	t.Logf("%d commands compared", p.N)
}

// TestAuthDiff compares authentication with a Redis that has requirepass.
func TestAuthDiff(t *testing.T) {
	testenv.NeedRedis(t)
	rs, err := servertest.StartRedis("--requirepass", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Stop()
	inst := servertest.Start(t, servertest.WithConfig("requirepass", "s3cret"))
	p := servertest.DialDiff(t, inst.Addr, rs.Addr)
	p.Mask = servertest.MaskHello
	p.Lines(`
		PING
		GET k
		SELECT 1
		CLIENT ID
		NOSUCH
		GET
		HELLO
		HELLO 3
		HELLO 2 SETNAME early
		HELLO 4
		HELLO 2 AUTH default wrong
		HELLO 2 AUTH default
		HELLO 2 FOO
		AUTH
		AUTH wrong
		AUTH default wrong
		AUTH bob s3cret
		AUTH a b c
		PING
		AUTH s3cret
		PING
		AUTH wrong
		PING
		RESET
		PING
		AUTH default s3cret
		SET k v
		GET k
		RESET
		GET k
		HELLO 3 AUTH default s3cret SETNAME me
		CLIENT GETNAME
		GET k
		RESET
		HELLO 2 AUTH default s3cret SETNAME bad\x20name
		PING
		RESET
		HELLO 2 AUTH default wrong SETNAME ok
		PING
		HELLO 2 auth default s3cret setname n1
		CLIENT GETNAME
	`)
	p.Do("HELLO", "2", "AUTH", "default", "s3cret", "SETNAME", "a b")
	p.Do("PING")
	p.Do("RESET")
	p.Do("HELLO", "2", "SETNAME", "a b")
	p.Do("HELLO", "2", "AUTH", "default", "s3cret", "FOO")
	p.Do("PING")
	// QUIT is allowed before authentication and closes.
	p.A.Write(servertest.Encode("QUIT"))
	p.R.Write(servertest.Encode("QUIT"))
	if a, r := p.A.Read(), p.R.Read(); a != r || a != "+OK\r\n" {
		t.Fatalf("QUIT: %q %q", a, r)
	}
	p.A.ExpectClosed()
	p.R.ExpectClosed()
	t.Logf("%d commands compared", p.N)
}

// TestGoRedisAuth connects with go-redis and a password, over RESP2 (AUTH)
// and RESP3 (HELLO 3 AUTH), and sees the wrong password refused.
func TestGoRedisAuth(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("requirepass", "pw"))
	for _, proto := range []int{2, 3} {
		c := redis.NewClient(&redis.Options{Addr: inst.Addr, Password: "pw", Protocol: proto, DisableIdentity: true, MaxRetries: -1})
		if err := c.Set(servertest.Ctx, "k", proto, 0).Err(); err != nil {
			t.Fatalf("RESP%d: %v", proto, err)
		}
		if v := c.Get(servertest.Ctx, "k").Val(); v != string(rune('0'+proto)) {
			t.Fatalf("RESP%d: GET %q", proto, v)
		}
		c.Close()
		bad := redis.NewClient(&redis.Options{Addr: inst.Addr, Password: "nope", Protocol: proto, DisableIdentity: true, MaxRetries: -1})
		err := bad.Ping(servertest.Ctx).Err()
		if err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
			t.Fatalf("RESP%d wrong password: %v", proto, err)
		}
		bad.Close()
	}
	none := inst.Client(t)
	if err := none.Ping(servertest.Ctx).Err(); err == nil || err.Error() != "NOAUTH Authentication required." {
		t.Fatalf("no password: %v", err)
	}
}

// TestHello checks HELLO's reply in both protocols, and that the protocol
// switch applies to the very next command of the same pipeline.
func TestHello(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	id := strings.TrimSpace(strings.TrimPrefix(c.Do("CLIENT", "ID"), ":"))
	want3 := "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n7.4.0\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:" + id +
		"\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n"
	c.Write(servertest.Cat([]string{"HELLO", "3"}, []string{"CLIENT", "GETNAME"}, []string{"HELLO"}, []string{"HELLO", "2"}, []string{"CLIENT", "GETNAME"}))
	if r := c.Read(); r != want3 {
		t.Fatalf("HELLO 3: %q", r)
	}
	if r := c.Read(); r != "_\r\n" {
		t.Fatalf("RESP3 null: %q", r)
	}
	if r := c.Read(); r != want3 {
		t.Fatalf("HELLO keeps the protocol: %q", r)
	}
	want2 := "*14\r\n" + strings.Replace(strings.TrimPrefix(want3, "%7\r\n"), ":3\r\n", ":2\r\n", 1)
	if r := c.Read(); r != want2 {
		t.Fatalf("HELLO 2: %q", r)
	}
	if r := c.Read(); r != "$-1\r\n" {
		t.Fatalf("RESP2 null: %q", r)
	}
	// go-redis speaking RESP3.
	rdb := redis.NewClient(&redis.Options{Addr: inst.Addr, Protocol: 3, DisableIdentity: true})
	defer rdb.Close()
	m, err := rdb.Do(servertest.Ctx, "HELLO").Result()
	if err != nil {
		t.Fatal(err)
	}
	hm, ok := m.(map[interface{}]interface{})
	if !ok || hm["proto"] != int64(3) || hm["server"] != "redis" || hm["version"] != "7.4.0" || hm["mode"] != "standalone" || hm["role"] != "master" {
		t.Fatalf("HELLO over RESP3: %#v", m)
	}
}

// TestQuit: QUIT answers +OK and closes, and nothing after it in the same
// pipeline runs.
func TestQuit(t *testing.T) {
	inst := servertest.Start(t)
	r := servertest.Redis(t)
	data := servertest.Cat([]string{"SET", "q", "1"}, []string{"QUIT", "extra"}, []string{"SET", "q", "2"})
	a, rr := rawAll(t, inst.Addr, data), rawAll(t, r.Addr, data)
	if a != rr || a != "+OK\r\n+OK\r\n" {
		t.Fatalf("abacus %q, redis %q", a, rr)
	}
	if v := inst.Client(t).Get(servertest.Ctx, "q").Val(); v != "1" {
		t.Fatalf("command after QUIT ran: q = %q", v)
	}
}

// TestReset: RESET returns the connection to its initial state: db 0,
// RESP2, no name, reply mode on, no-evict and no-touch off, not a
// monitor, and unauthenticated when a password is set. The library name
// stays.
func TestReset(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("requirepass", "pw"))
	c := inst.Raw(t)
	c.Write(servertest.Cat(
		[]string{"AUTH", "pw"},
		[]string{"SELECT", "5"},
		[]string{"CLIENT", "SETNAME", "before"},
		[]string{"CLIENT", "SETINFO", "LIB-NAME", "mylib"},
		[]string{"CLIENT", "NO-EVICT", "on"},
		[]string{"CLIENT", "NO-TOUCH", "on"},
		[]string{"HELLO", "3"},
		[]string{"CLIENT", "REPLY", "OFF"},
		[]string{"PING"},
		[]string{"RESET"},
		[]string{"PING"},
		[]string{"AUTH", "pw"},
		[]string{"CLIENT", "INFO"},
	))
	for _, want := range []string{"+OK\r\n", "+OK\r\n", "+OK\r\n", "+OK\r\n", "+OK\r\n", "+OK\r\n"} {
		if r := c.Read(); r != want {
			t.Fatalf("got %q, want %q", r, want)
		}
	}
	if r := c.Read(); !strings.HasPrefix(r, "%7\r\n") {
		t.Fatalf("HELLO 3: %q", r)
	}
	for _, want := range []string{"+RESET\r\n", "-NOAUTH Authentication required.\r\n", "+OK\r\n"} {
		if r := c.Read(); r != want {
			t.Fatalf("got %q, want %q", r, want)
		}
	}
	info := c.Read()
	for _, f := range []string{" name= ", " db=0 ", " flags=N ", " resp=2 ", " lib-name=mylib "} {
		if !strings.Contains(info, f) {
			t.Errorf("CLIENT INFO after RESET lacks %q: %q", f, info)
		}
	}
	if !strings.HasPrefix(info, "$") {
		t.Errorf("CLIENT INFO after RESET is not RESP2: %q", info)
	}
}

// TestResetReplySkip: a reply marked to be skipped by CLIENT REPLY SKIP
// stays skipped even for RESET; RESET turns an OFF reply mode back on
// (compared with Redis).
func TestResetReplyModes(t *testing.T) {
	inst := servertest.Start(t)
	r := servertest.Redis(t)
	for _, data := range [][]byte{
		servertest.Cat([]string{"CLIENT", "REPLY", "SKIP"}, []string{"RESET"}, []string{"PING"}),
		servertest.Cat([]string{"CLIENT", "REPLY", "OFF"}, []string{"RESET"}, []string{"PING"}),
		servertest.Cat([]string{"CLIENT", "REPLY", "OFF"}, []string{"QUIT"}),
	} {
		if a, rr := rawAll(t, inst.Addr, data), rawAll(t, r.Addr, data); a != rr {
			t.Errorf("%q:\n abacus %q\n  redis %q", data, a, rr)
		}
	}
}
