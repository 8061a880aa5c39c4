package engine_test

import (
	"testing"

	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/enginetest"
)

// TestBlockingDenied: with DenyBlocking (MULTI/EXEC, scripts) a blocking
// command that cannot be served answers at once as Redis does there, and
// nothing is registered.
func TestBlockingDenied(t *testing.T) {
	e, s := enginetest.New()
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
		if got := enginetest.Run(e, s, tc.args...); got != tc.want {
			t.Errorf("%q = %q, want %q", tc.args, got, tc.want)
		}
	}
	if s.Blocked || e.BlockedClients() != 0 {
		t.Fatalf("blocked %v, %d registered", s.Blocked, e.BlockedClients())
	}
	s.Proto = 3
	if got := enginetest.Run(e, s, "BLMOVE", "k", "d", "LEFT", "LEFT", "0"); got != "_\r\n" {
		t.Errorf("RESP3 BLMOVE denied = %q", got)
	}
}

// TestBlockingRegistry exercises park, serve and cancel without a server:
// FIFO per key, a waiter that cannot be served keeps its place, the
// reply lands in the Waiter, and ending a wait removes every registration.
func TestBlockingRegistry(t *testing.T) {
	e, a := enginetest.New()
	b := &engine.Session{ID: 8, Proto: 2, Authed: true}
	p := &engine.Session{ID: 9, Proto: 2, Authed: true}
	if got := enginetest.Run(e, a, "BLPOP", "k1", "k2", "0"); got != "" || !a.Blocked {
		t.Fatalf("BLPOP replied %q, blocked %v", got, a.Blocked)
	}
	wa := e.Parked(a)
	enginetest.Run(e, b, "BLPOP", "k2", "5")
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
	enginetest.Run(e, p, "RPUSH", "k2", "x")
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
	enginetest.Run(e, b, "BLPOP", "k3", "0")
	wb = e.Parked(b)
	e.CancelWait(wb)
	if e.BlockedClients() != 0 || e.BlockedOn(0, "k3") != 0 || b.Blocked || len(wb.Reply()) != 0 {
		t.Fatalf("after cancel: %d registered, reply %q", e.BlockedClients(), wb.Reply())
	}
	// Keys are per database.
	b.DB = 1
	enginetest.Run(e, b, "BLPOP", "k4", "0")
	enginetest.Run(e, p, "RPUSH", "k4", "db0")
	if e.Parked(b) == nil {
		t.Fatal("a push in db 0 served a waiter in db 1")
	}
	p.DB = 1
	enginetest.Run(e, p, "RPUSH", "k4", "db1")
	if e.Parked(b) != nil || b.Blocked {
		t.Fatal("the push in db 1 did not serve")
	}
}
