package persist

import (
	"fmt"
	"testing"

	"github.com/abacusdb/abacus/internal/keyspace"
)

// benchObjects is n keys of the shape bench/durabench loads: key:N
// holding value:N.
func benchObjects(n int) []*keyspace.Object {
	objs := make([]*keyspace.Object, n)
	for i := range objs {
		o := keyspace.NewString([]byte(fmt.Sprintf("value:%d", i)))
		o.Key = fmt.Sprintf("key:%d", i)
		objs[i] = o
	}
	return objs
}

// BenchmarkEncodeKey is the encoder's cost per key: an RDB file's (the
// preamble) against RESTORE commands (aof-use-rdb-preamble no).
func BenchmarkEncodeKey(b *testing.B) {
	objs := benchObjects(1 << 16)
	for _, restore := range []bool{false, true} {
		name := "rdb"
		if restore {
			name = "restore"
		}
		b.Run(name, func(b *testing.B) {
			ks := keyspace.New(1)
			ks.BeginSnapshot(0)
			bg := &Background{ks: ks, opt: Options{RestoreCommands: restore}, ver: 10}
			var sink chunkSink
			sink.buf = make([]byte, 0, chunkSize+4096)
			wk := bg.begin(&sink)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				wk.key(0, objs[i&(len(objs)-1)])
				if len(sink.buf) >= chunkSize {
					sink.buf = sink.buf[:0]
				}
			}
		})
	}
}
