package commands

import (
	"strconv"
	"syscall"
	"testing"
)

// BenchmarkMultiIncr is recipes.Buffer's Incr through Env.Execute: MULTI,
// HINCRBY into an item's pending hash, ZADD NX of the item into the dirty
// set, EXEC; and the same two commands without MULTI/EXEC, so that the
// difference is what the transaction costs. b.N counts increments.
//
//	go test ./internal/commands -run '^$' -bench MultiIncr -cpuprofile cpu.out
func BenchmarkMultiIncr(b *testing.B) {
	const items = 1000
	build := func(multi bool) [][][]byte {
		var cmds [][][]byte
		for i := 0; i < items; i++ {
			item := "item:" + strconv.Itoa(i)
			if multi {
				cmds = append(cmds, hashBenchArgs("MULTI"))
			}
			cmds = append(cmds, hashBenchArgs("HINCRBY", "buf:pending:"+item, "views", "1"),
				hashBenchArgs("ZADD", "buf:dirty", "NX", "1700000000000", item))
			if multi {
				cmds = append(cmds, hashBenchArgs("EXEC"))
			}
		}
		return cmds
	}
	for _, multi := range []bool{true, false} {
		name := "MULTI HINCRBY ZADD EXEC"
		if !multi {
			name = "HINCRBY ZADD"
		}
		b.Run(name, func(b *testing.B) {
			e := newHashBenchEnv()
			cmds := build(multi)
			per := len(cmds) / items
			b.ReportAllocs()
			b.ResetTimer()
			var ru0, ru1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			for i := 0; i < b.N*per; i++ {
				e.w.Reset()
				e.env.Execute(e.sess, cmds[i%len(cmds)], &e.w)
			}
			b.StopTimer()
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			b.ReportMetric(float64(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano())/float64(b.N), "cpu-ns/op")
			if len(e.w.Buf) == 0 || e.w.Buf[0] == '-' {
				b.Fatalf("last reply %q", e.w.Buf)
			}
		})
	}
}
