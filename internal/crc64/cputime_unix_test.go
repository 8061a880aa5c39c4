//go:build unix

package crc64

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time. The benchmarks report
// bytes per CPU-second next to bytes per wall-second, because on a shared,
// overloaded machine the wall clock also counts time spent descheduled.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
