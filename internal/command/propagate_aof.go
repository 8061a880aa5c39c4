package command

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/abacusdb/abacus/internal/aof"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/persist"
	"github.com/abacusdb/abacus/internal/rdb"
	"github.com/abacusdb/abacus/internal/resp"
	"github.com/abacusdb/abacus/internal/script"
)

// The append-only file's side of the server (docs/persistence-aof.md):
// loading at startup, turning AOF on and off (appendonly, also at run
// time through CONFIG SET, noticed by the cron), BGREWRITEAOF and the
// automatic rewrite, INFO's aof_* fields. Everything runs under the
// server lock except the writing of a new base file.

func init() {
	register(&Command{Name: "bgrewriteaof", Arity: 1, Flags: FlagAdmin | FlagNoScript, ACL: "@admin @slow @dangerous", Group: "server",
		Summary: "Asynchronously rewrites the append-only file to disk.", Since: "1.0.0", Complexity: "O(1)",
		Handler: cmdBgrewriteaof})
}

type aofState struct {
	a          *aof.AOF
	live       atomic.Pointer[aof.AOF] // a, for AOFWait outside the lock
	rewriting  bool
	scheduled  bool
	rewrites   int64
	lastOK     bool
	lastSecs   int64
	started    time.Time
	failures   int64
	loadTrunc  bool
	initOnce   sync.Once
	rewriteEnd chan struct{}
}

func (e *Env) aofs() *aofState {
	s := &e.prop.aof
	s.initOnce.Do(func() { s.lastOK, s.lastSecs = true, -1 })
	return s
}

func (e *Env) aofDir() string {
	return filepath.Join(e.Cfg.Str(config.Dir), e.Cfg.Str(config.AppendDirname))
}

func (e *Env) aofPolicy() int {
	switch e.Cfg.Str(config.AppendFsync) {
	case "always":
		return aof.FsyncAlways
	case "no":
		return aof.FsyncNo
	}
	return aof.FsyncEverysec
}

// LoadAtStartup loads the data the server starts with: the AOF when
// appendonly is yes and its manifest exists, else the RDB file.
func (e *Env) LoadAtStartup() error {
	if e.Cfg.Bool(config.AppendOnly) {
		m, err := aof.ReadManifest(e.aofDir(), e.Cfg.Str(config.AppendFilename))
		if err == nil {
			return e.loadAOF(m)
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("Bad AOF manifest in %s: %v", e.aofDir(), err)
		}
		// A single-file AOF of Redis before 7.0 (dir/appendfilename): loaded
		// as a base; StartAOF then writes the multi-part AOF from the data.
		old := filepath.Join(e.Cfg.Str(config.Dir), e.Cfg.Str(config.AppendFilename))
		if st, err := os.Stat(old); err == nil && st.Mode().IsRegular() {
			e.Log.Info("Loading the single-file append only file " + old + " (Redis before 7.0); a multi-part AOF will be written from it")
			return e.loadAOF(&aof.Manifest{Base: &aof.ManifestFile{Name: old, Seq: 1, Type: aof.TypeBase}})
		}
	}
	return e.LoadRDB()
}

// loadAOF replays the files m names into a fresh keyspace.
func (e *Env) loadAOF(m *aof.Manifest) error {
	start := time.Now()
	dir := e.aofDir()
	files := m.Files()
	e.prop.off = true
	defer func() { e.prop.off = false }()
	for i, f := range files {
		path := filepath.Join(dir, f.Name)
		if filepath.IsAbs(f.Name) {
			path = f.Name // the pre-7.0 single file
		}
		b, err := os.ReadFile(path)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && f.Type == aof.TypeIncr && i == len(files)-1 {
				continue
			}
			return fmt.Errorf("Fatal error: can't open the append only file %s for reading: %v", f.Name, err)
		}
		if len(b) >= 5 && string(b[:5]) == "REDIS" {
			if err := e.loadAOFPreamble(path, b); err != nil {
				return err
			}
			if f.Type == aof.TypeBase {
				continue
			}
		}
		if err := e.replayAOF(path, b, i == len(files)-1); err != nil {
			return err
		}
	}
	e.Log.Info(fmt.Sprintf("DB loaded from append only file: %.3f seconds", time.Since(start).Seconds()))
	return nil
}

// loadAOFPreamble loads an RDB base file in place of the data.
func (e *Env) loadAOFPreamble(path string, b []byte) error {
	opt := restoreOptions(&Ctx{Env: e, Now: e.Clock.NowMs()})
	var codes []string
	ks, _, err := persist.Load(path, len(e.KS.DBs), opt, func(code []byte) error {
		codes = append(codes, string(code))
		return nil
	})
	if err != nil {
		var ce *rdb.CorruptError
		if errors.As(err, &ce) {
			return fmt.Errorf("Bad AOF base file %s at offset %d: %s. The server does not start on it", path, ce.Offset, ce.What)
		}
		return fmt.Errorf("Error loading the AOF base file %s: %v", path, err)
	}
	if len(codes) > 0 {
		if err := e.scripting().RestoreLibraries(codes, script.RestoreFlush); err != nil {
			return fmt.Errorf("Error loading the AOF base file %s: function library: %v", path, err)
		}
		e.syncFunctionCounts()
	}
	if ks != nil {
		e.KS.Adopt(ks)
	}
	e.Log.Info("Reading RDB base file on AOF loading...")
	return nil
}

// replayAOF runs the commands of one file. A torn end of the last file is
// dropped (and the file cut there) when aof-load-truncated is yes.
func (e *Env) replayAOF(path string, b []byte, last bool) error {
	// Blocking commands (in files of old servers) answer at once, as in
	// a transaction: nothing is waiting on the loader.
	sess := &Session{Authed: true, Proto: 2, DB: 0, User: "default", DenyBlocking: true}
	var w resp.Writer
	var unknown string
	good, err := aof.Replay(b, func(argv [][]byte) error {
		if Lookup(argv[0]) == nil {
			unknown = string(argv[0])
			return errors.New("unknown command")
		}
		e.Execute(sess, argv, &w)
		w.Reset()
		return nil
	})
	if e.depth == 0 && len(e.blk.ready) > 0 {
		e.ServeReady()
	}
	switch {
	case err == nil:
		return nil
	case unknown != "":
		return fmt.Errorf("Unknown command '%s' reading the append only file %s", unknown, filepath.Base(path))
	case errors.Is(err, aof.ErrTruncated) && last && e.Cfg.Bool(config.AOFLoadTruncated):
		e.Log.Warn(fmt.Sprintf("!!! Warning: short read while loading the AOF file %s!!!", filepath.Base(path)))
		e.Log.Warn(fmt.Sprintf("!!! Truncating the AOF %s at offset %d !!!", filepath.Base(path), good))
		if terr := os.Truncate(path, good); terr != nil {
			return fmt.Errorf("Error truncating the AOF file %s: %v", path, terr)
		}
		e.Log.Warn("AOF loaded anyway because aof-load-truncated is enabled")
		e.aofs().loadTrunc = true
		return nil
	case errors.Is(err, aof.ErrTruncated):
		return fmt.Errorf("Unexpected end of file reading the append only file %s. You can: 1) Make a backup of your AOF file, then use `abacus check-aof --fix %s`. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server.", filepath.Base(path), path)
	default:
		return fmt.Errorf("Bad file format reading the append only file %s: %v. Make a backup of your AOF file, then use `abacus check-aof --fix %s`", filepath.Base(path), err, path)
	}
}

// StartAOF opens the AOF when appendonly is yes (at startup, after
// loading): the existing one, or a new one from the data loaded.
func (e *Env) StartAOF() error {
	if !e.Cfg.Bool(config.AppendOnly) {
		return nil
	}
	return e.openAOF()
}

func (e *Env) openAOF() error {
	st := e.aofs()
	if st.a != nil {
		return nil
	}
	dir, name := e.aofDir(), e.Cfg.Str(config.AppendFilename)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("Can't open or create append-only dir %s: %v", dir, err)
	}
	m, err := aof.ReadManifest(dir, name)
	if errors.Is(err, os.ErrNotExist) {
		// A new AOF: the data as a base; Open adds the incremental file.
		if err := e.writeFreshAOF(); err != nil {
			return err
		}
		m, err = aof.ReadManifest(dir, name)
	}
	if err != nil {
		return err
	}
	a, err := aof.Open(dir, name, m, e.aofPolicy)
	if err != nil {
		return err
	}
	st.a = a
	st.live.Store(a)
	e.SetPropSink(a)
	return nil
}

// AOFFlush writes the AOF bytes of the batch that just ran, before its
// replies are staged (under the server lock). Under appendfsync always it
// returns the offset AOFWait must see on disk before the replies leave;
// with syncNow (a client whose replies may be sent by another goroutine
// as soon as they are staged) it syncs here instead.
func (e *Env) AOFFlush(syncNow bool) int64 {
	a := e.prop.aof.a
	if a == nil {
		return 0
	}
	off := a.Flush()
	if a.Failing() && e.aofPolicy() == aof.FsyncAlways {
		e.aofFatal("Can't recover from AOF write error when the AOF fsync policy is 'always'", a.Err())
	}
	if syncNow {
		e.AOFWait(off)
		return 0
	}
	return off
}

// aofFatal ends the process: under appendfsync always a write that could
// not reach the disk must not be acknowledged, and Redis exits too.
func (e *Env) aofFatal(msg string, err error) {
	e.Log.Warn(fmt.Sprintf("%s (%v). Exiting...", msg, err))
	os.Exit(1)
}

// diskRefusal is the MISCONF error of a write refused because a
// background save failed (persistence.go) or the AOF cannot be written.
func (e *Env) diskRefusal() string {
	if msg := e.writeRefusal(); msg != "" {
		return msg
	}
	return e.aofRefusal()
}

// aofRefusal is the MISCONF error writes get while the AOF cannot be
// written (Redis's text), "" otherwise.
func (e *Env) aofRefusal() string {
	if a := e.prop.aof.a; a != nil && a.Failing() {
		return "MISCONF Errors writing to the AOF file: " + config.ErrnoText(a.Err())
	}
	return ""
}

// AOFWait waits until the AOF is on disk up to off (AOFFlush's answer),
// without the server lock: the fsync of one client covers the others'
// writes (group commit).
func (e *Env) AOFWait(off int64) {
	if off != 0 {
		if a := e.prop.aof.live.Load(); a != nil {
			if err := a.WaitDurable(off); err != nil {
				e.aofFatal("Can't persist AOF for fsync error when the AOF fsync policy is 'always'", err)
			}
		}
	}
}

// stopAOF closes the AOF (appendonly no).
func (e *Env) stopAOF() {
	st := e.aofs()
	if st.a == nil {
		return
	}
	e.SetPropSink(nil)
	st.live.Store(nil)
	st.a.Close()
	st.a = nil
}

// CloseAOF syncs and closes the AOF (shutdown).
func (e *Env) CloseAOF() { e.stopAOF() }

// aofBase is the data now as a base file: an RDB preamble (with the AUX
// field aof-base 1 Redis writes) or, with aof-use-rdb-preamble no,
// commands. It is taken under the server lock.
func (e *Env) aofBase() ([]byte, bool) {
	opt := e.saveOptions()
	if e.Cfg.Bool(config.AOFUseRDBPreamble) {
		var buf bytes.Buffer
		aux := append(append([]string(nil), opt.Aux...), "aof-base", "1")
		if err := rdb.WriteKeyspace(&buf, e.KS, aux, opt.Functions, opt.Encode); err == nil {
			return buf.Bytes(), true
		}
	}
	return e.aofCommandsBase(opt), false
}

// aofCommandsBase writes every key as RESTORE key <abs ms> <payload>
// ABSTTL REPLACE, and function libraries as FUNCTION LOAD.
func (e *Env) aofCommandsBase(opt persist.Options) []byte {
	var b []byte
	for _, code := range opt.Functions {
		b = resp.AppendCommand(b, []byte("FUNCTION"), []byte("LOAD"), []byte("REPLACE"), code)
	}
	for _, db := range e.KS.DBs {
		if db.Len() == 0 {
			continue
		}
		b = resp.AppendCommand(b, []byte("SELECT"), strconv.AppendInt(nil, int64(db.ID), 10))
		db.ForEach(func(o *keyspace.Object) {
			if o.Expire != 0 && o.Expire <= opt.Encode.Now {
				return
			}
			payload, err := rdb.Dump(o, opt.Encode)
			if err != nil {
				return
			}
			b = resp.AppendCommand(b, []byte("RESTORE"), []byte(o.Key), strconv.AppendInt(nil, o.Expire, 10), payload, []byte("ABSTTL"), []byte("REPLACE"))
		})
	}
	return b
}

func cmdBgrewriteaof(c *Ctx) {
	e := c.Env
	st := e.aofs()
	switch {
	case st.rewriting:
		c.Error("ERR Background append only file rewriting already in progress")
	case e.ps().bg != nil:
		st.scheduled = true
		c.W.Simple("Background append only file rewriting scheduled")
	default:
		if err := e.startRewrite(); err != nil {
			c.Error("ERR Can't execute an AOF background rewriting. Please check the server logs for more information.")
			return
		}
		c.W.Simple("Background append only file rewriting started")
	}
}

// startRewrite begins a rewrite under the lock: commands go to a new
// incremental file from now on, the data now is encoded as the new base,
// and a goroutine writes it and installs it. With AOF off it writes a
// fresh AOF directory at once.
func (e *Env) startRewrite() error {
	st := e.aofs()
	if st.a == nil {
		// AOF off: as Redis 7.0, a new base and a manifest naming only it.
		if err := e.writeFreshAOF(); err != nil {
			return err
		}
		st.rewrites++
		return nil
	}
	a := st.a
	if err := a.Rotate(); err != nil {
		e.Log.Warn("Can't open new incr AOF: " + err.Error())
		return err
	}
	keep := a.CurrentIncrSeq()
	seq := a.NextBaseSeq()
	base, rdbBase := e.aofBase()
	bn := aof.BaseName(a.Name, seq, rdbBase)
	st.rewriting, st.started = true, time.Now()
	st.rewriteEnd = make(chan struct{})
	lock, _ := e.Host.(sync.Locker)
	e.Log.Info("Background append only file rewriting started")
	go func() {
		err := aof.WriteFile(filepath.Join(a.Dir, bn), base)
		if lock != nil {
			lock.Lock()
			defer lock.Unlock()
		}
		if err == nil && st.a == a {
			err = a.Install(bn, seq, keep)
		}
		st.rewriting = false
		st.lastSecs = int64(time.Since(st.started).Seconds())
		if err != nil {
			st.lastOK = false
			st.failures++
			e.Log.Warn("Background AOF rewrite failed: " + err.Error())
		} else {
			st.lastOK = true
			st.failures = 0
			st.rewrites++
			e.Log.Info("Background AOF rewrite finished successfully")
		}
		close(st.rewriteEnd)
	}()
	return nil
}

// writeFreshAOF writes the data now as the next base of the AOF
// directory and a manifest naming only it (no incremental file), then
// removes the files the previous manifest named. It is how an AOF starts:
// at startup without one, CONFIG SET appendonly yes, BGREWRITEAOF with
// AOF off.
func (e *Env) writeFreshAOF() error {
	dir, name := e.aofDir(), e.Cfg.Str(config.AppendFilename)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("Can't open or create append-only dir %s: %v", dir, err)
	}
	old, _ := aof.ReadManifest(dir, name)
	seq := int64(1)
	if old != nil && old.Base != nil {
		seq = old.Base.Seq + 1
	}
	base, rdbBase := e.aofBase()
	bn := aof.BaseName(name, seq, rdbBase)
	if err := aof.WriteFile(filepath.Join(dir, bn), base); err != nil {
		return err
	}
	m := &aof.Manifest{Base: &aof.ManifestFile{Name: bn, Seq: seq, Type: aof.TypeBase}}
	if err := aof.WriteManifest(dir, name, m); err != nil {
		return err
	}
	if old != nil {
		for _, f := range append(old.Files(), old.History...) {
			if f.Name != bn {
				os.Remove(filepath.Join(dir, f.Name))
			}
		}
	}
	return nil
}

// WaitRewrite waits for a rewrite in progress (tests). Call it without
// the lock.
func (e *Env) WaitRewrite(lock sync.Locker) {
	lock.Lock()
	ch := e.aofs().rewriteEnd
	lock.Unlock()
	if ch != nil {
		<-ch
	}
}

// aofCron follows appendonly set at run time and starts the automatic
// and scheduled rewrites. It takes the server lock.
func (e *Env) aofCron() {
	lock, ok := e.Host.(sync.Locker)
	if !ok {
		return
	}
	lock.Lock()
	defer lock.Unlock()
	st := e.aofs()
	on := e.Cfg.Bool(config.AppendOnly)
	switch {
	case on && st.a == nil:
		// CONFIG SET appendonly yes: a rewrite makes a base of the data
		// now (whatever AOF the directory held is stale), then logging
		// starts.
		err := e.writeFreshAOF()
		if err == nil {
			err = e.openAOF()
		}
		if err != nil {
			e.Log.Warn("Redis needs to enable the AOF but can't trigger a background AOF rewrite operation: " + err.Error())
		} else {
			st.rewrites++
		}
		return
	case !on && st.a != nil:
		e.stopAOF()
		return
	case st.a == nil || st.rewriting || e.ps().bg != nil:
		return
	}
	if st.scheduled {
		st.scheduled = false
		e.startRewrite()
		return
	}
	pct := e.Cfg.Int(config.AutoAOFRewritePercentage)
	min := e.Cfg.Int(config.AutoAOFRewriteMinSize)
	a := st.a
	if pct > 0 && a.Size > min {
		base := max(a.BaseSize, 1)
		if (a.Size-base)*100/base >= pct {
			e.Log.Info(fmt.Sprintf("Starting automatic rewriting of AOF on %d%% growth", (a.Size-base)*100/base))
			e.startRewrite()
		}
	}
}

// infoPersistenceAOF writes INFO persistence's aof_* fields.
func infoPersistenceAOF(e *Env, b *infoBuilder) {
	st := e.aofs()
	b.kvi("aof_enabled", boolInt(st.a != nil))
	b.kvi("aof_rewrite_in_progress", boolInt(st.rewriting))
	b.kvi("aof_rewrite_scheduled", boolInt(st.scheduled))
	b.kvi("aof_last_rewrite_time_sec", st.lastSecs)
	if st.rewriting {
		b.kvi("aof_current_rewrite_time_sec", int64(time.Since(st.started).Seconds()))
	} else {
		b.kv("aof_current_rewrite_time_sec", "-1")
	}
	b.kv("aof_last_bgrewrite_status", okErr(st.lastOK))
	b.kvi("aof_rewrites", st.rewrites)
	b.kvi("aof_rewrites_consecutive_failures", st.failures)
	writeOK := st.a == nil || st.a.Err() == nil
	b.kv("aof_last_write_status", okErr(writeOK))
	b.kv("aof_last_cow_size", "0")
	b.kv("module_fork_in_progress", "0")
	b.kv("module_fork_last_cow_size", "0")
	if st.a != nil {
		b.kvi("aof_current_size", st.a.Size)
		b.kvi("aof_base_size", st.a.BaseSize)
		b.kv("aof_pending_rewrite", "0")
		b.kv("aof_buffer_length", "0")
		b.kv("aof_pending_bio_fsync", "0")
		b.kv("aof_delayed_fsync", "0")
	}
}

func okErr(ok bool) string {
	if ok {
		return "ok"
	}
	return "err"
}
