package recipes

import (
	"os"
	"testing"
)

// TestScriptsMatchBench: the sliding-window and GCRA fallbacks are copies
// of bench/ratelimitbench's scripts, which the command tests of
// internal/metrics hold to RATELIMIT.SLIDING's and CL.THROTTLE's decisions
// on random sequences; the copies must not drift from them. (A package
// can embed only files below its folder, hence the copies.)
func TestScriptsMatchBench(t *testing.T) {
	for name, embedded := range map[string]string{"sliding.lua": slidingLua, "gcra.lua": gcraLua} {
		b, err := os.ReadFile("../bench/ratelimitbench/" + name)
		must(t, err)
		if string(b) != embedded {
			t.Errorf("recipes/lua/%s differs from bench/ratelimitbench/%s", name, name)
		}
	}
}
