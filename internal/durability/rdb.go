package durability

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/persist"
	"github.com/abacusdb/abacus/internal/rdb"
)

// RDB persistence commands: SAVE, BGSAVE, and the state behind LASTSAVE,
// INFO persistence, save points, MISCONF and SHUTDOWN's save
// (docs/persistence.md). The state is touched under the server lock; the
// background saver's goroutine takes the lock to update it.

func init() {
	engine.Register(
		&engine.Command{Name: "save", Arity: 1, Flags: engine.FlagAdmin | engine.FlagNoScript | engine.FlagNoMulti | engine.FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Group: "server",
			Summary: "Synchronously saves the database(s) to disk.", Since: "1.0.0", Complexity: "O(N) where N is the total number of keys in all databases",
			Handler: cmdSave},
		&engine.Command{Name: "bgsave", Arity: -1, Flags: engine.FlagAdmin | engine.FlagNoScript | engine.FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Group: "server",
			Summary: "Asynchronously saves the database(s) to disk.", Since: "1.0.0", Complexity: "O(1)",
			Handler: cmdBgsave},
		&engine.Command{Name: "lastsave", Arity: 1, Flags: engine.FlagLoading | engine.FlagStale | engine.FlagFast, ACL: "@admin @dangerous", Group: "server",
			Tips:    "nondeterministic_output",
			Summary: "Returns the Unix timestamp of the last successful save to disk.", Since: "1.0.0", Complexity: "O(1)", Handler: cmdLastSave},
	)
}

// ErrMisconf is Redis's refusal of writes after a failed background save
// when stop-writes-on-bgsave-error is on.
const ErrMisconf = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."

// persistState is the RDB side of the server.
type persistState struct {
	// Auto turns on what happens without being asked: save points, the
	// save FLUSHALL does, SHUTDOWN's and SIGTERM's save. The binary turns
	// it on (EnableAutoSave); in-process servers in tests start without.
	auto atomic.Bool

	bg          *persist.Background
	bgStart     time.Time
	bgDirty     int64 // Dirty when the running background save began
	scheduled   bool  // BGSAVE in EXEC: start at the next cron
	lastSave    int64 // unix s of the last successful save
	lastTry     int64 // unix s of the last background save attempt
	lastBgOK    bool
	lastBgSecs  int64
	saves       int64
	loadedKeys  int64
	loadExpired int64
	bgDone      chan struct{} // closed when the running background save ends
	// failing mirrors !lastBgOK for the check every write makes.
	failing atomic.Bool
	once    sync.Once
}

func (d *Durability) ps() *persistState {
	p := &d.rdb
	p.once.Do(func() {
		p.lastSave = d.e.Started.Unix()
		p.lastBgOK = true
		p.lastBgSecs = -1
	})
	return p
}

// EnableAutoSave turns on save points, FLUSHALL's save and the save at
// shutdown, as a redis-server with save points configured does them.
func (d *Durability) EnableAutoSave() { d.rdb.auto.Store(true) }

// rdbPath is dir/dbfilename.
func (d *Durability) rdbPath() string {
	return filepath.Join(d.e.Cfg.Str(config.Dir), d.e.Cfg.Str(config.DBFilename))
}

// savePoints parses the save parameter: (seconds, changes) pairs.
func (d *Durability) savePoints() [][2]int64 {
	f := strings.Fields(d.e.Cfg.Str(config.Save))
	var pts [][2]int64
	for i := 0; i+1 < len(f); i += 2 {
		s, err1 := strconv.ParseInt(f[i], 10, 64)
		n, err2 := strconv.ParseInt(f[i+1], 10, 64)
		if err1 == nil && err2 == nil {
			pts = append(pts, [2]int64{s, n})
		}
	}
	return pts
}

// saveOptions are the options of a save at this moment.
func (d *Durability) saveOptions() persist.Options {
	now := d.e.Clock.NowMs()
	return persist.Options{
		Path:      d.rdbPath(),
		Encode:    d.e.FileEncodeOptions(now),
		Aux:       persist.Aux(config.RedisVersion, now/1000, engine.UsedMemory()),
		Functions: d.e.FunctionCodes(),
	}
}

// saveNow writes the RDB file synchronously (under the lock) and records
// it; count tells whether rdb_saves counts it (FLUSHALL's does not).
func (d *Durability) saveNow(count bool) error {
	p := d.ps()
	start := time.Now()
	if err := persist.Save(d.e.KS, d.saveOptions()); err != nil {
		d.e.Log.Warn(fmt.Sprintf("Failed opening the temp RDB file %s (in server root dir %s) for saving: %v", d.e.Cfg.Str(config.DBFilename), d.e.Cfg.Str(config.Dir), err))
		return err
	}
	d.e.Stats.Dirty.Store(0)
	p.lastSave = d.e.Clock.NowMs() / 1000
	if count {
		p.saves++
	}
	d.e.Log.Info(fmt.Sprintf("DB saved on disk (%.3f seconds)", time.Since(start).Seconds()))
	return nil
}

// cmdLastSave answers the time of the last successful save (the start
// time before any).
func cmdLastSave(c *engine.Ctx) { c.W.Int(of(c.Env).ps().lastSave) }

func cmdSave(c *engine.Ctx) {
	d := of(c.Env)
	if d.ps().bg != nil {
		c.Error("ERR Background save already in progress")
		return
	}
	if err := d.saveNow(true); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			c.Error("ERR") // Redis's reply to a failed write; the log says why
		} else {
			c.Error("ERR " + err.Error()) // a value that cannot be written
		}
		return
	}
	c.W.OK()
}

func cmdBgsave(c *engine.Ctx) {
	schedule := false
	if len(c.Args) > 1 {
		if len(c.Args) != 2 || !c.ArgIs(1, "schedule") {
			c.Error(engine.ErrSyntax)
			return
		}
		schedule = true
	}
	d := of(c.Env)
	p := d.ps()
	switch {
	case p.bg != nil:
		c.Error("ERR Background save already in progress")
	case d.aofs().rewriting && schedule:
		// One snapshot at a time, as Redis runs one child.
		p.scheduled = true
		c.W.Simple("Background saving scheduled")
	case (d.aofs().rewriting || d.e.KS.SnapshotOpen()) && schedule:
		// A replica's full sync holds the keyspace's one snapshot.
		p.scheduled = true
		c.W.Simple("Background saving scheduled")
	case d.aofs().rewriting || d.e.KS.SnapshotOpen():
		c.Error("ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")
	case c.Nested():
		// Inside EXEC, as Redis's server.in_exec: the save starts later.
		p.scheduled = true
		c.W.Simple("Background saving scheduled")
	default:
		if err := d.startBgsave(); err != nil {
			c.Error("ERR " + err.Error())
			return
		}
		c.W.Simple("Background saving started")
	}
}

// startBgsave starts a background save; called under the lock.
func (d *Durability) startBgsave() error {
	lock := d.lock
	p := d.ps()
	p.scheduled = false
	p.lastTry = d.e.Clock.NowMs() / 1000
	p.bgStart = time.Now()
	p.bgDirty = d.e.Stats.Dirty.Load()
	opt := d.saveOptions()
	opt.Drive = d.e.SaveDriver(lock)
	if d.e.Cfg.Bool(config.RDBSaveIncrementalFsync) {
		opt.SyncEvery = persist.AutoSyncBytes
	}
	bg := persist.StartBackground(d.e.KS, lock, opt)
	p.bg = bg
	done := make(chan struct{})
	p.bgDone = done
	d.e.Log.Info("Background saving started")
	go func() {
		err := bg.Run()
		lock.Lock()
		d.bgsaveDone(bg, err)
		lock.Unlock()
		close(done)
	}()
	return nil
}

// bgsaveDone records the end of a background save (under the lock).
func (d *Durability) bgsaveDone(bg *persist.Background, err error) {
	p := d.ps()
	if p.bg != bg {
		return
	}
	p.bg = nil
	p.lastBgSecs = int64(time.Since(p.bgStart).Seconds())
	switch {
	case err == nil:
		p.lastBgOK = true
		p.lastSave = d.e.Clock.NowMs() / 1000
		p.saves++
		d.e.Stats.Dirty.Add(-p.bgDirty)
		d.e.Log.Info(fmt.Sprintf("Background saving terminated with success (%d keys, %d slices, longest hold of the lock %.3f ms, %.1f ms in all, rename %.3f ms)",
			bg.Keys, bg.Slices, float64(bg.MaxHold.Microseconds())/1000, float64(bg.Held.Microseconds())/1000, float64(bg.RenameHold.Microseconds())/1000))
	case errors.Is(err, persist.ErrCanceled):
		d.e.Log.Warn("Background saving terminated by a shutdown, flush or reload")
	default:
		p.lastBgOK = false
		d.e.Log.Warn("Background saving error: " + err.Error())
	}
	p.failing.Store(!p.lastBgOK)
}

// cancelBgsave drops a background save in progress (under the lock). It
// does not wait: the saver's goroutine finds the save dropped at its next
// hold of the lock, removes its temporary file and never renames it.
func (d *Durability) cancelBgsave() {
	p := d.ps()
	if p.bg == nil {
		return
	}
	p.bg.Cancel()
	d.bgsaveDone(p.bg, persist.ErrCanceled)
}

// writeRefusal is MISCONF when a background save failed, save points are
// configured and stop-writes-on-bgsave-error is on ("" otherwise).
func (d *Durability) writeRefusal() string {
	if !d.rdb.failing.Load() || !d.e.Cfg.Bool(config.StopWritesOnBgsaveError) || len(d.savePoints()) == 0 {
		return ""
	}
	return ErrMisconf
}

// PersistCron starts the background saves that are due: a scheduled one,
// or one whose save point is reached (after a failure, not before 5
// seconds, as Redis's CONFIG_BGSAVE_RETRY_DELAY). It takes the lock.
func (d *Durability) PersistCron() {
	d.lock.Lock()
	defer d.lock.Unlock()
	p := d.ps()
	if p.bg != nil || d.aofs().rewriting || d.e.KS.SnapshotOpen() {
		return // one snapshot at a time (a replica's full sync holds one too)
	}
	if p.scheduled {
		d.startBgsave()
		return
	}
	if !p.auto.Load() {
		return
	}
	now := d.e.Clock.NowMs() / 1000
	dirty := d.e.Stats.Dirty.Load()
	for _, sp := range d.savePoints() {
		if dirty >= sp[1] && now-p.lastSave > sp[0] && (p.lastBgOK || now-p.lastTry > 5) {
			d.e.Log.Info(fmt.Sprintf("%d changes in %d seconds. Saving...", sp[1], sp[0]))
			d.startBgsave()
			return
		}
	}
}

// flushallSave is FLUSHALL's part (under the lock): a save in progress is
// dropped, and with save points the empty dataset is saved at once.
func (d *Durability) flushallSave() {
	d.cancelBgsave()
	if d.rdb.auto.Load() && len(d.savePoints()) > 0 && !d.e.KS.UndoOpen() {
		d.saveNow(false)
	}
}

// ShutdownSave is the save before exiting (under the lock): done when
// asked (save) or when save points are configured, unless nosave. A failed
// save refuses the shutdown unless force.
func (d *Durability) ShutdownSave(save, nosave, force bool) error {
	if nosave {
		// Touch nothing: SHUTDOWN NOSAVE may run while a busy script
		// holds the keyspace (scripting_busy.go), and the process exits.
		return nil
	}
	d.cancelBgsave()
	p := d.ps()
	if !save && !(p.auto.Load() && len(d.savePoints()) > 0) {
		return nil
	}
	d.e.Log.Info("Saving the final RDB snapshot before exiting.")
	if err := d.saveNow(true); err != nil {
		if force {
			d.e.Log.Warn("Error trying to save the DB. Exit anyway.")
			return nil
		}
		d.e.Log.Warn("Error trying to save the DB, can't exit.")
		d.e.Log.Warn("Errors trying to shut down the server. Check the logs for more information.")
		return errors.New("Errors trying to SHUTDOWN. Check logs.")
	}
	return nil
}

// LoadRDB loads dir/dbfilename into a fresh keyspace and, only when the
// whole file loaded, puts it in place of the current data (startup, DEBUG
// RELOAD). A missing file loads nothing. Call it under the lock (or before
// serving).
func (d *Durability) LoadRDB() error {
	path := d.rdbPath()
	start := time.Now()
	opt := d.e.RestoreOptions(d.e.Clock.NowMs())
	var codes []string
	ks, info, err := persist.Load(path, len(d.e.KS.DBs), opt, func(code []byte) error {
		codes = append(codes, string(code))
		return nil
	})
	if err != nil {
		var ce *rdb.CorruptError
		if errors.As(err, &ce) {
			return fmt.Errorf("Bad RDB file %s at offset %d: %s. The server does not start on it: repair or move the file", path, ce.Offset, ce.What)
		}
		return fmt.Errorf("Error loading the RDB file %s: %v", path, err)
	}
	if ks == nil {
		return nil
	}
	if err := d.e.RestoreFunctions(codes); err != nil {
		return fmt.Errorf("Error loading the RDB file %s: function library: %v", path, err)
	}
	d.cancelBgsave()
	d.e.KS.Adopt(ks)
	p := d.ps()
	p.loadedKeys, p.loadExpired = 0, int64(info.Skipped)
	for _, n := range info.Keys {
		p.loadedKeys += int64(n)
	}
	d.e.Log.Info(fmt.Sprintf("Done loading RDB, keys loaded: %d, keys expired: %d.", p.loadedKeys, p.loadExpired))
	d.e.Log.Info(fmt.Sprintf("DB loaded from disk: %.3f seconds", time.Since(start).Seconds()))
	return nil
}

// WaitBgsave waits for a background save in progress to end (tests,
// shutdown). Call it without the lock.
func (d *Durability) WaitBgsave() {
	d.lock.Lock()
	done := d.ps().bgDone
	d.lock.Unlock()
	if done != nil {
		<-done
	}
}

func (d *Durability) infoPersistenceRDB(b *engine.InfoBuilder) {
	p := d.ps()
	keys := int64(0)
	if p.bg != nil {
		keys = p.bg.Keys
	}
	total := int64(0)
	if p.bg != nil {
		for _, db := range d.e.KS.DBs {
			total += int64(db.Len())
		}
	}
	b.Int("current_save_keys_processed", keys)
	b.Int("current_save_keys_total", total)
	b.Int("rdb_changes_since_last_save", d.e.Stats.Dirty.Load())
	b.Int("rdb_bgsave_in_progress", boolInt(p.bg != nil))
	b.Int("rdb_last_save_time", p.lastSave)
	if p.lastBgOK {
		b.KV("rdb_last_bgsave_status", "ok")
	} else {
		b.KV("rdb_last_bgsave_status", "err")
	}
	b.Int("rdb_last_bgsave_time_sec", p.lastBgSecs)
	if p.bg != nil {
		b.Int("rdb_current_bgsave_time_sec", int64(time.Since(p.bgStart).Seconds()))
	} else {
		b.KV("rdb_current_bgsave_time_sec", "-1")
	}
	b.Int("rdb_saves", p.saves)
	b.KV("rdb_last_cow_size", "0")
	b.Int("rdb_last_load_keys_expired", p.loadExpired)
	b.Int("rdb_last_load_keys_loaded", p.loadedKeys)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// BGSave starts a background save as BGSAVE does (tests, tools); call it
// under the lock. It fails when one is already running.
func (d *Durability) BGSave() error {
	if d.ps().bg != nil || d.e.KS.SnapshotOpen() {
		return errors.New("Background save already in progress")
	}
	return d.startBgsave()
}
