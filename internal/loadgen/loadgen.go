// Package loadgen drives an in-process server over loopback from Go
// benchmarks: many clients, each sending pre-encoded pipelined batches,
// with the process's CPU time per request reported next to ns/op. It
// imports nothing of the server, so the server's own tests can use it.
package loadgen

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/abacusdb/abacus/internal/resp"
)

// Encode appends a RESP request made of string arguments.
func Encode(dst []byte, args ...string) []byte {
	bs := make([][]byte, len(args))
	for i, a := range args {
		bs[i] = []byte(a)
	}
	return resp.AppendCommand(dst, bs...)
}

// SkipReplies reads n RESP2 replies, nested arrays included, failing on an
// error reply or a nil (a benchmark's requests are meant to hit).
func SkipReplies(r *bufio.Reader, n int) error {
	for ; n > 0; n-- {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return err
		}
		switch line[0] {
		case '-':
			return fmt.Errorf("error reply %q", line)
		case '$', '*':
			size, err := strconv.Atoi(string(line[1 : len(line)-2]))
			if err != nil || size < 0 {
				return fmt.Errorf("unexpected reply %q", line)
			}
			if line[0] == '$' {
				if _, err := r.Discard(size + 2); err != nil {
					return err
				}
			} else if err := SkipReplies(r, size); err != nil {
				return err
			}
		}
	}
	return nil
}

// Run sends b.N requests to addr from clients connections, pipe requests
// per write, each client cycling through 64 batches made by build from its
// own seeded generator, and reports the process's CPU µs per request.
func Run(b *testing.B, addr string, clients, pipe int, seed uint64, build func(*rand.Rand) []string) {
	const batchesPerClient = 64
	conns := make([]net.Conn, clients)
	batches := make([][][]byte, clients)
	for c := range conns {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		conns[c] = conn
		defer conn.Close()
		r := rand.New(rand.NewPCG(uint64(c), seed))
		for k := 0; k < batchesPerClient; k++ {
			var req []byte
			for j := 0; j < pipe; j++ {
				req = Encode(req, build(r)...)
			}
			batches[c] = append(batches[c], req)
		}
	}
	var left atomic.Int64
	left.Store(int64((b.N + pipe - 1) / pipe))
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	for c := range conns {
		wg.Add(1)
		go func(conn net.Conn, reqs [][]byte) {
			defer wg.Done()
			rd := bufio.NewReaderSize(conn, 64*1024)
			for k := 0; left.Add(-1) >= 0; k++ {
				if _, err := conn.Write(reqs[k%len(reqs)]); err != nil {
					errs <- err
					return
				}
				if err := SkipReplies(rd, pipe); err != nil {
					errs <- err
					return
				}
			}
		}(conns[c], batches[c])
	}
	wg.Wait()
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	cpu := float64(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano()) / 1e3
	b.ReportMetric(cpu/float64(b.N), "cpu-µs/op")
}
