// Package durability keeps the data on disk: the append-only file, a
// consumer of the engine's effect stream, and RDB snapshots (SAVE, BGSAVE,
// save points), with their cron, their commands and INFO persistence.
// main wires one Durability to the engine it serves; the engine knows it
// only through engine.Persistence.
//
// Concurrency: the state is touched under the server lock (the lock given
// to New); the goroutines that write a background save or a rewritten AOF
// base take that lock to record their end. Wait runs without it.
package durability

import (
	"sync"

	"github.com/abacusdb/abacus/internal/aof"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/keyspace"
)

// Durability is the AOF and the snapshots of one engine.
type Durability struct {
	e    *engine.Env
	lock sync.Locker // the server lock, held while commands run
	rdb  persistState
	aof  aofState
}

// New makes the durability layer of e, whose commands run under lock,
// and installs it in e. Nothing is loaded or opened yet: see
// LoadAtStartup and StartAOF.
func New(e *engine.Env, lock sync.Locker) *Durability {
	d := &Durability{e: e, lock: lock}
	e.SetPersistence(d)
	return d
}

// of is the Durability of the engine a persistence command runs in.
func of(e *engine.Env) *Durability { return e.Persistence().(*Durability) }

// Refusal is MISCONF while a background save failed (with save points
// and stop-writes-on-bgsave-error) or the AOF cannot be written.
func (d *Durability) Refusal() string { return d.diskRefusal() }

// Flush writes the AOF bytes of the batch that just ran (AOFFlush).
func (d *Durability) Flush(syncNow bool) int64 { return d.AOFFlush(syncNow) }

// Wait waits until the AOF is on disk up to pos (AOFWait).
func (d *Durability) Wait(pos int64) { d.AOFWait(pos) }

// Durable reports whether the AOF is on disk up to pos, and otherwise
// has wake called when the group fsync covering it ends (AOFDurable).
func (d *Durability) Durable(pos int64, wake func()) bool { return d.AOFDurable(pos, wake) }

// Cron starts the saves and rewrites that are due and follows appendonly
// changed at run time; it takes the lock.
func (d *Durability) Cron() {
	d.PersistCron()
	d.aofCron()
}

// FlushAll is FLUSHALL's part: a save in progress is dropped and, with
// save points, the empty data set is saved at once.
func (d *Durability) FlushAll() { d.flushallSave() }

// Reload is DEBUG RELOAD: save unless told not to, then load the file
// back in place of the data.
func (d *Durability) Reload(save bool) error {
	d.cancelBgsave()
	d.cancelRewrite()
	if save {
		if err := d.saveNow(false); err != nil {
			return errReloadSave
		}
	}
	if err := d.LoadRDB(); err != nil {
		d.e.Log.Warn(err.Error())
		return errReloadLoad
	}
	d.e.Log.Info("DB reloaded by DEBUG RELOAD")
	return nil
}

// LoadAOF is DEBUG LOADAOF: the AOF buffer written out, the data emptied
// and the files the manifest names loaded back (no rewrite: the files stay
// as they are and the AOF goes on appending to the same incr file). Redis
// exits when the AOF cannot be loaded; Abacus replies an error and keeps
// the data when there is no AOF to load.
func (d *Durability) LoadAOF() error {
	d.AOFFlush(true)
	m, err := aof.ReadManifest(d.aofDir(), d.e.Cfg.Str(config.AppendFilename))
	if err != nil {
		d.e.Log.Warn("DEBUG LOADAOF: " + err.Error())
		return errLoadAOFNone
	}
	d.cancelBgsave() // its snapshot reads the data being replaced
	d.e.KS.Adopt(keyspace.New(len(d.e.KS.DBs)))
	if err := d.loadAOF(m); err != nil {
		d.e.Log.Warn(err.Error())
		return errLoadAOF
	}
	d.e.Log.Warn("Append Only File loaded by DEBUG LOADAOF")
	return nil
}

// Info writes INFO persistence's rdb_* and aof_* fields.
func (d *Durability) Info(b *engine.InfoBuilder) {
	d.infoPersistenceRDB(b)
	d.infoPersistenceAOF(b)
}

// The replies of a DEBUG RELOAD that failed (Redis's texts).
var (
	errReloadSave  = replyError("ERR Error trying to save the DB")
	errReloadLoad  = replyError("ERR Error trying to load the RDB dump, check server logs.")
	errLoadAOFNone = replyError("ERR There is no append only file to load")
	errLoadAOF     = replyError("ERR Error trying to load the append only file, check server logs.")
)

// replyError is an error whose text is a client's error reply.
type replyError string

func (e replyError) Error() string { return string(e) }
