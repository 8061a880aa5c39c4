// Package persist writes and reads RDB snapshots of a keyspace on disk:
// a synchronous save under the server lock (SAVE, SHUTDOWN), a background
// save that walks the keyspace a slice at a time while the server keeps
// serving (BGSAVE; keyspace/snapshot.go keeps it point-in-time), and the
// load at startup into a fresh keyspace. Files are written to a temporary
// name in the same directory, synced and renamed over the target, as
// Redis does, so a crash never leaves a half-written dump.rdb.
package persist

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/internal/atomicfile"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/rdb"
)

// Options are what a save needs besides the keyspace.
type Options struct {
	Path      string            // the target file (dir/dbfilename)
	Encode    rdb.EncodeOptions // rdbcompression, the moment (Now)
	Aux       []string          // AUX fields, key then value
	Functions [][]byte          // function libraries' code (FUNCTION2)
	// SliceKeys is how many keys a background save writes per hold of the
	// lock (0: DefaultSliceKeys).
	SliceKeys int
	// RestoreCommands writes the keys as RESTORE commands (with SELECT
	// and FUNCTION LOAD) instead of an RDB file: an AOF base without the
	// RDB preamble. Aux is not written.
	RestoreCommands bool
	// Skip, when set, leaves out the keys it returns true for (what a
	// redis-server replica cannot hold); called under the lock, or by a
	// driven save's encoder for the keys it reads itself (it must then
	// read only what a save writes of the object: its type, its value).
	Skip func(o *keyspace.Object) bool
	// Drive, when set, runs a background save's walk under the server
	// lock on the goroutine that serves the clients, between their
	// commands (engine.Env.RunInBackground): it calls step with the lock
	// held until step returns StepDone, each time until about deadline,
	// and after StepBlocked only once wake has been called. An encoder
	// goroutine encodes what the steps hand out (driven.go), and Stream
	// only writes the encoded chunks out. Without it Stream takes the lock
	// itself for each slice and encodes under it.
	Drive func(step func(deadline time.Time) Step) (wake func())
	// SyncEvery, when positive, has Run sync the file each time that many
	// more bytes were written (rdb-save-incremental-fsync and
	// aof-rewrite-incremental-fsync; Redis syncs every 4 MB,
	// REDIS_AUTOSYNC_BYTES): the dirty pages go out during the save
	// instead of all at its end, and the encoder, which waits for the
	// file when its chunks are all written or waiting, runs at the disk's
	// pace rather than taking a core from the clients for its whole
	// length, as a forked child that syncs does.
	SyncEvery int64
}

// AutoSyncBytes is what Options.SyncEvery is for the incremental-fsync
// parameters: Redis's REDIS_AUTOSYNC_BYTES.
const AutoSyncBytes = 4 << 20

// syncWriter syncs f each time every more bytes were written to it.
type syncWriter struct {
	f       *os.File
	every   int64
	pending int64
}

func (w *syncWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.pending += int64(n)
	if err == nil && w.pending >= w.every {
		w.pending = 0
		err = w.f.Sync()
	}
	return n, err
}

// Step is what a driven save's step reports (Options.Drive).
type Step int

const (
	StepMore    Step = iota // call again soon
	StepBlocked             // the chunks wait for the file: call after wake
	StepDone                // the snapshot is written (or canceled)
)

// DefaultSliceKeys bounds the work done per hold of the server lock by a
// background save.
const DefaultSliceKeys = 256

var tempSeq atomic.Int64

// tempPath is a temporary file next to path, named like Redis's
// temp-<pid>.rdb (with a sequence number: saves of one process may
// overlap, a SAVE during SHUTDOWN while a BGSAVE is abandoned).
func tempPath(path string) string {
	return filepath.Join(filepath.Dir(path), fmt.Sprintf("temp-%d-%d.rdb", os.Getpid(), tempSeq.Add(1)))
}

// commit syncs and closes f, then renames it over path and syncs the
// directory (best effort); on any error the temporary file is removed.
func commit(f *os.File, tmp, path string, werr error) error {
	if err := atomicfile.Commit(f, tmp, path, werr); err != nil {
		return err
	}
	atomicfile.SyncDir(path)
	return nil
}

// Save writes ks to opt.Path at once. The caller holds the server lock.
func Save(ks *keyspace.Keyspace, opt Options) error {
	tmp := tempPath(opt.Path)
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	werr := rdb.WriteKeyspace(f, ks, opt.Aux, opt.Functions, opt.Encode)
	return commit(f, tmp, opt.Path, werr)
}

// ErrCanceled is what a background save whose snapshot was ended by
// someone else returns.
var ErrCanceled = errors.New("background save canceled")

// Background is a background save in progress.
type Background struct {
	ks   *keyspace.Keyspace
	lock sync.Locker
	opt  Options
	ver  int
	// Keys is the number of keys written so far (INFO
	// current_save_keys_processed); read it under the lock.
	Keys int64
	// MaxHold is the longest the save held the lock for one slice, and
	// Slices how many it took (the pause it can cause clients).
	MaxHold time.Duration
	Slices  int
	// Held is the time the save held the lock in all (a driven save: the
	// loop's time spent on it).
	Held time.Duration
	// RenameHold is how long the final rename held the lock.
	RenameHold time.Duration
	canceled   bool // the snapshot is closed
	dropped    bool // Cancel was called: the file must not replace the target
	d          *driven
}

// StartBackground opens ks's snapshot at this moment. The caller holds
// the lock; Run then does the writing, taking lock for each slice.
func StartBackground(ks *keyspace.Keyspace, lock sync.Locker, opt Options) *Background {
	if opt.SliceKeys <= 0 {
		opt.SliceKeys = DefaultSliceKeys
	}
	b := &Background{ks: ks, lock: lock, opt: opt, ver: rdb.FileVersion(ks)}
	if opt.Encode.NoFieldTTL {
		b.ver = rdb.Version
	}
	ks.BeginSnapshot(opt.Encode.Now)
	return b
}

// Cancel ends the snapshot now (SHUTDOWN, FLUSHALL and DEBUG RELOAD drop a
// save in progress, as Redis kills its child). Call it under the lock; Run
// then removes its temporary file and returns ErrCanceled.
func (b *Background) Cancel() {
	b.dropped = true
	if d := b.d; d != nil {
		d.stop() // before the snapshot ends: the encoder reads live objects
	}
	if !b.canceled {
		b.canceled = true
		b.ks.EndSnapshot()
	}
	if d := b.d; d != nil && !d.closed {
		d.closed = true
		close(d.full)
		if d.wake != nil {
			d.wake() // the step then reports StepDone
		}
	}
}

// Run writes the snapshot to a temporary file a slice at a time (Stream),
// then renames the file over the target. It ends the snapshot whatever
// happens.
func (b *Background) Run() error {
	tmp := tempPath(b.opt.Path)
	f, err := os.Create(tmp)
	if err != nil {
		b.lock.Lock()
		b.Cancel()
		b.lock.Unlock()
		return err
	}
	var out io.Writer = f
	if b.opt.SyncEvery > 0 {
		out = &syncWriter{f: f, every: b.opt.SyncEvery}
	}
	werr := b.stream(out, true)
	if werr != nil {
		f.Close()
		os.Remove(tmp)
		return werr
	}
	return b.install(f, tmp)
}

// install syncs and closes the written file and renames it over the
// target, unless the save was dropped meanwhile.
func (b *Background) install(f *os.File, tmp string) error {
	werr := f.Sync()
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	// The rename happens under the lock, so that a save that was dropped
	// meanwhile (FLUSHALL, SHUTDOWN, DEBUG RELOAD wrote the file since)
	// never replaces a newer file; the syncs stay outside it. The old file
	// keeps a second name until the lock is released: renaming over the
	// last name of a large file frees its blocks there and then, which
	// took 150 ms for 512 MiB here.
	old := tempPath(b.opt.Path)
	if os.Link(b.opt.Path, old) != nil {
		old = ""
	}
	defer func() {
		if old != "" {
			os.Remove(old)
		}
	}()
	b.lock.Lock()
	held := time.Now()
	if b.dropped && werr == nil {
		werr = ErrCanceled
	}
	if werr == nil {
		werr = os.Rename(tmp, b.opt.Path)
	}
	b.RenameHold = time.Since(held)
	b.lock.Unlock()
	if werr != nil {
		os.Remove(tmp)
		return werr
	}
	atomicfile.SyncDir(b.opt.Path)
	return nil
}

// Load reads the file at path into a fresh keyspace of n databases. A
// missing file is not an error: it returns (nil, nil, nil). On any other
// failure nothing is returned but the error, which names the offset and
// the problem (rdb.CorruptError).
func Load(path string, n int, opt rdb.Options, fn func(code []byte) error) (*keyspace.Keyspace, *rdb.FileInfo, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	ks := keyspace.New(n)
	ks.Now = opt.Now
	info, err := rdb.LoadKeyspace(ks, b, opt, fn)
	if err != nil {
		return nil, nil, err
	}
	return ks, info, nil
}

// Aux is the AUX fields Abacus writes, as redis-server 7.0 does.
func Aux(redisVer string, ctimeSec, usedMem int64) []string {
	return []string{
		"redis-ver", redisVer,
		"redis-bits", strconv.Itoa(strconv.IntSize),
		"ctime", strconv.FormatInt(ctimeSec, 10),
		"used-mem", strconv.FormatInt(usedMem, 10),
		"aof-base", "0",
	}
}

// AOFBaseAux is aux (Aux's fields) with aof-base 1, as the RDB preamble
// of an AOF base has it: the field once, as redis-server writes it.
func AOFBaseAux(aux []string) []string {
	out := append([]string(nil), aux...)
	for i := 0; i+1 < len(out); i += 2 {
		if out[i] == "aof-base" {
			out[i+1] = "1"
			return out
		}
	}
	return append(out, "aof-base", "1")
}
