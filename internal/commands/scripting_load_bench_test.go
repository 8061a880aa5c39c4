package commands_test

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/conn"
	"github.com/abacusdb/abacus/internal/loadgen"
	"github.com/abacusdb/abacus/internal/script"
)

// bench/scriptbench in process, for profiling the server side of EVALSHA
// under the same load: 50 clients on
// loopback pipelining 1 or 16 requests, keys drawn from 10,000 values as
// redis-benchmark -r 10000 draws them.
//
//	go test ./internal/command -run '^$' -bench 'ScriptLoad/limiter/P16$' -cpuprofile cpu.out
//	go tool pprof -top -focus 'server\.\(\*client\)\.serve' cpu.out
//
// Set ABACUS_BENCH_TRANSACTIONAL=1 to run the scripts all-or-nothing
// (script-transactional yes).

const scriptLoadClients = 50

type scriptLoadCase struct {
	name  string
	body  string // loaded with SCRIPT LOAD
	build func(sha string, r *rand.Rand) []string
}

func scriptLoadCases(b *testing.B) []scriptLoadCase {
	src, err := os.ReadFile(filepath.Join("..", "..", "bench", "scriptbench", "sliding_window.lua"))
	if err != nil {
		b.Fatal(err)
	}
	const limits = `[[1000,100,100],[60000,1000,5000],[3600000,10000,300000]]`
	return []scriptLoadCase{
		{name: "incr10", body: "for i = 1, 10 do redis.call('INCR', KEYS[i]) end\nreturn 10",
			build: func(sha string, r *rand.Rand) []string {
				a := []string{"EVALSHA", sha, "10"}
				for i := 0; i < 10; i++ {
					a = append(a, fmt.Sprintf("k%d:%012d", i, r.IntN(10000)))
				}
				return a
			}},
		{name: "limiter", body: string(src),
			build: func(sha string, r *rand.Rand) []string {
				return []string{"EVALSHA", sha, "1", fmt.Sprintf("rl:%012d", r.IntN(10000)), limits, "1", ""}
			}},
	}
}

func scriptLoadServer(b *testing.B, bodies ...string) string {
	cfg := config.New()
	if os.Getenv("ABACUS_BENCH_TRANSACTIONAL") == "1" {
		if err := cfg.SetMany([][2]string{{"script-transactional", "yes"}}, true); err != nil {
			b.Fatal(err)
		}
	}
	srv := conn.New(cfg, conn.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	rd := bufio.NewReader(conn)
	for _, body := range bodies {
		if _, err := conn.Write(loadgen.Encode(nil, "SCRIPT", "LOAD", body)); err != nil {
			b.Fatal(err)
		}
		line, err := rd.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "$40") {
			b.Fatalf("SCRIPT LOAD: %q %v", line, err)
		}
		if _, err := rd.Discard(42); err != nil {
			b.Fatal(err)
		}
	}
	return addr
}

// BenchmarkScriptLoad: EVALSHA of incr10 and of the limiter.
func BenchmarkScriptLoad(b *testing.B) {
	for _, sc := range scriptLoadCases(b) {
		for _, pipe := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/P%d", sc.name, pipe), func(b *testing.B) {
				addr := scriptLoadServer(b, sc.body)
				sha := script.SHA1(sc.body)
				loadgen.Run(b, addr, scriptLoadClients, pipe, 5, func(r *rand.Rand) []string { return sc.build(sha, r) })
			})
		}
	}
}
