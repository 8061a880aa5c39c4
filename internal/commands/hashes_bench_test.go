package commands

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

// Benchmarks of the hash commands through Env.Execute: argument checks,
// lookup, the operation and the reply, without the network. Run with:
// go test ./internal/commands -run '^$' -bench Hashes

type hashBenchEnv struct {
	env  *engine.Env
	sess *engine.Session
	w    resp.Writer
}

func newHashBenchEnv() *hashBenchEnv {
	env := engine.NewEnv(keyspace.New(16), config.New(), clock.NewManual(1_700_000_000_000),
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	return &hashBenchEnv{env: env, sess: &engine.Session{ID: 1, Proto: 2, Authed: true, User: "default"}, w: resp.Writer{Proto: 2}}
}

func (e *hashBenchEnv) do(args ...string) string {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	e.w.Reset()
	e.env.Execute(e.sess, argv, &e.w)
	return string(e.w.Buf)
}

// run executes the prebuilt commands round-robin, b.N times in all.
func (e *hashBenchEnv) run(b *testing.B, cmds [][][]byte) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.w.Reset()
		e.env.Execute(e.sess, cmds[i%len(cmds)], &e.w)
	}
	b.StopTimer()
	if len(e.w.Buf) == 0 || e.w.Buf[0] == '-' {
		b.Fatalf("last reply %q", e.w.Buf)
	}
}

func hashBenchArgs(args ...string) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = []byte(a)
	}
	return out
}

// benchHset updates fields of one hash of the given size (listpack up to
// 512 fields by default, hashtable beyond).
func benchHset(b *testing.B, size int) {
	e := newHashBenchEnv()
	cmds := make([][][]byte, size)
	for i := range cmds {
		cmds[i] = hashBenchArgs("HSET", "h", "field:"+strconv.Itoa(i), "value:"+strconv.Itoa(i))
		e.env.Execute(e.sess, cmds[i], &e.w)
	}
	e.run(b, cmds)
}

func BenchmarkHashesHsetListpack16(b *testing.B)   { benchHset(b, 16) }
func BenchmarkHashesHsetListpack128(b *testing.B)  { benchHset(b, 128) }
func BenchmarkHashesHsetHashtable10k(b *testing.B) { benchHset(b, 10000) }

// BenchmarkHashesHsetNewKeys creates a small hash per command, as a
// workload of many small hashes does.
func BenchmarkHashesHsetNewKeys(b *testing.B) {
	e := newHashBenchEnv()
	cmds := make([][][]byte, 1<<16)
	for i := range cmds {
		cmds[i] = hashBenchArgs("HSET", "user:"+strconv.Itoa(i), "name", "n"+strconv.Itoa(i), "age", "42")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%len(cmds) == 0 && i > 0 {
			b.StopTimer()
			e.do("FLUSHALL")
			b.StartTimer()
		}
		e.w.Reset()
		e.env.Execute(e.sess, cmds[i%len(cmds)], &e.w)
	}
}

func benchHincrby(b *testing.B, size int) {
	e := newHashBenchEnv()
	cmds := make([][][]byte, size)
	for i := range cmds {
		cmds[i] = hashBenchArgs("HINCRBY", "h", "counter:"+strconv.Itoa(i), "1")
	}
	e.run(b, cmds)
}

func BenchmarkHashesHincrbyListpack16(b *testing.B)   { benchHincrby(b, 16) }
func BenchmarkHashesHincrbyHashtable10k(b *testing.B) { benchHincrby(b, 10000) }

// BenchmarkHashesHincrbyWithTTL increments fields that carry a TTL (the
// multi-precision counter recipe's HINCRBY).
func BenchmarkHashesHincrbyWithTTL(b *testing.B) {
	e := newHashBenchEnv()
	cmds := make([][][]byte, 60)
	for i := range cmds {
		f := strconv.Itoa(i)
		cmds[i] = hashBenchArgs("HINCRBY", "counts:1", f, "1")
		e.do("HINCRBY", "counts:1", f, "1")
		e.do("HEXPIRE", "counts:1", "3600", "FIELDS", "1", f)
	}
	e.run(b, cmds)
}

func BenchmarkHashesHget(b *testing.B) {
	e := newHashBenchEnv()
	cmds := make([][][]byte, 100)
	for i := range cmds {
		e.do("HSET", "h", "field:"+strconv.Itoa(i), "value")
		cmds[i] = hashBenchArgs("HGET", "h", "field:"+strconv.Itoa(i))
	}
	e.run(b, cmds)
}
