package commands

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/resp"
	"github.com/abacusdb/abacus/internal/script"
)

// Execute-level benchmarks of EVALSHA: the costs of the Lua VM and of
// redis.call without the network. bench/scriptbench compares the same
// scripts with redis-server over the network.

func scriptBenchEnv(b *testing.B, body string, transactional bool) (*engine.Env, *engine.Session, string) {
	b.Helper()
	cfg := config.New()
	if transactional {
		if err := cfg.SetMany([][2]string{{"script-transactional", "yes"}}, true); err != nil {
			b.Fatal(err)
		}
	}
	e := engine.NewEnv(keyspace.New(16), cfg, clock.Real{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	s := &engine.Session{Proto: 2, Authed: true}
	var w resp.Writer
	e.Execute(s, [][]byte{[]byte("SCRIPT"), []byte("LOAD"), []byte(body)}, &w)
	sha := script.SHA1(body)
	if string(w.Buf) != "$40\r\n"+sha+"\r\n" {
		b.Fatalf("SCRIPT LOAD: %q", w.Buf)
	}
	return e, s, sha
}

// benchEvalsha runs the script plain and all-or-nothing (sub-benchmarks
// plain and transactional).
func benchEvalsha(b *testing.B, body string, args func(i int) [][]byte) {
	b.Run("plain", func(b *testing.B) { benchEvalshaRun(b, body, false, args) })
	b.Run("transactional", func(b *testing.B) { benchEvalshaRun(b, body, true, args) })
}

func benchEvalshaRun(b *testing.B, body string, transactional bool, args func(i int) [][]byte) {
	e, s, sha := scriptBenchEnv(b, body, transactional)
	var w resp.Writer
	b.ReportAllocs()
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.Reset()
		e.Execute(s, append([][]byte{[]byte("EVALSHA"), []byte(sha)}, args(i)...), &w)
		if w.Buf[0] == '-' {
			b.Fatalf("%q", w.Buf)
		}
	}
	b.StopTimer()
	// The process's CPU time per call: steadier than ns/op on a machine
	// shared with other work.
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	b.ReportMetric(float64(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano())/float64(b.N), "cpu-ns/op")
}

func BenchmarkEvalshaIncr10(b *testing.B) {
	keys := make([][]byte, 11)
	keys[0] = []byte("10")
	for i := 1; i <= 10; i++ {
		keys[i] = []byte("k" + strconv.Itoa(i))
	}
	benchEvalsha(b, "for i = 1, 10 do redis.call('INCR', KEYS[i]) end return 10", func(int) [][]byte { return keys })
}

func BenchmarkEvalshaReturn1(b *testing.B) {
	args := [][]byte{[]byte("0")}
	benchEvalsha(b, "return 1", func(int) [][]byte { return args })
}

func BenchmarkEvalshaSlidingWindow(b *testing.B) {
	src, err := os.ReadFile(filepath.Join("..", "..", "bench", "scriptbench", "sliding_window.lua"))
	if err != nil {
		b.Fatal(err)
	}
	limits := []byte(`[[1000,100,100],[60000,1000,5000],[3600000,10000,300000]]`)
	subjects := make([][]byte, 1000)
	for i := range subjects {
		subjects[i] = []byte("rl:" + strconv.Itoa(i))
	}
	benchEvalsha(b, string(src), func(i int) [][]byte {
		return [][]byte{[]byte("1"), subjects[i%len(subjects)], limits, []byte("1"), nil}
	})
}

// BenchmarkEvalshaLoop: a pure-Lua loop of 1,000 iterations of two
// instructions, the case where the kill checkpoint costs most.
func BenchmarkEvalshaLoop(b *testing.B) {
	args := [][]byte{[]byte("0"), []byte("1000")}
	benchEvalsha(b, "local x = 0 for i = 1, tonumber(ARGV[1]) do x = x + i end return x", func(int) [][]byte { return args })
}

// BenchmarkEvalshaHelper: a loop calling a small Lua function.
func BenchmarkEvalshaHelper(b *testing.B) {
	args := [][]byte{[]byte("0"), []byte("100")}
	benchEvalsha(b, "local function sq(v) return v * v end local x = 0 for i = 1, tonumber(ARGV[1]) do x = x + sq(i) end return x", func(int) [][]byte { return args })
}
