package command

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
	"github.com/abacusdb/abacus/internal/persist"
	"github.com/abacusdb/abacus/internal/rdb"
	"github.com/abacusdb/abacus/internal/script"
)

// RDB persistence commands: SAVE, BGSAVE, and the state behind LASTSAVE,
// INFO persistence, save points, MISCONF and SHUTDOWN's save
// (docs/persistence.md). The state is touched under the server lock; the
// background saver's goroutine takes the lock to update it.

func init() {
	register(
		&Command{Name: "save", Arity: 1, Flags: FlagAdmin | FlagNoScript | FlagNoMulti, ACL: "@admin @slow @dangerous", Group: "server",
			Summary: "Synchronously saves the database(s) to disk.", Since: "1.0.0", Complexity: "O(N) where N is the total number of keys in all databases",
			Handler: cmdSave},
		&Command{Name: "bgsave", Arity: -1, Flags: FlagAdmin | FlagNoScript, ACL: "@admin @slow @dangerous", Group: "server",
			Summary: "Asynchronously saves the database(s) to disk.", Since: "1.0.0", Complexity: "O(1)",
			Handler: cmdBgsave},
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

func (e *Env) ps() *persistState {
	p := &e.persist
	p.once.Do(func() {
		p.lastSave = e.Started.Unix()
		p.lastBgOK = true
		p.lastBgSecs = -1
	})
	return p
}

// EnableAutoSave turns on save points, FLUSHALL's save and the save at
// shutdown, as a redis-server with save points configured does them.
func (e *Env) EnableAutoSave() { e.persist.auto.Store(true) }

// rdbPath is dir/dbfilename.
func (e *Env) rdbPath() string {
	return filepath.Join(e.Cfg.Str(config.Dir), e.Cfg.Str(config.DBFilename))
}

// savePoints parses the save parameter: (seconds, changes) pairs.
func (e *Env) savePoints() [][2]int64 {
	f := strings.Fields(e.Cfg.Str(config.Save))
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
func (e *Env) saveOptions() persist.Options {
	now := e.Clock.NowMs()
	var fns [][]byte
	for _, l := range e.scripting().Libraries() {
		fns = append(fns, []byte(l.Code))
	}
	return persist.Options{
		Path:      e.rdbPath(),
		Encode:    e.fileEncodeOptions(now),
		Aux:       persist.Aux(config.RedisVersion, now/1000, int64(readMemStats().heap)),
		Functions: fns,
	}
}

// saveNow writes the RDB file synchronously (under the lock) and records
// it; count tells whether rdb_saves counts it (FLUSHALL's does not).
func (e *Env) saveNow(count bool) error {
	p := e.ps()
	start := time.Now()
	if err := persist.Save(e.KS, e.saveOptions()); err != nil {
		e.Log.Warn(fmt.Sprintf("Failed opening the temp RDB file %s (in server root dir %s) for saving: %v", e.Cfg.Str(config.DBFilename), e.Cfg.Str(config.Dir), err))
		return err
	}
	e.Stats.Dirty.Store(0)
	p.lastSave = e.Clock.NowMs() / 1000
	if count {
		p.saves++
	}
	e.Log.Info(fmt.Sprintf("DB saved on disk (%.3f seconds)", time.Since(start).Seconds()))
	return nil
}

func cmdSave(c *Ctx) {
	if c.Env.ps().bg != nil {
		c.Error("ERR Background save already in progress")
		return
	}
	if err := c.Env.saveNow(true); err != nil {
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

func cmdBgsave(c *Ctx) {
	schedule := false
	if len(c.Args) > 1 {
		if len(c.Args) != 2 || !c.ArgIs(1, "schedule") {
			c.Error(ErrSyntax)
			return
		}
		schedule = true
	}
	_ = schedule // only an AOF rewrite would make it matter; there is none
	e := c.Env
	p := e.ps()
	switch {
	case p.bg != nil:
		c.Error("ERR Background save already in progress")
	case e.depth > 1:
		// Inside EXEC, as Redis's server.in_exec: the save starts later.
		p.scheduled = true
		c.W.Simple("Background saving scheduled")
	default:
		if err := e.startBgsave(); err != nil {
			c.Error("ERR " + err.Error())
			return
		}
		c.W.Simple("Background saving started")
	}
}

// startBgsave starts a background save; called under the lock.
func (e *Env) startBgsave() error {
	lock, ok := e.Host.(sync.Locker)
	if !ok {
		return errors.New("background saves need the server's lock")
	}
	p := e.ps()
	p.scheduled = false
	p.lastTry = e.Clock.NowMs() / 1000
	p.bgStart = time.Now()
	p.bgDirty = e.Stats.Dirty.Load()
	bg := persist.StartBackground(e.KS, lock, e.saveOptions())
	p.bg = bg
	done := make(chan struct{})
	p.bgDone = done
	e.Log.Info("Background saving started")
	go func() {
		err := bg.Run()
		lock.Lock()
		e.bgsaveDone(bg, err)
		lock.Unlock()
		close(done)
	}()
	return nil
}

// bgsaveDone records the end of a background save (under the lock).
func (e *Env) bgsaveDone(bg *persist.Background, err error) {
	p := e.ps()
	if p.bg != bg {
		return
	}
	p.bg = nil
	p.lastBgSecs = int64(time.Since(p.bgStart).Seconds())
	switch {
	case err == nil:
		p.lastBgOK = true
		p.lastSave = e.Clock.NowMs() / 1000
		p.saves++
		e.Stats.Dirty.Add(-p.bgDirty)
		e.Log.Info(fmt.Sprintf("Background saving terminated with success (%d keys, %d slices, longest hold of the lock %.3f ms, rename %.3f ms)",
			bg.Keys, bg.Slices, float64(bg.MaxHold.Microseconds())/1000, float64(bg.RenameHold.Microseconds())/1000))
	case errors.Is(err, persist.ErrCanceled):
		e.Log.Warn("Background saving terminated by a shutdown, flush or reload")
	default:
		p.lastBgOK = false
		e.Log.Warn("Background saving error: " + err.Error())
	}
	p.failing.Store(!p.lastBgOK)
}

// cancelBgsave drops a background save in progress (under the lock). It
// does not wait: the saver's goroutine finds the save dropped at its next
// hold of the lock, removes its temporary file and never renames it.
func (e *Env) cancelBgsave() {
	p := e.ps()
	if p.bg == nil {
		return
	}
	p.bg.Cancel()
	e.bgsaveDone(p.bg, persist.ErrCanceled)
}

// writeRefusal is MISCONF when a background save failed, save points are
// configured and stop-writes-on-bgsave-error is on ("" otherwise).
func (e *Env) writeRefusal() string {
	if !e.persist.failing.Load() || !e.Cfg.Bool(config.StopWritesOnBgsaveError) || len(e.savePoints()) == 0 {
		return ""
	}
	return ErrMisconf
}

// PersistCron starts the background saves that are due: a scheduled one,
// or one whose save point is reached (after a failure, not before 5
// seconds, as Redis's CONFIG_BGSAVE_RETRY_DELAY). It takes the lock.
func (e *Env) PersistCron() {
	lock, ok := e.Host.(sync.Locker)
	if !ok {
		return
	}
	lock.Lock()
	defer lock.Unlock()
	p := e.ps()
	if p.bg != nil {
		return
	}
	if p.scheduled {
		e.startBgsave()
		return
	}
	if !p.auto.Load() {
		return
	}
	now := e.Clock.NowMs() / 1000
	dirty := e.Stats.Dirty.Load()
	for _, sp := range e.savePoints() {
		if dirty >= sp[1] && now-p.lastSave > sp[0] && (p.lastBgOK || now-p.lastTry > 5) {
			e.Log.Info(fmt.Sprintf("%d changes in %d seconds. Saving...", sp[1], sp[0]))
			e.startBgsave()
			return
		}
	}
}

// flushallSave is FLUSHALL's part (under the lock): a save in progress is
// dropped, and with save points the empty dataset is saved at once.
func (e *Env) flushallSave() {
	e.cancelBgsave()
	if e.persist.auto.Load() && len(e.savePoints()) > 0 && !e.KS.UndoOpen() {
		e.saveNow(false)
	}
}

// ShutdownSave is the save before exiting (under the lock): done when
// asked (save) or when save points are configured, unless nosave. A failed
// save refuses the shutdown unless force.
func (e *Env) ShutdownSave(save, nosave, force bool) error {
	if nosave {
		// Touch nothing: SHUTDOWN NOSAVE may run while a busy script
		// holds the keyspace (scripting_busy.go), and the process exits.
		return nil
	}
	e.cancelBgsave()
	p := e.ps()
	if !save && !(p.auto.Load() && len(e.savePoints()) > 0) {
		return nil
	}
	e.Log.Info("Saving the final RDB snapshot before exiting.")
	if err := e.saveNow(true); err != nil && !force {
		e.Log.Warn("Error trying to save the DB, can't exit.")
		return errors.New("Errors trying to SHUTDOWN. Check logs.")
	}
	return nil
}

// LoadRDB loads dir/dbfilename into a fresh keyspace and, only when the
// whole file loaded, puts it in place of the current data (startup, DEBUG
// RELOAD). A missing file loads nothing. Call it under the lock (or before
// serving).
func (e *Env) LoadRDB() error {
	path := e.rdbPath()
	start := time.Now()
	opt := restoreOptions(&Ctx{Env: e, Now: e.Clock.NowMs()})
	var codes []string
	ks, info, err := persist.Load(path, len(e.KS.DBs), opt, func(code []byte) error {
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
	if len(codes) > 0 || len(e.scripting().Libraries()) > 0 {
		if err := e.scripting().RestoreLibraries(codes, script.RestoreFlush); err != nil {
			return fmt.Errorf("Error loading the RDB file %s: function library: %v", path, err)
		}
		e.syncFunctionCounts()
	}
	e.cancelBgsave()
	e.KS.Adopt(ks)
	p := e.ps()
	p.loadedKeys, p.loadExpired = 0, int64(info.Skipped)
	for _, n := range info.Keys {
		p.loadedKeys += int64(n)
	}
	e.Log.Info(fmt.Sprintf("Done loading RDB, keys loaded: %d, keys expired: %d.", p.loadedKeys, p.loadExpired))
	e.Log.Info(fmt.Sprintf("DB loaded from disk: %.3f seconds", time.Since(start).Seconds()))
	return nil
}

// cmdDebugReload is DEBUG RELOAD [NOSAVE]: save, then load the file back
// in place of the data.
func cmdDebugReload(c *Ctx) {
	save := true
	for i := 2; i < len(c.Args); i++ {
		switch {
		case c.ArgIs(i, "nosave"):
			save = false
		case c.ArgIs(i, "noflush"), c.ArgIs(i, "merge"):
			c.Error("ERR DEBUG RELOAD " + strings.ToUpper(c.Arg(i)) + " is not supported")
			return
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	e := c.Env
	e.cancelBgsave()
	if save {
		if err := e.saveNow(false); err != nil {
			c.Error("ERR Error trying to save the DB")
			return
		}
	}
	if err := e.LoadRDB(); err != nil {
		e.Log.Warn(err.Error())
		c.Error("ERR Error trying to load the RDB dump, check server logs.")
		return
	}
	e.Log.Info("DB reloaded by DEBUG RELOAD")
	c.W.OK()
}

// WaitBgsave waits for a background save in progress to end (tests,
// shutdown). Call it without the lock.
func (e *Env) WaitBgsave(lock sync.Locker) {
	lock.Lock()
	done := e.ps().bgDone
	lock.Unlock()
	if done != nil {
		<-done
	}
}

func infoPersistenceRDB(e *Env, b *infoBuilder) {
	p := e.ps()
	keys := int64(0)
	if p.bg != nil {
		keys = p.bg.Keys
	}
	total := int64(0)
	if p.bg != nil {
		for _, db := range e.KS.DBs {
			total += int64(db.Len())
		}
	}
	b.kvi("current_save_keys_processed", keys)
	b.kvi("current_save_keys_total", total)
	b.kvi("rdb_changes_since_last_save", e.Stats.Dirty.Load())
	b.kvi("rdb_bgsave_in_progress", boolInt(p.bg != nil))
	b.kvi("rdb_last_save_time", p.lastSave)
	if p.lastBgOK {
		b.kv("rdb_last_bgsave_status", "ok")
	} else {
		b.kv("rdb_last_bgsave_status", "err")
	}
	b.kvi("rdb_last_bgsave_time_sec", p.lastBgSecs)
	if p.bg != nil {
		b.kvi("rdb_current_bgsave_time_sec", int64(time.Since(p.bgStart).Seconds()))
	} else {
		b.kv("rdb_current_bgsave_time_sec", "-1")
	}
	b.kvi("rdb_saves", p.saves)
	b.kv("rdb_last_cow_size", "0")
	b.kvi("rdb_last_load_keys_expired", p.loadExpired)
	b.kvi("rdb_last_load_keys_loaded", p.loadedKeys)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// BGSave starts a background save as BGSAVE does (tests, tools); call it
// under the lock. It fails when one is already running.
func (e *Env) BGSave() error {
	if e.ps().bg != nil {
		return errors.New("Background save already in progress")
	}
	return e.startBgsave()
}

// fileEncodeOptions are DUMP's settings plus rdbchecksum.
func (e *Env) fileEncodeOptions(now int64) rdb.EncodeOptions {
	opt := dumpEncodeOptions(&Ctx{Env: e, Now: now})
	opt.NoChecksum = !e.Cfg.Bool(config.RDBChecksum)
	return opt
}
