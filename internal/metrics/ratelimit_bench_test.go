package metrics_test

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/enginetest"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/resp"
)

// BenchmarkRatelimitExec drives the rate-limit commands through
// Env.Execute over 10,000 limiters (bench/ratelimitbench's cases): the
// commands' own cost, without network. SET is there for scale.
//
//	go test ./internal/metrics -run '^$' -bench RatelimitExec -cpuprofile cpu.out
func BenchmarkRatelimitExec(b *testing.B) {
	rows := []struct {
		name  string
		build func(k string) []string
	}{
		{"SET", func(k string) []string { return []string{"SET", "s:" + k, "v"} }},
		{"CL.THROTTLE", func(k string) []string { return []string{"CL.THROTTLE", "rl:" + k, "100", "1000", "1"} }},
		{"CL.THROTTLE-steady", func(k string) []string { return []string{"CL.THROTTLE", "rs:" + k, "1000", "600", "60"} }},
		{"GCRA", func(k string) []string { return []string{"GCRA", "gc:" + k, "100", "1000", "1"} }},
		{"RATELIMIT.SLIDING", func(k string) []string {
			return []string{"RATELIMIT.SLIDING", "1", "sw:" + k, "LIMITS", "3", "1", "100", "0.1", "60", "1000", "5", "3600", "10000", "300"}
		}},
	}
	for _, row := range rows {
		b.Run(row.name, func(b *testing.B) {
			env := engine.NewEnv(keyspace.New(16), config.New(), clock.Real{},
				slog.New(slog.NewTextHandler(io.Discard, nil)))
			sess := &engine.Session{ID: 1, Proto: 2, Authed: true, User: "default"}
			w := resp.Writer{Proto: 2}
			r := rand.New(rand.NewPCG(1, 2))
			reqs := make([][][]byte, 1<<16)
			for i := range reqs {
				reqs[i] = enginetest.Argv(row.build(fmt.Sprintf("%012d", r.IntN(10000))))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w.Reset()
				env.Execute(sess, reqs[i%len(reqs)], &w)
			}
			b.StopTimer()
			if len(w.Buf) == 0 || w.Buf[0] == '-' {
				b.Fatalf("last reply %q", w.Buf)
			}
		})
	}
}
