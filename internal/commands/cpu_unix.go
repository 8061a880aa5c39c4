//go:build unix

package commands

import (
	"syscall"
	"time"
)

// cpuTimes returns the process's system and user CPU time (getrusage).
func cpuTimes() (sys, user time.Duration) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return time.Duration(ru.Stime.Nano()), time.Duration(ru.Utime.Nano())
}
