package durability_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime/metrics"
	"runtime/trace"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

var traceMetrics = []string{
	"/gc/cycles/total:gc-cycles",
	"/cpu/classes/gc/mark/assist:cpu-seconds",
	"/cpu/classes/gc/mark/dedicated:cpu-seconds",
	"/cpu/classes/gc/pause:cpu-seconds",
	"/sched/latencies:seconds",
	"/gc/heap/allocs:bytes",
	"/gc/heap/allocs:objects",
}

func readMetrics() []metrics.Sample {
	s := make([]metrics.Sample, len(traceMetrics))
	for i, n := range traceMetrics {
		s[i].Name = n
	}
	metrics.Read(s)
	return s
}

func diffMetrics(t *testing.T, label string, a, b []metrics.Sample) {
	for i := range a {
		switch a[i].Value.Kind() {
		case metrics.KindUint64:
			t.Logf("%s %s %d", label, a[i].Name, b[i].Value.Uint64()-a[i].Value.Uint64())
		case metrics.KindFloat64:
			t.Logf("%s %s %.4f", label, a[i].Name, b[i].Value.Float64()-a[i].Value.Float64())
		case metrics.KindFloat64Histogram:
			ha, hb := a[i].Value.Float64Histogram(), b[i].Value.Float64Histogram()
			var tot uint64
			cnt := make([]uint64, len(hb.Counts))
			for j := range hb.Counts {
				cnt[j] = hb.Counts[j] - ha.Counts[j]
				tot += cnt[j]
			}
			var sb strings.Builder
			var cum uint64
			for _, q := range []float64{.5, .9, .99, .999, 1} {
				cum = 0
				for j := range cnt {
					cum += cnt[j]
					if float64(cum) >= q*float64(tot) {
						fmt.Fprintf(&sb, " q%.3f<=%.1fus", q, hb.Buckets[j+1]*1e6)
						break
					}
				}
			}
			t.Logf("%s %s n=%d%s", label, a[i].Name, tot, sb.String())
		}
	}
}

// TestSaveTrace is a diagnostic, not a check: with ABACUS_SAVE_TRACE=N
// it fills a server with N keys (DEBUG POPULATE), runs redis-benchmark's
// GETs from 50 clients against it, and logs the runtime's metrics (GC
// cycles and assists, the scheduler's latencies) for 300,000 GETs without
// a save and then during a BGSAVE (ABACUS_SAVE_WHAT=rewrite: BGREWRITEAOF;
// commands: without the RDB preamble). ABACUS_TRACE_OUT=file writes a
// runtime trace of the save: `go tool trace file`, the event loop's
// goroutine (conn.(*eventLoop).run) then shows its scheduler waits and
// what it blocked on (docs/benchmarks.md has what it showed).
func TestSaveTrace(t *testing.T) {
	nkeys, _ := strconv.Atoi(os.Getenv("ABACUS_SAVE_TRACE"))
	if nkeys == 0 {
		t.Skip("ABACUS_SAVE_TRACE not set")
	}
	what := os.Getenv("ABACUS_SAVE_WHAT")
	dir := t.TempDir()
	kv := []string{"dir", dir, "rdbcompression", "no", "enable-debug-command", "yes"}
	if what != "" {
		kv = append(kv, "appendonly", "yes", "appendfsync", "everysec")
	}
	if what == "commands" {
		kv = append(kv, "aof-use-rdb-preamble", "no")
	}
	inst := servertest.Start(t, servertest.WithConfig(kv...))
	c := inst.Raw(t)
	for n := 250000; ; n += 250000 {
		// A loaded machine may take longer than Do's deadline.
		c.Write(servertest.Encode("DEBUG", "POPULATE", strconv.Itoa(min(n, nkeys)), "key", "10"))
		if _, err := c.ReadErr(time.Minute); err != nil {
			t.Fatal(err)
		}
		if n >= nkeys {
			break
		}
	}
	t.Logf("dbsize %q", c.Do("DBSIZE"))
	for strings.Contains(c.Do("INFO", "persistence"), "aof_rewrite_in_progress:1") {
		time.Sleep(100 * time.Millisecond)
	}
	port := inst.Addr[strings.LastIndex(inst.Addr, ":")+1:]
	bench := func(n int) *exec.Cmd {
		cmd := exec.Command("redis-benchmark", "-p", port, "-t", "get", "-c", "50", "-n", strconv.Itoa(n), "-r", strconv.Itoa(nkeys), "-q")
		return cmd
	}
	// Without a save.
	m0 := readMetrics()
	out, err := bench(300000).CombinedOutput()
	m1 := readMetrics()
	t.Logf("without: %s err %v", lastLine(out), err)
	diffMetrics(t, "without", m0, m1)

	b := bench(50000000)
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	var tf *os.File
	if p := os.Getenv("ABACUS_TRACE_OUT"); p != "" {
		tf, _ = os.Create(p)
		trace.Start(tf)
	}
	m2 := readMetrics()
	cmd := "BGSAVE"
	field := "rdb_bgsave_in_progress:1"
	if what != "" {
		cmd, field = "BGREWRITEAOF", "aof_rewrite_in_progress:1"
	}
	start := time.Now()
	t.Logf("%s: %s", cmd, c.Do(cmd))
	for strings.Contains(c.Do("INFO", "persistence"), field) {
		time.Sleep(20 * time.Millisecond)
	}
	m3 := readMetrics()
	if tf != nil {
		trace.Stop()
		tf.Close()
	}
	t.Logf("save took %v", time.Since(start))
	diffMetrics(t, "during", m2, m3)
	b.Process.Kill()
	b.Wait()
	for _, l := range strings.Split(inst.Logs.String(), "\n") {
		if strings.Contains(l, "save") || strings.Contains(l, "rewrite") {
			t.Log(l)
		}
	}
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexAny(s, "\r\n"); i >= 0 {
		return s[i+1:]
	}
	return s
}
