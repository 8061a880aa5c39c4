package httpapi_test

import (
	"fmt"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/enginetest"
)

// BenchmarkMRange24h is the explorer's 24-hour query in process: TS.MRANGE
// over 20 series of 86,400 one-second samples, avg per 5 minutes.
func BenchmarkMRange24h(b *testing.B) {
	env, s := enginetest.New()
	const end = 1_700_000_000_000
	for k := range 20 {
		key := fmt.Sprintf("day:%02d", k)
		enginetest.Run(env, s, "TS.CREATE", key, "LABELS", "bench", "day")
		args := []string{"TS.MADD"}
		for i := range 86400 {
			args = append(args, key, strconv.Itoa(end-(86399-i)*1000), strconv.Itoa((i*7+k)%1000))
			if len(args) > 3000 {
				enginetest.Run(env, s, args...)
				args = args[:1]
			}
		}
		if len(args) > 1 {
			enginetest.Run(env, s, args...)
		}
	}
	q := []string{"TS.MRANGE", strconv.Itoa(end - 86400_000), strconv.Itoa(end), "AGGREGATION", "avg", "300000", "WITHLABELS", "FILTER", "bench=day"}
	if r := enginetest.Run(env, s, q...); r[:4] != "*20\r" {
		b.Fatalf("%.100q", r)
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		enginetest.Run(env, s, q...)
	}
	// CPU time says more than wall time on a machine shared with others.
	b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
