package engine

import (
	"errors"
	"math"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/rdb"
	"github.com/abacusdb/abacus/internal/script"
)

// Persistence is the engine's view of the durability layer (the AOF and
// snapshots, internal/durability), which installs itself with
// SetPersistence. The engine calls it at fixed points and never touches a
// file itself; the AOF reads the effect stream through a PropSink.
//
// Every method is called with the server lock held, except Wait, Durable
// and Cron.
type Persistence interface {
	// Refusal is the error a write (or PING) gets while data cannot reach
	// the disk (MISCONF), "" while writes may go on.
	Refusal() string
	// Flush writes out the effects of the batch that just ran and returns
	// the position Wait must see durable before the batch's replies leave
	// (appendfsync always), 0 when there is nothing to wait for; with
	// syncNow it waits itself and returns 0.
	Flush(syncNow bool) int64
	// Wait blocks until pos is durable.
	Wait(pos int64)
	// Durable reports whether pos is durable; if not, it starts the sync
	// that will make it so and, unless wake is nil, calls wake once that
	// sync has ended (on another goroutine: wake must only signal). It
	// lets an event loop serve others while the disk works.
	Durable(pos int64, wake func()) bool
	// Cron runs the periodic work (save points, scheduled saves and
	// rewrites, appendonly changed at run time); it takes the lock.
	Cron()
	// FlushAll is FLUSHALL's part: drop a save in progress and, with save
	// points, save the empty data set.
	FlushAll()
	// ShutdownSave is the save before the process exits: done when asked
	// (save) or when save points are configured, never with nosave; an
	// error refuses the shutdown unless force.
	ShutdownSave(save, nosave, force bool) error
	// Reload is DEBUG RELOAD: save (when save) and load the file back in
	// place of the data. An error's text is the reply.
	Reload(save bool) error
	// LoadAOF is DEBUG LOADAOF: write the AOF out, empty the data and
	// load the AOF's files back, without a rewrite. An error's text is
	// the reply.
	LoadAOF() error
	// info writes INFO persistence's rdb_* and aof_* fields.
	Info(b *InfoBuilder)
}

// SetPersistence installs the durability layer.
// Safe while the server runs.
func (e *Env) SetPersistence(p Persistence) { e.persist.Store(&persistBox{p}) }

// persistBox holds the installed Persistence for an atomic pointer.
type persistBox struct{ p Persistence }

// Persistence returns the durability layer; without one, a layer that
// keeps nothing and refuses nothing.
func (e *Env) Persistence() Persistence {
	if b := e.persist.Load(); b != nil {
		return b.p
	}
	return noPersistence{}
}

// noPersistence is the durability of a server without any: nothing is
// saved, nothing refused.
type noPersistence struct{}

func (noPersistence) Refusal() string                 { return "" }
func (noPersistence) Flush(bool) int64                { return 0 }
func (noPersistence) Wait(int64)                      {}
func (noPersistence) Durable(int64, func()) bool      { return true }
func (noPersistence) Cron()                           {}
func (noPersistence) FlushAll()                       {}
func (noPersistence) ShutdownSave(_, _, _ bool) error { return nil }
func (noPersistence) Reload(bool) error               { return errors.New("ERR DEBUG RELOAD needs persistence") }
func (noPersistence) LoadAOF() error                  { return errors.New("ERR DEBUG LOADAOF needs persistence") }
func (noPersistence) Info(*InfoBuilder)               {}

// SetLoading turns the effect stream off while data is loaded (AOF
// replay): what the loaded commands do is already on disk.
func (e *Env) SetLoading(on bool) { e.prop.off = on }

// Nested reports whether the command runs inside EXEC or a script.
func (c *Ctx) Nested() bool { return c.Env.depth > 1 }

// RestoreOptions are the thresholds a value read from a file or a DUMP
// payload is built with, at unix ms now.
func (e *Env) RestoreOptions(now int64) rdb.Options {
	return LoadOptions(&Ctx{Env: e, Now: now})
}

// FileEncodeOptions are DUMP's encoding settings plus rdbchecksum and the
// eviction metadata the policy records before each key (IDLE or FREQ): how
// snapshot and AOF base files are written, at unix ms now.
func (e *Env) FileEncodeOptions(now int64) rdb.EncodeOptions {
	opt := DumpOptions(&Ctx{Env: e, Now: now})
	opt.NoChecksum = !e.Cfg.Bool(config.RDBChecksum)
	switch e.Policy() {
	case VolatileLRU, AllKeysLRU:
		opt.KeyMeta = rdb.MetaIdle
	case VolatileLFU, AllKeysLFU:
		opt.KeyMeta = rdb.MetaFreq
		opt.LFUDecayTime = int(e.Cfg.Int(config.LFUDecayTime))
	}
	return opt
}

// FunctionCodes are the source codes of the loaded function libraries,
// as snapshots store them.
func (e *Env) FunctionCodes() [][]byte {
	var out [][]byte
	for _, l := range e.Scripting().Libraries() {
		out = append(out, []byte(l.Code))
	}
	return out
}

// RestoreFunctions replaces the function libraries with codes (a
// snapshot's); with no codes and no libraries it does nothing.
func (e *Env) RestoreFunctions(codes []string) error {
	if len(codes) == 0 && len(e.Scripting().Libraries()) == 0 {
		return nil
	}
	if err := e.Scripting().RestoreLibraries(codes, script.RestoreFlush); err != nil {
		return err
	}
	e.SyncFunctionCounts()
	return nil
}

// UsedMemory is INFO's used_memory, the heap held by objects (the
// used-mem AUX field of a snapshot).
func UsedMemory() int64 { return int64(min(ReadMemStats().Heap, math.MaxInt64)) }
