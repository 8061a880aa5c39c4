//go:build unix

package ts

import "syscall"

// cpuNanos is the process's user+system CPU time: on a loaded machine the
// wall-clock ns/op of a benchmark counts the time other processes ran.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
