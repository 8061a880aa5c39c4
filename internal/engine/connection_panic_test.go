package engine_test

import (
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/servertest"
)

func init() {
	engine.Register(&engine.Command{Name: "abacus-test-panic", Arity: -1, Flags: engine.FlagFast,
		Handler: func(c *engine.Ctx) {
			// Half a reply, then a crash: the client must get one
			// well-formed error instead.
			c.W.Array(3)
			c.W.BulkString("partial")
			if len(c.Args) > 1 {
				var m map[string]int
				m["boom"]++ // nil map write
			}
			panic("test panic in a command handler")
		}})
}

// TestPanicRecovered: a panic inside a command handler is answered with an
// error, logged with the command's name and counted; the connection, the
// pipeline and the server go on.
func TestPanicRecovered(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	before := inst.Srv.Env.Stats.PanicsRecovered.Load()
	c.Write(servertest.Cat([]string{"SET", "p", "1"}, []string{"abacus-test-panic"}, []string{"abacus-test-panic", "x"}, []string{"GET", "p"}))
	want := []string{
		"+OK\r\n",
		"-ERR internal error while executing 'abacus-test-panic'\r\n",
		"-ERR internal error while executing 'abacus-test-panic'\r\n",
		"$1\r\n1\r\n",
	}
	for _, w := range want {
		if r := c.Read(); r != w {
			t.Fatalf("got %q, want %q", r, w)
		}
	}
	if n := inst.Srv.Env.Stats.PanicsRecovered.Load() - before; n != 2 {
		t.Fatalf("PanicsRecovered went up by %d, want 2", n)
	}
	logs := inst.Logs.String()
	if !strings.Contains(logs, "abacus-test-panic") || !strings.Contains(logs, "test panic in a command handler") {
		t.Fatalf("panic not logged with the command name:\n%s", logs)
	}
	// Other clients never noticed.
	if err := inst.Client(t).Ping(servertest.Ctx).Err(); err != nil {
		t.Fatal(err)
	}
}
