package commands

import (
	"io"
	"log/slog"
	"testing"

	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/resp"
)

// skBenchEnv is an Env with one integer key, "counter", for measuring
// INCR without a network in the way.
func skBenchEnv() (*engine.Env, *engine.Session) {
	e := engine.NewEnv(keyspace.New(16), config.New(), clock.Real{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	e.KS.DBs[0].Set("counter", keyspace.NewInt(1000), false)
	return e, &engine.Session{Proto: 2, Authed: true}
}

// incrCtx runs INCR counter through its handler, as Execute does after the
// table lookup.
func skIncrOnce(e *engine.Env, s *engine.Session, c *engine.Ctx, w *resp.Writer, args [][]byte) {
	w.Reset()
	*c = engine.Ctx{Args: args, Cmd: engine.Lookup([]byte("incr")), W: w, S: s, Env: e, DB: e.KS.DBs[0], Now: e.KS.Now}
	c.Cmd.Handler(c)
}

// TestIncrDoesNotAllocate: INCR on an integer key updates the object in
// place; neither the handler nor its reply allocates.
func TestIncrDoesNotAllocate(t *testing.T) {
	e, s := skBenchEnv()
	var w resp.Writer
	var c engine.Ctx
	args := [][]byte{[]byte("incr"), []byte("counter")}
	skIncrOnce(e, s, &c, &w, args) // warm the writer's buffer
	allocs := testing.AllocsPerRun(1000, func() { skIncrOnce(e, s, &c, &w, args) })
	if allocs != 0 {
		t.Errorf("INCR allocates %v times per call", allocs)
	}
	if got := string(w.Buf); got != ":2002\r\n" {
		t.Errorf("last reply %q, want :2002", got)
	}
	o := e.KS.DBs[0].Peek("counter")
	if o.Enc != keyspace.EncInt || o.Int() != 2002 {
		t.Errorf("counter is %+v, want int 2002", o)
	}
}

func BenchmarkIncrHandler(b *testing.B) {
	e, s := skBenchEnv()
	var w resp.Writer
	var c engine.Ctx
	args := [][]byte{[]byte("incr"), []byte("counter")}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		skIncrOnce(e, s, &c, &w, args)
	}
}

func BenchmarkIncrExecute(b *testing.B) {
	e, s := skBenchEnv()
	var w resp.Writer
	args := [][]byte{[]byte("incr"), []byte("counter")}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.Reset()
		e.Execute(s, args, &w)
	}
}

func BenchmarkGetInt(b *testing.B) {
	e, s := skBenchEnv()
	var w resp.Writer
	args := [][]byte{[]byte("get"), []byte("counter")}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.Reset()
		e.Execute(s, args, &w)
	}
}
