package main

// Memory a client's input takes, measured as the process's RSS, side by
// side with redis-server: a bulk header alone takes nothing, and the
// memory of a large request goes back to the system once it is served.
// The margins are wide (tens of MB where the old behaviour took
// gigabytes), so that they do not depend on the machine.

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// serverRSS is the RSS of the server at addr (found by INFO's
// process_id), in bytes.
func serverRSS(t *testing.T, addr string) int64 {
	t.Helper()
	info := servertest.Dial(t, addr).Do("INFO", "server")
	m := regexp.MustCompile(`process_id:(\d+)`).FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("no process_id in INFO of %s", addr)
	}
	b, err := os.ReadFile("/proc/" + m[1] + "/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// startWithRedis starts abacus and a private redis-server, stopped at the
// test's end.
func startWithRedis(t *testing.T) (*proc, *servertest.RedisServer) {
	t.Helper()
	testenv.NeedRedis(t)
	rs, err := servertest.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rs.Stop)
	return start(t), rs
}

// waitClients waits (up to 20 s) until n clients of the server show
// qbuf=want in CLIENT LIST: the server has read what they sent.
func waitClients(t *testing.T, list *servertest.Conn, n int, want string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if got := strings.Count(list.Do("CLIENT", "LIST"), " qbuf="+want+" "); got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("clients with qbuf=%s: fewer than %d", want, n)
		}
	}
}

// TestHeaderTakesNoMemory: three rounds of eight connections that each
// send a SET whose value claims 512 MB, then 100 bytes of it, and hang up.
// The claim is not allocated (it took 512 MB per connection before).
func TestHeaderTakesNoMemory(t *testing.T) {
	p, rs := startWithRedis(t)
	attack := append([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\n"), bytes.Repeat([]byte("x"), 100)...)
	growth := map[string]int64{}
	for _, srv := range []struct{ name, addr string }{{"abacus", p.addr}, {"redis", rs.Addr}} {
		list := servertest.Dial(t, srv.addr)
		base := serverRSS(t, srv.addr)
		var peak int64
		for round := 0; round < 3; round++ {
			var conns []*servertest.Conn
			for i := 0; i < 8; i++ {
				c := servertest.Dial(t, srv.addr)
				c.Write(attack)
				conns = append(conns, c)
			}
			waitClients(t, list, 8, "100")
			peak = max(peak, serverRSS(t, srv.addr))
			for _, c := range conns {
				c.C.Close()
			}
		}
		growth[srv.name] = peak - base
		t.Logf("%s: RSS %d MB before, %d MB at the peak of 8 connections", srv.name, base>>20, peak>>20)
	}
	if growth["abacus"] > 64<<20 {
		t.Fatalf("headers claiming 8 x 512 MB grew the RSS by %d MB (redis-server: %d MB)", growth["abacus"]>>20, growth["redis"]>>20)
	}
}

// TestLargeRequestMemoryReturned: a 256 MB argument is read, served and
// dropped; within seconds the process gives the memory back.
func TestLargeRequestMemoryReturned(t *testing.T) {
	p, rs := startWithRedis(t)
	const size = 256 << 20
	req := append([]byte(fmt.Sprintf("*2\r\n$6\r\nEXISTS\r\n$%d\r\n", size)), bytes.Repeat([]byte("k"), size)...)
	req = append(req, "\r\n"...)
	for _, srv := range []struct{ name, addr string }{{"abacus", p.addr}, {"redis", rs.Addr}} {
		base := serverRSS(t, srv.addr)
		c := servertest.Dial(t, srv.addr)
		go c.C.Write(req)
		c.C.SetReadDeadline(time.Now().Add(60 * time.Second))
		if r, err := servertest.ReadReply(c.R); err != nil || string(r) != ":0\r\n" {
			t.Fatalf("%s: EXISTS of a 256 MB key: %q %v", srv.name, r, err)
		}
		served := serverRSS(t, srv.addr)
		start := time.Now()
		rss := served
		for time.Since(start) < 30*time.Second && rss-base > 64<<20 {
			time.Sleep(100 * time.Millisecond)
			rss = serverRSS(t, srv.addr)
		}
		t.Logf("%s: RSS %d MB before, %d MB once served, %d MB %.1f s later", srv.name, base>>20, served>>20, rss>>20, time.Since(start).Seconds())
		if srv.name == "abacus" && rss-base > 64<<20 {
			t.Fatalf("30 s after a 256 MB request was served, RSS is %d MB above the %d MB before", (rss-base)>>20, base>>20)
		}
	}
}
