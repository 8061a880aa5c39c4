package persist

import (
	"bytes"
	"io"
	"time"

	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/rdb"
)

// Stream writes the whole snapshot to out a slice at a time: each slice
// is encoded under the lock and written to out outside it, so out may
// block (a file, a replica's socket) without holding clients up. It ends
// the snapshot whatever happens; on an error (out's, or ErrCanceled when
// Cancel was called) the snapshot is dropped and the error returned.
// Run uses it for a file; a replica's full sync for its link.
func (b *Background) Stream(out io.Writer) error {
	var buf bytes.Buffer
	w := rdb.NewWriter(&buf, b.ver, b.opt.Encode)
	for i := 0; i+1 < len(b.opt.Aux); i += 2 {
		w.Aux(b.opt.Aux[i], b.opt.Aux[i+1])
	}
	for _, code := range b.opt.Functions {
		w.Function(code)
	}
	b.lock.Lock()
	if b.canceled {
		b.lock.Unlock()
		return ErrCanceled
	}
	sizes := b.ks.SnapshotSizes()
	b.lock.Unlock()
	cur := -1
	var werr error
	for {
		b.lock.Lock()
		held := time.Now()
		if b.canceled {
			b.lock.Unlock()
			werr = ErrCanceled
			break
		}
		more := b.ks.NextSnapshotSlice(b.opt.SliceKeys, func(db int, o *keyspace.Object) {
			if db != cur {
				cur = db
				w.SelectDB(db, sizes[db], 0)
			}
			if h, ok := o.Val().(keyspace.FieldExpirer); ok && h.Len(b.opt.Encode.Now) == 0 {
				return
			}
			if b.opt.Skip != nil && b.opt.Skip(o) {
				return
			}
			w.Key(o)
			b.Keys++
		})
		if !more {
			b.ks.EndSnapshot()
			b.canceled = true // the snapshot is over; Cancel does nothing now
		}
		b.Slices++
		b.MaxHold = max(b.MaxHold, time.Since(held))
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
	if err := w.Close(); err != nil {
		return err
	}
	_, err := out.Write(buf.Bytes())
	return err
}
