package metrics

import (
	"math"
	"math/rand"
	"runtime"
	"strconv"
	"testing"
	"weak"

	_ "github.com/abacusdb/abacus/internal/commands"

	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/enginetest"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/num"
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

// Sample writes skip the label index's hook (sampleWritten) but still
// signal the keyspace: WATCH sees them, and the index stays exact through
// copies and renames of the series written to.
func TestSampleWritesSignalAndKeepIndex(t *testing.T) {
	e, s := enginetest.New()
	_, w := enginetest.New() // a second client of e: a fresh session
	w.ID = 2
	enginetest.Run(e, s, "TS.CREATE", "a", "LABELS", "l", "v")
	enginetest.Run(e, s, "TS.CREATE", "d", "DUPLICATE_POLICY", "SUM", "LABELS", "l", "w")
	enginetest.Run(e, s, "TS.CREATERULE", "a", "d", "AGGREGATION", "sum", "10")

	for _, write := range [][]string{
		{"TS.MADD", "a", "5", "1"},
		{"TS.ADD", "a", "6", "1"},
		{"TS.INCRBY", "a", "1", "TIMESTAMP", "7"},
	} {
		enginetest.Run(e, w, "WATCH", "a")
		enginetest.Run(e, s, write...)
		enginetest.Run(e, w, "MULTI")
		if got := enginetest.Run(e, w, "EXEC"); got != "*-1\r\n" {
			t.Fatalf("%v with a watched: EXEC %q, want a null reply", write, got)
		}
	}
	// a sample at 35 closes d's bucket [20, 30): a compaction write to d
	enginetest.Run(e, s, "TS.ADD", "a", "25", "1")
	enginetest.Run(e, w, "WATCH", "d")
	enginetest.Run(e, s, "TS.ADD", "a", "35", "1")
	enginetest.Run(e, w, "MULTI")
	if got := enginetest.Run(e, w, "EXEC"); got != "*-1\r\n" {
		t.Fatalf("a compaction write to d: EXEC %q, want a null reply", got)
	}
	if metricsOf(e).ts.sampled != nil {
		t.Fatal("sampled left set after the writes")
	}

	query := func(want string) {
		t.Helper()
		if got := enginetest.Run(e, s, "TS.QUERYINDEX", "l=v"); got != want {
			t.Fatalf("TS.QUERYINDEX l=v %q, want %q", got, want)
		}
	}
	enginetest.Run(e, s, "COPY", "a", "b")
	enginetest.Run(e, s, "TS.MADD", "b", "40", "1", "a", "40", "1")
	query("*2\r\n$1\r\na\r\n$1\r\nb\r\n")
	enginetest.Run(e, s, "RENAME", "a", "c")
	enginetest.Run(e, s, "TS.MADD", "c", "50", "1")
	query("*2\r\n$1\r\nb\r\n$1\r\nc\r\n")
	// the rule followed the rename; the copy feeds nothing
	if got := enginetest.Run(e, s, "TS.ADD", "c", "60", "1"); got != ":60\r\n" {
		t.Fatalf("TS.ADD c %q", got)
	}
	if got := enginetest.Run(e, s, "TS.GET", "d"); got != "*2\r\n:50\r\n+1\r\n" {
		t.Fatalf("TS.GET d %q", got)
	}
	enginetest.Run(e, s, "TS.ALTER", "c", "LABELS", "l", "x")
	enginetest.Run(e, s, "TS.MADD", "c", "70", "1")
	query("*1\r\n$1\r\nb\r\n")
}

// parseSampleValue's integer shortcut reads what the float parser reads,
// bit for bit (the sign of -0 included).
func TestParseSampleValueIntegers(t *testing.T) {
	cases := []string{"0", "-0", "00", "1", "-1", "+1", "007", "1e3", "1.5", "nan", "inf",
		"9007199254740991", "9007199254740992", "9007199254740993", "-9007199254740993",
		"123456789012345678", "9223372036854775807", "99999999999999999999", "0x10", ""}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 10000; i++ {
		cases = append(cases, strconv.FormatInt(rng.Int63()>>uint(rng.Intn(63))*int64(1-2*rng.Intn(2)), 10))
	}
	for _, c := range cases {
		v, ok := parseSampleValue([]byte(c))
		f, fok := num.ParseFloat([]byte(c))
		fok = fok && !math.IsNaN(f) && !math.IsInf(f, 0)
		if ok != fok || ok && math.Float64bits(v) != math.Float64bits(f) {
			t.Fatalf("parseSampleValue(%q) = %v, %v; the float parser %v, %v", c, v, ok, f, fok)
		}
	}
}
