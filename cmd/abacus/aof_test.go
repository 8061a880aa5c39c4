package main

// Process tests of the append-only file: durability under SIGKILL,
// files exchanged with redis-server 7.0 in both directions, torn tails,
// rewrites (docs/persistence-aof.md).

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/testenv"
)

func client(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1})
}

// acked is what one writer knows the server acknowledged.
type acked struct {
	incr, hincr int64
	zadd        int64 // highest ZADD member acknowledged (members are 1, 2, ...)
	times       []time.Time
}

// writer runs INCR, HINCRBY, ZADD and a MULTI pair in a loop until an
// error (the kill), recording each acknowledged write.
func writer(addr string, g int, a *acked) {
	ctx := context.Background()
	c := client(addr)
	defer c.Close()
	for {
		n, err := c.Incr(ctx, fmt.Sprint("ctr:", g)).Result()
		if err != nil {
			return
		}
		a.incr = n
		a.times = append(a.times, time.Now())
		h, err := c.HIncrBy(ctx, fmt.Sprint("h:", g), "f", 1).Result()
		if err != nil {
			return
		}
		a.hincr = h
		m := a.zadd + 1
		if err := c.ZAdd(ctx, fmt.Sprint("z:", g), redis.Z{Score: float64(m), Member: m}).Err(); err != nil {
			return
		}
		a.zadd = m
		k := n % 50
		_, err = c.TxPipelined(ctx, func(tx redis.Pipeliner) error {
			tx.Set(ctx, fmt.Sprintf("pa:%d:%d", g, k), n, 0)
			tx.Set(ctx, fmt.Sprintf("pb:%d:%d", g, k), n, 0)
			return nil
		})
		if err != nil {
			return
		}
	}
}

// killRestart runs writers against abacus with the given appendfsync,
// SIGKILLs it at random moments, restarts it on the same directory and
// checks what survived. It returns the most writes lost by one writer.
func killRestart(t *testing.T, fsync string, rounds int) (lostMax int64, lostWindow time.Duration) {
	return killRestartN(t, fsync, rounds, 3)
}

// killRestartN is killRestart with the given number of concurrent writers.
func killRestartN(t *testing.T, fsync string, rounds, writers int) (lostMax int64, lostWindow time.Duration) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, uint64(len(fsync))))
	acks := make([]*acked, writers)
	for g := range acks {
		acks[g] = &acked{}
	}
	ctx := context.Background()
	for r := 0; r <= rounds; r++ { // the last round only checks
		p := start(t, "--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", fsync)
		c := client(p.addr)
		// Everything acknowledged before the last kill is there.
		for g, a := range acks {
			got, _ := c.Get(ctx, fmt.Sprint("ctr:", g)).Int64()
			if got < a.incr {
				lost := a.incr - got
				lostMax = max(lostMax, lost)
				if i := int(got); i >= 0 && i < len(a.times) {
					lostWindow = max(lostWindow, a.times[len(a.times)-1].Sub(a.times[i]))
				}
			}
			if fsync == "always" {
				if got < a.incr {
					t.Fatalf("round %d writer %d: INCR acknowledged %d, found %d", r, g, a.incr, got)
				}
				h, _ := c.HGet(ctx, fmt.Sprint("h:", g), "f").Int64()
				if h < a.hincr {
					t.Fatalf("round %d writer %d: HINCRBY acknowledged %d, found %d", r, g, a.hincr, h)
				}
				if a.zadd > 0 {
					if err := c.ZScore(ctx, fmt.Sprint("z:", g), strconv.FormatInt(a.zadd, 10)).Err(); err != nil {
						t.Fatalf("round %d writer %d: ZADD member %d acknowledged, missing: %v", r, g, a.zadd, err)
					}
				}
			}
			// Whatever survived, the counters restart from there.
			a.incr, _ = c.Get(ctx, fmt.Sprint("ctr:", g)).Int64()
			a.hincr, _ = c.HGet(ctx, fmt.Sprint("h:", g), "f").Int64()
			a.zadd = c.ZCard(ctx, fmt.Sprint("z:", g)).Val()
			a.times = a.times[:min(int(a.incr), len(a.times))]
			for k := 0; k < 50; k++ {
				x := c.Get(ctx, fmt.Sprintf("pa:%d:%d", g, k)).Val()
				y := c.Get(ctx, fmt.Sprintf("pb:%d:%d", g, k)).Val()
				if x != y {
					t.Fatalf("round %d: MULTI pair %d:%d torn: %q %q", r, g, k, x, y)
				}
			}
		}
		c.Close()
		if r == rounds {
			break
		}
		var wg sync.WaitGroup
		for g := 0; g < writers; g++ {
			wg.Add(1)
			go func(g int) { defer wg.Done(); writer(p.addr, g, acks[g]) }(g)
		}
		time.Sleep(time.Duration(100+rng.IntN(400)) * time.Millisecond)
		p.cmd.Process.Kill()
		p.wait()
		wg.Wait()
	}
	var total int64
	for _, a := range acks {
		total += a.incr
	}
	if total == 0 {
		t.Fatal("no write was acknowledged")
	}
	t.Logf("appendfsync %s: %d INCRs acknowledged over %d kills; most lost by one writer %d (%v)", fsync, total, rounds, lostMax, lostWindow)
	return lostMax, lostWindow
}

func TestAOFDurabilityAlways(t *testing.T) {
	killRestart(t, "always", 4)
}

// Many clients at once: their writes share fsyncs (group commit), and
// still no acknowledged one is lost.
func TestAOFDurabilityAlways50Clients(t *testing.T) {
	killRestartN(t, "always", 3, 50)
}

func TestAOFDurabilityEverysec(t *testing.T) {
	_, window := killRestart(t, "everysec", 3)
	if window > 2*time.Second {
		t.Fatalf("everysec lost %v of acknowledged writes", window)
	}
}

// seed writes one of every type, with TTLs, in two databases.
var seedCmds = [][]string{
	{"SET", "s", "hello"}, {"SET", "n", "12345"}, {"SETEX", "ttl", "1000", "v"},
	{"RPUSH", "l", "a", "b", "c"}, {"SADD", "set", "x", "y", "1"}, {"SADD", "iset", "1", "2", "3"},
	{"ZADD", "z", "1.5", "m1", "-2", "m2"}, {"HSET", "h", "f1", "v1", "f2", "v2"},
	{"INCRBYFLOAT", "fl", "1.25"}, {"EXPIRE", "l", "5000"}, {"SELECT", "3"}, {"SET", "db3", "three"},
	{"SELECT", "0"}, {"SADD", "pop", "a", "b", "c", "d"}, {"SPOP", "pop", "2"}, {"PFADD", "hll", "a", "b"},
}

// check reads the seeded data with commands whose replies do not depend
// on encoding or order.
func readBack(t *testing.T, addr string) string {
	ctx := context.Background()
	c := client(addr)
	defer c.Close()
	var b strings.Builder
	for _, k := range []string{"s", "n", "fl", "hll"} {
		fmt.Fprintf(&b, "%s=%q ", k, c.Get(ctx, k).Val())
	}
	fmt.Fprintf(&b, "l=%v set=%v iset=%v z=%v h=%v pop=%d ", c.LRange(ctx, "l", 0, -1).Val(), sorted(c.SMembers(ctx, "set").Val()),
		sorted(c.SMembers(ctx, "iset").Val()), c.ZRangeWithScores(ctx, "z", 0, -1).Val(), c.HGetAll(ctx, "h").Val(), c.SCard(ctx, "pop").Val())
	ttl := c.TTL(ctx, "ttl").Val()
	lttl := c.TTL(ctx, "l").Val()
	fmt.Fprintf(&b, "ttl>990s=%v lttl>4990s=%v ", ttl > 990*time.Second, lttl > 4990*time.Second)
	c.Do(ctx, "SELECT", "3")
	c3 := redis.NewClient(&redis.Options{Addr: addr, DB: 3, Protocol: 2, DisableIdentity: true})
	defer c3.Close()
	fmt.Fprintf(&b, "db3=%q", c3.Get(ctx, "db3").Val())
	return b.String()
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func doAll(t *testing.T, addr string, cmds [][]string) {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, PoolSize: 1})
	defer c.Close()
	for _, cmd := range cmds {
		args := make([]any, len(cmd))
		for i, a := range cmd {
			args[i] = a
		}
		if err := c.Do(ctx, args...).Err(); err != nil && err != redis.Nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
}

// redisServer starts redis-server 7.0 on dir with extra arguments.
func redisServer(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	bin := testenv.NeedRedis(t)
	port := freePort(t)
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--daemonize", "no", "--logfile", filepath.Join(dir, "redis.log")}, extra...)
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	c := client(addr)
	defer c.Close()
	for i := 0; ; i++ {
		if err := c.Ping(context.Background()).Err(); err == nil {
			return addr
		} else if i > 500 {
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			t.Fatalf("redis-server did not start: %v\n%s", err, log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Abacus's AOF (RDB preamble and AOF base alike, after a rewrite and
// with commands after it) loads into redis-server 7.0 with the same data.
func TestAOFLoadsIntoRedis(t *testing.T) {
	for _, preamble := range []string{"yes", "no"} {
		t.Run("preamble-"+preamble, func(t *testing.T) {
			dir := t.TempDir()
			p := start(t, "--dir", dir, "--save", "", "--appendonly", "yes", "--aof-use-rdb-preamble", preamble)
			doAll(t, p.addr, seedCmds[:8])
			doAll(t, p.addr, [][]string{{"BGREWRITEAOF"}})
			waitRewrite(t, p.addr)
			doAll(t, p.addr, seedCmds[8:])
			want := readBack(t, p.addr)
			p.cmd.Process.Kill()
			p.wait()
			rdir := t.TempDir()
			copyDir(t, filepath.Join(dir, "appendonlydir"), filepath.Join(rdir, "appendonlydir"))
			raddr := redisServer(t, rdir, "--appendonly", "yes")
			if got := readBack(t, raddr); got != want {
				t.Fatalf("redis-server loaded\n%s\nabacus had\n%s", got, want)
			}
			// And Abacus reloads its own.
			p = start(t, "--dir", dir, "--save", "", "--appendonly", "yes")
			if got := readBack(t, p.addr); got != want {
				t.Fatalf("abacus reloaded\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func waitRewrite(t *testing.T, addr string) {
	t.Helper()
	c := client(addr)
	defer c.Close()
	for i := 0; ; i++ {
		info := c.Info(context.Background(), "persistence").Val()
		if strings.Contains(info, "aof_rewrite_in_progress:0") && strings.Contains(info, "aof_rewrite_scheduled:0") {
			return
		}
		if i > 1000 {
			t.Fatalf("rewrite does not end:\n%s", info)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// redis-server 7.0's AOF (RDB preamble base, AOF base after a rewrite
// with aof-use-rdb-preamble no, commands in the incremental file) loads
// into Abacus.
func TestRedisAOFLoadsIntoAbacus(t *testing.T) {
	for _, preamble := range []string{"yes", "no"} {
		t.Run("preamble-"+preamble, func(t *testing.T) {
			rdir := t.TempDir()
			// appendfsync always: redis-server has written every command
			// to its file before it replies. Under everysec it may hold
			// writes back for up to 2 s while an fsync is slow, which a
			// fixed sleep does not cover on a loaded machine.
			raddr := redisServer(t, rdir, "--appendonly", "yes", "--appendfsync", "always", "--aof-use-rdb-preamble", preamble)
			doAll(t, raddr, seedCmds[:8])
			doAll(t, raddr, [][]string{{"BGREWRITEAOF"}})
			waitRewrite(t, raddr)
			doAll(t, raddr, seedCmds[8:])
			want := readBack(t, raddr)
			dir := t.TempDir()
			copyDir(t, filepath.Join(rdir, "appendonlydir"), filepath.Join(dir, "appendonlydir"))
			p := start(t, "--dir", dir, "--save", "", "--appendonly", "yes")
			if got := readBack(t, p.addr); got != want {
				t.Fatalf("abacus loaded\n%s\nredis-server had\n%s", got, want)
			}
		})
	}
}

// A torn last command: dropped with a log line (aof-load-truncated yes),
// or the start refused with the way to fix it; check-aof --fix fixes it.
func TestAOFTornTail(t *testing.T) {
	dir := t.TempDir()
	p := start(t, "--dir", dir, "--save", "", "--appendonly", "yes")
	doAll(t, p.addr, [][]string{{"SET", "a", "1"}, {"INCR", "a"}})
	p.cmd.Process.Kill()
	p.wait()
	incr := filepath.Join(dir, "appendonlydir", "appendonly.aof.1.incr.aof")
	f, err := os.OpenFile(incr, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("*2\r\n$4\r\nINCR\r\n$1\r\n")
	f.Close()

	code, out := runExit(t, "", "--port", strconv.Itoa(freePort(t)), "--dir", dir, "--save", "", "--appendonly", "yes", "--aof-load-truncated", "no")
	if code != 1 || !strings.Contains(out, "check-aof --fix") {
		t.Fatalf("torn AOF with aof-load-truncated no: exit %d\n%s", code, out)
	}
	cmd := exec.Command(binary, "check-aof", filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
	res, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(res), "--fix") {
		t.Fatalf("check-aof: %d %s", cmd.ProcessState.ExitCode(), res)
	}
	// aof-load-truncated yes: starts, says so, the torn INCR is gone.
	p = start(t, "--dir", dir, "--save", "", "--appendonly", "yes")
	if !strings.Contains(p.logs(), "short read") {
		t.Fatalf("no log line about the torn command:\n%s", p.logs())
	}
	c := client(p.addr)
	if v := c.Get(context.Background(), "a").Val(); v != "2" {
		t.Fatalf("a = %q", v)
	}
	doAll(t, p.addr, [][]string{{"INCR", "a"}})
	c.Close()
	p.cmd.Process.Kill()
	p.wait()
	// Torn again, fixed by check-aof --fix this time.
	f, _ = os.OpenFile(incr, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("*2\r\n$4\r\nIN")
	f.Close()
	fix := exec.Command(binary, "check-aof", "--fix", filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
	if res, err := fix.CombinedOutput(); err != nil {
		t.Fatalf("check-aof --fix: %v %s", err, res)
	}
	p = start(t, "--dir", dir, "--save", "", "--appendonly", "yes", "--aof-load-truncated", "no")
	c = client(p.addr)
	defer c.Close()
	if v := c.Get(context.Background(), "a").Val(); v != "3" {
		t.Fatalf("after fix a = %q", v)
	}
}

// CONFIG SET appendonly yes at run time writes a base of the data there
// and logs from then on; BGREWRITEAOF replaces base and incremental files.
func TestAOFRuntimeEnableAndRewrite(t *testing.T) {
	dir := t.TempDir()
	p := start(t, "--dir", dir, "--save", "")
	doAll(t, p.addr, [][]string{{"SET", "before", "1"}, {"CONFIG", "SET", "appendonly", "yes"}})
	c := client(p.addr)
	ctx := context.Background()
	for i := 0; !strings.Contains(c.Info(ctx, "persistence").Val(), "aof_enabled:1"); i++ {
		if i > 500 {
			t.Fatal("AOF not enabled")
		}
		time.Sleep(10 * time.Millisecond)
	}
	doAll(t, p.addr, [][]string{{"SET", "after", "2"}, {"BGREWRITEAOF"}})
	waitRewrite(t, p.addr)
	doAll(t, p.addr, [][]string{{"SET", "later", "3"}, {"EXPIRE", "later", "100"}})
	man, _ := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
	if string(man) != "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n" {
		t.Fatalf("manifest after the rewrite:\n%s", man)
	}
	c.Close()
	p.cmd.Process.Kill()
	p.wait()
	p = start(t, "--dir", dir, "--save", "", "--appendonly", "yes")
	c = client(p.addr)
	defer c.Close()
	if got := c.MGet(ctx, "before", "after", "later").Val(); fmt.Sprint(got) != "[1 2 3]" {
		t.Fatalf("after restart: %v", got)
	}
	if ttl := c.TTL(ctx, "later").Val(); ttl <= 90*time.Second {
		t.Fatalf("TTL %v", ttl)
	}
}

// An AOF left in the directory by an earlier run is stale once the server
// ran without it: CONFIG SET appendonly yes writes a new base of the data
// in memory, not appended to the old files. BGREWRITEAOF with AOF off
// writes a base and a manifest naming only it, as redis-server 7.0 does.
func TestAOFStaleDirectoryReplaced(t *testing.T) {
	dir := t.TempDir()
	p := start(t, "--dir", dir, "--save", "", "--appendonly", "yes")
	doAll(t, p.addr, [][]string{{"SET", "stale", "1"}})
	p.cmd.Process.Kill()
	p.wait()
	p = start(t, "--dir", dir, "--save", "")
	doAll(t, p.addr, [][]string{{"SET", "fresh", "1"}, {"BGREWRITEAOF"}})
	man, _ := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
	if string(man) != "file appendonly.aof.2.base.rdb seq 2 type b\n" {
		t.Fatalf("manifest after BGREWRITEAOF with AOF off:\n%s", man)
	}
	doAll(t, p.addr, [][]string{{"SET", "fresh2", "2"}, {"CONFIG", "SET", "appendonly", "yes"}})
	c := client(p.addr)
	ctx := context.Background()
	for i := 0; !strings.Contains(c.Info(ctx, "persistence").Val(), "aof_enabled:1"); i++ {
		if i > 500 {
			t.Fatal("AOF not enabled")
		}
		time.Sleep(10 * time.Millisecond)
	}
	doAll(t, p.addr, [][]string{{"SET", "fresh3", "3"}})
	c.Close()
	p.cmd.Process.Kill()
	p.wait()
	p = start(t, "--dir", dir, "--save", "", "--appendonly", "yes")
	c = client(p.addr)
	defer c.Close()
	if got := fmt.Sprint(c.MGet(ctx, "stale", "fresh", "fresh2", "fresh3").Val()); got != "[<nil> 1 2 3]" {
		t.Fatalf("after restart: %s", got)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "appendonlydir"))
	if len(ents) != 3 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("old files left behind: %v", names)
	}
}

// A single-file AOF as Redis before 7.0 wrote it (dir/appendonly.aof) is
// loaded, and a multi-part AOF is written from the data.
func TestAOFSingleFileUpgrade(t *testing.T) {
	dir := t.TempDir()
	old := cmds6([]string{"SELECT", "0"}, []string{"SET", "a", "1"}, []string{"MULTI"}, []string{"INCR", "a"}, []string{"EXEC"}, []string{"SELECT", "2"}, []string{"RPUSH", "l", "x"})
	if err := os.WriteFile(filepath.Join(dir, "appendonly.aof"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	p := start(t, "--dir", dir, "--save", "", "--appendonly", "yes")
	doAll(t, p.addr, [][]string{{"SET", "b", "new"}})
	p.cmd.Process.Kill()
	p.wait()
	if _, err := os.Stat(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest")); err != nil {
		t.Fatalf("no multi-part AOF written: %v", err)
	}
	os.Remove(filepath.Join(dir, "appendonly.aof"))
	p = start(t, "--dir", dir, "--save", "", "--appendonly", "yes")
	ctx := context.Background()
	c := client(p.addr)
	defer c.Close()
	c2 := redis.NewClient(&redis.Options{Addr: p.addr, DB: 2, Protocol: 2, DisableIdentity: true})
	defer c2.Close()
	if got := fmt.Sprint(c.MGet(ctx, "a", "b").Val(), c2.LRange(ctx, "l", 0, -1).Val()); got != "[2 new] [x]" {
		t.Fatalf("after upgrade: %s", got)
	}
}

func cmds6(argvs ...[]string) []byte {
	var b []byte
	for _, a := range argvs {
		b = fmt.Appendf(b, "*%d\r\n", len(a))
		for _, s := range a {
			b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(s), s)
		}
	}
	return b
}
