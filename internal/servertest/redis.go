package servertest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/testenv"
)

// RedisServer is a real redis-server started for differential tests.
type RedisServer struct {
	Addr string
	cmd  *exec.Cmd
	dir  string
}

var (
	redisOnce sync.Once
	shared    *RedisServer
	sharedErr error
)

// RedisPath returns the redis-server binary, or "" when none is on PATH.
// Tests call testenv.NeedRedis instead, which skips or fails honestly.
func RedisPath() string {
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return ""
	}
	return p
}

// Redis returns a redis-server shared by the tests of this process,
// flushed (FLUSHALL, default config restored) for the caller. Without
// redis-server on PATH it skips the test, or fails it under
// ABACUS_REQUIRE_REDIS=1 (see testenv.NeedRedis).
func Redis(t testing.TB) *RedisServer {
	t.Helper()
	testenv.NeedRedis(t)
	redisOnce.Do(func() { shared, sharedErr = StartRedis() })
	if sharedErr != nil {
		t.Fatalf("starting redis-server: %v", sharedErr)
	}
	c := Dial(t, shared.Addr)
	if r := c.Do("FLUSHALL"); r != "+OK\r\n" {
		t.Fatalf("FLUSHALL on redis-server: %q", r)
	}
	return shared
}

// PrivateRedis starts a redis-server of the test's own (with extra
// command-line arguments), stopped when the test ends: for tests that
// change its configuration, which on the shared one would leak into other
// tests. Without redis-server it skips as Redis does.
func PrivateRedis(t testing.TB, extra ...string) *RedisServer {
	t.Helper()
	testenv.NeedRedis(t)
	r, err := StartRedis(extra...)
	if err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(r.Stop)
	return r
}

// StartRedis starts a private redis-server on a free loopback port with
// persistence off. The caller stops it with Stop (the shared one lives
// until the process exits and dies with it via its parent-death setting).
func StartRedis(extra ...string) (*RedisServer, error) {
	path := RedisPath()
	if path == "" {
		return nil, fmt.Errorf("no redis-server on PATH")
	}
	dir, err := os.MkdirTemp("", "abacus-redis-")
	if err != nil {
		return nil, err
	}
	// Only a server given a directory of its own may find data there to
	// load; the others are taken as ready once they accept a connection,
	// so that no PING shows in their statistics.
	hasData := slices.Contains(extra, "--dir")
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		args := append([]string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "",
			"--appendonly", "no", "--dir", dir, "--daemonize", "no", "--loglevel", "warning"}, extra...)
		cmd := exec.Command(path, args...)
		cmd.Stdout, cmd.Stderr = nil, nil
		setParentDeath(cmd)
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if st := ready(addr, hasData); st != down && !listensOn(cmd.Process.Pid, port) {
				// Another process answered on the port: this server
				// cannot bind it (and exits); try another port.
				break
			} else if st == loaded {
				return &RedisServer{Addr: addr, cmd: cmd, dir: dir}, nil
			} else if st == loading {
				// Listening: its data may take long to load.
				deadline = time.Now().Add(time.Minute)
			}
			time.Sleep(20 * time.Millisecond)
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
	return nil, fmt.Errorf("redis-server did not start")
}

// startState is how far a starting server has got.
type startState int

const (
	down    startState = iota // not accepting connections
	loading                   // answering -LOADING
	loaded                    // answering (-NOAUTH under requirepass too)
)

// ready says how far the server at addr has got: whether it accepts a
// connection and, with ping, whether it answers PING other than -LOADING.
func ready(addr string, ping bool) startState {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return down
	}
	defer c.Close()
	if !ping {
		return loaded
	}
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return down
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	switch {
	case err != nil:
		return down
	case strings.HasPrefix(line, "-LOADING"):
		return loading
	}
	return loaded
}

// Stop kills the server and removes its directory.
func (r *RedisServer) Stop() {
	r.cmd.Process.Kill()
	r.cmd.Wait()
	os.RemoveAll(r.dir)
}

// Pid is the server's process id.
func (r *RedisServer) Pid() int { return r.cmd.Process.Pid }

// Dir is the server's working directory.
func (r *RedisServer) Dir() string { return filepath.Clean(r.dir) }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
