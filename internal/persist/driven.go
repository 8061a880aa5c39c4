package persist

import (
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/internal/keyspace"
)

// A driven save (Options.Drive) runs on three goroutines:
//
//   - the driver's (the event loop, under the server lock) hands the
//     snapshot out in runs of buckets of the frozen key tables
//     (keyspace.NextSnapshotRange), a batch each, without reading their
//     objects: its share of a save is a few nanoseconds per bucket. Only
//     the buckets where first-touch copies may be met are walked on the
//     loop (their keys go into the batch as items: a shallow copy of each
//     object, its key, TTL, access metadata and value reference, and the
//     live object it copies);
//   - the encoder walks the runs' chains itself and encodes the batches
//     in order into chunks, without the lock, on another core than the
//     loop's;
//   - Stream's writes the chunks out; for a file (Run) the encoder
//     writes them itself (handOn) and Stream's only waits for the end.
//
// Before, the loop walked every chain and copied each object into the
// batch: about 100 ns a key, the cache miss of reaching each object,
// about 1 s of the loop's time for 10M keys.
//
// Safety: the encoder reads chains and objects the loop may change
// meanwhile. The keyspace reports every change to a bucket's chain or to
// an object at a place the walk has passed, before the change, with the
// place (keyspace.SetSnapshotGuard: writes, deletes, insertions of new
// keys, expiry, a rolled-back script's put-backs); guard then finds the
// batch that covers the place, if one still does. If the encoder has not
// started that batch, the loop takes the bucket over: it walks the chain
// as it is (unchanged since the moment) into items, which the encoder
// then reads instead of the bucket, and the changing object's item gets
// a deep copy (as the first touch of a key not walked yet does). For the
// batch being encoded the loop waits until it is done (one run: about
// rangeBuckets keys, more time when it holds a large collection). The
// access metadata, which reads update without reporting it, is read
// atomically (keyspace.SnapshotLoad, DB.Touch), as of when the encoder
// reads the key rather than the moment. A batch's place range is known
// when it is made, so a change at a place before the oldest batch costs
// one comparison. The snapshot stays open until the encoder has finished
// with every batch, so the guard sees every change until then; Cancel
// stops the encoder before it ends the snapshot.

// maxBatches bounds the batches in flight: when the encoder is that far
// behind, the loop's step waits for it (StepBlocked) and serves clients.
const maxBatches = 8

// item is one key of a batch.
type item struct {
	obj keyspace.Object  // the object as handed out, or a deep copy of it
	src *keyspace.Object // the live object obj copies; nil once obj is a deep copy
	db  int
}

// rangeBuckets is how many buckets a batch's run holds at most: about as
// many keys at the tables' load factor, whose encoding a change to one of
// them may wait for (guard).
const rangeBuckets = 1024

// batch is what one walk of the snapshot handed out, from walk place
// start up to end: a run of buckets the encoder reads itself (r), and
// items, the keys of the run's buckets taken over on the loop (marked
// ones, which may hold kept copies, and those the guard took since) or
// leftover keys.
type batch struct {
	r          keyspace.SnapshotRange
	taken      [rangeBuckets / 64]uint64 // r's buckets taken over, by b - r.Lo
	items      []item
	start, end keyspace.SnapshotPos
	last       bool // the walk ended with it: the encoder writes the file's end
	// encoded is the first bucket of the run the encoder may still read:
	// it has encoded those before (set by the encoder while it encodes
	// the batch).
	encoded atomic.Int64
}

// isTaken reports whether bucket b of bt's run was taken over.
func (bt *batch) isTaken(b int) bool {
	i := b - bt.r.Lo
	return bt.taken[i/64]&(1<<(i%64)) != 0
}

// take marks bucket b of bt's run taken over.
func (bt *batch) take(b int) { bt.takeAt(b - bt.r.Lo) }

// takeAt marks the bucket at offset i of bt's run taken over.
func (bt *batch) takeAt(i int) { bt.taken[i/64] |= 1 << (i % 64) }

// pipe is the loop's and the encoder's shared state, under mu.
type pipe struct {
	mu   sync.Mutex
	cond sync.Cond // a batch done, the encoder's exit (the guard and stop wait)
	// bell wakes the encoder, asleep (sleeping) until a batch is queued
	// or stop: not cond, for the loop's sake (lowprio_linux.go, bell).
	bell     *bell
	sleeping bool
	q        []*batch    // handed to the encoder, oldest first
	busy     bool        // the encoder is encoding q[0]
	blocked  bool        // the step waits for room or the end: wake it
	waitEnd  bool        // what it waits for is the end
	waiting  atomic.Bool // the guard waits for the encoder: broadcast progress
	done     bool        // the encoder encoded the last batch
	exited   bool        // the encoder goroutine returned (or never started)
	spare    []*batch    // encoded batches for reuse
	stopped  atomic.Bool
	stopc    chan struct{} // closed with stopped set (Cancel)
}

// driven is the state of a save run through Options.Drive.
type driven struct {
	*walk     // the encoder's once it runs
	wake      func()
	sink      chunkSink   // the encoder's chunk being filled
	full      chan []byte // encoded chunks for Stream to write
	free      chan []byte // written chunks back for reuse
	closed    bool        // full is closed (under the lock)
	err       error       // the writer's error at the end (set before p.done)
	ended     bool        // the file's end was encoded (set before p.done)
	walked    bool        // the walk is over (under the lock)
	p         pipe
	cur       *batch // the batch the step fills (under the lock)
	emitToCur func(db int, o *keyspace.Object)
	takeToCur func(b int)
	wanted    func(o *keyspace.Object) bool // Background.wanted
	keys      atomic.Int64                  // keys encoded from runs, not yet in Background.Keys
	run       []item                        // the encoder's objects of a run's buckets
	runDB     int                           // the database of the run being read
	addRun    func(o *keyspace.Object)      // appends o's fields to run
	takeBt    *batch                        // the batch the guard takes a bucket over in
	takeDB    int
	addTaken  func(o *keyspace.Object) // appends o to takeBt's items
	// direct, when set, is the file the encoder writes its chunks to
	// itself (handOn); werr is its error, sent as a nil chunk on full.
	direct io.Writer
	werr   error
}

// chunkSink is where the rdb.Writer's buffer empties into: the chunk the
// encoder fills now.
type chunkSink struct{ buf []byte }

func (c *chunkSink) Write(p []byte) (int, error) {
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// driveChunks is how many chunks a driven save has: one being filled, the
// others being written or waiting to be. full holds as many, so the
// encoder's sends never block.
const driveChunks = 4

// chunkSize is the size at which the encoder hands a chunk on.
const chunkSize = 256 << 10

// streamDriven is Stream with Options.Drive: the steps walk under the
// lock on the driver's goroutine, an encoder goroutine encodes what they
// hand out, and this goroutine writes what it encoded.
func (b *Background) streamDriven(out io.Writer, direct bool) error {
	addProc()
	defer dropProc()
	d := &driven{full: make(chan []byte, driveChunks), free: make(chan []byte, driveChunks)}
	if direct {
		d.direct = out
	}
	d.p.cond.L = &d.p.mu
	d.p.stopc = make(chan struct{})
	d.p.exited = true
	for i := 1; i < driveChunks; i++ {
		d.free <- nil
	}
	d.sink.buf = make([]byte, 0, 64<<10) // the fourth chunk, the header's
	d.emitToCur = d.emit
	d.takeToCur = func(i int) { d.cur.takeAt(i) }
	d.wanted = b.wanted
	d.addRun = func(o *keyspace.Object) {
		d.run = append(d.run, item{db: d.runDB})
		keyspace.SnapshotLoad(&d.run[len(d.run)-1].obj, o)
	}
	d.addTaken = func(o *keyspace.Object) {
		if d.wanted(o) {
			d.takeBt.items = append(d.takeBt.items, item{obj: *o, src: o, db: d.takeDB})
			d.keys.Add(1)
		}
	}
	b.lock.Lock()
	b.d = d
	if b.canceled {
		d.closed = true
		close(d.full)
		b.lock.Unlock()
	} else {
		d.walk = b.begin(&d.sink)
		b.ks.SetSnapshotGuard(d.guard)
		// The first step waits for the lock, released once wake is set.
		d.wake = b.opt.Drive(b.step)
		d.p.exited = false
		d.p.bell = newBell()
		go runLow(d.encode) // at a lower priority (lowprio_linux.go)
		b.lock.Unlock()
	}
	cw, _ := out.(ChunkWriter)
	var werr error
	for c := range d.full {
		if d.direct != nil {
			// Only the encoder's write error comes this way.
			if werr == nil {
				werr = d.werr
				b.lock.Lock()
				b.Cancel()
				b.lock.Unlock()
			}
			continue
		}
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

// step is a driven save's work under the lock: runs of the snapshot's
// buckets handed to the encoder, a batch each, until deadline or until
// maxBatches are in flight; once the walk is over and the encoder done,
// the snapshot's end. The loop reads no object of a run (the encoder
// does, off the lock), only those of buckets where kept copies may be
// met: its share of a save is a few ns per bucket.
func (b *Background) step(deadline time.Time) Step {
	d := b.d
	if d.closed {
		return StepDone
	}
	b.Keys += d.keys.Swap(0)
	p := &d.p
	held := time.Now()
	for {
		p.mu.Lock()
		wait := d.walked && !p.done || !d.walked && len(p.q) >= maxBatches
		p.blocked, p.waitEnd = wait, d.walked
		p.mu.Unlock()
		if wait {
			b.hold(held)
			return StepBlocked
		}
		if d.walked {
			b.Keys += d.keys.Swap(0)
			b.endWalk()
			d.closed = true
			close(d.full)
			return StepDone
		}
		bt := d.newBatch()
		bt.start = b.ks.SnapshotPosition()
		d.cur = bt
		r, more := b.ks.NextSnapshotRange(rangeBuckets, d.emitToCur, d.takeToCur)
		b.Slices++
		d.cur = nil
		bt.r = r
		bt.end = b.ks.SnapshotPosition()
		bt.last = !more
		d.walked = !more
		p.mu.Lock()
		if len(bt.items) == 0 && bt.r.Empty() && !bt.last {
			p.spare = append(p.spare, bt)
		} else {
			p.q = append(p.q, bt)
			p.wakeEncoderLocked()
		}
		p.mu.Unlock()
		if !time.Now().Before(deadline) {
			break
		}
	}
	b.hold(held)
	return StepMore
}

// hold records a step's hold of the lock, from held on.
func (b *Background) hold(held time.Time) {
	t := time.Since(held)
	b.MaxHold = max(b.MaxHold, t)
	b.Held += t
}

// wanted reports whether o goes into the file: not a hash whose fields
// have all expired, nor what Options.Skip rejects.
func (b *Background) wanted(o *keyspace.Object) bool {
	if h, ok := o.Val().(keyspace.FieldExpirer); ok && h.Len(b.opt.Encode.Now) == 0 {
		return false
	}
	return b.opt.Skip == nil || !b.opt.Skip(o)
}

// emit adds o, handed out by the walk, to the batch being filled.
func (d *driven) emit(db int, o *keyspace.Object) {
	if d.wanted(o) {
		d.cur.items = append(d.cur.items, item{obj: *o, src: o, db: db})
		d.keys.Add(1)
	}
}

// newBatch returns an empty batch, a spare one when there is one. The
// caller holds the lock.
func (d *driven) newBatch() *batch {
	p := &d.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.spare); n > 0 {
		bt := p.spare[n-1]
		p.spare = p.spare[:n-1]
		return bt
	}
	return &batch{items: make([]item, 0, 16)}
}

// guard is the snapshot's guard (keyspace.SetSnapshotGuard): live object
// o, handed out at place pos, is about to change. The batch that holds it
// gets a deep copy, or, when the encoder is encoding that batch, the loop
// waits until it is done. Called under the lock.
func (d *driven) guard(pos keyspace.SnapshotPos, o *keyspace.Object) {
	p := &d.p
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, bt := range p.q {
		if pos.Before(bt.start) {
			return // encoded already
		}
		if !pos.Before(bt.end) {
			continue
		}
		if i == 0 && p.busy {
			// The encoder is done with the run's buckets before
			// bt.encoded (it moves on a group at a time): a change there
			// need not wait for the rest of the run, which may hold a
			// large collection. Taken buckets' items come after the run.
			b, inRun := bt.r.Has(pos)
			inRun = inRun && !bt.isTaken(b)
			p.waiting.Store(true)
			for !p.exited && len(p.q) > 0 && p.q[0] == bt && !(inRun && b < int(bt.encoded.Load())) {
				p.cond.Wait()
			}
			p.waiting.Store(false)
			return
		}
		if b, ok := bt.r.Has(pos); ok && !bt.isTaken(b) {
			// The change may touch the bucket's chain or an object in
			// it: the encoder gets the bucket's objects as they are now
			// instead of reading it later.
			bt.take(b)
			d.takeBt, d.takeDB = bt, bt.r.DB
			bt.r.Bucket(b, d.addTaken)
			d.takeBt = nil
		}
		if o == nil {
			return
		}
		for j := range bt.items {
			it := &bt.items[j]
			if it.src != o {
				continue
			}
			lru := it.obj.LRU // what the walk saw; reads change it unreported
			it.obj = *keyspace.SnapshotCopy(o)
			it.obj.LRU = lru
			it.src = nil
		}
		return
	}
}

// encode is the encoder goroutine: it encodes the batches in order into
// chunks and hands the chunks to Stream, until the last batch or Cancel.
func (d *driven) encode() {
	p := &d.p
	defer func() {
		p.mu.Lock()
		p.exited = true
		p.bell.close() // nobody rings: the encoder is not sleeping
		p.cond.Broadcast()
		p.mu.Unlock()
	}()
	for {
		if d.sink.buf == nil {
			select {
			case c := <-d.free:
				d.sink.buf = c[:0:cap(c)]
				if d.sink.buf == nil {
					d.sink.buf = make([]byte, 0, 64<<10)
				}
			case <-p.stopc:
				return
			}
		}
		p.mu.Lock()
		for len(p.q) == 0 && !p.stopped.Load() {
			p.sleeping = true
			p.mu.Unlock()
			p.bell.wait()
			p.mu.Lock()
		}
		if p.stopped.Load() {
			p.mu.Unlock()
			return
		}
		bt := p.q[0]
		p.busy = true
		p.mu.Unlock()
		if !bt.r.Empty() {
			d.encodeRun(bt)
		}
		touchKeys(bt.items)
		for i := range bt.items {
			if p.stopped.Load() {
				break
			}
			it := &bt.items[i]
			d.key(it.db, &it.obj)
		}
		if bt.last {
			d.err = d.close()
			d.ended = true
		}
		// A file's chunk (direct) is written once the batch is done, so
		// that a change waiting for the batch (guard) does not wait for
		// the disk too; the last one before the end is reported.
		flush := len(d.sink.buf) >= chunkSize || bt.last && len(d.sink.buf) > 0
		if flush && (d.direct == nil || bt.last) {
			d.handOn()
			flush = false
		}
		p.mu.Lock()
		p.q = append(p.q[:0], p.q[1:]...)
		p.busy = false
		last := bt.last
		p.done = last
		clear(bt.items)
		bt.items = bt.items[:0]
		bt.r, bt.taken = keyspace.SnapshotRange{}, [rangeBuckets / 64]uint64{}
		bt.encoded.Store(0)
		p.spare = append(p.spare, bt)
		// A step waiting for room is woken once half the batches are
		// done, not for each: every wake costs the loop a round.
		wake := p.blocked && (p.waitEnd && last || !p.waitEnd && len(p.q) <= maxBatches/2)
		if wake {
			p.blocked = false
		}
		p.cond.Broadcast()
		p.mu.Unlock()
		if wake {
			d.wake()
		}
		if flush {
			d.handOn()
		}
		if last {
			return
		}
	}
}

// encodeRun encodes the keys of bt's run that were not taken over, a few
// buckets at a time: first their heads and then their keys are read ahead
// so that the cache misses overlap. The guard does not change what it
// reads while bt is the batch being encoded (it waits instead).
func (d *driven) encodeRun(bt *batch) {
	const group = 32
	r := &bt.r
	d.runDB = r.DB
	var x int64
	for g := r.Lo; g < r.Hi; g += group {
		end := min(g+group, r.Hi)
		off := g - r.Lo // a multiple of group, so the group's bits are in one word
		x += r.TouchHeads(g, end, bt.taken[off/64]>>(off%64))
		d.run = d.run[:0]
		for b := g; b < end; b++ {
			if !bt.isTaken(b) {
				r.Bucket(b, d.addRun)
			}
		}
		touchKeys(d.run)
		n := 0
		for i := range d.run {
			it := &d.run[i]
			if d.wanted(&it.obj) {
				d.key(it.db, &it.obj)
				n++
			}
		}
		d.keys.Add(int64(n))
		// Stored before waiting is read; the guard stores waiting before
		// it reads encoded, under p.mu: one of them sees the other's.
		bt.encoded.Store(int64(end))
		if d.p.waiting.Load() {
			d.p.mu.Lock()
			d.p.cond.Broadcast()
			d.p.mu.Unlock()
		}
		if d.p.stopped.Load() {
			break
		}
	}
	clear(d.run)
	touched.Store(uint32(x))
}

// handOn passes the encoder's full chunk on: to Stream's goroutine, or,
// for a save to a file (direct), straight to the file. A file's write
// is a copy into the page cache, and every few MB a sync (SyncEvery),
// which then paces the encoder to the disk. Writing on the encoder saves
// a third goroutine wanting a processor for each chunk: with two (the
// loop and the encoder) on two processors the loop never waits for one,
// where the writer, woken by every chunk, took the processor the loop
// left while it slept in epoll_wait and made the loop wait for a thread
// when it woke (runtime traces of a save of 2M keys under GET load).
func (d *driven) handOn() {
	if d.direct == nil {
		d.full <- d.sink.buf // never blocks: full holds every chunk
		d.sink.buf = nil
		return
	}
	if d.werr == nil {
		if _, err := d.direct.Write(d.sink.buf); err != nil {
			d.werr = err
			d.full <- nil // Stream's goroutine cancels the save
		}
	}
	if cap(d.sink.buf) > 4<<20 {
		d.sink.buf = make([]byte, 0, chunkSize) // an outsized value's: not kept
	} else {
		d.sink.buf = d.sink.buf[:0]
	}
}

// stop ends the encoder and waits for it: it reads live objects until
// then. Called under the lock (Cancel).
func (d *driven) stop() {
	p := &d.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stopped.Load() {
		p.stopped.Store(true)
		close(p.stopc)
		p.wakeEncoderLocked()
	}
	for !p.exited {
		p.cond.Wait()
	}
}

// wakeEncoderLocked rings the encoder's bell if it sleeps (under mu):
// one ring for each sleep, which its one wait takes.
func (p *pipe) wakeEncoderLocked() {
	if p.sleeping {
		p.sleeping = false
		p.bell.ring()
	}
}

// touchKeys reads the first byte of every key of items before they are
// encoded: the loads are independent, so their cache misses overlap (a
// string's key and value bytes share one allocation).
func touchKeys(items []item) {
	var x byte
	for i := range items {
		if k := items[i].obj.Key; k != "" {
			x += k[0]
		}
	}
	touched.Store(uint32(x))
}

// touched keeps touchKeys's result, so that it reads what it reads.
var touched atomic.Uint32
