package persist

import (
	"bytes"
	"io"
	"strconv"
	"time"

	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/rdb"
	"github.com/abacusdb/abacus/internal/resp"
)

// walk is a save's place in the snapshot: the writer its keys are encoded
// into and the database it is in.
type walk struct {
	w   *rdb.Writer // nil for commands (Options.RestoreCommands)
	out io.Writer   // where the commands go
	// sink is out when out is a driven save's chunk: commands are
	// appended to its buffer directly instead of being built in cmd and
	// copied.
	sink    *chunkSink
	cmd     []byte   // a command being encoded (sink nil)
	payload []byte   // a DUMP payload being encoded
	digits  [20]byte // an integer string's value being encoded
	opt     rdb.EncodeOptions
	sizes   []int // keys per database at the snapshot's moment
	cur     int   // the database being written (-1 before the first)
}

// begin starts the walk into out: the header (AUX fields, function
// libraries), and the databases' sizes. The caller holds the lock.
func (b *Background) begin(out io.Writer) *walk {
	wk := &walk{out: out, opt: b.opt.Encode, sizes: b.ks.SnapshotSizes(), cur: -1}
	if b.opt.RestoreCommands {
		wk.sink, _ = out.(*chunkSink)
		wk.cmd = appendFunctionLoads(wk.cmd[:0], b.opt.Functions)
		out.Write(wk.cmd)
		return wk
	}
	wk.w = rdb.NewWriter(out, b.ver, b.opt.Encode)
	for i := 0; i+1 < len(b.opt.Aux); i += 2 {
		wk.w.Aux(b.opt.Aux[i], b.opt.Aux[i+1])
	}
	for _, code := range b.opt.Functions {
		wk.w.Function(code)
	}
	return wk
}

// slice hands emit up to n keys of the snapshot, leaving out hashes whose
// fields have all expired and what Options.Skip rejects, and reports
// whether keys remain. The caller holds the lock.
func (b *Background) slice(n int, emit func(db int, o *keyspace.Object)) bool {
	more := b.ks.NextSnapshotSlice(n, func(db int, o *keyspace.Object) {
		if h, ok := o.Val().(keyspace.FieldExpirer); ok && h.Len(b.opt.Encode.Now) == 0 {
			return
		}
		if b.opt.Skip != nil && b.opt.Skip(o) {
			return
		}
		emit(db, o)
		b.Keys++
	})
	b.Slices++
	return more
}

// encodeSlice encodes up to n keys of the snapshot into wk's writer (slice)
// and ends the snapshot when the walk is over. The caller holds the lock.
func (b *Background) encodeSlice(wk *walk, n int) bool {
	more := b.slice(n, wk.key)
	if !more {
		b.endWalk()
	}
	return more
}

// key writes o, of database db, into the walk's writer.
func (wk *walk) key(db int, o *keyspace.Object) {
	if wk.w == nil {
		wk.restore(db, o)
		return
	}
	if db != wk.cur {
		wk.cur = db
		wk.w.SelectDB(db, wk.sizes[db], 0)
	}
	wk.w.Key(o)
}

// restore writes o as commands, after a SELECT when its database is not
// the previous key's: a string as SET key value, then PEXPIREAT key <abs
// ms> when it has a TTL, as redis-server 7.0's rewrite does; any other
// value as RESTORE key <abs ms> <payload> ABSTTL REPLACE. A rewrite
// writes millions of these: nothing is allocated per key, and into a
// driven save's chunk the commands are appended in place.
func (wk *walk) restore(db int, o *keyspace.Object) {
	var dst []byte
	if wk.sink != nil {
		dst = wk.sink.buf
	} else {
		dst = wk.cmd[:0]
	}
	dst = wk.appendCommands(dst, db, o)
	if wk.sink != nil {
		wk.sink.buf = dst
		return
	}
	wk.cmd = dst
	wk.out.Write(dst)
}

// AppendCommands appends ks's data to dst as an AOF base without the RDB
// preamble, at once: function libraries as FUNCTION LOAD REPLACE, then
// every key not expired at opt.Encode.Now as a background save's
// commands (walk.restore). The caller holds the lock.
func AppendCommands(dst []byte, ks *keyspace.Keyspace, opt Options) []byte {
	sink := &chunkSink{buf: dst}
	wk := &walk{out: sink, sink: sink, opt: opt.Encode, cur: -1}
	sink.buf = appendFunctionLoads(sink.buf, opt.Functions)
	for _, db := range ks.DBs {
		db.ForEach(func(o *keyspace.Object) {
			if o.Expire == 0 || o.Expire > opt.Encode.Now {
				wk.restore(db.ID, o)
			}
		})
	}
	return sink.buf
}

// appendFunctionLoads appends a FUNCTION LOAD REPLACE of each library.
func appendFunctionLoads(dst []byte, codes [][]byte) []byte {
	for _, code := range codes {
		dst = resp.AppendCommand(dst, []byte("FUNCTION"), []byte("LOAD"), []byte("REPLACE"), code)
	}
	return dst
}

// appendCommands appends o's commands (restore) to dst; nothing for a
// value no DUMP payload holds (left out).
func (wk *walk) appendCommands(dst []byte, db int, o *keyspace.Object) []byte {
	str := o.Type == keyspace.TypeString
	if !str {
		var err error
		if wk.payload, err = rdb.AppendDump(wk.payload[:0], o, wk.opt); err != nil {
			return dst
		}
	}
	if db != wk.cur {
		wk.cur = db
		dst = append(dst, "*2\r\n$6\r\nSELECT\r\n"...)
		dst = resp.AppendBulk(dst, strconv.AppendInt(wk.digits[:0], int64(db), 10))
	}
	if str {
		dst = append(dst, "*3\r\n$3\r\nSET\r\n"...)
		dst = resp.AppendBulk(dst, o.Key)
		dst = resp.AppendBulk(dst, o.Bytes(wk.digits[:0]))
		if o.Expire != 0 {
			dst = append(dst, "*3\r\n$9\r\nPEXPIREAT\r\n"...)
			dst = resp.AppendBulk(dst, o.Key)
			dst = resp.AppendBulk(dst, strconv.AppendInt(wk.digits[:0], o.Expire, 10))
		}
		return dst
	}
	dst = append(dst, "*6\r\n$7\r\nRESTORE\r\n"...)
	dst = resp.AppendBulk(dst, o.Key)
	dst = resp.AppendBulk(dst, strconv.AppendInt(wk.digits[:0], o.Expire, 10))
	dst = resp.AppendBulk(dst, wk.payload)
	return append(dst, "$6\r\nABSTTL\r\n$7\r\nREPLACE\r\n"...)
}

// close ends the file: an RDB file's end and checksum.
func (wk *walk) close() error {
	if wk.w == nil {
		return nil
	}
	return wk.w.Close()
}

// endWalk ends the snapshot once every key is written. The caller holds
// the lock.
func (b *Background) endWalk() {
	b.ks.EndSnapshot()
	b.canceled = true // the snapshot is over; Cancel does nothing to it now
}

// Stream writes the whole snapshot to out a slice at a time: each slice
// is encoded under the lock and written to out outside it, so out may
// block (a file, a replica's socket) without holding clients up. With
// Options.Drive the driver's steps walk, an encoder goroutine encodes and
// this goroutine only writes; without it, this goroutine takes the lock
// for each slice. It ends the snapshot whatever happens; on an error (out's,
// or ErrCanceled when Cancel was called) the snapshot is dropped and the
// error returned. Run uses it for a file; a replica's full sync for its
// link.
func (b *Background) Stream(out io.Writer) error { return b.stream(out, false) }

// stream is Stream; direct (a file's save, Run) has a driven save's
// encoder write to out itself (driven.handOn).
func (b *Background) stream(out io.Writer, direct bool) error {
	if b.opt.Drive != nil {
		return b.streamDriven(out, direct)
	}
	var buf bytes.Buffer
	b.lock.Lock()
	if b.canceled {
		b.lock.Unlock()
		return ErrCanceled
	}
	wk := b.begin(&buf)
	b.lock.Unlock()
	var werr error
	for {
		b.lock.Lock()
		held := time.Now()
		if b.canceled {
			b.lock.Unlock()
			werr = ErrCanceled
			break
		}
		more := b.encodeSlice(wk, b.opt.SliceKeys)
		b.MaxHold = max(b.MaxHold, time.Since(held))
		b.Held += time.Since(held)
		b.lock.Unlock()
		if _, err := out.Write(buf.Bytes()); err != nil {
			werr = err
		}
		buf.Reset()
		if !more || werr != nil {
			break
		}
	}
	if werr != nil {
		b.lock.Lock()
		b.Cancel()
		b.lock.Unlock()
		return werr
	}
	if err := wk.close(); err != nil {
		return err
	}
	_, err := out.Write(buf.Bytes())
	return err
}

// ChunkWriter is a Stream target that takes the encoded chunks
// themselves instead of copying them: WriteChunk keeps c (the stream
// does not touch it again) and returns a chunk it is done with, for the
// encoder to fill again, or nil (a new one is made). On an error it has not kept c. A replica's full
// sync lends the chunks to the replicas' output queues this way, so the
// snapshot's bytes go round in a few buffers instead of becoming garbage.
type ChunkWriter interface {
	WriteChunk(c []byte) (free []byte, err error)
}
