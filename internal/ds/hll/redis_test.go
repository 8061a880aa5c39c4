package hll

// Differential tests: the same PFADD / PFCOUNT / PFMERGE / SET streams go to a
// real redis-server and to this package, and every reply and every stored
// value (GET, so including the cached-cardinality bytes) must be identical.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/testenv"
)

// redisServer is a redis-server child process on a loopback port.
type redisServer struct {
	cmd  *exec.Cmd
	addr string
}

// startRedis starts redis-server for the test and stops it at cleanup.
// Without redis-server the test is skipped, or fails under
// ABACUS_REQUIRE_REDIS=1.
func startRedis(t testing.TB) *redisServer {
	t.Helper()
	path := testenv.NeedRedis(t)
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		cmd := exec.Command(path,
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--daemonize", "no",
			"--dir", t.TempDir(), "--loglevel", "warning")
		var logs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting redis-server: %v", err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		if waitListening(addr, exited) {
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				<-exited
			})
			return &redisServer{cmd: cmd, addr: addr}
		}
		_ = cmd.Process.Kill()
		<-exited
		lastErr = fmt.Errorf("redis-server did not come up on %s: %s", addr, logs.String())
	}
	t.Fatal(lastErr)
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitListening(addr string, exited <-chan struct{}) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			// Redis accepts before it has loaded; PING until it answers PONG.
			rc := &respConn{c: c, r: bufio.NewReader(c)}
			v, err := rc.do("PING")
			c.Close()
			if err == nil && v == "PONG" {
				return true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// respConn is a minimal RESP2 client: enough for strings, integers, errors,
// bulk strings and arrays.
type respConn struct {
	c net.Conn
	r *bufio.Reader
	w bytes.Buffer
}

func dialRedis(t testing.TB, s *redisServer) *respConn {
	t.Helper()
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &respConn{c: c, r: bufio.NewReader(c)}
}

// respError is an error reply, holding its text without the leading '-'.
type respError string

func (e respError) Error() string { return string(e) }

// do sends one command. Replies: string (simple), respError, int64,
// []byte (bulk; nil for a null bulk), []any (array).
func (rc *respConn) do(args ...any) (any, error) {
	rc.w.Reset()
	fmt.Fprintf(&rc.w, "*%d\r\n", len(args))
	for _, a := range args {
		var b []byte
		switch v := a.(type) {
		case string:
			b = []byte(v)
		case []byte:
			b = v
		case int:
			b = strconv.AppendInt(nil, int64(v), 10)
		default:
			panic(fmt.Sprintf("unsupported argument %T", a))
		}
		fmt.Fprintf(&rc.w, "$%d\r\n", len(b))
		rc.w.Write(b)
		rc.w.WriteString("\r\n")
	}
	_ = rc.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := rc.c.Write(rc.w.Bytes()); err != nil {
		return nil, err
	}
	return rc.read()
}

func (rc *respConn) read() (any, error) {
	line, err := rc.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return nil, fmt.Errorf("bad RESP line %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return respError(body), nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return []byte(nil), nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rc.r, buf); err != nil {
			return nil, err
		}
		return buf[:n], nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return []any(nil), nil
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = rc.read(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown RESP type in %q", line)
}

// must runs a command that must not fail at the protocol level.
func (rc *respConn) must(t testing.TB, args ...any) any {
	t.Helper()
	v, err := rc.do(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

// dual drives redis-server and a map of values held by this package with the
// same commands, comparing replies and values.
type dual struct {
	t        testing.TB
	rc       *respConn
	vals     map[string][]byte
	maxBytes int
	ops      int
	history  map[string][]string // recent operations per key, for failures
}

// note records an operation on key together with the value it started from.
func (d *dual) note(key, format string, args ...any) {
	if d.history == nil {
		d.history = map[string][]string{}
	}
	h := append(d.history[key], fmt.Sprintf("op %d: ", d.ops)+fmt.Sprintf(format, args...)+fmt.Sprintf(" on % x", d.vals[key]))
	if len(h) > 6 {
		h = h[len(h)-6:]
	}
	d.history[key] = h
}

func newDual(t testing.TB, s *redisServer) *dual {
	d := &dual{t: t, rc: dialRedis(t, s), vals: map[string][]byte{}, maxBytes: DefaultSparseMaxBytes}
	d.rc.must(t, "FLUSHALL")
	d.setSparseMax(DefaultSparseMaxBytes)
	return d
}

func (d *dual) setSparseMax(n int) {
	d.t.Helper()
	if v := d.rc.must(d.t, "CONFIG", "SET", "hll-sparse-max-bytes", n); v != "OK" {
		d.t.Fatalf("CONFIG SET hll-sparse-max-bytes %d: %v", n, v)
	}
	d.maxBytes = n
}

// errReply turns our error into the reply text Redis sends.
func errReply(err error) any {
	switch {
	case errors.Is(err, ErrNotHLL), errors.Is(err, ErrCorrupt):
		return respError(err.Error())
	}
	panic(err)
}

func (d *dual) compareReply(what string, got, want any) {
	d.t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		d.t.Fatalf("op %d %s: reply %v (%T), redis-server %v (%T)", d.ops, what, got, got, want, want)
	}
}

// compareValue requires our stored value of key to equal GET key on Redis.
func (d *dual) compareValue(key string) {
	d.t.Helper()
	want := d.rc.must(d.t, "GET", key).([]byte)
	got := d.vals[key]
	if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
		d.t.Fatalf("op %d: value of %q differs from redis-server\n%s\nhistory:\n%s", d.ops, key, diffHLL(got, want), strings.Join(d.history[key], "\n"))
	}
}

func (d *dual) set(key string, v []byte) {
	d.t.Helper()
	d.ops++
	d.note(key, "SET % x", v)
	d.rc.must(d.t, "SET", key, v)
	d.vals[key] = bytes.Clone(v)
}

func (d *dual) del(key string) {
	d.t.Helper()
	d.ops++
	d.rc.must(d.t, "DEL", key)
	delete(d.vals, key)
}

func (d *dual) pfadd(key string, elems ...[]byte) {
	d.t.Helper()
	d.ops++
	d.note(key, "PFADD %x", elems)
	args := []any{"PFADD", key}
	for _, e := range elems {
		args = append(args, e)
	}
	want := d.rc.must(d.t, args...)
	out, changed, err := Add(d.vals[key], d.maxBytes, elems...)
	var got any
	if err != nil {
		got = errReply(err)
	} else if changed {
		got = int64(1)
	} else {
		got = int64(0)
	}
	if err == nil || errors.Is(err, ErrCorrupt) {
		d.vals[key] = out // ErrCorrupt leaves earlier updates in place
	}
	d.compareReply(fmt.Sprintf("PFADD %s (%d elems)", key, len(elems)), got, want)
	d.compareValue(key)
}

func (d *dual) pfcount(keys ...string) int64 {
	d.t.Helper()
	d.ops++
	for _, k := range keys {
		d.note(k, "PFCOUNT %v", keys)
	}
	args := []any{"PFCOUNT"}
	for _, k := range keys {
		args = append(args, k)
	}
	want := d.rc.must(d.t, args...)
	var got any
	if len(keys) == 1 {
		card, _, err := Count(d.vals[keys[0]])
		if err != nil {
			got = errReply(err)
		} else {
			got = int64(card)
		}
	} else {
		hs := make([][]byte, len(keys))
		for i, k := range keys {
			hs[i] = d.vals[k]
		}
		card, err := CountMany(hs...)
		if err != nil {
			got = errReply(err)
		} else {
			got = int64(card)
		}
	}
	d.compareReply(fmt.Sprint("PFCOUNT ", keys), got, want)
	for _, k := range keys {
		d.compareValue(k)
	}
	n, _ := got.(int64)
	return n
}

func (d *dual) pfmerge(dst string, srcs ...string) {
	d.t.Helper()
	d.ops++
	d.note(dst, "PFMERGE %v", srcs)
	args := []any{"PFMERGE", dst}
	hs := make([][]byte, len(srcs))
	for i, k := range srcs {
		args = append(args, k)
		hs[i] = d.vals[k]
	}
	want := d.rc.must(d.t, args...)
	out, err := Merge(d.vals[dst], d.maxBytes, hs...)
	var got any = "OK"
	if err != nil {
		got = errReply(err)
	} else {
		d.vals[dst] = out
	}
	d.compareReply(fmt.Sprint("PFMERGE ", dst, " ", srcs), got, want)
	d.compareValue(dst)
}

// diffHLL describes how two values differ, for failure messages.
func diffHLL(got, want []byte) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "ours:  len %d %s\nredis: len %d %s\n", len(got), hdrString(got), len(want), hdrString(want))
	n := min(len(got), len(want))
	for i := 0; i < n; i++ {
		if got[i] != want[i] {
			lo, hi := max(0, i-8), min(n, i+8)
			fmt.Fprintf(&sb, "first difference at byte %d:\nours:  % x\nredis: % x\n", i, got[lo:min(len(got), hi)], want[lo:min(len(want), hi)])
			return sb.String()
		}
	}
	if len(got) != len(want) {
		fmt.Fprintf(&sb, "one is a prefix of the other (common length %d)\n", n)
	}
	return sb.String()
}

func hdrString(b []byte) string {
	if len(b) < HeaderSize {
		return fmt.Sprintf("% x", b)
	}
	return fmt.Sprintf("hdr % x", b[:HeaderSize])
}
