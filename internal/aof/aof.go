package aof

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/internal/resp"
)

// Entry is one command to append: its database and arguments.
type Entry struct {
	DB   int
	Argv [][]byte
	// ReplOnly entries go to replicas and not to the AOF (PUBLISH).
	ReplOnly bool
}

// Fsync policies (appendfsync).
const (
	FsyncNo = iota
	FsyncEverysec
	FsyncAlways
)

// AOF is an open append-only directory: the manifest and the incremental
// file commands are appended to. Feed, Rotate and Install are called
// under the server lock; the everysec syncer runs on its own.
type AOF struct {
	Dir, Name string
	Policy    func() int // the appendfsync policy now

	man   *Manifest
	f     *os.File
	seldb int
	buf   []byte
	size  int64 // bytes of the current incremental file
	// BaseSize is the size of the whole AOF after the last rewrite (for
	// auto-aof-rewrite-percentage); Size is its size now.
	BaseSize, Size int64
	// WriteErr is the last write or fsync error (aof_last_write_status);
	// read it through Err.
	WriteErr error
	failing  atomic.Bool // a write failed, for the check every write makes

	mu      sync.Mutex // guards f, pend, written, the commit state, for the syncers
	pend    []byte     // fed, not yet written to the file
	written int64      // bytes written to f (all files, since Open)
	// wrote mirrors written for Durable's check without mu.
	wrote  atomic.Int64
	dirty  bool  // written since the last fsync
	synced int64 // written offset the last fsync covered (under mu)
	// LastFsync is when the last fsync ended (under mu).
	LastFsync time.Time
	stop      chan struct{}
	done      chan struct{}

	commit commitState
	// Feeds counted for INFO (under mu): fed is every Feed, fedWritten
	// those written to the file, fedSynced those a completed fsync covered.
	fed, fedWritten, fedSynced int64
	fsyncs                     int64 // completed fsyncs (under mu)
}

// Open opens the AOF in dir described by m, appending to its last
// incremental file (creating one when m has none).
func Open(dir, name string, m *Manifest, policy func() int) (*AOF, error) {
	a := &AOF{Dir: dir, Name: name, Policy: policy, man: m, seldb: -1}
	if len(m.Incrs) == 0 {
		if err := a.newIncr(); err != nil {
			return nil, err
		}
	} else {
		last := m.Incrs[len(m.Incrs)-1]
		f, err := os.OpenFile(filepath.Join(dir, last.Name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		a.f = f
		if st, err := f.Stat(); err == nil {
			a.size = st.Size()
		}
	}
	for _, f := range m.Files() {
		if st, err := os.Stat(filepath.Join(dir, f.Name)); err == nil {
			a.Size += st.Size()
		}
	}
	a.BaseSize = a.Size
	a.stop, a.done = make(chan struct{}), make(chan struct{})
	a.commit.init(&a.mu)
	go a.syncer()
	go a.committer()
	return a, nil
}

// Manifest is a copy of the current manifest.
func (a *AOF) Manifest() Manifest {
	m := *a.man
	m.Incrs = append([]ManifestFile(nil), m.Incrs...)
	return m
}

// newIncr starts the next incremental file and records it in the
// manifest; commands go to it from now on.
func (a *AOF) newIncr() error {
	seq := int64(1)
	if n := len(a.man.Incrs); n > 0 {
		seq = a.man.Incrs[n-1].Seq + 1
	}
	name := IncrName(a.Name, seq)
	f, err := os.OpenFile(filepath.Join(a.Dir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	m := *a.man
	m.Incrs = append(append([]ManifestFile(nil), a.man.Incrs...), ManifestFile{Name: name, Seq: seq, Type: TypeIncr})
	if err := WriteManifest(a.Dir, a.Name, &m); err != nil {
		f.Close()
		os.Remove(filepath.Join(a.Dir, name))
		return err
	}
	a.man = &m
	a.mu.Lock()
	old := a.f
	background := false
	if old != nil {
		// What was fed before belongs to the old file. Under appendfsync
		// always it is on disk before anything goes to the new one (a
		// waiter's fsync of the new file must not stand for the old one's
		// bytes). Under the other policies nobody waits for it: the old
		// file is synced and closed in the background, as Redis closes it
		// in a bio thread, not under the server lock (a rotation at the
		// start of a rewrite held clients for an fsync of up to a second
		// of writes on a busy disk).
		if a.Policy() == FsyncAlways {
			a.syncLocked()
		} else {
			a.flushLocked()
			background = a.dirty
			a.dirty = false
		}
	}
	a.f = f
	a.size = 0
	a.mu.Unlock()
	switch {
	case background:
		go func() {
			if err := syncFile(old); err != nil {
				a.mu.Lock()
				a.WriteErr = err
				a.mu.Unlock()
			}
			old.Close()
		}()
	case old != nil:
		old.Close()
	}
	a.seldb = -1
	return nil
}

// Rotate starts a new incremental file (the start of a rewrite): the
// rewrite's base will hold everything before it.
func (a *AOF) Rotate() error { return a.newIncr() }

// Install makes baseName (already written and synced in Dir) the base,
// keeping only the incremental files from seq keepFrom on, and removes
// the files the manifest no longer names.
func (a *AOF) Install(baseName string, baseSeq int64, keepFrom int64) error {
	remove, err := a.InstallDeferred(baseName, baseSeq, keepFrom)
	remove()
	return err
}

// InstallDeferred is Install that leaves the removal of the files the
// manifest no longer names to the function it returns, to be called
// without the server lock: unlinking the last name of a large file frees
// its blocks there and then (hundreds of ms for an incremental file of
// 10M writes on a busy disk), and nothing reads those files any more.
func (a *AOF) InstallDeferred(baseName string, baseSeq int64, keepFrom int64) (remove func(), err error) {
	m := &Manifest{Base: &ManifestFile{Name: baseName, Seq: baseSeq, Type: TypeBase}}
	for _, f := range a.man.Incrs {
		if f.Seq >= keepFrom {
			m.Incrs = append(m.Incrs, f)
		}
	}
	if err := WriteManifest(a.Dir, a.Name, m); err != nil {
		return func() {}, err
	}
	old := a.man
	a.man = m
	keep := map[string]bool{}
	for _, f := range m.Files() {
		keep[f.Name] = true
	}
	var gone []string
	for _, f := range append(old.Files(), old.History...) {
		if !keep[f.Name] {
			gone = append(gone, filepath.Join(a.Dir, f.Name))
		}
	}
	a.Size = 0
	for _, f := range m.Files() {
		if st, err := os.Stat(filepath.Join(a.Dir, f.Name)); err == nil {
			a.Size += st.Size()
		}
	}
	a.BaseSize = a.Size
	return func() {
		for _, p := range gone {
			os.Remove(p)
		}
	}, nil
}

// NextBaseSeq is the sequence number the next base takes.
func (a *AOF) NextBaseSeq() int64 {
	if a.man.Base == nil {
		return 1
	}
	return a.man.Base.Seq + 1
}

// CurrentIncrSeq is the sequence of the file commands go to now.
func (a *AOF) CurrentIncrSeq() int64 { return a.man.Incrs[len(a.man.Incrs)-1].Seq }

var (
	bSelect = []byte("SELECT")
	bMulti  = []byte("MULTI")
	bExec   = []byte("EXEC")
)

// AppendEntries appends entries (one top-level command's effects) to b
// as the commands that redo them: SELECT when the database differs from
// *seldb (which it updates), and MULTI/EXEC around them when wrap. The
// AOF and the replication stream are the same bytes.
func AppendEntries(b []byte, entries []Entry, wrap bool, seldb *int) []byte {
	sel := func(db int) {
		if db != *seldb {
			b = resp.AppendCommand(b, bSelect, strconv.AppendInt(nil, int64(db), 10))
			*seldb = db
		}
	}
	if wrap {
		sel(entries[0].DB)
		b = resp.AppendCommand(b, bMulti)
	}
	for _, e := range entries {
		sel(e.DB)
		b = resp.AppendCommand(b, e.Argv...)
	}
	if wrap {
		b = resp.AppendCommand(b, bExec)
	}
	return b
}

// Feed appends entries (one top-level command's effects, in MULTI/EXEC
// when wrap) to be written to the incremental file (Flush); under
// appendfsync always their acknowledgement waits for a group fsync
// (commit.go).
func (a *AOF) Feed(entries []Entry, wrap bool) {
	a.buf = AppendEntries(a.buf[:0], entries, wrap, &a.seldb)
	a.mu.Lock()
	a.pend = append(a.pend, a.buf...)
	a.Size += int64(len(a.buf))
	a.fed++
	a.mu.Unlock()
	if cap(a.buf) > 1<<20 {
		a.buf = nil
	}
}

// Flush writes what was fed to the file (one write for a whole batch of
// commands) and returns the offset a reply that acknowledges them must
// wait for under appendfsync always (WaitDurable), 0 otherwise. The
// server calls it before the batch's replies are staged.
func (a *AOF) Flush() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.flushLocked()
	if a.Policy() == FsyncAlways && a.synced < a.written {
		return a.written
	}
	return 0
}

// Fed is the position a reply acknowledging what was fed so far must
// reach before it leaves (Durable, WaitDurable): written to the file, and
// under appendfsync always synced; 0 when nothing is left to reach. It
// writes nothing: the server writes once for all the replies of a round
// (the first Durable), as Redis writes once in beforeSleep.
func (a *AOF) Fed() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	end := a.written + int64(len(a.pend))
	if len(a.pend) > 0 || (a.Policy() == FsyncAlways && a.synced < end) {
		return end
	}
	return 0
}

func (a *AOF) flushLocked() {
	if len(a.pend) == 0 {
		return
	}
	n, err := a.f.Write(a.pend)
	a.size += int64(n)
	a.written += int64(n)
	a.wrote.Store(a.written)
	if n > 0 {
		a.dirty = true
	}
	if err != nil {
		// Kept for the next try; writes are refused meanwhile (Failing).
		a.WriteErr = err
		a.failing.Store(true)
		a.pend = append(a.pend[:0], a.pend[n:]...)
		return
	}
	a.fedWritten = a.fed
	if a.failing.Load() {
		a.WriteErr = nil
		a.failing.Store(false)
	}
	if cap(a.pend) > 1<<20 {
		a.pend = nil
	} else {
		a.pend = a.pend[:0]
	}
}

// Failing reports whether the last write to the file failed (the server
// then refuses writes, as Redis does).
func (a *AOF) Failing() bool { return a.failing.Load() }

func (a *AOF) syncLocked() {
	a.flushLocked()
	if !a.dirty {
		return
	}
	if err := syncFile(a.f); err != nil {
		a.WriteErr = err
		return
	}
	a.dirty = false
	a.syncedLocked(a.written, a.fedWritten)
	if a.WriteErr != nil {
		a.WriteErr = nil
	}
}

// Err is the last write or fsync error, nil once a later one succeeded.
func (a *AOF) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.WriteErr
}

// Sync forces what was written to disk.
func (a *AOF) Sync() {
	a.mu.Lock()
	a.syncLocked()
	a.mu.Unlock()
}

// backgroundSync is everysec's fsync: it runs without holding mu, so that
// commands keep appending while the disk works (fsync covers what was
// written before it started; a file rotated away meanwhile was synced by
// Rotate).
func (a *AOF) backgroundSync() {
	a.mu.Lock()
	a.flushLocked()
	f, dirty, upto, fed := a.f, a.dirty, a.written, a.fedWritten
	a.dirty = false
	a.mu.Unlock()
	if !dirty {
		return
	}
	err := syncFile(f)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.endSyncLocked(f, err, upto, fed)
}

// syncer fsyncs once a second under appendfsync everysec.
func (a *AOF) syncer() {
	defer close(a.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
			if a.Policy() == FsyncEverysec {
				a.backgroundSync()
			} else {
				a.mu.Lock()
				a.flushLocked()
				a.mu.Unlock()
			}
		}
	}
}

// Close syncs and closes the file and stops the syncer.
func (a *AOF) Close() error {
	close(a.stop)
	<-a.done
	<-a.commit.done
	a.mu.Lock()
	defer a.mu.Unlock()
	a.syncLocked()
	a.commit.closed = true
	a.commit.wakeAll(a.synced)
	return a.f.Close()
}

// String describes the AOF for logs.
func (a *AOF) String() string { return fmt.Sprintf("%s/%s", a.Dir, a.Name) }
