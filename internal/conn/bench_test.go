package conn

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/loadgen"
	"github.com/abacusdb/abacus/internal/resp"
)

// benchPath runs the request path without a network: parse one command
// from a buffer, execute it, encode the reply.
func benchPath(b *testing.B, req []byte) {
	cfg := config.New()
	env := engine.NewEnv(keyspace.New(16), cfg, clock.Real{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	sess := &engine.Session{ID: 1, Proto: 2, Authed: true, User: "default"}
	w := resp.Writer{Proto: 2}
	p := resp.Parser{MaxBulk: cfg.Int(config.ProtoMaxBulkLen), Authenticated: true}
	var argv [][]byte
	// The key exists, so GET takes its hit path.
	env.Execute(sess, [][]byte{[]byte("SET"), []byte("key:000042"), []byte("value-of-sixteen")}, &w)
	b.ReportAllocs()
	b.SetBytes(int64(len(req)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		args, n, err := p.Parse(req, argv[:0])
		if err != nil || n != len(req) {
			b.Fatalf("parse: %v %d", err, n)
		}
		argv = args
		env.Execute(sess, args, &w)
		w.Reset()
	}
}

// BenchmarkPathGet is parse + Execute + reply for GET of a present key.
func BenchmarkPathGet(b *testing.B) {
	benchPath(b, loadgen.Encode(nil, "GET", "key:000042"))
}

// BenchmarkPathSet is parse + Execute + reply for SET of an existing key.
func BenchmarkPathSet(b *testing.B) {
	benchPath(b, loadgen.Encode(nil, "SET", "key:000042", "value-of-sixteen"))
}

// benchServer drives a real server over loopback with pipelines of 16
// commands and reports allocations per command (server and client side
// together; the client side allocates nothing per command).
func benchServer(b *testing.B, args ...string) {
	srv := New(config.New(), Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	const depth = 16
	var batch []byte
	for i := 0; i < depth; i++ {
		batch = loadgen.Encode(batch, args...)
	}
	r := bufio.NewReaderSize(conn, 64*1024)
	readReplies := func(n int) {
		for i := 0; i < n; i++ {
			line, err := r.ReadSlice('\n')
			if err != nil {
				b.Fatal(err)
			}
			if line[0] == '$' && line[1] != '-' {
				l, _ := strconv.Atoi(string(line[1 : len(line)-2]))
				if _, err := r.Discard(l + 2); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	conn.Write(loadgen.Encode(nil, "SET", "key:000042", "value-of-sixteen"))
	readReplies(1)
	b.ReportAllocs()
	b.ResetTimer()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	rounds := (b.N + depth - 1) / depth
	for i := 0; i < rounds; i++ {
		if _, err := conn.Write(batch); err != nil {
			b.Fatal(err)
		}
		readReplies(depth)
	}
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(rounds*depth), "server-allocs/cmd")
}

// BenchmarkServerGetP16 is GET over loopback, pipeline 16.
func BenchmarkServerGetP16(b *testing.B) { benchServer(b, "GET", "key:000042") }

// BenchmarkServerSetP16 is SET over loopback, pipeline 16.
func BenchmarkServerSetP16(b *testing.B) { benchServer(b, "SET", "key:000042", "value-of-sixteen") }
