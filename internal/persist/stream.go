package persist

import (
	"bytes"
	"io"
	"time"

	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/rdb"
)

// walk is a save's place in the snapshot: the writer its keys are encoded
// into and the database it is in.
type walk struct {
	w     *rdb.Writer
	sizes []int // keys per database at the snapshot's moment
	cur   int   // the database being written (-1 before the first)
}

// begin starts the walk: the header (AUX fields, function libraries) into
// w, and the databases' sizes. The caller holds the lock.
func (b *Background) begin(w *rdb.Writer) *walk {
	for i := 0; i+1 < len(b.opt.Aux); i += 2 {
		w.Aux(b.opt.Aux[i], b.opt.Aux[i+1])
	}
	for _, code := range b.opt.Functions {
		w.Function(code)
	}
	return &walk{w: w, sizes: b.ks.SnapshotSizes(), cur: -1}
}

// slice encodes up to n keys of the snapshot into wk's writer, leaving
// out hashes whose fields have all expired and what Options.Skip rejects.
// It returns false once the walk is over, and ends the snapshot then. The
// caller holds the lock.
func (b *Background) slice(wk *walk, n int) bool {
	more := b.ks.NextSnapshotSlice(n, func(db int, o *keyspace.Object) {
		if db != wk.cur {
			wk.cur = db
			wk.w.SelectDB(db, wk.sizes[db], 0)
		}
		if h, ok := o.Val().(keyspace.FieldExpirer); ok && h.Len(b.opt.Encode.Now) == 0 {
			return
		}
		if b.opt.Skip != nil && b.opt.Skip(o) {
			return
		}
		wk.w.Key(o)
		b.Keys++
	})
	b.Slices++
	if !more {
		b.ks.EndSnapshot()
		b.canceled = true // the snapshot is over; Cancel does nothing to it now
	}
	return more
}

// Stream writes the whole snapshot to out a slice at a time: each slice
// is encoded under the lock and written to out outside it, so out may
// block (a file, a replica's socket) without holding clients up. With
// Options.Drive the slices are encoded by the driver's steps and this
// goroutine only writes; without it, this goroutine takes the lock for
// each slice. It ends the snapshot whatever happens; on an error (out's,
// or ErrCanceled when Cancel was called) the snapshot is dropped and the
// error returned. Run uses it for a file; a replica's full sync for its
// link.
func (b *Background) Stream(out io.Writer) error {
	if b.opt.Drive != nil {
		return b.streamDriven(out)
	}
	var buf bytes.Buffer
	b.lock.Lock()
	if b.canceled {
		b.lock.Unlock()
		return ErrCanceled
	}
	wk := b.begin(rdb.NewWriter(&buf, b.ver, b.opt.Encode))
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
		more := b.slice(wk, b.opt.SliceKeys)
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
	if err := wk.w.Close(); err != nil {
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

// driven is the state of a save run through Options.Drive. The step fills
// chunks under the lock; Stream writes them out without it.
type driven struct {
	*walk
	wake   func()
	sink   chunkSink
	full   chan []byte // encoded chunks for Stream to write
	free   chan []byte // written chunks back for reuse
	closed bool        // full is closed (under the lock)
	err    error       // the writer's error at the end (under the lock)
	ended  bool        // the walk finished and the file's end was encoded
}

// chunkSink is where the rdb.Writer's buffer empties into: the chunk the
// step fills now.
type chunkSink struct{ buf []byte }

func (c *chunkSink) Write(p []byte) (int, error) {
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// drivenSliceKeys bounds the keys of one slice of a driven save: the
// step looks at its deadline between slices, and the deadline may be a few
// microseconds away (engine.RunInBackground).
const drivenSliceKeys = 16

// driveChunks is how many chunks a driven save has in flight: one being
// filled, the others being written or waiting to be.
const driveChunks = 4

// streamDriven is Stream with Options.Drive: the steps encode under the
// lock on the driver's goroutine, and this goroutine writes what they
// encoded.
func (b *Background) streamDriven(out io.Writer) error {
	d := &driven{full: make(chan []byte, driveChunks), free: make(chan []byte, driveChunks)}
	for i := 0; i < driveChunks; i++ {
		d.free <- nil
	}
	b.lock.Lock()
	b.d = d
	if b.canceled {
		d.closed = true
		close(d.full)
		b.lock.Unlock()
	} else {
		d.walk = b.begin(rdb.NewWriter(&d.sink, b.ver, b.opt.Encode))
		// The first step waits for the lock, released once wake is set.
		d.wake = b.opt.Drive(b.step)
		b.lock.Unlock()
	}
	cw, _ := out.(ChunkWriter)
	var werr error
	for c := range d.full {
		if werr == nil {
			var err error
			if cw != nil {
				var free []byte
				if free, err = cw.WriteChunk(c); err == nil {
					c = free
				}
			} else {
				_, err = out.Write(c)
			}
			if err != nil {
				werr = err
				b.lock.Lock()
				b.Cancel()
				b.lock.Unlock()
			}
		}
		if cap(c) > 4<<20 {
			c = nil // an outsized value's chunk: not kept
		}
		d.free <- c[:0]
		d.wake()
	}
	b.lock.Lock()
	ended, dropped, err := d.ended, b.dropped, d.err
	b.lock.Unlock()
	switch {
	case werr != nil:
		return werr
	case err != nil:
		return err
	case dropped || !ended:
		return ErrCanceled
	}
	return nil
}

// step is a driven save's work under the lock: slices of the snapshot
// encoded into a chunk until deadline, the chunk handed to streamDriven.
func (b *Background) step(deadline time.Time) Step {
	d := b.d
	if d.closed {
		return StepDone
	}
	if d.sink.buf == nil {
		select {
		case c := <-d.free:
			d.sink.buf = c[:0:cap(c)]
			if d.sink.buf == nil {
				d.sink.buf = make([]byte, 0, 64<<10)
			}
		default:
			return StepBlocked
		}
	}
	held := time.Now()
	more := true
	for more {
		more = b.slice(d.walk, min(b.opt.SliceKeys, drivenSliceKeys))
		if len(d.sink.buf) >= 256<<10 || !time.Now().Before(deadline) {
			break
		}
	}
	if !more {
		d.err = d.w.Close()
		d.ended = true
	}
	b.MaxHold = max(b.MaxHold, time.Since(held))
	if len(d.sink.buf) > 0 {
		d.full <- d.sink.buf // never blocks: at most driveChunks exist
		d.sink.buf = nil
	}
	if !more {
		d.closed = true
		close(d.full)
		return StepDone
	}
	return StepMore
}
