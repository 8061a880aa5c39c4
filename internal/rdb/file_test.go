package rdb_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/rdb"
	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// fileFixture is the data both servers build for the file tests: every
// type and encoding in three databases, some keys with TTLs.
func fileFixture() [][]any {
	var cmds [][]any
	add := func(args ...any) { cmds = append(cmds, args) }
	for db := range []int{0, 3, 15} {
		dbs := []string{"0", "3", "15"}[db]
		add("select", dbs)
		add("set", "int", "12345")
		add("set", "bigint", "-9223372036854775808")
		add("set", "str", "hello "+dbs)
		add("set", "long", strings.Repeat("compress me ", 100))
		add("set", "ttl", "v", "pxat", "4102444800123")
		add("rpush", "list", "a", "1", "-70000", strings.Repeat("q", 200))
		big := []any{"rpush", "biglist"}
		for i := range 3000 {
			big = append(big, "e"+strconv.Itoa(i*7))
		}
		add(big...)
		add("sadd", "intset", "1", "2", "-3", "10000000000")
		add("sadd", "strset", "a", "b", "c")
		hs := []any{"sadd", "bigset"}
		for i := range 700 {
			hs = append(hs, strconv.Itoa(i*11))
		}
		add(hs...)
		add("zadd", "zsmall", "1", "a", "2.5", "b", "-inf", "c")
		zs := []any{"zadd", "zbig"}
		for i := range 200 {
			zs = append(zs, strconv.FormatFloat(float64(i)/3, 'g', -1, 64), "m"+strconv.Itoa(i))
		}
		add(zs...)
		add("hset", "hsmall", "f", "v", "n", "7")
		hb := []any{"hset", "hbig"}
		for i := range 300 {
			hb = append(hb, "f"+strconv.Itoa(i), strings.Repeat("v", i%90))
		}
		add(hb...)
		add("pexpireat", "hbig", "4102444800999")
	}
	add("function", "load", "#!lua name=filelib\nredis.register_function('f1', function() return 1 end)")
	return cmds
}

func runFixture(t *testing.T, c *redis.Client) {
	t.Helper()
	// One connection, so SELECT holds for the commands after it.
	conn := c.Conn()
	defer conn.Close()
	for _, cmd := range fileFixture() {
		if err := conn.Do(servertest.Ctx, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd[:min(len(cmd), 3)], err)
		}
	}
}

// compareServers checks that databases 0, 3 and 15 hold the same keys,
// values and TTLs on both servers.
func compareServers(t *testing.T, a, b *redis.Client) {
	t.Helper()
	ctx := servertest.Ctx
	ca, cb := a.Conn(), b.Conn()
	defer ca.Close()
	defer cb.Close()
	for _, db := range []int{0, 3, 15} {
		ca.Select(ctx, db)
		cb.Select(ctx, db)
		ka, kb := ca.Keys(ctx, "*").Val(), cb.Keys(ctx, "*").Val()
		slices.Sort(ka)
		slices.Sort(kb)
		if !slices.Equal(ka, kb) || len(ka) == 0 {
			t.Fatalf("db %d keys:\n%v\n%v", db, ka, kb)
		}
		for _, k := range ka {
			if x, y := connContent(t, ca, k), connContent(t, cb, k); x != y {
				t.Errorf("db %d key %s:\n%.200s\n%.200s", db, k, x, y)
			}
			if x, y := ca.PExpireTime(ctx, k).Val(), cb.PExpireTime(ctx, k).Val(); x != y {
				t.Errorf("db %d key %s: PEXPIRETIME %v and %v", db, k, x, y)
			}
		}
	}
}

// connContent is keyContent over a connection with a database selected.
func connContent(t *testing.T, c *redis.Conn, k string) string {
	t.Helper()
	ctx := servertest.Ctx
	var lines []string
	switch typ := c.Type(ctx, k).Val(); typ {
	case "string":
		lines = []string{c.Get(ctx, k).Val()}
	case "list":
		lines = c.LRange(ctx, k, 0, -1).Val()
	case "set":
		lines = c.SMembers(ctx, k).Val()
		slices.Sort(lines)
	case "zset":
		for _, z := range c.ZRangeWithScores(ctx, k, 0, -1).Val() {
			lines = append(lines, z.Member.(string)+" "+strconv.FormatFloat(z.Score, 'g', -1, 64))
		}
	case "hash":
		for f, v := range c.HGetAll(ctx, k).Val() {
			lines = append(lines, f+"="+v)
		}
		slices.Sort(lines)
	default:
		t.Fatalf("key %s: type %s", k, typ)
	}
	enc := c.ObjectEncoding(ctx, k).Val()
	if enc == "listpack" && c.Type(ctx, k).Val() == "set" {
		enc = "hashtable" // Abacus has Redis 7.2's set listpack; 7.0 does not
	}
	return c.Type(ctx, k).Val() + " " + enc + " " + strconv.Quote(strings.Join(lines, "\n"))
}

// A file written by redis-server 7.0's SAVE loads into a keyspace holding
// what redis-server holds.
func TestFileFromRedis(t *testing.T) {
	testenv.NeedRedis(t)
	rs, err := servertest.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Stop()
	r := servertest.NewClient(t, rs.Addr)
	runFixture(t, r)
	if err := r.Save(servertest.Ctx).Err(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(rs.Dir(), "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("testdata/redis70.rdb", b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inst := servertest.Start(t)
	inst.Srv.Lock()
	ks := inst.Srv.Env.KS
	var libs [][]byte
	opt := rdb.DefaultOptions()
	opt.Now = ks.Now
	info, err := rdb.LoadKeyspace(ks, b, opt, func(code []byte) error { libs = append(libs, bytes.Clone(code)); return nil })
	inst.Srv.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if info.Version != 10 || info.Functions != 1 || len(libs) != 1 || info.Aux["redis-ver"] != "7.0.15" || info.Expires != 6 {
		t.Errorf("file info %+v", info)
	}
	compareServers(t, inst.Client(t), r)
}

// The copy of such a file in testdata loads everywhere, redis-server or not.
func TestFileTestdata(t *testing.T) {
	b, err := os.ReadFile("testdata/redis70.rdb")
	if err != nil {
		t.Fatal(err)
	}
	ks := keyspace.New(16)
	opt := rdb.DefaultOptions()
	info, err := rdb.LoadKeyspace(ks, b, opt, func([]byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := map[keyspace.Type]int{keyspace.TypeString: 15, keyspace.TypeList: 6, keyspace.TypeSet: 9, keyspace.TypeZSet: 6, keyspace.TypeHash: 6}
	for typ, n := range want {
		if info.Keys[typ] != n {
			t.Errorf("%s keys: %d, want %d", typ, info.Keys[typ], n)
		}
	}
	o := ks.DBs[15].Peek("hbig")
	if o == nil || o.Expire != 4102444800999 {
		t.Fatalf("hbig in db 15: %+v", o)
	}
	if o := ks.DBs[3].Peek("str"); o == nil || string(o.Bytes(nil)) != "hello 3" {
		t.Fatalf("str in db 3: %+v", o)
	}
	// Every truncation and a flipped byte are refused before any key is
	// handed over.
	for _, cut := range []int{0, 5, 9, 100, len(b) / 2, len(b) - 9, len(b) - 1} {
		ks := keyspace.New(16)
		if _, err := rdb.LoadKeyspace(ks, b[:cut], opt, nil); err == nil {
			t.Errorf("file cut at %d bytes accepted", cut)
		} else if ks.DBs[0].Len()+ks.DBs[3].Len()+ks.DBs[15].Len() != 0 {
			t.Errorf("file cut at %d bytes loaded keys", cut)
		}
	}
	bad := bytes.Clone(b)
	bad[len(b)/2] ^= 1
	_, err = rdb.LoadKeyspace(keyspace.New(16), bad, opt, nil)
	var ce *rdb.CorruptError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("flipped byte: %v", err)
	}
	// Without a checksum (rdbchecksum no), a file cut inside a value and
	// closed with EOF fails where the value runs out, and says where.
	bad = append(bytes.Clone(b[:len(b)/2]), 0xff, 0, 0, 0, 0, 0, 0, 0, 0)
	if _, err := rdb.LoadKeyspace(keyspace.New(16), bad, opt, func([]byte) error { return nil }); err == nil || !strings.Contains(err.Error(), "at offset") {
		t.Errorf("file cut without checksum: %v", err)
	} else {
		t.Log(err)
	}
}

// A file Abacus writes loads into redis-server 7.0 with every key, value
// and TTL, and redis-check-rdb calls it OK.
func TestFileToRedis(t *testing.T) {
	testenv.NeedRedis(t)
	check := testenv.Need(t, "redis-check-rdb")
	inst := servertest.Start(t)
	a := inst.Client(t)
	runFixture(t, a)
	dir := t.TempDir()
	path := filepath.Join(dir, "abacus.rdb")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	inst.Srv.Lock()
	ks := inst.Srv.Env.KS
	err = rdb.WriteKeyspace(f, ks, []string{"redis-ver", "7.0.15", "redis-bits", "64"},
		[][]byte{[]byte("#!lua name=filelib\nredis.register_function('f1', function() return 1 end)")},
		rdb.EncodeOptions{Compress: true, Now: ks.Now})
	inst.Srv.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if out, err := exec.Command(check, path).CombinedOutput(); err != nil || !strings.Contains(string(out), "RDB looks OK") {
		t.Fatalf("redis-check-rdb: %v\n%s", err, out)
	}
	rs, err := servertest.StartRedis("--dir", dir, "--dbfilename", "abacus.rdb")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Stop()
	r := servertest.NewClient(t, rs.Addr)
	compareServers(t, a, r)
	if got := r.Do(servertest.Ctx, "fcall", "f1", "0").Val(); got != int64(1) {
		t.Errorf("FCALL f1 after load: %v", got)
	}
}

// A keyspace with field TTLs is written as version 12 and reads back with
// them; expired keys are left out on both sides.
func TestFileFieldTTLRoundTrip(t *testing.T) {
	const now = 1_700_000_000_000
	ks := keyspace.New(16)
	ks.Now = now
	o, h := keyspace.NewHash()
	lim := rdb.DefaultOptions().Hash
	h.Set(now, []byte("plain"), []byte("1"), lim)
	h.SetWithExpiry(now, []byte("soon"), []byte("2"), now+1000, lim)
	ks.DBs[2].Add("h", o)
	gone := keyspace.NewString([]byte("x"))
	gone.Expire = now - 1
	ks.DBs[2].Add("gone", gone)
	var buf bytes.Buffer
	if err := rdb.WriteKeyspace(&buf, ks, nil, nil, rdb.EncodeOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte("REDIS0012")) {
		t.Fatalf("header %q", buf.Bytes()[:9])
	}
	// redis-server 7.0 cannot take it, and says why.
	if path := testenv.Have(t, "redis-check-rdb"); path != "" {
		f := filepath.Join(t.TempDir(), "ttl.rdb")
		if err := os.WriteFile(f, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(path, f).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "Can't handle RDB format version 12") {
			t.Errorf("redis-check-rdb on a version 12 file: %v\n%s", err, out)
		}
	}
	back := keyspace.New(16)
	opt := rdb.DefaultOptions()
	opt.Now = now
	info, err := rdb.LoadKeyspace(back, buf.Bytes(), opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info.Keys[keyspace.TypeHash] != 1 || info.Keys[keyspace.TypeString] != 0 {
		t.Fatalf("info %+v", info)
	}
	o = back.DBs[2].Peek("h")
	if o == nil {
		t.Fatal("h missing")
	}
	if got := content(o); got != "hash\n\"plain\" \"1\" 0\n\"soon\" \"2\" 1700000001000\n" {
		t.Fatalf("h: %q", got)
	}
	// Loaded later, after the field's TTL, the field is gone.
	opt.Now = now + 2000
	back = keyspace.New(16)
	if _, err := rdb.LoadKeyspace(back, buf.Bytes(), opt, nil); err != nil {
		t.Fatal(err)
	}
	if got := content(back.DBs[2].Peek("h")); got != "hash\n\"plain\" \"1\" 0\n" {
		t.Fatalf("h later: %q", got)
	}
}
