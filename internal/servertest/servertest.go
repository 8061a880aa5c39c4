// Package servertest starts Abacus servers in-process for tests, and
// redis-server processes to compare them with, and talks to both in raw
// RESP so that replies can be compared byte for byte.
package servertest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/clock"
	_ "github.com/abacusdb/abacus/internal/cluster" // CLUSTER, as redis-server has it in standalone mode too
	_ "github.com/abacusdb/abacus/internal/commands"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/conn"
	"github.com/abacusdb/abacus/internal/durability"
	_ "github.com/abacusdb/abacus/internal/metrics"
	"github.com/abacusdb/abacus/internal/replication"
)

// Instance is a running in-process server.
type Instance struct {
	Srv  *conn.Server
	Dur  *durability.Durability // the AOF and snapshots, wired as main wires them
	Repl *replication.Primary   // replication, wired as main wires it
	Addr string
	// Clock is set when the instance was started with a manual clock.
	Clock *clock.Manual
	Logs  *LogBuffer
}

// Option adjusts how an instance is started.
type Option func(*startOpts)

type startOpts struct {
	conf  [][2]string
	clock *clock.Manual
}

// WithConfig sets configuration parameters (name, value, name, value ...).
func WithConfig(kv ...string) Option {
	return func(o *startOpts) {
		for i := 0; i+1 < len(kv); i += 2 {
			o.conf = append(o.conf, [2]string{kv[i], kv[i+1]})
		}
	}
}

// WithManualClock starts the server on a clock that tests move by hand.
func WithManualClock(startMs int64) Option {
	return func(o *startOpts) { o.clock = clock.NewManual(startMs) }
}

// Start runs a server on a random loopback port until the test ends.
func Start(t testing.TB, opts ...Option) *Instance {
	t.Helper()
	var so startOpts
	for _, o := range opts {
		o(&so)
	}
	cfg := config.New()
	for _, kv := range so.conf {
		p, ok := config.Lookup(kv[0])
		if !ok {
			t.Fatalf("unknown config %q", kv[0])
		}
		if err := cfg.Set(p, kv[1]); err != nil {
			t.Fatalf("config %s %q: %v", kv[0], kv[1], err)
		}
	}
	logs := &LogBuffer{}
	sopts := conn.Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	if so.clock != nil {
		sopts.Clock = so.clock
	}
	srv := conn.New(cfg, sopts)
	dur := durability.New(srv.Env, srv)
	repl := replication.New(srv.Env, srv)
	t.Cleanup(repl.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(srv.Close)
	return &Instance{Srv: srv, Dur: dur, Repl: repl, Addr: ln.Addr().String(), Clock: so.clock, Logs: logs}
}

// LogBuffer collects a server's log lines; safe for concurrent use.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything logged so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Client returns a go-redis client for the instance, closed at test end.
func (i *Instance) Client(t testing.TB) *redis.Client {
	return NewClient(t, i.Addr)
}

// NewClient returns a go-redis client for addr, closed at test end.
func NewClient(t testing.TB, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DisableIdentity: true, Protocol: 2})
	t.Cleanup(func() { c.Close() })
	return c
}

// Conn is a raw RESP connection.
type Conn struct {
	t    testing.TB
	C    net.Conn
	R    *bufio.Reader
	Addr string
}

// Dial opens a raw connection to addr, closed at test end.
func Dial(t testing.TB, addr string) *Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &Conn{t: t, C: c, R: bufio.NewReaderSize(c, 64*1024), Addr: addr}
}

// Raw opens a raw connection to the instance.
func (i *Instance) Raw(t testing.TB) *Conn { return Dial(t, i.Addr) }

// Encode renders a command as a RESP multibulk request.
func Encode(args ...string) []byte {
	var b []byte
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// Cat encodes commands one after another, as a client pipelines them.
func Cat(cmds ...[]string) []byte {
	var b []byte
	for _, c := range cmds {
		b = append(b, Encode(c...)...)
	}
	return b
}

// Write sends bytes as they are.
func (c *Conn) Write(b []byte) {
	c.t.Helper()
	if _, err := c.C.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// Do sends one command and returns its raw reply.
func (c *Conn) Do(args ...string) string {
	c.t.Helper()
	c.Write(Encode(args...))
	return c.Read()
}

// Read reads one complete raw reply (5 s deadline).
func (c *Conn) Read() string {
	c.t.Helper()
	c.C.SetReadDeadline(time.Now().Add(5 * time.Second))
	r, err := ReadReply(c.R)
	if err != nil {
		c.t.Fatalf("read reply from %s: %v", c.Addr, err)
	}
	return string(r)
}

// ReadErr is Read that returns the error (e.g. EOF when closed).
func (c *Conn) ReadErr(timeout time.Duration) (string, error) {
	c.C.SetReadDeadline(time.Now().Add(timeout))
	r, err := ReadReply(c.R)
	return string(r), err
}

// ExpectClosed checks that the server closes the connection.
func (c *Conn) ExpectClosed() {
	c.t.Helper()
	c.C.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c.R)
	if err == nil && len(b) == 0 {
		return
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatalf("connection still open; unread %q", b)
	}
	if len(b) > 0 {
		c.t.Fatalf("unexpected bytes before close: %q", b)
	}
}

// Ctx is a context for go-redis calls in tests.
var Ctx = context.Background()

// ExpectReply fails the test unless a raw reply is want.
func ExpectReply(t testing.TB, got, want string) {
	t.Helper()
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// InfoField is the value of field name in an INFO reply, "" when absent.
func InfoField(info, name string) string {
	for _, line := range strings.Split(info, "\r\n") {
		if strings.HasPrefix(line, name+":") {
			return strings.TrimPrefix(line, name+":")
		}
	}
	return ""
}

// T0 is where WithManualClock starts in the family tests (unix ms).
const T0 = 1_700_000_000_000

// NoErr fails the test at once on an error.
func NoErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Eq reports (without stopping the test) what differs from want.
func Eq[T comparable](t testing.TB, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

// ErrIs reports (without stopping the test) an error other than want.
func ErrIs(t testing.TB, what string, err error, want string) {
	t.Helper()
	if err == nil || err.Error() != want {
		t.Errorf("%s: got error %v, want %q", what, err, want)
	}
}

// MustEq fails the test at once on an error or when got is not want.
func MustEq[T comparable](t testing.TB, what string, got T, err error, want T) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got != want {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

// MustSlice fails the test at once on an error or when got is not want.
func MustSlice[T comparable](t testing.TB, what string, got []T, err error, want ...T) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}
