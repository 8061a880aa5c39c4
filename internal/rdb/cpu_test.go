package rdb_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user and system CPU time so far: the
// collector's background workers included, which a benchmark's ns/op on a
// shared machine does not tell apart from waiting.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPUPer reports the CPU time since start per unit (keys ...) of
// b.N rounds of n units.
func reportCPUPer(b *testing.B, start time.Duration, n int, unit string) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N*n), "cpu-ns/"+unit)
}
