package metrics_test

import (
	"io"
	"log/slog"
	"strconv"
	"syscall"
	"testing"

	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/enginetest"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/resp"
)

// BenchmarkTSExec drives TS.ADD (in-order appends and updates of the
// latest sample) and, for reference, ZADD through Env.Execute: the
// commands' own cost, without network or scheduler.
//
//	go test ./internal/metrics -run '^$' -bench TSExec -cpuprofile cpu.out
func BenchmarkTSExec(b *testing.B) {
	rows := []struct {
		name  string
		build func(i int) []string
	}{
		{"TS.ADD append", func(i int) []string {
			return []string{"TS.ADD", "bench:ts", strconv.Itoa(1_700_000_000_000 + i), strconv.Itoa(i % 97)}
		}},
		{"TS.ADD same ms LAST", func(i int) []string {
			return []string{"TS.ADD", "bench:ts", strconv.Itoa(1_700_000_000_000 + i/16), strconv.Itoa(i % 97), "ON_DUPLICATE", "LAST"}
		}},
		{"ZADD", func(i int) []string {
			return []string{"ZADD", "bench:z", strconv.Itoa(i % 100000), "m:" + strconv.Itoa(i%100000)}
		}},
	}
	for _, row := range rows {
		b.Run(row.name, func(b *testing.B) {
			env := engine.NewEnv(keyspace.New(16), config.New(), clock.Real{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
			sess := &engine.Session{ID: 1, Proto: 2, Authed: true, User: "default"}
			w := resp.Writer{Proto: 2}
			reqs := make([][][]byte, 1<<16)
			b.ReportAllocs()
			var ru0, ru1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			for i := 0; i < b.N; i++ {
				if i%len(reqs) == 0 {
					b.StopTimer()
					for j := range reqs {
						reqs[j] = enginetest.Argv(row.build(i + j))
					}
					b.StartTimer()
				}
				w.Reset()
				env.Execute(sess, reqs[i%len(reqs)], &w)
			}
			b.StopTimer()
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			b.ReportMetric(float64(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano())/float64(b.N), "cpu-ns/op")
			if len(w.Buf) == 0 || w.Buf[0] == '-' {
				b.Fatalf("last reply %q", w.Buf)
			}
		})
	}
}
