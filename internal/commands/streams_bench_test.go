package commands

import (
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/ds/stream"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/resp"
)

// BenchmarkXrangeReply is XRANGE ... COUNT 100's reply without the
// server: streambench's stream (ids i-0, three small fields) from a
// varying start.
func BenchmarkXrangeReply(b *testing.B) {
	s := stream.New()
	for i := 1; i <= 100000; i++ {
		v := []byte(strconv.Itoa(i))
		s.Append(stream.ID{Ms: uint64(i)}, [][]byte{[]byte("f1"), v, []byte("f2"), []byte("ok"), []byte("f3"), []byte(strconv.Itoa(i % 97))}, stream.DefaultLimits())
	}
	var w resp.Writer
	w.Proto = 2
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.Buf = w.Buf[:0]
		start := stream.ID{Ms: uint64(1 + (i*7919)%99000)}
		writeRange(&w, s, start, stream.MaxID, 100, false)
	}
	b.SetBytes(int64(len(w.Buf)))
}

// BenchmarkXaddHandler is streambench's XADD rows through the handler
// alone (no network): the command's own CPU and allocations, with and
// without an approximate trim.
func BenchmarkXaddHandler(b *testing.B) {
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"plain", []string{"xadd", "bench:a", "*", "f1", "000000012345", "f2", "ok", "f3", "x"}},
		{"maxlen~10000", []string{"xadd", "bench:m", "MAXLEN", "~", "10000", "*", "f1", "000000012345", "f2", "ok", "f3", "x"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e, s := skBenchEnv()
			var w resp.Writer
			var c engine.Ctx
			args := make([][]byte, len(bc.args))
			for i, a := range bc.args {
				args[i] = []byte(a)
			}
			cmd := engine.Lookup(args[0])
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				w.Reset()
				c = engine.Ctx{Args: args, Cmd: cmd, W: &w, S: s, Env: e, DB: e.KS.DBs[0], Now: e.KS.Now}
				c.Cmd.Handler(&c)
			}
		})
	}
}

// BenchmarkXreadgroupAckHandler is streambench's group row through the
// handlers alone: 10 consumers in turn read one new entry
// (XREADGROUP ... COUNT 1 ... >) and acknowledge it.
func BenchmarkXreadgroupAckHandler(b *testing.B) {
	e, s := skBenchEnv()
	var w resp.Writer
	var c engine.Ctx
	run := func(args ...[]byte) {
		w.Reset()
		c = engine.Ctx{Args: args, Cmd: engine.Lookup(args[0]), W: &w, S: s, Env: e, DB: e.KS.DBs[0], Now: e.KS.Now}
		c.Cmd.Handler(&c)
	}
	bs := func(a ...string) [][]byte {
		out := make([][]byte, len(a))
		for i, x := range a {
			out[i] = []byte(x)
		}
		return out
	}
	for i := 1; i <= b.N+1; i++ {
		n := strconv.Itoa(i)
		run(bs("xadd", "bench:g", n+"-0", "f1", n, "f2", "ok", "f3", "x")...)
	}
	streamOf(e.KS.DBs[0].Peek("bench:g")).CreateGroup([]byte("g"), stream.ID{}, 0)
	var reads [10][][]byte
	for k := range reads {
		reads[k] = bs("xreadgroup", "GROUP", "g", "c"+strconv.Itoa(k), "COUNT", "1", "STREAMS", "bench:g", ">")
	}
	ack := bs("xack", "bench:g", "g", "")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run(reads[i%10]...)
		ack[3] = strconv.AppendInt(ack[3][:0], int64(i+1), 10)
		ack[3] = append(ack[3], "-0"...)
		run(ack...)
		if i == 0 && string(w.Buf) != ":1\r\n" {
			b.Fatalf("XACK replied %q", w.Buf)
		}
	}
}
