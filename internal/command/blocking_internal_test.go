package command

import (
	"io"
	"log/slog"
	"math"
	"testing"

	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/resp"
)

// TestBlockTimeoutMs checks the timeout arithmetic against what
// redis-server 7.0 does with the same text (observed: which timeouts it
// refuses as negative, which block for ever, which time out at once):
// seconds as a long double, times 1000, rounded up.
func TestBlockTimeoutMs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ms   int64
		fail bool
	}{
		{in: "0", ms: 0},
		{in: "-0", ms: 0},
		{in: "1", ms: 1000},
		{in: "1.5", ms: 1500},
		{in: "0.0001", ms: 1},
		{in: "0.0000001", ms: 1},
		{in: "1e-400", ms: 1},
		{in: "-0.0001", ms: 0},
		{in: "-0.0005", ms: 0},
		{in: "-0.00099", ms: 0},
		// -0.001 is a hair above -1 ms in long double: it rounds up to 0
		// and waits for ever on redis-server; -0.002 (a hair above -2 ms)
		// rounds up to -1, which is refused as negative.
		{in: "-0.001", ms: 0},
		{in: "-0.002", ms: -1},
		{in: "-0.0011", ms: -1},
		{in: "-1", ms: -1000},
		{in: "0x10", ms: 16000},
		{in: "1e15", ms: 1e18},
		{in: "9223372036854775.807", ms: math.MaxInt64},
		{in: "1e16", ms: math.MinInt64},
		{in: "9223372036854775807", ms: math.MinInt64},
		{in: "inf", ms: math.MinInt64},
		{in: "-inf", ms: math.MinInt64},
		{in: "1e4000", ms: math.MinInt64},
		{in: "nan", fail: true},
		{in: "abc", fail: true},
		{in: "", fail: true},
		{in: " 1", fail: true},
		{in: "1 ", fail: true},
		{in: "1e5000", fail: true},
	} {
		ms, ok := timeoutMs([]byte(tc.in))
		if ok == tc.fail || (ok && ms != tc.ms) {
			t.Errorf("timeoutMs(%q) = %d, %v; want %d, %v", tc.in, ms, ok, tc.ms, !tc.fail)
		}
	}
}

// bkEnv drives an Env directly, as EXEC and scripts will.
func bkEnv() (*Env, *Session) {
	env := NewEnv(keyspace.New(16), config.New(), clock.NewManual(1_700_000_000_000),
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	return env, &Session{ID: 7, Proto: 2, Authed: true, User: "default"}
}

func bkRun(e *Env, s *Session, args ...string) string {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	var w resp.Writer
	w.Proto = s.Proto
	e.Execute(s, argv, &w)
	return string(w.Buf)
}

// TestBlockingDenied: with DenyBlocking (MULTI/EXEC, scripts) a blocking
// command that cannot be served answers at once as Redis does there, and
// nothing is registered.
func TestBlockingDenied(t *testing.T) {
	e, s := bkEnv()
	s.DenyBlocking = true
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"BLPOP", "k", "0"}, "*-1\r\n"},
		{[]string{"BRPOP", "k", "1"}, "*-1\r\n"},
		{[]string{"BLMPOP", "0", "1", "k", "LEFT"}, "*-1\r\n"},
		{[]string{"BLMOVE", "k", "d", "LEFT", "LEFT", "0"}, "$-1\r\n"},
		{[]string{"BRPOPLPUSH", "k", "d", "0"}, "$-1\r\n"},
		{[]string{"BZPOPMIN", "k", "0"}, "*-1\r\n"},
		{[]string{"BZMPOP", "0", "1", "k", "MIN"}, "*-1\r\n"},
		{[]string{"BLPOP", "k", "-1"}, "-ERR timeout is negative\r\n"},
		{[]string{"RPUSH", "k", "v"}, ":1\r\n"},
		{[]string{"BLPOP", "k", "0"}, "*2\r\n$1\r\nk\r\n$1\r\nv\r\n"},
	} {
		if got := bkRun(e, s, tc.args...); got != tc.want {
			t.Errorf("%q = %q, want %q", tc.args, got, tc.want)
		}
	}
	if s.Blocked || e.BlockedClients() != 0 {
		t.Fatalf("blocked %v, %d registered", s.Blocked, e.BlockedClients())
	}
	s.Proto = 3
	if got := bkRun(e, s, "BLMOVE", "k", "d", "LEFT", "LEFT", "0"); got != "_\r\n" {
		t.Errorf("RESP3 BLMOVE denied = %q", got)
	}
}

// TestBlockingRegistry exercises park, serve and cancel without a server:
// FIFO per key, a waiter that cannot be served keeps its place, the
// reply lands in the Waiter, and ending a wait removes every registration.
func TestBlockingRegistry(t *testing.T) {
	e, a := bkEnv()
	b := &Session{ID: 8, Proto: 2, Authed: true}
	p := &Session{ID: 9, Proto: 2, Authed: true}
	if got := bkRun(e, a, "BLPOP", "k1", "k2", "0"); got != "" || !a.Blocked {
		t.Fatalf("BLPOP replied %q, blocked %v", got, a.Blocked)
	}
	wa := e.Parked(a)
	bkRun(e, b, "BLPOP", "k2", "5")
	wb := e.Parked(b)
	if wa == nil || wb == nil || e.BlockedOn(0, "k2") != 2 || e.BlockedOn(0, "k1") != 1 {
		t.Fatalf("registrations: %v %v k1=%d k2=%d", wa, wb, e.BlockedOn(0, "k1"), e.BlockedOn(0, "k2"))
	}
	if wb.Deadline() != 1_700_000_000_000+5000 {
		t.Fatalf("deadline %d", wb.Deadline())
	}
	woken := 0
	wa.SetWake(func() { woken++ })
	wb.SetWake(func() { woken++ })
	bkRun(e, p, "RPUSH", "k2", "x")
	if !wa.Done() || wb.Done() || woken != 1 {
		t.Fatalf("after one push: a done %v, b done %v, woken %d", wa.Done(), wb.Done(), woken)
	}
	if got := string(wa.Reply()); got != "*2\r\n$2\r\nk2\r\n$1\r\nx\r\n" {
		t.Fatalf("a's reply %q", got)
	}
	if a.Blocked || e.BlockedOn(0, "k1") != 0 || e.BlockedOn(0, "k2") != 1 {
		t.Fatalf("a still registered: blocked %v k1=%d k2=%d", a.Blocked, e.BlockedOn(0, "k1"), e.BlockedOn(0, "k2"))
	}
	if e.TimeoutWait(wb, 1_700_000_000_000+4999) {
		t.Fatal("timed out early")
	}
	if !e.TimeoutWait(wb, 1_700_000_000_000+5000) || string(wb.Reply()) != "*-1\r\n" || woken != 2 {
		t.Fatalf("timeout: reply %q woken %d", wb.Reply(), woken)
	}
	bkRun(e, b, "BLPOP", "k3", "0")
	wb = e.Parked(b)
	e.CancelWait(wb)
	if e.BlockedClients() != 0 || e.BlockedOn(0, "k3") != 0 || b.Blocked || len(wb.Reply()) != 0 {
		t.Fatalf("after cancel: %d registered, reply %q", e.BlockedClients(), wb.Reply())
	}
	// Keys are per database.
	b.DB = 1
	bkRun(e, b, "BLPOP", "k4", "0")
	bkRun(e, p, "RPUSH", "k4", "db0")
	if e.Parked(b) == nil {
		t.Fatal("a push in db 0 served a waiter in db 1")
	}
	p.DB = 1
	bkRun(e, p, "RPUSH", "k4", "db1")
	if e.Parked(b) != nil || b.Blocked {
		t.Fatal("the push in db 1 did not serve")
	}
}
