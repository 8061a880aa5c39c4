package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// A corrupt or truncated dump.rdb stops the start with the offset and
// the problem in the log, and exit code 1.
func TestCorruptRDBRefusesStart(t *testing.T) {
	dir := t.TempDir()
	p := start(t, "--dir", dir)
	c := servertest.Dial(t, p.addr)
	for i := 0; i < 100; i++ {
		c.Do("SET", fmt.Sprint("key", i), strings.Repeat("v", i))
	}
	if r := c.Do("SAVE"); r != "+OK\r\n" {
		t.Fatalf("SAVE %q", r)
	}
	c.Write(servertest.Encode("SHUTDOWN", "NOSAVE"))
	p.wait()
	path := filepath.Join(dir, "dump.rdb")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"truncated": good[:len(good)-30], "corrupt": append(append([]byte{}, good[:len(good)-8]...), 1, 2, 3, 4, 5, 6, 7, 8)} {
		os.WriteFile(path, b, 0o644)
		out, err := exec.Command(binary, "--port", strconv.Itoa(freePort(t)), "--bind", "127.0.0.1", "--dir", dir).CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "at offset ") || strings.Contains(string(out), "Ready to accept") {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
	}
	// The good file loads.
	os.WriteFile(path, good, 0o644)
	p = start(t, "--dir", dir)
	if r := servertest.Dial(t, p.addr).Do("DBSIZE"); r != ":100\r\n" {
		t.Fatalf("DBSIZE %q", r)
	}
}

// SIGTERM saves when save points are configured (the default), and the
// next start loads the file.
func TestSigtermSavesAndRestartLoads(t *testing.T) {
	dir := t.TempDir()
	p := start(t, "--dir", dir)
	c := servertest.Dial(t, p.addr)
	c.Do("SET", "k", "v")
	c.Do("RPUSH", "l", "a", "b")
	c.Do("PEXPIRE", "l", "100000000")
	p.cmd.Process.Signal(os.Interrupt)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.logs())
	}
	p = start(t, "--dir", dir)
	c = servertest.Dial(t, p.addr)
	if r := c.Do("GET", "k"); r != "$1\r\nv\r\n" {
		t.Fatalf("GET %q\n%s", r, p.logs())
	}
	if r := c.Do("LRANGE", "l", "0", "-1"); r != "*2\r\n$1\r\na\r\n$1\r\nb\r\n" {
		t.Fatalf("LRANGE %q", r)
	}
	if r := c.Do("TTL", "l"); r == ":-1\r\n" || r == ":-2\r\n" {
		t.Fatalf("TTL %q", r)
	}
}

// A BGSAVE taken during heavy MULTI writes, then SIGKILL: the file loads
// into a consistent state, every pair both present and equal.
func TestBgsaveDuringWritesSurvivesSigkill(t *testing.T) {
	dir := t.TempDir()
	p := start(t, "--dir", dir, "--save", "")
	ctx := context.Background()
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: p.addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1})
			defer c.Close()
			for i := 0; !stop.Load() && i < 1_000_000; i++ {
				k := (i*7 + g*13) % 5000
				_, err := c.TxPipelined(ctx, func(tx redis.Pipeliner) error {
					tx.Set(ctx, fmt.Sprint("a:", k), i, 0)
					tx.Set(ctx, fmt.Sprint("pad:", k), strings.Repeat("x", 200), 0)
					tx.Set(ctx, fmt.Sprint("b:", k), i, 0)
					return nil
				})
				if err != nil {
					return // the kill
				}
			}
		}(g)
	}
	c := servertest.Dial(t, p.addr)
	// Let the writers fill most of the 15,000 keys first.
	dbsize := func() int {
		n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(c.Do("DBSIZE"), ":")))
		return n
	}
	for deadline := time.Now().Add(30 * time.Second); dbsize() < 12000 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	for n := 0; n < 3; n++ {
		if r := c.Do("BGSAVE"); r != "+Background saving started\r\n" {
			t.Fatalf("BGSAVE %q", r)
		}
		for strings.Contains(c.Do("INFO", "persistence"), "rdb_bgsave_in_progress:1") {
			time.Sleep(5 * time.Millisecond)
		}
	}
	p.cmd.Process.Kill()
	p.wait()
	stop.Store(true)
	wg.Wait()
	p = start(t, "--dir", dir, "--save", "")
	rc := redis.NewClient(&redis.Options{Addr: p.addr, Protocol: 2, DisableIdentity: true})
	defer rc.Close()
	n := rc.DBSize(ctx).Val()
	if n == 0 {
		t.Fatal("nothing loaded")
	}
	for k := 0; k < 5000; k++ {
		a, b := rc.Get(ctx, fmt.Sprint("a:", k)).Val(), rc.Get(ctx, fmt.Sprint("b:", k)).Val()
		if a != b {
			t.Fatalf("pair %d torn: %q %q", k, a, b)
		}
	}
	t.Logf("%d keys loaded", n)
}

// shutdown-on-sigterm nosave skips the save that save points ask for.
func TestSigtermNosaveSetting(t *testing.T) {
	dir := t.TempDir()
	p := start(t, "--dir", dir, "--shutdown-on-sigterm", "nosave")
	servertest.Dial(t, p.addr).Do("SET", "k", "v")
	p.cmd.Process.Signal(os.Interrupt) // SIGINT keeps the default: saves
	p.wait()
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err != nil {
		t.Fatalf("SIGINT did not save: %v", err)
	}
	os.Remove(filepath.Join(dir, "dump.rdb"))
	p = start(t, "--dir", dir, "--shutdown-on-sigterm", "nosave")
	servertest.Dial(t, p.addr).Do("SET", "k", "v")
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.wait()
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err == nil {
		t.Fatal("SIGTERM saved despite shutdown-on-sigterm nosave")
	}
}
