package commands

import (
	"strconv"
	"syscall"
	"testing"
)

// BenchmarkMultiIncr is recipes.Buffer's Incr through Env.Execute: MULTI,
// HINCRBY into an item's pending hash, ZADD NX of the item into the dirty
// set, EXEC; the same two commands without MULTI/EXEC, so that the
// difference is what the transaction costs; and 10 increments in one
// MULTI, as the recipe sends the increments made at the same time (its
// combining), inside BatchBegin/BatchEnd as the event loop runs a
// pipelined batch. b.N counts increments.
//
//	go test ./internal/commands -run '^$' -bench MultiIncr -cpuprofile cpu.out
func BenchmarkMultiIncr(b *testing.B) {
	const items = 1000
	// build returns the commands of every item's increment, per in each
	// MULTI (0: no MULTI).
	build := func(per int) [][][]byte {
		var cmds [][][]byte
		for i := 0; i < items; i++ {
			item := "item:" + strconv.Itoa(i)
			if per > 0 && i%per == 0 {
				cmds = append(cmds, hashBenchArgs("MULTI"))
			}
			cmds = append(cmds, hashBenchArgs("HINCRBY", "buf:pending:"+item, "views", "1"),
				hashBenchArgs("ZADD", "buf:dirty", "NX", "1700000000000", item))
			if per > 0 && i%per == per-1 {
				cmds = append(cmds, hashBenchArgs("EXEC"))
			}
		}
		return cmds
	}
	for _, c := range []struct {
		name    string
		per     int
		batched bool
	}{
		{"MULTI HINCRBY ZADD EXEC", 1, false},
		{"HINCRBY ZADD", 0, false},
		{"MULTI 10x(HINCRBY ZADD) EXEC, batched", 10, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			e := newHashBenchEnv()
			cmds := build(c.per)
			// Whole transactions (len(cmds) is a multiple of one's length),
			// at least one.
			n := b.N * len(cmds) / items
			if t := 2*c.per + 2; c.per > 0 {
				n = (n + t - 1) / t * t
			}
			b.ReportAllocs()
			b.ResetTimer()
			var ru0, ru1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			for i := 0; i < n; i++ {
				if c.batched && i%64 == 0 {
					e.env.BatchBegin()
				}
				e.w.Reset()
				e.env.Execute(e.sess, cmds[i%len(cmds)], &e.w)
				if c.batched && i%64 == 63 {
					e.env.BatchEnd()
				}
			}
			e.env.BatchEnd()
			b.StopTimer()
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			b.ReportMetric(float64(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano())/float64(b.N), "cpu-ns/op")
			if len(e.w.Buf) == 0 || e.w.Buf[0] == '-' {
				b.Fatalf("last reply %q", e.w.Buf)
			}
		})
	}
}
