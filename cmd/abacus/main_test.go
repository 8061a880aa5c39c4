package main

// These tests build the abacus binary and run it as a process: start,
// commands, signals, exit codes and the lines it logs.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "abacus-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "abacus")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building abacus:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := testenv.Run(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a running abacus process whose log (stdout and stderr) is collected.
type proc struct {
	t    *testing.T
	cmd  *exec.Cmd
	addr string
	mu   sync.Mutex
	log  bytes.Buffer
	done chan struct{}
	code int
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// start runs abacus on a free port with extra arguments and waits until
// it accepts connections.
func start(t *testing.T, extra ...string) *proc {
	t.Helper()
	return startOn(t, freePort(t), extra...)
}

// startOn is start on a given port.
func startOn(t *testing.T, port int, extra ...string) *proc {
	t.Helper()
	return startIn(t, t.TempDir(), port, extra...)
}

// startIn is startOn in a given working directory (where dump.rdb and
// nodes.conf go), so that a restart finds its files.
func startIn(t *testing.T, dir string, port int, extra ...string) *proc {
	t.Helper()
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1"}, extra...)
	p := &proc{t: t, cmd: exec.Command(binary, args...), addr: fmt.Sprintf("127.0.0.1:%d", port), done: make(chan struct{})}
	p.cmd.Dir = dir
	// The log (stdout) and what fails before it starts (stderr), in one.
	out, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	err = p.cmd.Start()
	w.Close()
	if err != nil {
		out.Close()
		t.Fatal(err)
	}
	go func() {
		defer out.Close()
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadString('\n')
			p.mu.Lock()
			p.log.WriteString(line)
			p.mu.Unlock()
			if err != nil {
				break
			}
		}
		err := p.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode()
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	p.waitLog("Ready to accept connections")
	return p
}

func (p *proc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// waitLog waits until the process has logged s (or exited).
func (p *proc) waitLog(s string) {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.logs(), s) {
		select {
		case <-p.done:
			p.t.Fatalf("exited (code %d) before logging %q:\n%s", p.code, s, p.logs())
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no %q in the log:\n%s", s, p.logs())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait() int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(10 * time.Second):
		p.t.Fatalf("still running:\n%s", p.logs())
		return -1
	}
}

func TestSigtermFinishesRepliesInFlight(t *testing.T) {
	p := start(t, "--enable-debug-command", "yes")
	c := servertest.Dial(t, p.addr)
	if r := c.Do("SET", "k", "v"); r != "+OK\r\n" {
		t.Fatalf("SET %q", r)
	}
	if r := c.Do("GET", "k"); r != "$1\r\nv\r\n" {
		t.Fatalf("GET %q", r)
	}
	// One batch: the log line shows it is running, then it sleeps while
	// the signal arrives. Its replies must still be written.
	c.Write(append(servertest.Encode("DEBUG", "LOG", "batch-started"), servertest.Encode("DEBUG", "SLEEP", "0.3")...))
	p.waitLog("DEBUG LOG: batch-started")
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if r := c.Read(); r != "+OK\r\n" {
		t.Fatalf("DEBUG LOG reply %q", r)
	}
	if r := c.Read(); r != "+OK\r\n" {
		t.Fatalf("DEBUG SLEEP reply %q", r)
	}
	c.ExpectClosed()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit code %d:\n%s", code, p.logs())
	}
	logs := p.logs()
	for _, want := range []string{"Received SIGTERM scheduling shutdown...", "User requested shutdown...", "Abacus is now ready to exit, bye bye..."} {
		if !strings.Contains(logs, want) {
			t.Errorf("no %q in the log:\n%s", want, logs)
		}
	}
	// After the shutdown nothing listens on the port.
	if conn, err := net.DialTimeout("tcp", p.addr, time.Second); err == nil {
		conn.Close()
		t.Error("port still accepting")
	}
}

func TestSigint(t *testing.T) {
	p := start(t)
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if !strings.Contains(p.logs(), "Received SIGINT scheduling shutdown...") {
		t.Errorf("log:\n%s", p.logs())
	}
}

func TestShutdownCommand(t *testing.T) {
	p := start(t)
	c := servertest.Dial(t, p.addr)
	c.Write(servertest.Encode("SHUTDOWN", "NOSAVE"))
	c.ExpectClosed()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit code %d:\n%s", code, p.logs())
	}
	if !strings.Contains(p.logs(), "User requested shutdown...") || !strings.Contains(p.logs(), "bye bye") {
		t.Errorf("log:\n%s", p.logs())
	}
}

// runExit runs abacus to completion and returns its exit code and output.
func runExit(t *testing.T, stdin string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = t.TempDir() // a save at exit must not land in the package directory
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String()
}

func TestBadConfigExitsOne(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "bad.conf")
	os.WriteFile(conf, []byte("# comment\nport 7777\n\nunknownthing-not\n"), 0o644)
	cases := []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{conf}, "", "\n*** FATAL CONFIG FILE ERROR (Redis 7.4.0) ***\nReading the configuration file, at line 4\n>>> 'unknownthing-not'\nBad directive or wrong number of arguments\n"},
		{[]string{"--port", "5", "--foo", "bar", "baz"}, "", "\n*** FATAL CONFIG FILE ERROR (Redis 7.4.0) ***\nReading the configuration file, at line 3\n>>> 'foo \"bar\" \"baz\"'\nBad directive or wrong number of arguments\n"},
		{[]string{"--hz", "x"}, "", ">>> 'hz \"x\"'\nargument couldn't be parsed into an integer\n"},
		{[]string{"-"}, "maxmemory lots\n", ">>> 'maxmemory lots'\nargument must be a memory value\n"},
		{[]string{filepath.Join(dir, "missing.conf")}, "", "Fatal error, can't open config file '" + filepath.Join(dir, "missing.conf") + "': No such file or directory\n"},
		{[]string{"--daemonize", "yes"}, "", "Abacus does not fork into the background"},
	}
	for _, tc := range cases {
		code, out := runExit(t, tc.stdin, tc.args...)
		if code != 1 || !strings.Contains(out, tc.want) {
			t.Errorf("%q: exit %d, output:\n%s\nwant to contain:\n%s", tc.args, code, out, tc.want)
		}
	}
}

func TestVersionAndHelp(t *testing.T) {
	for _, arg := range []string{"-v", "--version"} {
		code, out := runExit(t, "", arg)
		if code != 0 || !strings.HasPrefix(out, "Abacus server v=") || !strings.Contains(out, "redis_version=7.4.0") {
			t.Errorf("%s: %d %q", arg, code, out)
		}
	}
	for _, arg := range []string{"-h", "--help"} {
		code, out := runExit(t, "", arg)
		if code != 0 || !strings.HasPrefix(out, "Usage: abacus [/path/to/abacus.conf] [options] [-]") {
			t.Errorf("%s: %d %q", arg, code, out)
		}
	}
}

// TestConfigFileStdinAndFiles starts from a file plus stdin plus options
// and checks what the server reports, its pidfile, unix socket and log
// file, and CONFIG REWRITE of the file.
func TestConfigFileStdinAndFiles(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	conf := filepath.Join(dir, "abacus.conf")
	pidfile := filepath.Join(dir, "abacus.pid")
	sock := filepath.Join(dir, "abacus.sock")
	logfile := filepath.Join(dir, "abacus.log")
	os.WriteFile(conf, []byte(fmt.Sprintf("# my settings\nport %d\nbind 127.0.0.1\nhz 15\nmaxmemory 1mb\npidfile %s\nunixsocket %s\nunixsocketperm 700\n", port, pidfile, sock)), 0o644)
	cmd := exec.Command(binary, conf, "--logfile", logfile, "--hz", "20", "-")
	cmd.Dir = dir // where its dump.rdb goes at shutdown
	cmd.Stdin = strings.NewReader("timeout 30\nhz 17\n")
	var out bytes.Buffer
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	var conn net.Conn
	for i := 0; i < 500; i++ {
		var err error
		if conn, err = net.Dial("tcp", addr); err == nil {
			conn.Close()
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	c := servertest.Dial(t, addr)
	get := func(name string) string {
		r := c.Do("CONFIG", "GET", name)
		parts := strings.Split(r, "\r\n")
		if len(parts) < 5 {
			t.Fatalf("CONFIG GET %s: %q", name, r)
		}
		return parts[4]
	}
	// The options come last and win over stdin, which wins over the file.
	if get("hz") != "20" || get("timeout") != "30" || get("maxmemory") != "1048576" {
		t.Fatalf("hz %s timeout %s maxmemory %s", get("hz"), get("timeout"), get("maxmemory"))
	}
	if info := c.Do("INFO", "server"); !strings.Contains(info, "config_file:"+conf+"\r\n") || !strings.Contains(info, "executable:"+binary+"\r\n") {
		t.Errorf("INFO server: %s", info)
	}
	pid, err := os.ReadFile(pidfile)
	if err != nil || strings.TrimSpace(string(pid)) != strconv.Itoa(cmd.Process.Pid) {
		t.Errorf("pidfile %q %v", pid, err)
	}
	if st, err := os.Stat(sock); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("socket %v %v", st, err)
	}
	uc, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	uc.Write(servertest.Encode("PING"))
	buf := make([]byte, 7)
	if _, err := io.ReadFull(uc, buf); err != nil || string(buf) != "+PONG\r\n" {
		t.Errorf("unix socket PING: %q %v", buf, err)
	}
	uc.Close()

	if r := c.Do("CONFIG", "SET", "slowlog-max-len", "77"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	if r := c.Do("CONFIG", "REWRITE"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	rewritten, _ := os.ReadFile(conf)
	if !strings.HasPrefix(string(rewritten), "# my settings\n") || !strings.Contains(string(rewritten), "hz 20\n") ||
		!strings.Contains(string(rewritten), "timeout 30\n") || !strings.Contains(string(rewritten), "slowlog-max-len 77\n") ||
		!strings.Contains(string(rewritten), "logfile \""+logfile+"\"\n") {
		t.Errorf("rewritten file:\n%s", rewritten)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not exit")
	}
	done <- nil // for the cleanup
	if _, err := os.Stat(pidfile); !os.IsNotExist(err) {
		t.Errorf("pidfile left behind: %v", err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
	logs, _ := os.ReadFile(logfile)
	if !strings.Contains(string(logs), "Configuration loaded") || !strings.Contains(string(logs), "bye bye") || !strings.Contains(string(logs), "CONFIG REWRITE executed with success.") {
		t.Errorf("log file:\n%s", logs)
	}
	if !strings.Contains(out.String(), "Reading config from stdin") {
		t.Errorf("stderr:\n%s", out.String())
	}
}
