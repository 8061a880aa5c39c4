package commands_test

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/abacusdb/abacus/internal/clock"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/conn"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/enginetest"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/loadgen"
	"github.com/abacusdb/abacus/internal/resp"
)

// The rows of bench/sidebyside -suite types (issue 3), reproduced in
// process for profiling, in two forms:
//
//   - BenchmarkTypesExec/ROW drives the command through Env.Execute: the
//     command's own cost (arguments, lookup, data structure, reply), with
//     no network and no scheduler in the way.
//   - BenchmarkTypesLoad/ROW/P1 and /P16 run a real server on loopback
//     with 50 clients pipelining 1 or 16 requests over a key space of
//     100,000, as redis-benchmark -c 50 -P N -r 100000 does.
//
// Profile the server side of a row with
//
//	go test ./internal/command -run '^$' -bench 'TypesLoad/HSET/P16$' -cpuprofile cpu.out
//	go tool pprof -top -focus 'server\.\(\*client\)\.serve' cpu.out
//
// The load clients run in the same process (pre-encoded requests and a
// reply skipper), so cpu-µs/op is the whole process's CPU per command.

const (
	typesKeyspace = 100000  // redis-benchmark -r
	typesBigZset  = 1000000 // members of bench:big
	typesListLen  = 1000    // elements of bench:list
	typesClients  = 50
)

// typesRow is one row: how to prepare its data and how to make a request
// from a random source. Random integers are spelled as redis-benchmark's
// __rand_int__ is: 12 digits, zero-padded.
type typesRow struct {
	name    string
	prepare func(do func(args ...string))
	build   func(r *rand.Rand) []string
}

func randInt(r *rand.Rand) string { return fmt.Sprintf("%012d", r.IntN(typesKeyspace)) }

var typesRows = []typesRow{
	{"ZADD", nil, func(r *rand.Rand) []string { return []string{"ZADD", "bench:z", randInt(r), "m:" + randInt(r)} }},
	{"ZINCRBY", prepareSmallZset, func(r *rand.Rand) []string { return []string{"ZINCRBY", "bench:z", "1", "m:" + randInt(r)} }},
	{"ZRANGEBYSCORE", prepareBigZset, func(r *rand.Rand) []string {
		return []string{"ZRANGEBYSCORE", "bench:big", randInt(r), "+inf", "LIMIT", "0", "100"}
	}},
	{"ZRANK", prepareBigZset, func(r *rand.Rand) []string { return []string{"ZRANK", "bench:big", "m:" + randInt(r)} }},
	{"HSET", nil, func(r *rand.Rand) []string { return []string{"HSET", "bench:h:" + randInt(r), "f", "v"} }},
	{"HINCRBY", nil, func(r *rand.Rand) []string { return []string{"HINCRBY", "bench:counts", "slot:" + randInt(r), "1"} }},
	{"SADD", nil, func(r *rand.Rand) []string { return []string{"SADD", "myset", "element:" + randInt(r)} }},
	{"LPUSH", nil, func(r *rand.Rand) []string { return []string{"LPUSH", "mylist", "xxx"} }},
	{"LRANGE_100", prepareList, func(r *rand.Rand) []string { return []string{"LRANGE", "bench:list", "0", "99"} }},
}

// prepareSmallZset gives bench:z the members a preceding ZADD run leaves.
func prepareSmallZset(do func(args ...string)) {
	args := []string{"ZADD", "bench:z"}
	for i := 0; i < typesKeyspace; i++ {
		args = append(args, strconv.Itoa(i), fmt.Sprintf("m:%012d", i))
		if len(args) >= 2+2*500 {
			do(args...)
			args = args[:2]
		}
	}
}

func prepareBigZset(do func(args ...string)) {
	args := []string{"ZADD", "bench:big"}
	for i := 0; i < typesBigZset; i++ {
		args = append(args, strconv.Itoa(i), fmt.Sprintf("m:%012d", i))
		if len(args) >= 2+2*500 {
			do(args...)
			args = args[:2]
		}
	}
}

func prepareList(do func(args ...string)) {
	for i := 0; i < typesListLen; i++ {
		do("RPUSH", "bench:list", "xxx")
	}
}

// BenchmarkTypesExec runs each row's requests through Env.Execute.
func BenchmarkTypesExec(b *testing.B) {
	for _, row := range typesRows {
		b.Run(row.name, func(b *testing.B) {
			env := engine.NewEnv(keyspace.New(16), config.New(), clock.Real{},
				slog.New(slog.NewTextHandler(io.Discard, nil)))
			sess := &engine.Session{ID: 1, Proto: 2, Authed: true, User: "default"}
			w := resp.Writer{Proto: 2}
			do := func(args ...string) {
				w.Reset()
				env.Execute(sess, enginetest.Argv(args), &w)
				if len(w.Buf) > 0 && w.Buf[0] == '-' {
					b.Fatalf("%v: %q", args[:1], w.Buf)
				}
			}
			if row.prepare != nil {
				row.prepare(do)
			}
			r := rand.New(rand.NewPCG(1, 2))
			reqs := make([][][]byte, 1<<16)
			for i := range reqs {
				reqs[i] = enginetest.Argv(row.build(r))
			}
			b.ReportAllocs()
			// ns/op is wall time, which a shared machine stretches; the
			// process's CPU time per op (GC included) is reported beside it.
			var ru0, ru1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w.Reset()
				env.Execute(sess, reqs[i%len(reqs)], &w)
			}
			b.StopTimer()
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			b.ReportMetric(float64(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano())/float64(b.N), "cpu-ns/op")
			if len(w.Buf) == 0 || w.Buf[0] == '-' || w.Buf[0] == '_' || string(w.Buf) == "$-1\r\n" {
				b.Fatalf("last reply %q", w.Buf)
			}
		})
	}
}

// loadServers keeps one prepared server per row across the repeated runs
// the testing package makes with growing b.N (loading 1,000,000 members
// each time would dominate); they live until the test binary exits.
var (
	loadServersMu sync.Mutex
	loadServers   = map[string]string{}
)

func typesServer(b *testing.B, row typesRow) string {
	loadServersMu.Lock()
	defer loadServersMu.Unlock()
	if addr, ok := loadServers[row.name]; ok {
		return addr
	}
	srv := conn.New(config.New(), conn.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	addr := ln.Addr().String()
	if row.prepare != nil {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		rd := bufio.NewReader(conn)
		var req []byte
		pending := 0
		flush := func() {
			if _, err := conn.Write(req); err != nil {
				b.Fatal(err)
			}
			if err := loadgen.SkipReplies(rd, pending); err != nil {
				b.Fatal(err)
			}
			req, pending = req[:0], 0
		}
		row.prepare(func(args ...string) {
			req = loadgen.Encode(req, args...)
			if pending++; pending == 100 {
				flush()
			}
		})
		flush()
		conn.Close()
	}
	loadServers[row.name] = addr
	return addr
}

// BenchmarkTypesLoad runs each row against an in-process server with 50
// clients at pipeline depths 1 and 16.
func BenchmarkTypesLoad(b *testing.B) {
	for _, row := range typesRows {
		for _, pipe := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/P%d", row.name, pipe), func(b *testing.B) { benchTypesLoad(b, row, pipe) })
		}
	}
}

func benchTypesLoad(b *testing.B, row typesRow, pipe int) {
	loadgen.Run(b, typesServer(b, row), typesClients, pipe, 3, row.build)
}
