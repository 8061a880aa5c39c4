package aof

import (
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Group commit (appendfsync always): a reply that acknowledges a write
// leaves only once an fsync that began after the write reached the file
// has ended. One goroutine, the committer, runs those fsyncs: whoever
// needs an offset on disk raises commit.want, and the committer syncs
// everything written so far, then again if want grew meanwhile. So one
// fsync covers every write that was waiting when it began, and the writes
// that arrive while it runs gather for the next one (pipelined commits):
// the disk is never idle while someone waits, and never synced twice for
// the same bytes.
//
// Waiting comes in two shapes: WaitDurable blocks (a client goroutine),
// Durable asks and returns at once, calling a wake function when the
// fsync ends (the event loop, which keeps serving other clients).

// syncFunc, when set, replaces the fsync of the AOF's files (SetSyncFunc).
var syncFunc atomic.Pointer[func(*os.File) error]

// syncFile is the fsync of the AOF's files.
func syncFile(f *os.File) error {
	if fn := syncFunc.Load(); fn != nil {
		return (*fn)(f)
	}
	return f.Sync()
}

// SetSyncFunc replaces the fsync of AOF files (nil: the file's own Sync)
// and returns the previous replacement: a test counts fsyncs and records
// what each covered.
func SetSyncFunc(f func(*os.File) error) func(*os.File) error {
	var p *func(*os.File) error
	if f != nil {
		p = &f
	}
	if old := syncFunc.Swap(p); old != nil {
		return *old
	}
	return nil
}

type commitState struct {
	want   int64      // the highest offset someone waits for (under AOF.mu)
	cond   *sync.Cond // on AOF.mu: synced moved, an fsync failed, or Close
	kick   chan struct{}
	done   chan struct{} // closed when the committer ends
	err    error         // the last group fsync's error, nil once one succeeds
	closed bool
	wakes  []commitWake // Durable's callers, by the offset they wait for
}

type commitWake struct {
	off  int64
	wake func()
}

func (c *commitState) init(mu *sync.Mutex) {
	c.cond = sync.NewCond(mu)
	c.kick = make(chan struct{}, 1)
	c.done = make(chan struct{})
}

// requestLocked asks the committer for an fsync covering off.
func (c *commitState) requestLocked(off int64) {
	if off > c.want {
		c.want = off
	}
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// wakeAll tells every waiter that synced (or an error) is there: the
// blocked ones through cond, Durable's callers whose offset it covers (all
// of them after an error or Close) through their wake. Under AOF.mu; a
// wake takes only leaf locks.
func (c *commitState) wakeAll(synced int64) {
	c.cond.Broadcast()
	keep := c.wakes[:0]
	for _, w := range c.wakes {
		if w.off <= synced || c.err != nil || c.closed {
			w.wake()
		} else {
			keep = append(keep, w)
		}
	}
	clear(c.wakes[len(keep):])
	c.wakes = keep
}

// syncedLocked records a completed fsync that covered the file up to
// upto (fed commands): the commit statistics and the waiters.
func (a *AOF) syncedLocked(upto, fed int64) {
	a.synced = max(a.synced, upto)
	a.fedSynced = max(a.fedSynced, fed)
	a.fsyncs++
	a.LastFsync = time.Now()
	a.commit.err = nil
	a.commit.wakeAll(a.synced)
}

// reachedLocked writes what was fed up to off if it is not written yet,
// and reports whether off is as far as its reply needs: written, and
// under appendfsync always synced. The offset is bounded by what was fed:
// an offset of an AOF closed since (appendonly turned off and on) must
// not wait for bytes this one will never have. A failed write is an
// error under always (the reply must not leave); under the other
// policies the reply leaves and the next writes are refused (Failing).
func (a *AOF) reachedLocked(off int64) (int64, bool, error) {
	off = min(off, a.written+int64(len(a.pend)))
	if a.written < off {
		a.flushLocked()
	}
	always := a.Policy() == FsyncAlways
	switch {
	case a.failing.Load():
		if always {
			return off, false, a.WriteErr
		}
		return off, true, nil
	case !always || a.synced >= off || a.commit.closed:
		return off, true, nil
	case a.commit.err != nil:
		return off, false, a.commit.err
	}
	return off, false, nil
}

// WaitDurable returns once every byte up to off (Fed's or Flush's
// answer) is written and, under appendfsync always, on disk; or with the
// error of the write or fsync that should have put it there. Call it
// without the server lock.
func (a *AOF) WaitDurable(off int64) error {
	if off == 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for {
		off, ok, err := a.reachedLocked(off)
		if ok || err != nil {
			return err
		}
		a.commit.requestLocked(off)
		a.commit.cond.Wait()
	}
}

// Durable is WaitDurable that does not wait: it reports whether off is
// written and, under appendfsync always, on disk. If not, it
// makes sure an fsync covering off will run and calls wake, unless nil
// (once, on the committer's goroutine, holding the AOF's mutex: wake must
// only signal), when it has ended or failed; the caller then asks again. A failed fsync
// is returned as err.
func (a *AOF) Durable(off int64, wake func()) (bool, error) {
	if off == 0 {
		return true, nil
	}
	if off <= a.wrote.Load() && a.Policy() != FsyncAlways {
		// Written, and nothing more is needed: every reply of a round but
		// the first (whose check writes the round's bytes) ends here.
		return true, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	off, ok, err := a.reachedLocked(off)
	if ok || err != nil {
		return ok, err
	}
	if wake != nil {
		a.commit.wakes = append(a.commit.wakes, commitWake{off, wake})
	}
	a.commit.requestLocked(off)
	return false, nil
}

// committer runs the group fsyncs until Close.
func (a *AOF) committer() {
	defer close(a.commit.done)
	for {
		select {
		case <-a.stop:
			return
		case <-a.commit.kick:
		}
		for a.commitOnce() {
		}
	}
}

// commitOnce runs one group fsync if someone waits for bytes not yet on
// disk, and reports whether it did (and succeeded).
func (a *AOF) commitOnce() bool {
	a.mu.Lock()
	if a.commit.want <= a.synced {
		a.mu.Unlock()
		return false
	}
	a.flushLocked() // what was fed meanwhile joins this fsync
	f, upto, fed := a.f, a.written, a.fedWritten
	a.dirty = false
	a.mu.Unlock()
	err := syncFile(f)
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.endSyncLocked(f, err, upto, fed)
}

// endSyncLocked records the end of an fsync of f begun when upto bytes
// (fed commands) were written, and reports whether it succeeded. An error
// on a file rotated away meanwhile is no loss: the rotation synced it
// (newIncr) before it closed it.
func (a *AOF) endSyncLocked(f *os.File, err error, upto, fed int64) bool {
	if err != nil && f == a.f {
		a.WriteErr = err
		a.dirty = true
		a.commit.err = err
		a.commit.wakeAll(a.synced)
		return false
	}
	a.syncedLocked(upto, fed)
	return true
}

// CommitStats are the AOF's completed fsyncs (of every policy) and the
// commands those fsyncs covered: their ratio is the commands per fsync.
func (a *AOF) CommitStats() (fsyncs, commands int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.fsyncs, a.fedSynced
}
