package httpapi_test

import (
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/httpapi"
)

// TestMetricsDecisions checks the rate limiters' answers and the scripts
// rolled back, in INFO and on /metrics.
func TestMetricsDecisions(t *testing.T) {
	w := startWeb(t, httpapi.Limits{})
	// A burst of 1 (two requests) in an hour: the third is denied.
	for range 3 {
		w.do(t, "CL.THROTTLE", "cl", "1", "1", "3600")
	}
	w.do(t, "GCRA", "g", "0", "1", "3600")
	w.do(t, "GCRA", "g", "0", "1", "3600")
	w.do(t, "RATELIMIT.SLIDING", "1", "s", "LIMITS", "1", "60", "5", "1")
	w.do(t, "CONFIG", "SET", "script-transactional", "yes")
	if r := w.inst.Raw(t).Do("EVAL", "redis.call('SET', KEYS[1], 'x'); return redis.call('INCR', KEYS[1])", "1", "k"); !strings.HasPrefix(r, "-") {
		t.Fatalf("the failing script replied %q", r)
	}
	if r := w.do(t, "EXISTS", "k"); r != ":0\r\n" {
		t.Fatalf("the script's write was not undone: EXISTS %q", r)
	}

	info := w.do(t, "INFO", "stats")
	for _, want := range []string{"abacus_script_rollbacks:1\r\n", "abacus_ratelimit_cl.throttle:allowed=2,denied=1\r\n",
		"abacus_ratelimit_gcra:allowed=1,denied=1\r\n", "abacus_ratelimit_ratelimit.sliding:allowed=1,denied=0\r\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO stats has no %q", want)
		}
	}
	fams, _ := w.scrape(t)
	for _, c := range []struct {
		name, cmd string
		want      float64
	}{
		{"abacus_ratelimit_allowed_total", "cl.throttle", 2},
		{"abacus_ratelimit_denied_total", "cl.throttle", 1},
		{"abacus_ratelimit_denied_total", "gcra", 1},
		{"abacus_ratelimit_allowed_total", "ratelimit.sliding", 1},
	} {
		if v := mustSample(t, fams, c.name, "cmd", c.cmd); v != c.want {
			t.Errorf("%s{cmd=%q} = %v, want %v", c.name, c.cmd, v, c.want)
		}
	}
	if v := mustSample(t, fams, "abacus_script_rollbacks_total"); v != 1 {
		t.Errorf("abacus_script_rollbacks_total = %v", v)
	}

	w.do(t, "CONFIG", "RESETSTAT")
	if info := w.do(t, "INFO", "stats"); !strings.Contains(info, "abacus_script_rollbacks:0\r\n") || strings.Contains(info, "abacus_ratelimit_") {
		t.Errorf("CONFIG RESETSTAT left counts: %q", info)
	}
}
