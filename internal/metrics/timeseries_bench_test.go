package metrics_test

import (
	"bytes"
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

// BenchmarkTSMadd drives a 7-sample TS.MADD onto existing series through
// Env.Execute, in the shapes the recipes send: recipes.Counter.Incr's
// (DUPLICATE_POLICY SUM, every sample at its precision's open slice, so
// mostly an update of the latest sample) and in-order appends (one new
// latest sample per series). An operation is 7 samples. The request is
// rewritten in place each time, so the loop allocates only what the
// command does.
//
//	go test ./internal/metrics -run '^$' -bench TSMadd -cpuprofile cpu.out
func BenchmarkTSMadd(b *testing.B) {
	steps := []int64{1000, 5000, 60_000, 300_000, 3_600_000, 18_000_000, 86_400_000}
	rows := []struct {
		name   string
		create []string                    // TS.CREATE options
		sample func(i, k int) (t, v int64) // sample k of operation i
	}{
		{"counter SUM", []string{"RETENTION", "86400000", "DUPLICATE_POLICY", "SUM"}, func(i, k int) (int64, int64) {
			now := int64(1_700_000_000_000 + i)
			return now - now%steps[k], 1
		}},
		{"append", nil, func(i, k int) (int64, int64) {
			return int64(1_700_000_000_000 + i), int64(i % 97)
		}},
	}
	for _, row := range rows {
		b.Run(row.name, func(b *testing.B) {
			env := engine.NewEnv(keyspace.New(16), config.New(), clock.Real{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
			sess := &engine.Session{ID: 1, Proto: 2, Authed: true, User: "default"}
			w := resp.Writer{Proto: 2}
			req := [][]byte{[]byte("TS.MADD")}
			for k := range steps {
				key := "bench:c:" + strconv.Itoa(k)
				env.Execute(sess, enginetest.Argv(append([]string{"TS.CREATE", key}, row.create...)), &w)
				req = append(req, []byte(key), make([]byte, 0, 20), make([]byte, 0, 20))
			}
			b.ReportAllocs()
			var ru0, ru1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			for i := 0; i < b.N; i++ {
				for k := range steps {
					t, v := row.sample(i, k)
					req[2+3*k] = strconv.AppendInt(req[2+3*k][:0], t, 10)
					req[3+3*k] = strconv.AppendInt(req[3+3*k][:0], v, 10)
				}
				w.Reset()
				env.Execute(sess, req, &w)
			}
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			b.ReportMetric(float64(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano())/float64(b.N), "cpu-ns/op")
			if len(w.Buf) == 0 || w.Buf[0] != '*' || bytes.IndexByte(w.Buf, '-') >= 0 {
				b.Fatalf("last reply %q", w.Buf)
			}
		})
	}
}
