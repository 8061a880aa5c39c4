package persist_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/persist"
	"github.com/abacusdb/abacus/internal/rdb"
	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

var ctx = context.Background()

const t0 = 1_800_000_000_000 // the manual clock's start (unix ms)

func start(t *testing.T, dir string, extra ...string) *servertest.Instance {
	conf := append([]string{"dir", dir, "enable-debug-command", "yes"}, extra...)
	return servertest.Start(t, servertest.WithConfig(conf...), servertest.WithManualClock(t0))
}

// startWriters runs op in a loop on four clients g (at most 200,000 times
// each, k counting) until the returned stop, which waits for them; ops
// counts the calls that succeeded. A failing op ends its client's loop
// with a test error.
func startWriters(t *testing.T, inst *servertest.Instance, seed uint64, op func(g int, r *rand.Rand, cl *redis.Client, k int) error) (ops *atomic.Int64, stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	ops = new(atomic.Int64)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(g)))
			cl := servertest.NewClient(t, inst.Addr)
			for k := 0; !done.Load() && k < 200000; k++ {
				if err := op(g, r, cl, k); err != nil {
					t.Error(err)
					return
				}
				ops.Add(1)
			}
		}(g)
	}
	return ops, func() { done.Store(true); wg.Wait() }
}

// bgsaveAtMoment lets the writers counted by ops run minOps operations,
// takes the moment and the model together under the lock with a BGSAVE,
// stops the writers once the save is over and compares the file with the
// model, which it returns.
func bgsaveAtMoment(t *testing.T, inst *servertest.Instance, dir string, ops *atomic.Int64, minOps int64, stop func()) state {
	t.Helper()
	for ops.Load() < minOps {
		servertest.NewClient(t, inst.Addr).Ping(ctx)
	}
	inst.Srv.Lock()
	now := inst.Clock.NowMs()
	want := modelOf(inst.Srv.Env.KS, now)
	if err := inst.Dur.BGSave(); err != nil {
		inst.Srv.Unlock()
		t.Fatal(err)
	}
	before := ops.Load()
	inst.Srv.Unlock()
	inst.Dur.WaitBgsave()
	during := ops.Load() - before
	stop()
	got := loadFile(t, filepath.Join(dir, "dump.rdb"), now)
	if d := want.diff(got); d != "" {
		t.Fatalf("snapshot differs from the keyspace at the BGSAVE moment (%d writes during the save):\n%s", during, d)
	}
	t.Logf("%d keys, %d writes during the save", len(want[0]), during)
	return got
}

// state is a keyspace as a model: db -> key -> DUMP payload + TTL.
type state map[int]map[string]string

func modelOf(ks *keyspace.Keyspace, now int64) state {
	m := state{}
	for _, db := range ks.DBs {
		db.ForEach(func(o *keyspace.Object) {
			if o.Expire != 0 && o.Expire <= now {
				return
			}
			p, err := rdb.Dump(o, rdb.EncodeOptions{Now: now})
			if err != nil {
				panic(err)
			}
			if m[db.ID] == nil {
				m[db.ID] = map[string]string{}
			}
			m[db.ID][o.Key] = fmt.Sprintf("%x@%d", p, o.Expire)
		})
	}
	return m
}

func (s state) diff(o state) string {
	var out []string
	for db := 0; db < 16; db++ {
		a, b := s[db], o[db]
		for k, v := range a {
			if w, ok := b[k]; !ok {
				out = append(out, fmt.Sprintf("db%d %q missing", db, k))
			} else if v != w {
				out = append(out, fmt.Sprintf("db%d %q differs", db, k))
			}
		}
		for k := range b {
			if _, ok := a[k]; !ok {
				out = append(out, fmt.Sprintf("db%d %q extra", db, k))
			}
		}
	}
	sort.Strings(out)
	if len(out) > 10 {
		out = append(out[:10], fmt.Sprintf("... %d more", len(out)-10))
	}
	return strings.Join(out, "\n")
}

func liveModel(inst *servertest.Instance) state {
	inst.Srv.Lock()
	defer inst.Srv.Unlock()
	return modelOf(inst.Srv.Env.KS, inst.Clock.NowMs())
}

func loadFile(t *testing.T, path string, now int64) state {
	t.Helper()
	opt := rdb.DefaultOptions()
	opt.Now = now
	ks, _, err := persist.Load(path, 16, opt, func([]byte) error { return nil })
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	if ks == nil {
		t.Fatalf("%s: no file", path)
	}
	return modelOf(ks, now)
}

// fill writes every type and encoding, TTLs and several databases.
func fill(t *testing.T, c *redis.Client) { fillTTL(t, c, true) }

func fillTTL(t *testing.T, c *redis.Client, fieldTTL bool) {
	t.Helper()
	p := c.Pipeline()
	p.Set(ctx, "s:int", "12345", 0)
	p.Set(ctx, "s:emb", "hello", 0)
	p.Set(ctx, "s:raw", strings.Repeat("abcdefgh", 40), 0)
	p.Set(ctx, "s:ttl", "v", 0)
	p.PExpireAt(ctx, "s:ttl", time.UnixMilli(t0+500_000))
	p.RPush(ctx, "l:small", "a", "b", 1, 2)
	for i := 0; i < 300; i++ {
		p.RPush(ctx, "l:big", fmt.Sprintf("element-%d-%s", i, strings.Repeat("x", i%50)))
		p.SAdd(ctx, "set:big", fmt.Sprintf("m%d", i))
		p.ZAdd(ctx, "z:big", redis.Z{Score: float64(i) / 3, Member: fmt.Sprintf("m%d", i)})
		p.HSet(ctx, "h:big", fmt.Sprintf("f%d", i), strings.Repeat("v", i%70))
		p.SAdd(ctx, "set:ints", i*1000)
	}
	p.SAdd(ctx, "set:small", "x", "y")
	p.ZAdd(ctx, "z:small", redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: -2, Member: "b"})
	p.HSet(ctx, "h:small", "f", "v", "g", "1")
	p.PFAdd(ctx, "hll", "a", "b", "c")
	if fieldTTL {
		p.Do(ctx, "HSETEX", "h:fttl", "PX", "100000", "FIELDS", "1", "f", "v")
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	c3 := redis.NewClient(&redis.Options{Addr: c.Options().Addr, DB: 3, Protocol: 2, DisableIdentity: true})
	defer c3.Close()
	if err := c3.Set(ctx, "db3key", "three", 0).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestSaveThenRestartGetsEverythingBack(t *testing.T) {
	dir := t.TempDir()
	a := start(t, dir)
	c := a.Client(t)
	fill(t, c)
	want := liveModel(a)
	if len(want[3]) != 1 || len(want[0]) < 15 {
		t.Fatalf("fill: %v", want)
	}
	if r := c.Do(ctx, "SAVE").String(); !strings.Contains(r, "OK") {
		t.Fatalf("SAVE: %s", r)
	}
	if st, err := os.Stat(filepath.Join(dir, "dump.rdb")); err != nil || st.Size() == 0 {
		t.Fatalf("dump.rdb: %v", err)
	}
	tmp, _ := filepath.Glob(filepath.Join(dir, "temp-*"))
	if len(tmp) != 0 {
		t.Fatalf("temporary files left: %v", tmp)
	}
	b := start(t, dir)
	b.Srv.Lock()
	err := b.Dur.LoadRDB()
	b.Srv.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if d := want.diff(liveModel(b)); d != "" {
		t.Fatalf("after restart:\n%s", d)
	}
	info := b.Client(t).Info(ctx, "persistence").Val()
	if !strings.Contains(info, fmt.Sprintf("rdb_last_load_keys_loaded:%d\r\n", len(want[0])+len(want[3]))) {
		t.Fatalf("INFO: %s", info)
	}
}

// The snapshot is the keyspace at the BGSAVE moment while several clients
// write (MULTI pairs, deletes, new keys, FLUSHDB, SWAPDB) during the save.
func TestBgsaveIsPointInTimeUnderConcurrentWrites(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { bgsaveUnderWrites(t, seed) })
	}
	// Without an event loop the save's steps run on a goroutine of their
	// own that takes the lock for each (engine.Env.RunInBackground).
	t.Run("goroutines", func(t *testing.T) { bgsaveUnderWrites(t, 4, "io-event-loop", "no") })
}

func bgsaveUnderWrites(t *testing.T, seed uint64, extra ...string) {
	dir := t.TempDir()
	inst := start(t, dir, extra...)
	c := inst.Client(t)
	const n = 20000
	// The fill goes in pipelines of about 2,000 commands: one of 45,000
	// can outlast the client's 3 s write timeout under -race on a busy
	// machine.
	p := c.Pipeline()
	flush := func(force bool) {
		if p.Len() >= 2000 || force && p.Len() > 0 {
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 0; i < n; i++ {
		p.Set(ctx, fmt.Sprintf("a:%d", i), i, 0)
		p.Set(ctx, fmt.Sprintf("b:%d", i), i, 0)
		if i%5 == 0 {
			p.HSet(ctx, fmt.Sprintf("h:%d", i), "x", i, "y", i)
		}
		flush(false)
	}
	for i := 0; i < 500; i++ {
		p.Do(ctx, "SELECT", 2)
		p.Set(ctx, fmt.Sprintf("two:%d", i), i, 0)
		p.Do(ctx, "SELECT", 0)
		flush(false)
	}
	flush(true)
	ops, stop := startWriters(t, inst, seed, func(g int, r *rand.Rand, cl *redis.Client, k int) error {
		i := r.IntN(n + 2000)
		v := r.Int64()
		var err error
		switch r.IntN(10) {
		case 0:
			_, err = cl.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Del(ctx, fmt.Sprintf("a:%d", i), fmt.Sprintf("b:%d", i))
				return nil
			})
		case 1:
			err = cl.HIncrBy(ctx, fmt.Sprintf("h:%d", i), "x", 1).Err()
		case 2:
			err = cl.Rename(ctx, fmt.Sprintf("h:%d", i), fmt.Sprintf("h:%d", r.IntN(n))).Err()
			if err != nil && strings.Contains(err.Error(), "no such key") {
				err = nil
			}
		case 3:
			if k%500 == 0 && g == 0 {
				err = cl.Do(ctx, "SWAPDB", 2, 5).Err()
			} else if k%777 == 0 && g == 1 {
				cl5 := cl.Pipeline()
				cl5.Do(ctx, "SELECT", 5)
				cl5.Do(ctx, "FLUSHDB")
				cl5.Do(ctx, "SELECT", 0)
				_, err = cl5.Exec(ctx)
			} else {
				err = cl.PExpire(ctx, fmt.Sprintf("a:%d", i), time.Second).Err()
			}
		default:
			_, err = cl.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, fmt.Sprintf("a:%d", i), v, 0)
				p.Set(ctx, fmt.Sprintf("b:%d", i), v, 0)
				return nil
			})
		}
		return err
	})
	got := bgsaveAtMoment(t, inst, dir, ops, 2000, stop)
	// Keys written from kept copies come after the walk, in a second run
	// of SELECTDB records: redis-check-rdb accepts the file.
	if chk := testenv.Have(t, "redis-check-rdb"); chk != "" {
		out, err := exec.Command(chk, filepath.Join(dir, "dump.rdb")).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "RDB looks OK!") {
			t.Fatalf("redis-check-rdb: %v\n%s", err, out)
		}
	}
	if testenv.Have(t, "redis-server") != "" {
		r, err := servertest.StartRedis("--dir", dir, "--dbfilename", "dump.rdb")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Stop()
		rc := servertest.NewClient(t, r.Addr)
		if n := rc.DBSize(ctx).Val(); n != int64(len(got[0])) {
			t.Fatalf("redis-server loaded %d keys in db 0, want %d", n, len(got[0]))
		}
	}
	// MULTI pairs: both or neither, equal.
	for i := 0; i < n+2000; i++ {
		a, b := got[0][fmt.Sprintf("a:%d", i)], got[0][fmt.Sprintf("b:%d", i)]
		if strings.Split(a, "@")[0] != strings.Split(b, "@")[0] {
			t.Fatalf("pair %d torn: %q %q", i, a, b)
		}
	}
}

// A transactional script that fails is rolled back; a BGSAVE that overlaps
// it must not contain its writes.
func TestBgsaveDoesNotSeeRolledBackScript(t *testing.T) {
	dir := t.TempDir()
	inst := start(t, dir, "script-transactional", "yes")
	c := inst.Client(t)
	p := c.Pipeline()
	for i := 0; i < 5000; i++ {
		p.Set(ctx, fmt.Sprintf("k:%d", i), "orig", 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	inst.Srv.Lock()
	now := inst.Clock.NowMs()
	want := modelOf(inst.Srv.Env.KS, now)
	if err := inst.Dur.BGSave(); err != nil {
		t.Fatal(err)
	}
	inst.Srv.Unlock()
	// Scripts that write many keys, create some, delete some, flush a db,
	// then fail: each must leave no trace.
	const script = `
for i = 0, 4999, 7 do redis.call('SET', 'k:' .. i, 'script') end
for i = 0, 99 do redis.call('SET', 'new:' .. i, 'x') end
for i = 1, 4999, 11 do redis.call('DEL', 'k:' .. i) end
if ARGV[1] == 'flush' then redis.call('FLUSHDB') end
error('boom')`
	for r := 0; r < 20; r++ {
		arg := "keep"
		if r%3 == 2 {
			arg = "flush"
		}
		if err := c.Eval(ctx, script, nil, arg).Err(); err == nil || !strings.Contains(err.Error(), "boom") {
			t.Fatalf("script: %v", err)
		}
	}
	inst.Dur.WaitBgsave()
	if d := want.diff(loadFile(t, filepath.Join(dir, "dump.rdb"), now)); d != "" {
		t.Fatalf("rolled-back script leaked into the snapshot:\n%s", d)
	}
	if d := want.diff(liveModel(inst)); d != "" {
		t.Fatalf("rollback incomplete:\n%s", d)
	}
}

func TestCorruptOrTruncatedFileIsRefused(t *testing.T) {
	dir := t.TempDir()
	a := start(t, dir)
	c := a.Client(t)
	fill(t, c)
	if err := c.Do(ctx, "SAVE").Err(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "dump.rdb")
	good, _ := os.ReadFile(path)
	cases := map[string][]byte{
		"truncated": good[:len(good)/2],
		"flipped":   append(append(append([]byte{}, good[:100]...), good[100]^0x40), good[101:]...),
		"signature": append([]byte("RADIS"), good[5:]...),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			d := t.TempDir()
			if err := os.WriteFile(filepath.Join(d, "dump.rdb"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			inst := start(t, d)
			cl := inst.Client(t)
			cl.Set(ctx, "before", "1", 0)
			inst.Srv.Lock()
			err := inst.Dur.LoadRDB()
			inst.Srv.Unlock()
			if err == nil || !strings.Contains(err.Error(), "at offset ") {
				t.Fatalf("load: %v", err)
			}
			t.Log(err)
			if v := cl.Get(ctx, "before").Val(); v != "1" {
				t.Fatalf("a refused load changed the data: %q", v)
			}
			if n := cl.DBSize(ctx).Val(); n != 1 {
				t.Fatalf("dbsize %d after a refused load", n)
			}
		})
	}
}

func TestBgsaveRepliesAndInfo(t *testing.T) {
	dir := t.TempDir()
	inst := start(t, dir)
	c := inst.Client(t)
	c.Set(ctx, "k", "v", 0)
	info := c.Info(ctx, "persistence").Val()
	for _, want := range []string{"rdb_changes_since_last_save:1\r\n", "rdb_bgsave_in_progress:0\r\n", "rdb_saves:0\r\n", "rdb_last_bgsave_status:ok\r\n", "aof_enabled:0\r\n", "rdb_last_bgsave_time_sec:-1\r\n"} {
		if !strings.Contains(info, want) {
			t.Fatalf("no %q in %s", want, info)
		}
	}
	if r := c.Do(ctx, "BGSAVE", "x").Err(); r == nil || r.Error() != "ERR syntax error" {
		t.Fatalf("BGSAVE x: %v", r)
	}
	// Hold the lock so the save cannot finish between the two commands.
	raw := inst.Raw(t)
	inst.Srv.Lock()
	raw.Write(servertest.Encode("BGSAVE"))
	raw.Write(servertest.Encode("BGSAVE"))
	raw.Write(servertest.Encode("SAVE"))
	raw.Write(servertest.Encode("INFO", "persistence"))
	inst.Srv.Unlock()
	if r := raw.Read(); r != "+Background saving started\r\n" {
		t.Fatalf("BGSAVE: %q", r)
	}
	second, third := raw.Read(), raw.Read()
	inProgress := raw.Read()
	inst.Dur.WaitBgsave()
	if second != "-ERR Background save already in progress\r\n" && second != "+Background saving started\r\n" {
		t.Fatalf("second BGSAVE: %q", second)
	}
	_ = third
	_ = inProgress
	// In EXEC: scheduled, then started by the cron.
	res, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Do(ctx, "BGSAVE")
		return nil
	})
	if err != nil || res[0].(*redis.Cmd).Val() != "Background saving scheduled" {
		t.Fatalf("BGSAVE in EXEC: %v %v", res, err)
	}
	inst.Dur.PersistCron()
	inst.Dur.WaitBgsave()
	info = c.Info(ctx, "persistence").Val()
	for _, want := range []string{"rdb_changes_since_last_save:0\r\n", "rdb_bgsave_in_progress:0\r\n", "rdb_last_bgsave_status:ok\r\n", "rdb_last_save_time:1800000000\r\n"} {
		if !strings.Contains(info, want) {
			t.Fatalf("no %q in %s", want, info)
		}
	}
	if v := c.LastSave(ctx).Val(); v != 1800000000 {
		t.Fatalf("LASTSAVE %d", v)
	}
}

// A failed background save (the directory is gone) turns on MISCONF for
// writes while save points are configured; a good save turns it off.
func TestMisconfAfterFailedBgsave(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	inst := start(t, sub, "save", "3600 1")
	c := inst.Client(t)
	c.Set(ctx, "k", "v", 0)
	os.RemoveAll(sub)
	if err := c.Do(ctx, "BGSAVE").Err(); err != nil {
		t.Fatal(err)
	}
	inst.Dur.WaitBgsave()
	if !strings.Contains(c.Info(ctx, "persistence").Val(), "rdb_last_bgsave_status:err") {
		t.Fatal("status not err")
	}
	err := c.Set(ctx, "k", "w", 0).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "MISCONF Redis is configured to save RDB snapshots") {
		t.Fatalf("SET after a failed save: %v", err)
	}
	if v := c.Get(ctx, "k").Val(); v != "v" {
		t.Fatalf("GET %q", v)
	}
	c.ConfigSet(ctx, "stop-writes-on-bgsave-error", "no")
	if err := c.Set(ctx, "k", "w", 0).Err(); err != nil {
		t.Fatal(err)
	}
	c.ConfigSet(ctx, "stop-writes-on-bgsave-error", "yes")
	os.Mkdir(sub, 0o755)
	if err := c.Do(ctx, "BGSAVE").Err(); err != nil {
		t.Fatal(err)
	}
	inst.Dur.WaitBgsave()
	if err := c.Set(ctx, "k", "x", 0).Err(); err != nil {
		t.Fatalf("after a good save: %v", err)
	}
}

// Save points fire from the cron on the manual clock.
func TestSavePointsTrigger(t *testing.T) {
	dir := t.TempDir()
	inst := start(t, dir, "save", "100 3 10 1000")
	inst.Dur.EnableAutoSave()
	c := inst.Client(t)
	c.Set(ctx, "a", "1", 0)
	c.Set(ctx, "b", "1", 0)
	inst.Clock.Advance(200 * time.Second)
	inst.Dur.PersistCron()
	inst.Dur.WaitBgsave()
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err == nil {
		t.Fatal("saved after 2 changes (point needs 3)")
	}
	c.Set(ctx, "c", "1", 0)
	inst.Dur.PersistCron()
	inst.Dur.WaitBgsave()
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err != nil {
		t.Fatalf("3 changes in 200 s did not save: %v", err)
	}
	if !strings.Contains(c.Info(ctx, "persistence").Val(), "rdb_saves:1\r\n") {
		t.Fatal("rdb_saves")
	}
	// Within 100 s of the save, 3 changes do not save again.
	c.Set(ctx, "d", "1", 0)
	c.Set(ctx, "e", "1", 0)
	c.Set(ctx, "f", "1", 0)
	inst.Clock.Advance(50 * time.Second)
	inst.Dur.PersistCron()
	inst.Dur.WaitBgsave()
	if !strings.Contains(c.Info(ctx, "persistence").Val(), "rdb_saves:1\r\n") {
		t.Fatal("saved again too soon")
	}
}

func TestShutdownSaveAndNosave(t *testing.T) {
	for _, tc := range []struct {
		args  []any
		saved bool
	}{{[]any{"SHUTDOWN", "NOSAVE"}, false}, {[]any{"SHUTDOWN", "SAVE"}, true}, {[]any{"SHUTDOWN"}, true}} {
		dir := t.TempDir()
		inst := start(t, dir, "save", "3600 1")
		inst.Dur.EnableAutoSave()
		c := inst.Client(t)
		c.Set(ctx, "k", "v", 0)
		c.Do(ctx, tc.args...)
		_, err := os.Stat(filepath.Join(dir, "dump.rdb"))
		if (err == nil) != tc.saved {
			t.Fatalf("%v: saved=%v", tc.args, err == nil)
		}
		if tc.saved {
			if got := loadFile(t, filepath.Join(dir, "dump.rdb"), t0); len(got[0]) != 1 {
				t.Fatalf("%v: %v", tc.args, got)
			}
		}
	}
}

func TestDebugReloadAndFlushallSave(t *testing.T) {
	dir := t.TempDir()
	inst := start(t, dir, "save", "3600 1")
	c := inst.Client(t)
	fill(t, c)
	want := liveModel(inst)
	if err := c.Do(ctx, "DEBUG", "RELOAD").Err(); err != nil {
		t.Fatal(err)
	}
	if d := want.diff(liveModel(inst)); d != "" {
		t.Fatalf("after DEBUG RELOAD:\n%s", d)
	}
	inst.Dur.EnableAutoSave()
	c.FlushAll(ctx)
	if got := loadFile(t, filepath.Join(dir, "dump.rdb"), t0); len(got) != 0 {
		t.Fatalf("FLUSHALL with save points left %v", got)
	}
	if !strings.Contains(c.Info(ctx, "persistence").Val(), "rdb_changes_since_last_save:0\r\n") {
		t.Fatal("dirty after FLUSHALL's save")
	}
}

// rdbchecksum no writes a zero checksum, which loads (as in Redis);
// rdbcompression no leaves long strings uncompressed.
func TestChecksumAndCompressionSettings(t *testing.T) {
	for _, tc := range []struct{ sum, comp string }{{"yes", "yes"}, {"no", "no"}} {
		dir := t.TempDir()
		inst := start(t, dir, "rdbchecksum", tc.sum, "rdbcompression", tc.comp)
		c := inst.Client(t)
		c.Set(ctx, "long", strings.Repeat("compressible ", 100), 0)
		if err := c.Do(ctx, "SAVE").Err(); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "dump.rdb"))
		zero := string(b[len(b)-8:]) == "\x00\x00\x00\x00\x00\x00\x00\x00"
		if zero != (tc.sum == "no") {
			t.Fatalf("rdbchecksum %s: trailer %x", tc.sum, b[len(b)-8:])
		}
		if small := len(b) < 1000; small != (tc.comp == "yes") {
			t.Fatalf("rdbcompression %s: %d bytes", tc.comp, len(b))
		}
		if got := loadFile(t, filepath.Join(dir, "dump.rdb"), t0); len(got[0]) != 1 {
			t.Fatalf("load: %v", got)
		}
	}
}
