package metrics

import (
	"runtime"
	"testing"
	"weak"

	_ "github.com/abacusdb/abacus/internal/commands"

	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/enginetest"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// The label index lives in the Env: two engines in one process index their
// own series only, and FLUSHDB/FLUSHALL drop the indexes of the databases
// they emptied instead of leaving them to be pruned by a later query.
func TestMetricsStateFlushDropsIndex(t *testing.T) {
	e, s := enginetest.New()
	other, os := enginetest.New()
	enginetest.Run(e, s, "TS.CREATE", "a", "LABELS", "l", "v")
	s.DB = 1
	enginetest.Run(e, s, "TS.CREATE", "b", "LABELS", "l", "v")
	if got := enginetest.Run(other, os, "TS.QUERYINDEX", "l=v"); got != "*0\r\n" {
		t.Fatalf("other engine's TS.QUERYINDEX %q", got)
	}
	indexed := func(e *engine.Env) (n int) {
		for _, d := range metricsOf(e).ts.dbs {
			n += d.idx.Len()
		}
		return n
	}
	if n := indexed(other); n != 0 {
		t.Fatalf("other engine indexes %d series", n)
	}
	if n := indexed(e); n != 2 {
		t.Fatalf("%d series indexed, want 2", n)
	}
	enginetest.Run(e, s, "FLUSHDB")
	if n := indexed(e); n != 1 {
		t.Fatalf("%d series indexed after FLUSHDB, want 1", n)
	}
	s.DB = 0
	// a flush that a script rolls back keeps the index
	script := "#!lua flags=transactional\n" +
		"redis.call('FLUSHALL')\n" +
		"return redis.call('TS.ADD', 'missing', 1, 1, 'ON_DUPLICATE', 'bad')\n"
	if got := enginetest.Run(e, s, "EVAL", script, "0"); got[0] != '-' {
		t.Fatalf("script did not fail: %q", got)
	}
	if got := enginetest.Run(e, s, "TS.QUERYINDEX", "l=v"); got != "*1\r\n$1\r\na\r\n" {
		t.Fatalf("TS.QUERYINDEX after a rolled-back FLUSHALL %q", got)
	}
	enginetest.Run(e, s, "FLUSHALL")
	if n := len(metricsOf(e).ts.dbs); n != 0 {
		t.Fatalf("%d databases indexed after FLUSHALL", n)
	}
	// the index is rebuilt as series come back
	enginetest.Run(e, s, "TS.CREATE", "c", "LABELS", "l", "v")
	if got := enginetest.Run(e, s, "TS.QUERYINDEX", "l=v"); got != "*1\r\n$1\r\nc\r\n" {
		t.Fatalf("TS.QUERYINDEX after FLUSHALL and TS.CREATE %q", got)
	}
}

// Nothing outside an Env keeps its keyspace or its metrics state: a
// dropped engine is collectable.
func TestMetricsStateDroppedWithEnv(t *testing.T) {
	var ks weak.Pointer[keyspace.Keyspace]
	var st weak.Pointer[metricsState]
	func() {
		e, s := enginetest.New()
		enginetest.Run(e, s, "TS.CREATE", "a", "LABELS", "l", "v")
		if got := enginetest.Run(e, s, "TS.QUERYINDEX", "l=v"); got != "*1\r\n$1\r\na\r\n" {
			t.Fatalf("TS.QUERYINDEX %q", got)
		}
		ks, st = weak.Make(e.KS), weak.Make(metricsOf(e))
	}()
	for i := 0; i < 3 && (ks.Value() != nil || st.Value() != nil); i++ {
		runtime.GC()
	}
	if ks.Value() != nil || st.Value() != nil {
		t.Fatal("a dropped Env's keyspace or metrics state is still reachable")
	}
}
