package durability

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
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/persist"
	"github.com/abacusdb/abacus/internal/rdb"
	"github.com/abacusdb/abacus/internal/resp"
)

// The append-only file's side of the server (docs/persistence-aof.md):
// loading at startup, turning AOF on and off (appendonly, also at run
// time through CONFIG SET, noticed by the cron), BGREWRITEAOF and the
// automatic rewrite, INFO's aof_* fields. Everything runs under the
// server lock except the writing of a new base file.

func init() {
	engine.Register(&engine.Command{Name: "bgrewriteaof", Arity: 1, Flags: engine.FlagAdmin | engine.FlagNoScript | engine.FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Group: "server",
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
	// bg is the rewrite's base being written from the keyspace's
	// snapshot (with aof-use-rdb-preamble yes), nil otherwise.
	bg *persist.Background
}

func (d *Durability) aofs() *aofState {
	s := &d.aof
	s.initOnce.Do(func() { s.lastOK, s.lastSecs = true, -1 })
	return s
}

func (d *Durability) aofDir() string {
	return filepath.Join(d.e.Cfg.Str(config.Dir), d.e.Cfg.Str(config.AppendDirname))
}

func (d *Durability) aofPolicy() int {
	switch d.e.Cfg.Str(config.AppendFsync) {
	case "always":
		return aof.FsyncAlways
	case "no":
		return aof.FsyncNo
	}
	return aof.FsyncEverysec
}

// LoadAtStartup loads the data the server starts with: the AOF when
// appendonly is yes and its manifest exists, else the RDB file.
func (d *Durability) LoadAtStartup() error {
	if d.e.Cfg.Bool(config.AppendOnly) {
		m, err := aof.ReadManifest(d.aofDir(), d.e.Cfg.Str(config.AppendFilename))
		if err == nil {
			return d.loadAOF(m)
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("Bad AOF manifest in %s: %v", d.aofDir(), err)
		}
		// A single-file AOF of Redis before 7.0 (dir/appendfilename): loaded
		// as a base; StartAOF then writes the multi-part AOF from the data.
		old := filepath.Join(d.e.Cfg.Str(config.Dir), d.e.Cfg.Str(config.AppendFilename))
		if st, err := os.Stat(old); err == nil && st.Mode().IsRegular() {
			d.e.Log.Info("Loading the single-file append only file " + old + " (Redis before 7.0); a multi-part AOF will be written from it")
			return d.loadAOF(&aof.Manifest{Base: &aof.ManifestFile{Name: old, Seq: 1, Type: aof.TypeBase}})
		}
	}
	return d.LoadRDB()
}

// loadAOF replays the files m names into a fresh keyspace.
func (d *Durability) loadAOF(m *aof.Manifest) error {
	start := time.Now()
	dir := d.aofDir()
	files := m.Files()
	d.e.SetLoading(true)
	defer d.e.SetLoading(false)
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
			if err := d.loadAOFPreamble(path, b); err != nil {
				return err
			}
			if f.Type == aof.TypeBase {
				continue
			}
		}
		if err := d.replayAOF(path, b, i == len(files)-1); err != nil {
			return err
		}
	}
	d.e.Log.Info(fmt.Sprintf("DB loaded from append only file: %.3f seconds", time.Since(start).Seconds()))
	return nil
}

// loadAOFPreamble loads an RDB base file in place of the data.
func (d *Durability) loadAOFPreamble(path string, b []byte) error {
	opt := d.e.RestoreOptions(d.e.Clock.NowMs())
	var codes []string
	ks, _, err := persist.Load(path, len(d.e.KS.DBs), opt, func(code []byte) error {
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
		if err := d.e.RestoreFunctions(codes); err != nil {
			return fmt.Errorf("Error loading the AOF base file %s: function library: %v", path, err)
		}
	}
	if ks != nil {
		d.e.KS.Adopt(ks)
	}
	d.e.Log.Info("Reading RDB base file on AOF loading...")
	return nil
}

// replayAOF runs the commands of one file. A torn end of the last file is
// dropped (and the file cut there) when aof-load-truncated is yes.
func (d *Durability) replayAOF(path string, b []byte, last bool) error {
	// Blocking commands (in files of old servers) answer at once, as in
	// a transaction: nothing is waiting on the loader.
	sess := &engine.Session{Authed: true, Proto: 2, DB: 0, User: "default", DenyBlocking: true, Obey: true}
	var w resp.Writer
	var unknown string
	good, err := aof.Replay(b, func(argv [][]byte) error {
		if engine.Lookup(argv[0]) == nil {
			unknown = string(argv[0])
			return errors.New("unknown command")
		}
		d.e.Execute(sess, argv, &w)
		w.Reset()
		return nil
	})
	d.e.ServeReady() // clients a loaded command made ready: none wait yet
	switch {
	case err == nil:
		return nil
	case unknown != "":
		return fmt.Errorf("Unknown command '%s' reading the append only file %s", unknown, filepath.Base(path))
	case errors.Is(err, aof.ErrTruncated) && last && d.e.Cfg.Bool(config.AOFLoadTruncated):
		d.e.Log.Warn(fmt.Sprintf("!!! Warning: short read while loading the AOF file %s!!!", filepath.Base(path)))
		d.e.Log.Warn(fmt.Sprintf("!!! Truncating the AOF %s at offset %d !!!", filepath.Base(path), good))
		if terr := os.Truncate(path, good); terr != nil {
			return fmt.Errorf("Error truncating the AOF file %s: %v", path, terr)
		}
		d.e.Log.Warn("AOF loaded anyway because aof-load-truncated is enabled")
		d.aofs().loadTrunc = true
		return nil
	case errors.Is(err, aof.ErrTruncated):
		return fmt.Errorf("Unexpected end of file reading the append only file %s. You can: 1) Make a backup of your AOF file, then use `abacus check-aof --fix %s`. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server.", filepath.Base(path), path)
	default:
		return fmt.Errorf("Bad file format reading the append only file %s: %v. Make a backup of your AOF file, then use `abacus check-aof --fix %s`", filepath.Base(path), err, path)
	}
}

// StartAOF opens the AOF when appendonly is yes (at startup, after
// loading): the existing one, or a new one from the data loaded.
func (d *Durability) StartAOF() error {
	if !d.e.Cfg.Bool(config.AppendOnly) {
		return nil
	}
	return d.openAOF()
}

func (d *Durability) openAOF() error {
	st := d.aofs()
	if st.a != nil {
		return nil
	}
	dir, name := d.aofDir(), d.e.Cfg.Str(config.AppendFilename)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("Can't open or create append-only dir %s: %v", dir, err)
	}
	m, err := aof.ReadManifest(dir, name)
	if errors.Is(err, os.ErrNotExist) {
		// A new AOF: the data as a base; Open adds the incremental file.
		if err := d.writeFreshAOF(); err != nil {
			return err
		}
		m, err = aof.ReadManifest(dir, name)
	}
	if err != nil {
		return err
	}
	a, err := aof.Open(dir, name, m, d.aofPolicy)
	if err != nil {
		return err
	}
	st.a = a
	st.live.Store(a)
	d.e.SetPropSink(a)
	return nil
}

// AOFFlush is called when a batch has run, before its replies are staged
// (under the server lock). It returns the offset AOFWait or AOFDurable
// must reach before the replies leave: the batch's AOF bytes written, and
// under appendfsync always synced; with syncNow (a client whose replies
// may be sent by another goroutine as soon as they are staged) it waits
// here instead. The bytes of a whole round are written together, by the
// first of its replies that needs them.
func (d *Durability) AOFFlush(syncNow bool) int64 {
	a := d.aof.a
	if a == nil {
		return 0
	}
	off := a.Fed() // written by the first reply to need it (AOFWait, AOFDurable)
	if syncNow {
		d.AOFWait(off)
		return 0
	}
	return off
}

// aofFatal ends the process: under appendfsync always a write that could
// not reach the disk must not be acknowledged, and Redis exits too.
func (d *Durability) aofFatal(msg string, err error) {
	d.e.Log.Warn(fmt.Sprintf("%s (%v). Exiting...", msg, err))
	os.Exit(1)
}

// diskRefusal is the MISCONF error of a write refused because a
// background save failed (rdb.go) or the AOF cannot be written.
func (d *Durability) diskRefusal() string {
	if msg := d.writeRefusal(); msg != "" {
		return msg
	}
	return d.aofRefusal()
}

// aofRefusal is the MISCONF error writes get while the AOF cannot be
// written (Redis's text), "" otherwise.
func (d *Durability) aofRefusal() string {
	if a := d.aof.a; a != nil && a.Failing() {
		return "MISCONF Errors writing to the AOF file: " + config.ErrnoText(a.Err())
	}
	return ""
}

// AOFWait waits until the AOF is on disk up to off (AOFFlush's answer),
// without the server lock: the fsync of one client covers the others'
// writes (group commit).
func (d *Durability) AOFWait(off int64) {
	if off != 0 {
		if a := d.aof.live.Load(); a != nil {
			if err := a.WaitDurable(off); err != nil {
				d.aofFailed(a, err)
			}
		}
	}
}

// AOFDurable is AOFWait that does not wait: it reports whether off is on
// disk and otherwise starts the group fsync that will put it there, which
// calls wake when it ends (aof.AOF.Durable). Call it without the lock.
func (d *Durability) AOFDurable(off int64, wake func()) bool {
	if off == 0 {
		return true
	}
	a := d.aof.live.Load()
	if a == nil {
		return true // closed: Close synced it
	}
	ok, err := a.Durable(off, wake)
	if err != nil {
		d.aofFailed(a, err)
	}
	return ok
}

// aofFailed ends the process on a write or fsync error under appendfsync
// always, with Redis's words.
func (d *Durability) aofFailed(a *aof.AOF, err error) {
	if a.Failing() {
		d.aofFatal("Can't recover from AOF write error when the AOF fsync policy is 'always'", err)
	}
	d.aofFatal("Can't persist AOF for fsync error when the AOF fsync policy is 'always'", err)
}

// stopAOF closes the AOF (appendonly no).
func (d *Durability) stopAOF() {
	st := d.aofs()
	if st.a == nil {
		return
	}
	d.e.SetPropSink(nil)
	st.live.Store(nil)
	st.a.Close()
	st.a = nil
}

// CloseAOF syncs and closes the AOF (shutdown).
func (d *Durability) CloseAOF() { d.stopAOF() }

// aofBase is the data now as a base file: an RDB preamble (with the AUX
// field aof-base 1 Redis writes) or, with aof-use-rdb-preamble no,
// commands. It is taken under the server lock.
func (d *Durability) aofBase() ([]byte, bool) {
	opt := d.saveOptions()
	if d.e.Cfg.Bool(config.AOFUseRDBPreamble) {
		var buf bytes.Buffer
		if err := rdb.WriteKeyspace(&buf, d.e.KS, persist.AOFBaseAux(opt.Aux), opt.Functions, opt.Encode); err == nil {
			return buf.Bytes(), true
		}
	}
	return persist.AppendCommands(nil, d.e.KS, opt), false
}

func cmdBgrewriteaof(c *engine.Ctx) {
	d := of(c.Env)
	st := d.aofs()
	switch {
	case st.rewriting:
		c.Error("ERR Background append only file rewriting already in progress")
	case d.ps().bg != nil || d.e.KS.SnapshotOpen() || c.S.InExec():
		// In EXEC too, as Redis (which cannot fork there): the cron
		// starts it.
		st.scheduled = true
		c.W.Simple("Background append only file rewriting scheduled")
	default:
		if err := d.startRewrite(); err != nil {
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
func (d *Durability) startRewrite() error {
	st := d.aofs()
	if st.a == nil {
		// AOF off: as Redis 7.0, a new base and a manifest naming only it.
		if err := d.writeFreshAOF(); err != nil {
			return err
		}
		st.rewrites++
		return nil
	}
	a := st.a
	if err := a.Rotate(); err != nil {
		d.e.Log.Warn("Can't open new incr AOF: " + err.Error())
		return err
	}
	keep := a.CurrentIncrSeq()
	seq := a.NextBaseSeq()
	// The base is the keyspace at this moment, written from its snapshot
	// a slice at a time as BGSAVE does: no copy of the data under the lock
	// (persist.Background). Without the RDB preamble it is RESTORE
	// commands.
	preamble := d.e.Cfg.Bool(config.AOFUseRDBPreamble)
	bn := aof.BaseName(a.Name, seq, preamble)
	opt := d.saveOptions()
	opt.Path = filepath.Join(a.Dir, bn)
	opt.Aux = persist.AOFBaseAux(opt.Aux)
	opt.RestoreCommands = !preamble
	opt.Drive = d.e.SaveDriver(d.lock)
	if d.e.Cfg.Bool(config.AOFRewriteIncrementalFsync) {
		opt.SyncEvery = persist.AutoSyncBytes
	}
	bg := persist.StartBackground(d.e.KS, d.lock, opt)
	st.bg = bg
	write := func() error {
		err := bg.Run()
		if err == nil {
			d.e.Log.Info(fmt.Sprintf("AOF base written from the snapshot (%d keys, %d slices, longest hold of the lock %.3f ms, %.1f ms in all)",
				bg.Keys, bg.Slices, float64(bg.MaxHold.Microseconds())/1000, float64(bg.Held.Microseconds())/1000))
		}
		return err
	}
	st.rewriting, st.started = true, time.Now()
	st.rewriteEnd = make(chan struct{})
	end := st.rewriteEnd
	lock := d.lock
	d.e.Log.Info("Background append only file rewriting started")
	go func() {
		err := write()
		lock.Lock()
		remove := func() {}
		defer func() {
			lock.Unlock()
			remove() // the old files, outside the lock
			close(end)
		}()
		st.bg = nil
		if err == nil && st.a == a {
			remove, err = a.InstallDeferred(bn, seq, keep)
		}
		st.rewriting = false
		st.lastSecs = int64(time.Since(st.started).Seconds())
		if err != nil {
			st.lastOK = false
			st.failures++
			d.e.Log.Warn("Background AOF rewrite failed: " + err.Error())
		} else {
			st.lastOK = true
			st.failures = 0
			st.rewrites++
			d.e.Log.Info("Background AOF rewrite finished successfully")
		}
	}()
	return nil
}

// cancelRewrite drops the snapshot of a rewrite in progress (DEBUG
// RELOAD replaces the keyspace it reads); the rewrite then fails.
func (d *Durability) cancelRewrite() {
	if bg := d.aofs().bg; bg != nil {
		bg.Cancel()
	}
}

// writeFreshAOF writes the data now as the next base of the AOF
// directory and a manifest naming only it (no incremental file), then
// removes the files the previous manifest named. It is how an AOF starts:
// at startup without one, CONFIG SET appendonly yes, BGREWRITEAOF with
// AOF off.
func (d *Durability) writeFreshAOF() error {
	dir, name := d.aofDir(), d.e.Cfg.Str(config.AppendFilename)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("Can't open or create append-only dir %s: %v", dir, err)
	}
	old, _ := aof.ReadManifest(dir, name)
	seq := int64(1)
	if old != nil && old.Base != nil {
		seq = old.Base.Seq + 1
	}
	base, rdbBase := d.aofBase()
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
func (d *Durability) WaitRewrite() {
	d.lock.Lock()
	ch := d.aofs().rewriteEnd
	d.lock.Unlock()
	if ch != nil {
		<-ch
	}
}

// aofCron follows appendonly set at run time and starts the automatic
// and scheduled rewrites. It takes the server lock.
func (d *Durability) aofCron() {
	d.lock.Lock()
	defer d.lock.Unlock()
	st := d.aofs()
	on := d.e.Cfg.Bool(config.AppendOnly)
	switch {
	case on && st.a == nil:
		// CONFIG SET appendonly yes: a rewrite makes a base of the data
		// now (whatever AOF the directory held is stale), then logging
		// starts.
		err := d.writeFreshAOF()
		if err == nil {
			err = d.openAOF()
		}
		if err != nil {
			d.e.Log.Warn("Redis needs to enable the AOF but can't trigger a background AOF rewrite operation: " + err.Error())
		} else {
			st.rewrites++
		}
		return
	case !on && st.a != nil:
		d.stopAOF()
		return
	case st.a == nil || st.rewriting || d.ps().bg != nil || d.e.KS.SnapshotOpen():
		return
	}
	if st.scheduled {
		st.scheduled = false
		d.startRewrite()
		return
	}
	pct := d.e.Cfg.Int(config.AutoAOFRewritePercentage)
	min := d.e.Cfg.Int(config.AutoAOFRewriteMinSize)
	a := st.a
	if pct > 0 && a.Size > min {
		base := max(a.BaseSize, 1)
		if (a.Size-base)*100/base >= pct {
			d.e.Log.Info(fmt.Sprintf("Starting automatic rewriting of AOF on %d%% growth", (a.Size-base)*100/base))
			d.startRewrite()
		}
	}
}

// infoPersistenceAOF writes INFO persistence's aof_* fields.
func (d *Durability) infoPersistenceAOF(b *engine.InfoBuilder) {
	st := d.aofs()
	b.Int("aof_enabled", boolInt(st.a != nil))
	b.Int("aof_rewrite_in_progress", boolInt(st.rewriting))
	b.Int("aof_rewrite_scheduled", boolInt(st.scheduled))
	b.Int("aof_last_rewrite_time_sec", st.lastSecs)
	if st.rewriting {
		b.Int("aof_current_rewrite_time_sec", int64(time.Since(st.started).Seconds()))
	} else {
		b.KV("aof_current_rewrite_time_sec", "-1")
	}
	b.KV("aof_last_bgrewrite_status", okErr(st.lastOK))
	b.Int("aof_rewrites", st.rewrites)
	b.Int("aof_rewrites_consecutive_failures", st.failures)
	writeOK := st.a == nil || st.a.Err() == nil
	b.KV("aof_last_write_status", okErr(writeOK))
	b.KV("aof_last_cow_size", "0")
	b.KV("module_fork_in_progress", "0")
	b.KV("module_fork_last_cow_size", "0")
	if st.a != nil {
		b.Int("aof_current_size", st.a.Size)
		b.Int("aof_base_size", st.a.BaseSize)
		b.KV("aof_pending_rewrite", "0")
		b.KV("aof_buffer_length", "0")
		b.KV("aof_pending_bio_fsync", "0")
		b.KV("aof_delayed_fsync", "0")
		// Abacus's own: the fsyncs of this AOF (every policy) and the
		// write commands they covered; under appendfsync always their
		// ratio is the group commit's writes per fsync.
		fsyncs, cmds := st.a.CommitStats()
		b.Int("aof_fsync_count", fsyncs)
		b.Int("aof_fsync_commands", cmds)
		per := 0.0
		if fsyncs > 0 {
			per = float64(cmds) / float64(fsyncs)
		}
		b.KV("aof_commands_per_fsync", strconv.FormatFloat(per, 'f', 2, 64))
	}
}

func okErr(ok bool) string {
	if ok {
		return "ok"
	}
	return "err"
}
