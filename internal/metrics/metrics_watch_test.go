package metrics_test

import (
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Every write of the metrics commands invalidates a WATCH on the keys it
// changes (a compaction's destination included), and a command that
// changes nothing leaves the WATCH alone.
func TestMetricsWritesTouchWatchers(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(servertest.T0))
	setup := inst.Raw(t)
	for _, c := range [][]string{
		{"TS.CREATE", "src", "DUPLICATE_POLICY", "SUM"},
		{"TS.CREATE", "dst"},
		{"TS.CREATERULE", "src", "dst", "AGGREGATION", "sum", "10"},
		{"TS.ADD", "src", "1", "1"},
		{"SET", "s", "v"},
		{"SET", "n", "5"},
	} {
		if rep := setup.Do(c...); strings.HasPrefix(rep, "-") {
			t.Fatalf("%q: %q", c, rep)
		}
	}
	for _, tc := range []struct {
		watch   string
		cmd     []string
		touches bool
	}{
		{"src", []string{"TS.ADD", "src", "2", "1"}, true},
		{"dst", []string{"TS.ADD", "src", "20", "1"}, true},  // closes the bucket 0..9
		{"dst", []string{"TS.ADD", "src", "20", "1"}, false}, // only the open bucket moves
		{"src", []string{"TS.INCRBY", "src", "1"}, true},
		{"src", []string{"TS.ALTER", "src", "LABELS", "a", "1"}, true},
		{"src", []string{"TS.DEL", "src", "0", "0"}, false}, // nothing there
		{"src", []string{"TS.ADD", "src", "x", "1"}, false},
		{"new", []string{"TS.CREATE", "new"}, true},
		{"rl", []string{"CL.THROTTLE", "rl", "1", "1", "1"}, true},
		{"g", []string{"GCRA", "g", "1", "1", "1"}, true},
		{"sl", []string{"RATELIMIT.SLIDING", "1", "sl", "LIMITS", "1", "60", "5", "1"}, true},
		{"sl2", []string{"RATELIMIT.SLIDING", "1", "sl2", "LIMITS", "1", "60", "0", "1"}, false}, // denied, nothing stored
		{"s", []string{"SET", "s", "w", "IFEQ", "nope"}, false},
		{"s", []string{"SET", "s", "w", "IFEQ", "v"}, true},
		{"s", []string{"DELEX", "s", "IFEQ", "nope"}, false},
		{"s", []string{"DELEX", "s", "IFEQ", "w"}, true},
		{"n", []string{"INCREX", "n", "BYINT", "1", "UBOUND", "0"}, false},
		{"n", []string{"INCREX", "n", "BYINT", "1"}, true},
		{"m1", []string{"MSETEX", "2", "m1", "a", "m2", "b", "PX", "1000"}, true},
		{"m1", []string{"MSETEX", "1", "m1", "a", "NX"}, false},
		{"m2", []string{"DELIFEQ", "m2", "b"}, true},
	} {
		r := inst.Raw(t)
		r.Do("WATCH", tc.watch)
		setup.Do(tc.cmd...)
		r.Do("MULTI")
		r.Do("PING")
		rep := r.Do("EXEC")
		if got := rep == "*-1\r\n"; got != tc.touches {
			t.Errorf("WATCH %s, %q: EXEC %q, want aborted=%v", tc.watch, tc.cmd, rep, tc.touches)
		}
	}
}
