package commands

import (
	"testing"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/resp"
)

// Keyspace notifications cost nothing when off: the write path of the
// commands that publish events allocates no more than it did without them
// (here: nothing at all, for writes that update a key in place, and for a
// read that misses, which would publish keymiss).

// notifyOffCases are commands that allocate nothing per call once their
// key exists, each with what it leaves for the next call.
var notifyOffCases = [][]string{
	{"set", "counter", "1234"},
	{"set", "str", "a value that is not an integer"},
	{"incr", "counter"},
	{"hset", "h", "f", "v"},
	// recipes.Buffer's Incr: the key and the member are copied only when
	// stored, so an existing hash and member cost nothing.
	{"hincrby", "buf:pending:item:1", "views", "1"},
	{"zadd", "buf:dirty", "NX", "1700000000000", "item:1"},
	{"get", "missing"},
	{"exists", "missing"},
	{"type", "missing"},
}

func notifyAllocs(t *testing.T, e *engine.Env, s *engine.Session, args []string) float64 {
	t.Helper()
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	var w resp.Writer
	e.Execute(s, argv, &w) // create the key, warm the writer
	w.Reset()
	e.Execute(s, argv, &w)
	return testing.AllocsPerRun(200, func() {
		w.Reset()
		e.Execute(s, argv, &w)
	})
}

func TestNotifyOffAllocatesNothing(t *testing.T) {
	e, s := skBenchEnv()
	for _, args := range notifyOffCases {
		if n := notifyAllocs(t, e, s, args); n != 0 {
			t.Errorf("%v with notifications off: %v allocations per call", args, n)
		}
	}
	// With events selected but no subscriber, a publish builds its channel
	// names: reported, not asserted (the cost when on is the benchmark's).
	p, _ := config.Lookup("notify-keyspace-events")
	if err := e.Cfg.Set(p, "KEA"); err != nil {
		t.Fatal(err)
	}
	for _, args := range notifyOffCases {
		t.Logf("%v with KEA and no subscriber: %v allocations per call", args, notifyAllocs(t, e, s, args))
	}
}

func benchmarkSetNotify(b *testing.B, events string, patterns ...string) {
	e, s := skBenchEnv()
	listener := &engine.Session{ID: 8, Proto: 2, Authed: true}
	for _, p := range patterns {
		e.Subscribe(listener, engine.SubPattern, p)
	}
	p, _ := config.Lookup("notify-keyspace-events")
	if err := e.Cfg.Set(p, events); err != nil {
		b.Fatal(err)
	}
	var w resp.Writer
	args := [][]byte{[]byte("set"), []byte("key:000001"), []byte("value-0123456789")}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.Reset()
		e.Execute(s, args, &w)
	}
}

// BenchmarkSetNotifyOff and BenchmarkSetNotifyKEA: SET of an existing key
// through Execute, with notifications off and with every class on (no
// subscriber: the cost of building and routing the two messages).
func BenchmarkSetNotifyOff(b *testing.B) { benchmarkSetNotify(b, "") }
func BenchmarkSetNotifyKEA(b *testing.B) { benchmarkSetNotify(b, "KEA") }

// BenchmarkSetNotifyKEAExpiredListener: with a client pattern-subscribed
// to expired events, which every SET's two channels are matched against.
func BenchmarkSetNotifyKEAExpiredListener(b *testing.B) {
	benchmarkSetNotify(b, "KEA", "__keyevent@*__:expired")
}
