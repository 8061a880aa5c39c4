package engine_test

import (
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/resp"
)

func busyEnv(t *testing.T, threshold string) *engine.Env {
	t.Helper()
	cfg := config.New()
	p, _ := config.Lookup("busy-reply-threshold")
	if err := cfg.Set(p, threshold); err != nil {
		t.Fatal(err)
	}
	return engine.NewEnv(keyspace.New(16), cfg, clock.Real{}, nil)
}

// With busy-reply-threshold 0 Redis never serves other clients while a
// script runs: ExecuteBusy leaves the command to wait for the lock.
func TestExecuteBusyThresholdZero(t *testing.T) {
	e := busyEnv(t, "0")
	e.SetRunning(engine.StartedRun(time.Hour, true))
	w := &resp.Writer{Proto: 2}
	if e.ExecuteBusy(&engine.Session{Authed: true}, [][]byte{[]byte("GET"), []byte("k")}, w) {
		t.Fatalf("answered %q with threshold 0", w.Buf)
	}
}

// Before the threshold a command waits; when the script ends it is left
// to run normally, with nothing written.
func TestExecuteBusyWaitsForTheScript(t *testing.T) {
	e := busyEnv(t, "60000")
	run := engine.StartedRun(0, true)
	e.SetRunning(run)
	done := make(chan bool)
	w := &resp.Writer{Proto: 2}
	go func() { done <- e.ExecuteBusy(&engine.Session{Authed: true}, [][]byte{[]byte("GET"), []byte("k")}, w) }()
	select {
	case <-done:
		t.Fatal("ExecuteBusy returned while the script runs, before the threshold")
	case <-time.After(20 * time.Millisecond):
	}
	e.SetRunning(nil)
	run.Finish()
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
		{true, []string{"GET", "k"}, "-" + engine.ErrBusy + "\r\n"},
		{false, []string{"GET", "k"}, "-" + engine.ErrBusyFunction + "\r\n"},
		{false, []string{"SCRIPT", "KILL"}, "-" + engine.ErrBusyFunction + "\r\n"},
		{true, []string{"FUNCTION", "KILL"}, "-" + engine.ErrBusy + "\r\n"},
		{true, []string{"FUNCTION", "STATS"}, "-" + engine.ErrBusy + "\r\n"},
		{true, []string{"NOSUCH"}, "-ERR unknown command 'NOSUCH', with args beginning with: \r\n"},
		{true, []string{"SCRIPT", "NOSUCH"}, "-ERR unknown subcommand 'NOSUCH'. Try SCRIPT HELP.\r\n"},
		{true, []string{"GET"}, "-ERR wrong number of arguments for 'get' command\r\n"},
		{true, []string{"MULTI"}, "+OK\r\n"},
	} {
		e.SetRunning(engine.StartedRun(time.Second, tc.eval))
		w := &resp.Writer{Proto: 2}
		var args [][]byte
		for _, a := range tc.args {
			args = append(args, []byte(a))
		}
		if !e.ExecuteBusy(&engine.Session{Authed: true}, args, w) || string(w.Buf) != tc.want {
			t.Errorf("%v (eval %v): %q, want %q", tc.args, tc.eval, w.Buf, tc.want)
		}
	}
	e.SetRunning(nil)
}
