package engine_test

import (
	"io"
	"log/slog"
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/resp"
)

// Execute-level benchmarks of a transaction of 10 INCRs (the bench/txbench
// load without the network), against the same 10 INCRs run plainly.

func txBenchEnv() (*engine.Env, *engine.Session, [][][]byte) {
	env := engine.NewEnv(keyspace.New(16), config.New(), clock.Real{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	s := &engine.Session{ID: 1, Proto: 2, Authed: true, User: "default"}
	var incrs [][][]byte
	for i := 0; i < 10; i++ {
		incrs = append(incrs, [][]byte{[]byte("INCR"), []byte("tx:" + strconv.Itoa(i*7919))})
	}
	return env, s, incrs
}

func BenchmarkTxMultiExec10Incr(b *testing.B) {
	env, s, incrs := txBenchEnv()
	multi, exec := [][]byte{[]byte("MULTI")}, [][]byte{[]byte("EXEC")}
	w := resp.Writer{Proto: 2}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		env.Execute(s, multi, &w)
		for _, a := range incrs {
			env.Execute(s, a, &w)
		}
		env.Execute(s, exec, &w)
		w.Reset()
	}
}

func BenchmarkTxPlain10Incr(b *testing.B) {
	env, s, incrs := txBenchEnv()
	w := resp.Writer{Proto: 2}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		for _, a := range incrs {
			env.Execute(s, a, &w)
		}
		w.Reset()
	}
}

func BenchmarkTxWatchedWrite(b *testing.B) {
	env, s, incrs := txBenchEnv()
	other := &engine.Session{ID: 2, Proto: 2, Authed: true, User: "default"}
	w := resp.Writer{Proto: 2}
	env.Execute(other, [][]byte{[]byte("WATCH"), []byte("elsewhere")}, &w)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		for _, a := range incrs {
			env.Execute(s, a, &w)
		}
		w.Reset()
	}
}
