package conn

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"testing"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/loadgen"
)

// The load benchmarks reproduce bench/sidebyside's rows in process: a real
// server on loopback, 50 clients each with its own connection, pipelines of
// 1 or 16 commands over a key space of 100,000 random keys, as
// redis-benchmark -c 50 -P N -r 100000 sends them. Profile the server side
// with
//
//	go test ./internal/conn -run '^$' -bench 'Load/SET/P1$' -cpuprofile cpu.out
//	go tool pprof -top -focus 'server\.\(\*client\)\.serve' cpu.out
//
// The client side runs in the same process (it is cheap: pre-encoded
// requests and a reply scanner), so the profile shows both; cpu-µs/op is
// the whole process's CPU time (server and clients) per command.

const (
	loadClients  = 50
	loadKeyspace = 100000
)

// loadCase makes one request of the benchmark for a random key source.
type loadCase struct {
	name  string
	build func(r *rand.Rand) []string
}

func randKey(r *rand.Rand) string { return fmt.Sprintf("key:%012d", r.IntN(loadKeyspace)) }

var loadCases = []loadCase{
	{"SET", func(r *rand.Rand) []string { return []string{"SET", randKey(r), "xxx"} }},
	{"GET", func(r *rand.Rand) []string { return []string{"GET", randKey(r)} }},
	{"INCR", func(r *rand.Rand) []string {
		return []string{"INCR", fmt.Sprintf("counter:%012d", r.IntN(loadKeyspace))}
	}},
	{"MSET", func(r *rand.Rand) []string {
		args := []string{"MSET"}
		for i := 0; i < 10; i++ {
			args = append(args, randKey(r), "xxx")
		}
		return args
	}},
}

func BenchmarkLoad(b *testing.B) {
	for _, lc := range loadCases {
		for _, pipe := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/P%d", lc.name, pipe), func(b *testing.B) { benchLoad(b, lc, pipe) })
		}
	}
}

func benchLoad(b *testing.B, lc loadCase, pipe int) {
	srv := New(config.New(), Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()

	// GET reads keys that exist, as after redis-benchmark's SET test.
	fill, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	fr := bufio.NewReader(fill)
	for i := 0; i < loadKeyspace; i += 1000 {
		var req []byte
		for j := i; j < i+1000; j++ {
			req = loadgen.Encode(req, "SET", fmt.Sprintf("key:%012d", j), "xxx")
		}
		fill.Write(req)
		for j := 0; j < 1000; j++ {
			if _, err := fr.ReadSlice('\n'); err != nil {
				b.Fatal(err)
			}
		}
	}
	fill.Close()

	loadgen.Run(b, ln.Addr().String(), loadClients, pipe, 7, lc.build)
}
