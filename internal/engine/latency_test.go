package engine_test

import (
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Latency tracking and the latency monitor against redis-server: the same
// commands on both, replies compared byte for byte once the figures that
// depend on how long each server took are masked.

var (
	histBuckets = regexp.MustCompile(`\$14\r\nhistogram_usec\r\n\*(\d+)\r\n(:\d+\r\n)*`)
	percentiles = regexp.MustCompile(`=\d+\.\d{3}`)
	digits      = regexp.MustCompile(`\d+`)
)

func latencyDiff(t *testing.T) *servertest.Diff {
	inst := servertest.Start(t, servertest.WithConfig("enable-debug-command", "yes"))
	r := servertest.PrivateRedis(t, "--enable-debug-command", "yes")
	return servertest.DialDiff(t, inst.Addr, r.Addr)
}

func TestLatencyHistogramDiff(t *testing.T) {
	d := latencyDiff(t)
	d.Mask = func(s string) string { return histBuckets.ReplaceAllString(s, "HISTOGRAM") }
	d.Do("CONFIG", "RESETSTAT")
	d.Do("LATENCY", "HISTOGRAM")
	d.Do("SET", "a", "1")
	d.Do("GET", "a")
	d.Do("GET", "a")
	d.Do("GET", "b")
	d.Do("CONFIG", "SET", "latency-tracking", "yes")
	d.Do("CONFIG", "GET", "maxmemory")
	d.Do("LATENCY", "HISTOGRAM", "set")
	d.Do("LATENCY", "HISTOGRAM", "get", "nosuchcommand", "CONFIG|SET", "config|nosuch", "set")
	d.Do("LATENCY", "HISTOGRAM", "lpush")

	// Without arguments every command with calls, and a container named
	// gives its subcommands with calls, in each server's own order
	// (Redis's is its hash table's).
	names := func(c *servertest.Conn, args ...string) []string {
		v := servertest.MustParse(t, c.Do(append([]string{"LATENCY", "HISTOGRAM"}, args...)...))
		var ns []string
		for i := 0; i < len(v.Items); i += 2 {
			ns = append(ns, v.Items[i].Str)
		}
		sort.Strings(ns)
		return ns
	}
	for _, args := range [][]string{nil, {"config"}, {"get", "CONFIG", "latency"}} {
		if a, r := names(d.A, args...), names(d.R, args...); strings.Join(a, " ") != strings.Join(r, " ") {
			t.Errorf("LATENCY HISTOGRAM %v: abacus %v, redis %v", args, a, r)
		}
	}

	// The buckets: a power of two microseconds each, cumulative counts
	// growing to the calls.
	v := servertest.MustParse(t, d.A.Do("LATENCY", "HISTOGRAM", "get"))
	h := v.Items[1].Items[3].Items
	if len(h) < 2 || h[len(h)-1].Str != "3" {
		t.Errorf("get's histogram %v: want the last cumulative count 3", h)
	}

	// RESP3: maps.
	d.Mask = func(s string) string {
		s = servertest.MaskHello(s)
		return regexp.MustCompile(`\$14\r\nhistogram_usec\r\n%(\d+)\r\n(:\d+\r\n)*`).ReplaceAllString(s, "HISTOGRAM")
	}
	d.Do("HELLO", "3")
	d.Do("LATENCY", "HISTOGRAM", "set", "config|set")
}

func TestLatencyStatsInfoDiff(t *testing.T) {
	d := latencyDiff(t)
	info := func(c *servertest.Conn) string {
		s := servertest.BulkBody(t, c.Do("INFO", "latencystats"))
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(s), "\r\n") {
			lines = append(lines, percentiles.ReplaceAllString(l, "=X"))
		}
		sort.Strings(lines)
		return strings.Join(lines, "\n")
	}
	same := func(step string) {
		t.Helper()
		if a, r := info(d.A), info(d.R); a != r {
			t.Errorf("%s: INFO latencystats\nabacus:\n%s\nredis:\n%s", step, a, r)
		}
	}
	d.Do("CONFIG", "RESETSTAT")
	d.Do("SET", "k", "v")
	d.Do("GET", "k")
	d.Do("CONFIG", "SET", "latency-tracking-info-percentiles", "0 25.5 99.99 100")
	same("four percentiles")
	d.Do("CONFIG", "SET", "latency-tracking-info-percentiles", "")
	same("no percentiles")
	d.Do("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9")
	d.Do("CONFIG", "SET", "latency-tracking", "no")
	d.Do("GET", "k")
	same("tracking off")
	d.Do("CONFIG", "SET", "latency-tracking", "yes")
	d.Do("CONFIG", "RESETSTAT")
	same("after RESETSTAT")
	d.Do("LATENCY", "HISTOGRAM", "get")

	// One call of a known duration: its percentiles are its bucket's
	// highest value, within 1% above it.
	a := servertest.BulkBody(t, d.A.Do("INFO", "latencystats"))
	if !strings.Contains(a, "latency_percentiles_usec_config|resetstat:p50=") {
		t.Errorf("INFO latencystats after RESETSTAT:\n%s", a)
	}
}

func TestLatencyMonitorDiff(t *testing.T) {
	d := latencyDiff(t)
	d.Do("LATENCY", "HELP")
	d.Do("LATENCY", "DOCTOR")
	d.Do("LATENCY", "LATEST")
	d.Do("LATENCY", "HISTORY", "command")
	d.Do("LATENCY", "GRAPH", "command")
	d.Do("LATENCY", "NOSUCH")
	d.Do("LATENCY", "RESET")
	d.Do("CONFIG", "SET", "latency-monitor-threshold", "5")
	d.Do("GET", "x")
	d.Do("LATENCY", "LATEST")
	// A slow command: a sample of the "command" event (DEBUG is not a
	// fast command), its time and latency masked.
	d.Do("DEBUG", "SLEEP", "0.02")
	d.Mask = func(s string) string { return digits.ReplaceAllString(s, "N") }
	d.Do("LATENCY", "LATEST")
	d.Do("LATENCY", "HISTORY", "command")
	d.Do("LATENCY", "GRAPH", "command")
	// A second sample in another second, three times the first: the
	// graph's bars are the lowest and the highest.
	time.Sleep(1100 * time.Millisecond)
	d.Do("DEBUG", "SLEEP", "0.06")
	d.Do("LATENCY", "HISTORY", "command")
	d.Do("LATENCY", "GRAPH", "command")
	d.Do("LATENCY", "HISTORY", "fast-command")
	d.Do("LATENCY", "RESET", "command", "nosuch")
	d.Do("LATENCY", "LATEST")
	d.Do("DEBUG", "SLEEP", "0.01")
	d.Do("LATENCY", "RESET")
}
