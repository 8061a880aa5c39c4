package main

// Memory a flood of unread replies takes, measured on the server's own
// process (the test's heap and collector do not blur it), side by side
// with redis-server. The margins are wide (hundreds of MB where unbounded
// queues took gigabytes), and the return to the system is awaited for up
// to a minute, so that a loaded machine does not make them fail.

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// serverPid is the process id of the server at addr (INFO's process_id).
func serverPid(t *testing.T, addr string) string {
	t.Helper()
	m := regexp.MustCompile(`process_id:(\d+)`).FindStringSubmatch(servertest.Dial(t, addr).Do("INFO", "server"))
	if m == nil {
		t.Fatalf("no process_id in INFO of %s", addr)
	}
	return m[1]
}

// statusBytes is a size field of /proc/pid/status (VmRSS, VmHWM).
func statusBytes(t *testing.T, pid, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%s/status", field, pid)
	return 0
}

// TestUnreadRepliesMemory: eight clients each pipeline 1,024 LRANGE of a
// 1 MB list and never read, under "normal 64mb 16mb 10". Each is closed
// at its limit; the server's peak stays near one client's limit (the
// clients' queues grow one at a time, the largest first), and the memory
// goes back to the system once they are gone (conn.ReleaseMemory: a
// forced release once 32 MB have been dropped, at most one a second,
// with trailing ones 1, 2 and 4 s after).
func TestUnreadRepliesMemory(t *testing.T) {
	p, rs := startWithRedis(t)
	limit := "normal 64mb 16mb 10"
	elem := strings.Repeat("x", 100)
	args := []string{"RPUSH", "big"}
	for i := 0; i < 10000; i++ {
		args = append(args, elem)
	}
	lrange := bytes.Repeat(servertest.Encode("LRANGE", "big", "0", "-1"), 1024)
	peaks := map[string]int64{}
	for _, srv := range []struct{ name, addr string }{{"abacus", p.addr}, {"redis", rs.Addr}} {
		admin := servertest.Dial(t, srv.addr)
		if r := admin.Do("CONFIG", "SET", "client-output-buffer-limit", limit); r != "+OK\r\n" {
			t.Fatalf("%s: CONFIG SET: %q", srv.name, r)
		}
		if r := admin.Do(args...); r != ":10000\r\n" {
			t.Fatalf("%s: RPUSH: %q", srv.name, r)
		}
		pid := serverPid(t, srv.addr)
		if err := os.WriteFile("/proc/"+pid+"/clear_refs", []byte("5"), 0); err != nil {
			t.Skipf("cannot reset the peak resident size: %v", err)
		}
		base := statusBytes(t, pid, "VmRSS")
		var bad []*servertest.Conn
		var ids []string
		for i := 0; i < 8; i++ {
			c := servertest.Dial(t, srv.addr)
			ids = append(ids, "id="+strings.TrimSpace(strings.TrimPrefix(c.Do("CLIENT", "ID"), ":"))+" ")
			go c.C.Write(lrange) // not read: the write may block
			bad = append(bad, c)
		}
		listed := func() bool {
			list := admin.Do("CLIENT", "LIST")
			for _, id := range ids {
				if strings.Contains(list, id) {
					return true
				}
			}
			return false
		}
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if !listed() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the clients over their limit were not closed:\n%s", srv.name, admin.Do("CLIENT", "LIST"))
			}
		}
		peak := statusBytes(t, pid, "VmHWM") - base
		peaks[srv.name] = peak
		start := time.Now()
		rss := statusBytes(t, pid, "VmRSS")
		for srv.name == "abacus" && rss-base > 64<<20 && time.Since(start) < 60*time.Second {
			time.Sleep(100 * time.Millisecond)
			rss = statusBytes(t, pid, "VmRSS")
		}
		t.Logf("%s: RSS %d MB before, peak %d MB above it, %d MB above it %.1f s after the last close",
			srv.name, base>>20, peak>>20, (rss-base)>>20, time.Since(start).Seconds())
		if srv.name == "abacus" && rss-base > 64<<20 {
			t.Errorf("a minute after the clients were closed, RSS is %d MB above the %d MB before", (rss-base)>>20, base>>20)
		}
		for _, c := range bad {
			c.C.Close()
		}
	}
	// Eight queues of 64 MB at once, plus the collector's garbage, took
	// about 1 GB; one at a time, about 200 MB as redis-server.
	if peaks["abacus"] > 512<<20 {
		t.Errorf("peak RSS %d MB above the base under eight clients limited to 64 MB (redis-server: %d MB)", peaks["abacus"]>>20, peaks["redis"]>>20)
	}
}
