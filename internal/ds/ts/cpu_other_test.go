//go:build !unix

package ts

func cpuNanos() int64 { return 0 }
