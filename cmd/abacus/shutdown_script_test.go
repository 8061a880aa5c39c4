package main

// Shutting down while a script is busy: what persists must be what a
// redis-server 7.0 left, never part of the script.

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// loopScript writes a key and then never ends.
const loopScript = "redis.call('SET', 'partial', '1') while true do end"

// waitBusy sends PING on c until the server answers BUSY: the script runs
// and is past busy-reply-threshold.
func waitBusy(t *testing.T, c *servertest.Conn) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.HasPrefix(c.Do("PING"), "-BUSY") {
		if time.Now().After(deadline) {
			t.Fatal("the script never became busy")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// shutdownDuringScript writes a key and saves, runs body as a looping EVAL, stops
// the server with SHUTDOWN NOSAVE while the script is busy and checks
// that the script's caller and the SHUTDOWN caller see the connection
// close without a reply.
func shutdownDuringScript(t *testing.T, addr, body string) {
	t.Helper()
	a, b := servertest.Dial(t, addr), servertest.Dial(t, addr)
	if r := b.Do("SET", "before", "1"); r != "+OK\r\n" {
		t.Fatalf("SET %q", r)
	}
	if r := b.Do("SAVE"); r != "+OK\r\n" { // the snapshot to come back to
		t.Fatalf("SAVE %q", r)
	}
	a.Write(servertest.Encode("EVAL", body, "0"))
	waitBusy(t, b)
	b.Write(servertest.Encode("SHUTDOWN", "NOSAVE"))
	b.ExpectClosed()
	a.ExpectClosed()
}

// dataAfter returns GET before and GET partial on a server started anew.
func dataAfter(t *testing.T, addr string) (before, partial string) {
	t.Helper()
	c := servertest.Dial(t, addr)
	return c.Do("GET", "before"), c.Do("GET", "partial")
}

// TestShutdownNosaveDuringScript: SHUTDOWN NOSAVE while a script that
// wrote is busy leaves neither the AOF nor the snapshot with the script's
// write, plain or all-or-nothing, with AOF on and off (save points on, so
// a wrong save would show); redis-server 7.0 is held to the same.
func TestShutdownNosaveDuringScript(t *testing.T) {
	scripts := map[string]string{
		"plain":         loopScript,
		"transactional": "#!lua flags=transactional\n" + loopScript,
	}
	for _, aof := range []string{"yes", "no"} {
		for name, body := range scripts {
			t.Run("appendonly "+aof+" "+name, func(t *testing.T) {
				dir := t.TempDir()
				args := []string{"--dir", dir, "--appendonly", aof, "--save", "1 1", "--busy-reply-threshold", "50"}
				p := start(t, args...)
				shutdownDuringScript(t, p.addr, body)
				if code := p.wait(); code != 0 {
					t.Fatalf("exit code %d:\n%s", code, p.logs())
				}
				before, partial := dataAfter(t, start(t, args...).addr)
				if before != "$1\r\n1\r\n" || partial != "$-1\r\n" {
					t.Fatalf("after restart: before %q, partial %q (want 1 and nil)", before, partial)
				}
			})
		}
	}
	t.Run("redis-server", func(t *testing.T) {
		testenv.NeedRedis(t)
		for _, aof := range []string{"yes", "no"} {
			dir := t.TempDir()
			args := []string{"--dir", dir, "--appendonly", aof, "--save", "1 1", "--busy-reply-threshold", "50"}
			r, err := servertest.StartRedis(args...)
			if err != nil {
				t.Fatal(err)
			}
			shutdownDuringScript(t, r.Addr, loopScript)
			r.Stop()
			r, err = servertest.StartRedis(args...)
			if err != nil {
				t.Fatal(err)
			}
			before, partial := dataAfter(t, r.Addr)
			r.Stop()
			if before != "$1\r\n1\r\n" || partial != "$-1\r\n" {
				t.Fatalf("redis-server, appendonly %s, after restart: before %q, partial %q", aof, before, partial)
			}
		}
	})
}

// TestSigtermDuringScript: SIGTERM while a script is busy waits for the
// script to end, as Redis does; the script's writes then persist whole
// (AOF and the final snapshot) and nothing is torn.
func TestSigtermDuringScript(t *testing.T) {
	// Writes a, runs for 600 ms of the server's clock, writes b.
	body := "local s = redis.call('TIME') local t0 = s[1]*1000000 + s[2] " +
		"redis.call('SET', 'a', '1') " +
		"repeat local n = redis.call('TIME') until n[1]*1000000 + n[2] - t0 > 600000 " +
		"redis.call('SET', 'b', '1') return 1"
	for _, aof := range []string{"yes", "no"} {
		t.Run("appendonly "+aof, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"--dir", dir, "--appendonly", aof, "--save", "3600 1", "--busy-reply-threshold", "50"}
			p := start(t, args...)
			a, b := servertest.Dial(t, p.addr), servertest.Dial(t, p.addr)
			a.Write(servertest.Encode("EVAL", body, "0"))
			waitBusy(t, b)
			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(); code != 0 {
				t.Fatalf("exit code %d:\n%s", code, p.logs())
			}
			c := servertest.Dial(t, start(t, args...).addr)
			if ra, rb := c.Do("GET", "a"), c.Do("GET", "b"); ra != "$1\r\n1\r\n" || rb != "$1\r\n1\r\n" {
				t.Fatalf("after restart: a %q, b %q (want both written)", ra, rb)
			}
		})
	}
}
