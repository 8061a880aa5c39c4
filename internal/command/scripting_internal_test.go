package command

import (
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/resp"
)

func busyEnv(t *testing.T, threshold string) *Env {
	t.Helper()
	cfg := config.New()
	p, _ := config.Lookup("busy-reply-threshold")
	if err := cfg.Set(p, threshold); err != nil {
		t.Fatal(err)
	}
	return NewEnv(keyspace.New(16), cfg, clock.Real{}, nil)
}

// With busy-reply-threshold 0 Redis never serves other clients while a
// script runs: ExecuteBusy leaves the command to wait for the lock.
func TestExecuteBusyThresholdZero(t *testing.T) {
	e := busyEnv(t, "0")
	e.scr.running.Store(&ScriptRun{start: time.Since(monoBase) - time.Hour, Eval: true})
	w := &resp.Writer{Proto: 2}
	if e.ExecuteBusy(&Session{Authed: true}, [][]byte{[]byte("GET"), []byte("k")}, w) {
		t.Fatalf("answered %q with threshold 0", w.Buf)
	}
}

// Before the threshold a command waits; when the script ends it is left
// to run normally, with nothing written.
func TestExecuteBusyWaitsForTheScript(t *testing.T) {
	e := busyEnv(t, "60000")
	run := &ScriptRun{start: time.Since(monoBase), Eval: true}
	e.scr.running.Store(run)
	done := make(chan bool)
	w := &resp.Writer{Proto: 2}
	go func() { done <- e.ExecuteBusy(&Session{Authed: true}, [][]byte{[]byte("GET"), []byte("k")}, w) }()
	select {
	case <-done:
		t.Fatal("ExecuteBusy returned while the script runs, before the threshold")
	case <-time.After(20 * time.Millisecond):
	}
	e.scr.running.Store(nil)
	run.finish()
	if <-done || len(w.Buf) != 0 {
		t.Fatalf("a command after the script was answered: %q", w.Buf)
	}
}

// Past the threshold: BUSY for the kind of script running, and the
// refusals that come before it.
func TestExecuteBusyReplies(t *testing.T) {
	e := busyEnv(t, "1")
	for _, tc := range []struct {
		eval bool
		args []string
		want string
	}{
		{true, []string{"GET", "k"}, "-" + ErrBusy + "\r\n"},
		{false, []string{"GET", "k"}, "-" + ErrBusyFunction + "\r\n"},
		{false, []string{"SCRIPT", "KILL"}, "-" + ErrBusyFunction + "\r\n"},
		{true, []string{"FUNCTION", "KILL"}, "-" + ErrBusy + "\r\n"},
		{true, []string{"FUNCTION", "STATS"}, "-" + ErrBusy + "\r\n"},
		{true, []string{"NOSUCH"}, "-ERR unknown command 'NOSUCH', with args beginning with: \r\n"},
		{true, []string{"SCRIPT", "NOSUCH"}, "-ERR unknown subcommand 'NOSUCH'. Try SCRIPT HELP.\r\n"},
		{true, []string{"GET"}, "-ERR wrong number of arguments for 'get' command\r\n"},
		{true, []string{"MULTI"}, "+OK\r\n"},
	} {
		e.scr.running.Store(&ScriptRun{start: time.Since(monoBase) - time.Second, Eval: tc.eval})
		w := &resp.Writer{Proto: 2}
		var args [][]byte
		for _, a := range tc.args {
			args = append(args, []byte(a))
		}
		if !e.ExecuteBusy(&Session{Authed: true}, args, w) || string(w.Buf) != tc.want {
			t.Errorf("%v (eval %v): %q, want %q", tc.args, tc.eval, w.Buf, tc.want)
		}
	}
	e.scr.running.Store(nil)
}
