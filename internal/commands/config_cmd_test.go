package commands_test

import (
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// TestConfigDiffErrors sends fixed CONFIG SET/GET cases, good and bad, to
// Abacus and redis-server 7.0 and compares every reply byte for byte.
func TestConfigDiffErrors(t *testing.T) {
	p, _ := svDiffPrivate(t, nil)
	n := p.Lines(`
CONFIG SET hz abc
CONFIG SET hz 1000
CONFIG GET hz
CONFIG SET hz -5
CONFIG SET hz 0
CONFIG GET hz
CONFIG SET hz +5
CONFIG SET hz 05
CONFIG SET hz 0x10
CONFIG SET hz 5.0
CONFIG SET hz 15
CONFIG GET HZ
CONFIG SET maxmemory 10mb
CONFIG GET maxmemory
CONFIG SET maxmemory -1
CONFIG SET maxmemory 1.5gb
CONFIG SET maxmemory 1K
CONFIG GET maxmemory
CONFIG SET maxmemory 1KB
CONFIG GET maxmemory
CONFIG SET maxmemory 1b
CONFIG SET maxmemory 1TB
CONFIG SET maxmemory 18446744073709551615
CONFIG GET maxmemory
CONFIG SET maxmemory 99999999999999999999
CONFIG GET maxmemory
CONFIG SET maxmemory 9999999999999gb
CONFIG GET maxmemory
CONFIG SET maxmemory k
CONFIG GET maxmemory
CONFIG SET maxmemory 0
CONFIG SET proto-max-bulk-len 100
CONFIG SET proto-max-bulk-len 99999999999999999999
CONFIG SET proto-max-bulk-len 1gb
CONFIG GET proto-max-bulk-len
CONFIG SET appendfsync x
CONFIG SET appendfsync ALWAYS
CONFIG GET appendfsync
CONFIG SET appendfsync everysec
CONFIG SET loglevel nothing
CONFIG SET loglevel VERBOSE
CONFIG GET loglevel
CONFIG SET maxmemory-policy bad
CONFIG SET maxmemory-policy allkeys-lru
CONFIG GET maxmemory-policy
CONFIG SET protected-mode maybe
CONFIG SET protected-mode NO
CONFIG GET protected-mode
CONFIG SET nope 1
CONFIG SET HZ 5 hz 6
CONFIG SET HZ 5 HZ 6
CONFIG SET databases 4
CONFIG SET hz 5 nope 2
CONFIG SET nope 2 databases 5
CONFIG SET databases 5 nope 2
CONFIG SET hz abc maxmemory x
CONFIG SET timeout 7 maxmemory -1
CONFIG GET timeout
CONFIG SET hash-max-ziplist-entries abc
CONFIG SET hash-max-ziplist-entries 5 hash-max-listpack-entries 6
CONFIG GET hash-max-ziplist-entries
CONFIG GET Hash-Max-Listpack-Entries
CONFIG SET hash-max-listpack-value -1
CONFIG SET hash-max-listpack-value 1k
CONFIG GET hash-max-listpack-value
CONFIG SET zset-max-listpack-entries 1k
CONFIG SET zset-max-ziplist-value 2k
CONFIG GET zset-max-listpack-value
CONFIG SET list-max-ziplist-size 99999999999
CONFIG SET list-max-ziplist-size -5
CONFIG GET list-max-listpack-size
CONFIG SET set-max-intset-entries -1
CONFIG SET timeout -1
CONFIG SET maxclients 0
CONFIG SET slowlog-log-slower-than -2
CONFIG SET slowlog-log-slower-than -1
CONFIG GET slowlog-log-slower-than
CONFIG SET slowlog-max-len -1
CONFIG SET latency-monitor-threshold -1
CONFIG SET tcp-keepalive -1
CONFIG SET hll-sparse-max-bytes 1k
CONFIG GET hll-sparse-max-bytes
CONFIG SET client-query-buffer-limit 100
CONFIG SET client-query-buffer-limit 2gb
CONFIG GET client-query-buffer-limit
CONFIG SET busy-reply-threshold 100
CONFIG GET lua-time-limit
CONFIG SET lua-time-limit 200
CONFIG GET busy-reply-threshold
CONFIG SET daemonize no
CONFIG SET pidfile /tmp/x
CONFIG SET unixsocket /tmp/x
CONFIG SET logfile x
CONFIG SET dir /tmp
CONFIG SET dbfilename x.rdb
CONFIG SET appendfilename a
CONFIG SET appenddirname a
CONFIG SET enable-debug-command yes
CONFIG SET cluster-enabled yes
CONFIG SET replicaof no
CONFIG SET io-threads 2
CONFIG SET tcp-backlog 5
CONFIG SET supervised no
CONFIG SET maxmemory-clients 10%
CONFIG GET maxmemory-clients
CONFIG SET maxmemory-clients 101%
CONFIG SET maxmemory-clients -1%
CONFIG SET maxmemory-clients %
CONFIG SET maxmemory-clients x
CONFIG SET maxmemory-clients 0%
CONFIG GET maxmemory-clients
CONFIG SET maxmemory-samples 0
CONFIG SET active-expire-effort 11
CONFIG SET maxmemory-eviction-tenacity 101
CONFIG SET repl-backlog-size 0
CONFIG SET notify-keyspace-events KEA
CONFIG GET notify-keyspace-events
CONFIG SET notify-keyspace-events Kgx
CONFIG GET notify-keyspace-events
CONFIG SET notify-keyspace-events q
CONFIG SET client-output-buffer-limit foo 1 2 3
CONFIG SET oom-score-adj-values x
CONFIG SET shutdown-on-sigint bogus
CONFIG SET repl-diskless-load bogus
CONFIG SET acl-pubsub-default bogus
CONFIG SET sanitize-dump-payload bogus
CONFIG SET propagation-error-behavior bogus
CONFIG SET save abc
CONFIG SET save 0 1
CONFIG SET save 10 -1
CONFIG GET nope
CONFIG GET
CONFIG SET hz
CONFIG SET hz 5 maxmemory
CONFIG RESETSTAT extra
CONFIG REWRITE extra
CONFIG foo
CONFIG
`)
	// Values with spaces, sent as single arguments.
	for _, c := range [][]string{
		{"CONFIG", "SET", "save", "10 20 30 40"}, {"CONFIG", "GET", "save"},
		{"CONFIG", "SET", "save", ""}, {"CONFIG", "GET", "save"},
		{"CONFIG", "SET", "save", "1 2 3"}, {"CONFIG", "SET", "save", " 10 1"},
		{"CONFIG", "SET", "save", "10 +1"}, {"CONFIG", "GET", "save"},
		{"CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 2gb 3 pubsub 0 0 0"},
		{"CONFIG", "GET", "client-output-buffer-limit"},
		{"CONFIG", "SET", "client-output-buffer-limit", "normal 1 2"},
		{"CONFIG", "SET", "client-output-buffer-limit", "normal x 2 3"},
		{"CONFIG", "SET", "client-output-buffer-limit", "replica 1 2 3"},
		{"CONFIG", "GET", "client-output-buffer-limit"},
		{"CONFIG", "SET", "latency-tracking-info-percentiles", "99.90 50.0 1e1"},
		{"CONFIG", "GET", "latency-tracking-info-percentiles"},
		{"CONFIG", "SET", "latency-tracking-info-percentiles", "101"},
		{"CONFIG", "SET", "latency-tracking-info-percentiles", "x"},
		{"CONFIG", "SET", "oom-score-adj-values", "1 2"},
		{"CONFIG", "SET", "oom-score-adj-values", "1 2 3000"},
		{"CONFIG", "SET", "oom-score-adj-values", "300 200 100"},
		{"CONFIG", "GET", "oom-score-adj-values"},
		{"CONFIG", "SET", "shutdown-on-sigint", "now save force"},
		{"CONFIG", "GET", "shutdown-on-sigint"},
		{"CONFIG", "SET", "shutdown-on-sigterm", "default save"},
		{"CONFIG", "GET", "shutdown-on-sigterm"},
		{"CONFIG", "SET", "notify-keyspace-events", ""},
		{"CONFIG", "GET", "notify-keyspace-events"},
	} {
		p.Do(c...)
		n++
	}
	t.Logf("%d fixed CONFIG cases compared", n)
}

// svComparable lists the parameters whose CONFIG GET can be compared with
// a redis-server started by servertest: those both have, minus the ones
// its command line sets or that depend on the process.
func svComparable(t *testing.T, r *servertest.Conn) []string {
	v := servertest.MustParse(t, r.Do("CONFIG", "GET", "*"))
	theirs := map[string]bool{}
	for i := 0; i+1 < len(v.Items); i += 2 {
		theirs[v.Items[i].Str] = true
	}
	skip := map[string]bool{
		"bind": true, "port": true, "dir": true, "save": true, "appendonly": true, "daemonize": true,
		"loglevel": true, "logfile": true, "pidfile": true, "maxclients": true, "unixsocketperm": true,
	}
	var names []string
	for _, p := range config.Params() {
		for _, n := range []string{p.Name, p.Alias} {
			if n != "" && theirs[n] && !skip[n] {
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return names
}

// TestConfigDiffDefaults compares CONFIG GET of every parameter Abacus and
// redis-server 7.0 both have, on fresh servers.
func TestConfigDiffDefaults(t *testing.T) {
	p, _ := svDiffPrivate(t, nil)
	names := svComparable(t, p.R)
	if len(names) < 100 {
		t.Fatalf("only %d comparable parameters", len(names))
	}
	for _, n := range names {
		p.Do("CONFIG", "GET", n)
	}
	t.Logf("%d parameters compared", len(names))
}

// TestConfigDiffRandom sends random CONFIG SET commands (one to three
// pairs, valid and invalid values) each followed by CONFIG GET of the
// names involved, to both servers.
func TestConfigDiffRandom(t *testing.T) {
	p, _ := svDiffPrivate(t, nil)
	rng := rand.New(rand.NewPCG(7, 11))
	// Parameters whose CONFIG SET behaves the same in both (port and bind
	// are immutable here; requirepass would lock the test out; appendonly
	// and oom-score-adj act on the process; tls and cluster differ).
	skip := map[string]bool{"port": true, "bind": true, "requirepass": true, "appendonly": true,
		"oom-score-adj": true, "tls-port": true, "maxclients": true, "proc-title-template": true,
		"masterauth": true, "masteruser": true, "notify-keyspace-events": true, "loglevel": true}
	var names []string
	for _, n := range svComparable(t, p.R) {
		if !skip[n] {
			names = append(names, n)
		}
	}
	values := []string{"0", "1", "-1", "5", "100", "65536", "2147483647", "2147483648", "-2147483649",
		"9223372036854775807", "-9223372036854775808", "18446744073709551615", "abc", "", "yes", "no", "YES",
		"1k", "1kb", "2mb", "3gb", "1.5", "+1", "01", "10%", "50%", "101%", "always", "everysec", "local",
		"allkeys-lru", "volatile-ttl", "noeviction", "disabled", "swapdb", "resetchannels", "clients",
		"default", "save now", "nosave force", "10 1", "10 1 20", "60 10000 300 10", "normal 0 0 0",
		"pubsub 1mb 2mb 3", "replica 1 1 x", "1 2 3", "50 99", "0 200 800", "-2001 0 0", "ignore", "panic"}
	n := 0
	for i := 0; i < 2000; i++ {
		args := []string{"CONFIG", "SET"}
		var get []string
		for k := rng.IntN(3); k >= 0; k-- {
			name := names[rng.IntN(len(names))]
			if rng.IntN(4) == 0 {
				name = strings.ToUpper(name)
			}
			args = append(args, name, values[rng.IntN(len(values))])
			get = append(get, name)
		}
		p.Do(args...)
		n++
		// Redis answers several names in its hash table's order: ask one
		// at a time.
		for _, g := range get {
			p.Do("CONFIG", "GET", g)
			n++
		}
	}
	t.Logf("%d random CONFIG commands compared", n)
}

// TestConfigGetPatterns checks CONFIG GET with patterns against
// redis-server: the same pairs (Redis orders them by its hash table).
func TestConfigGetPatterns(t *testing.T) {
	r := servertest.PrivateRedis(t)
	inst := servertest.Start(t)
	a, rc := inst.Raw(t), servertest.Dial(t, r.Addr)
	pairs := func(c *servertest.Conn, args ...string) []string {
		v := servertest.MustParse(t, c.Do(args...))
		var out []string
		for i := 0; i+1 < len(v.Items); i += 2 {
			out = append(out, v.Items[i].Str+"="+v.Items[i+1].Str)
		}
		sort.Strings(out)
		return out
	}
	for _, args := range [][]string{
		{"hash-max-*"}, {"HASH-MAX-*-VALUE"}, {"*max-*-entries*"}, {"h?"}, {"[hp]z"}, {"maxmemory*"},
		{"slowlog*", "latency*"}, {"hz", "maxmemory", "hz"}, {"lua-time-limit", "busy-*"}, {"zset-*", "*ziplist*"},
		{"repl-*"}, {"lazyfree*"}, {"*fsync*"}, {"client-*-limit"}, {"x*"},
	} {
		got, want := pairs(a, append([]string{"CONFIG", "GET"}, args...)...), pairs(rc, append([]string{"CONFIG", "GET"}, args...)...)
		// Parameters Redis has and Abacus does not (and set-max-listpack-*
		// from Redis 7.2) are left out of the comparison.
		ours := map[string]bool{}
		for _, p := range config.Params() {
			ours[p.Name], ours[p.Alias] = true, true
		}
		filter := func(in []string) []string {
			var out []string
			for _, s := range in {
				name, _, _ := strings.Cut(s, "=")
				if ours[name] && !strings.HasPrefix(name, "set-max-listpack") {
					out = append(out, s)
				}
			}
			return out
		}
		if g, w := strings.Join(filter(got), " "), strings.Join(filter(want), " "); g != w {
			t.Errorf("CONFIG GET %v:\n abacus %s\n  redis %s", args, g, w)
		}
	}
}

// TestConfigGoRedis uses go-redis's CONFIG calls and checks that changes
// apply while the server runs.
func TestConfigGoRedis(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Client(t)
	ctx := servertest.Ctx
	got, err := c.ConfigGet(ctx, "maxmemory*").Result()
	if err != nil || got["maxmemory"] != "0" || got["maxmemory-policy"] != "noeviction" || got["maxmemory-samples"] != "5" {
		t.Fatalf("ConfigGet: %v %v", got, err)
	}
	if err := c.ConfigSet(ctx, "hz", "50").Err(); err != nil {
		t.Fatal(err)
	}
	if v := c.ConfigGet(ctx, "hz").Val()["hz"]; v != "50" {
		t.Fatalf("hz %q", v)
	}
	if s := c.Info(ctx, "server").Val(); !strings.Contains(s, "\r\nhz:50\r\n") || !strings.Contains(s, "configured_hz:50") {
		t.Fatalf("INFO does not show hz 50:\n%s", s)
	}
	err = c.ConfigSet(ctx, "hz", "x").Err()
	if err == nil || err.Error() != "ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer" {
		t.Fatalf("bad hz: %v", err)
	}
	err = c.ConfigRewrite(ctx).Err()
	if err == nil || err.Error() != "ERR The server is running without a config file" {
		t.Fatalf("rewrite: %v", err)
	}
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	// maxclients applies to the next connection.
	if err := c.ConfigSet(ctx, "maxclients", "1").Err(); err != nil {
		t.Fatal(err)
	}
	raw := inst.Raw(t)
	if r, err := raw.ReadErr(5 * time.Second); err != nil || r != "-ERR max number of clients reached\r\n" {
		t.Fatalf("second client: %q %v", r, err)
	}
	if err := c.ConfigSet(ctx, "maxclients", "10000").Err(); err != nil {
		t.Fatal(err)
	}

	// requirepass: clients already connected stay authenticated, new ones
	// must AUTH, as in Redis.
	if err := c.ConfigSet(ctx, "requirepass", "s3cret").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("existing client after requirepass: %v", err)
	}
	fresh := inst.Raw(t)
	if r := fresh.Do("PING"); r != "-NOAUTH Authentication required.\r\n" {
		t.Fatalf("new client: %q", r)
	}
	if r := fresh.Do("AUTH", "s3cret"); r != "+OK\r\n" {
		t.Fatalf("auth: %q", r)
	}
	if err := c.ConfigSet(ctx, "requirepass", "").Err(); err != nil {
		t.Fatal(err)
	}
	if r := inst.Raw(t).Do("PING"); r != "+PONG\r\n" {
		t.Fatalf("after clearing requirepass: %q", r)
	}
}

// TestConfigRaw checks CONFIG replies in RESP2 and RESP3 shapes.
func TestConfigRaw(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	if r := c.Do("CONFIG", "GET", "hz", "timeout"); r != "*4\r\n$2\r\nhz\r\n$2\r\n10\r\n$7\r\ntimeout\r\n$1\r\n0\r\n" {
		t.Fatalf("RESP2 %q", r)
	}
	c.Do("HELLO", "3")
	if r := c.Do("CONFIG", "GET", "hz"); r != "%1\r\n$2\r\nhz\r\n$2\r\n10\r\n" {
		t.Fatalf("RESP3 %q", r)
	}
	if r := c.Do("CONFIG", "GET", "nope"); r != "%0\r\n" {
		t.Fatalf("RESP3 empty %q", r)
	}
	help := servertest.MustParse(t, c.Do("CONFIG", "HELP"))
	if len(help.Items) < 6 || !strings.HasPrefix(help.Items[0].Str, "CONFIG <subcommand>") || help.Items[len(help.Items)-2].Str != "HELP" {
		t.Fatalf("help %v", help.Strings())
	}
	if r := c.Do("CONFIG", "SET", "dir", "/tmp"); r != "-ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config\r\n" {
		t.Fatalf("protected %q", r)
	}

	local := servertest.Start(t, servertest.WithConfig("enable-protected-configs", "local"))
	dir := t.TempDir()
	lc := local.Raw(t)
	if r := lc.Do("CONFIG", "SET", "dir", dir, "dbfilename", "x.rdb"); r != "+OK\r\n" {
		t.Fatalf("local protected set %q", r)
	}
	if r := lc.Do("CONFIG", "GET", "dir"); !strings.Contains(r, dir) {
		t.Fatalf("dir %q", r)
	}
	if r := lc.Do("CONFIG", "SET", "dir", filepath.Join(dir, "nope")); r != "-ERR CONFIG SET failed (possibly related to argument 'dir') - No such file or directory\r\n" {
		t.Fatalf("missing dir %q", r)
	}
}

// TestConfigResetStat checks that CONFIG RESETSTAT clears the counters of
// INFO stats, commandstats and errorstats.
func TestConfigResetStat(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	c.Do("SET", "a", "1")
	c.Do("GET", "a")
	c.Do("GET", "nope")
	c.Do("NOSUCHCOMMAND")
	c.Do("CONFIG", "SET", "hz", "x")
	_, f := svInfoFields(t, servertest.MustParse(t, c.Do("INFO", "all")).Str)
	if svMustInt(t, f["stats"]["keyspace_hits"]) != 1 || svMustInt(t, f["stats"]["keyspace_misses"]) != 1 ||
		svMustInt(t, f["stats"]["total_error_replies"]) != 2 || f["errorstats"]["errorstat_ERR"] != "count=2" ||
		!strings.HasPrefix(f["commandstats"]["cmdstat_get"], "calls=2,") ||
		!strings.HasSuffix(f["commandstats"]["cmdstat_config|set"], "rejected_calls=0,failed_calls=1") {
		t.Fatalf("before reset: %v %v %v", f["stats"], f["errorstats"], f["commandstats"])
	}
	if r := c.Do("CONFIG", "RESETSTAT"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	_, f = svInfoFields(t, servertest.MustParse(t, c.Do("INFO", "all")).Str)
	if f["stats"]["keyspace_hits"] != "0" || f["stats"]["total_error_replies"] != "0" || len(f["errorstats"]) != 0 ||
		f["stats"]["total_commands_processed"] != "1" || f["persistence"]["rdb_changes_since_last_save"] != "1" {
		t.Fatalf("after reset: %v %v", f["stats"], f["errorstats"])
	}
	// As in Redis, a command is counted once it has run: RESETSTAT itself
	// is the only one counted since the reset.
	if len(f["commandstats"]) != 1 || !strings.HasPrefix(f["commandstats"]["cmdstat_config|resetstat"], "calls=1,") {
		t.Fatalf("commandstats after reset: %v", f["commandstats"])
	}
}

// TestConfigRewriteCommand runs CONFIG REWRITE on a server started from a
// file and reads the file back.
func TestConfigRewriteCommand(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "abacus.conf")
	if err := os.WriteFile(path, []byte("# keep me\nhz 15\n\nmaxmemory 1mb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inst := servertest.Start(t)
	inst.Srv.Lock()
	if err := inst.Srv.Cfg.Load(config.Args{File: path}, nil); err != nil {
		t.Fatal(err)
	}
	inst.Srv.Unlock()
	c := inst.Client(t)
	ctx := servertest.Ctx
	if err := c.ConfigSet(ctx, "hz", "20").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigSet(ctx, "slowlog-max-len", "1000").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigRewrite(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	cwd, _ := os.Getwd()
	want := "# keep me\nhz 20\n\nmaxmemory 1mb\n\n# Generated by CONFIG REWRITE\n" + `dir "` + cwd + `"` +
		"\nslowlog-max-len 1000\nsave 3600 1\nsave 300 100\nsave 60 10000\n"
	if string(data) != want {
		t.Fatalf("rewritten:\n%s\nwant:\n%s", data, want)
	}
	if !strings.Contains(inst.Logs.String(), "CONFIG REWRITE executed with success.") {
		t.Errorf("no log line: %s", inst.Logs.String())
	}
	_, f := svInfoFields(t, c.Info(ctx, "server").Val())
	if f["server"]["config_file"] != path {
		t.Errorf("config_file %q", f["server"]["config_file"])
	}

	// A directory that cannot be written: the error names the reason.
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	if os.Getuid() != 0 {
		err := c.ConfigRewrite(ctx).Err()
		if err == nil || err.Error() != "ERR Rewriting config file: Permission denied" {
			t.Fatalf("read-only dir: %v", err)
		}
	}
}

// TestConfigRewriteAgainstRedis starts redis-server and Abacus from the
// same file, applies the same CONFIG SET, rewrites both and compares the
// files: identical up to the lines Redis appends, and the same appended
// lines apart from their order and the options of redis-server's command
// line and of features Abacus does not have.
func TestConfigRewriteAgainstRedis(t *testing.T) {
	path := testenv.NeedRedis(t)
	dir := t.TempDir()
	base := "# header comment\n\nsave \"\"\nappendonly no\nhz 15\n# between\n   hz 16\nmaxmemory 1gb\n" +
		"hash-max-ziplist-entries 100\n\n\n# end\nlist-max-ziplist-size 5\n"
	rpath, apath := filepath.Join(dir, "redis.conf"), filepath.Join(dir, "abacus.conf")
	for _, p := range []string{rpath, apath} {
		if err := os.WriteFile(p, []byte(base), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cmd := exec.Command(path, rpath, "--port", port, "--bind", "127.0.0.1", "--dir", dir, "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var rc *servertest.Conn
	for i := 0; i < 250; i++ {
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			rc = servertest.Dial(t, "127.0.0.1:"+port)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if rc == nil {
		t.Fatal("redis-server did not start")
	}
	inst := servertest.Start(t)
	inst.Srv.Lock()
	if err := inst.Srv.Cfg.Load(config.Args{File: apath}, nil); err != nil {
		t.Fatal(err)
	}
	inst.Srv.Unlock()
	ac := inst.Raw(t)
	for _, c := range [][]string{
		{"CONFIG", "SET", "maxmemory", "100mb", "hz", "20", "timeout", "30"},
		{"CONFIG", "SET", "save", "100 10 200 20"},
		{"CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 512kb 60"},
		{"CONFIG", "SET", "notify-keyspace-events", "Kx", "maxmemory-policy", "volatile-lru"},
		{"CONFIG", "SET", "slowlog-max-len", "500", "list-max-listpack-size", "-2"},
		{"CONFIG", "REWRITE"},
	} {
		if a, r := ac.Do(c...), rc.Do(c...); a != "+OK\r\n" || r != "+OK\r\n" {
			t.Fatalf("%v: abacus %q redis %q", c, a, r)
		}
	}
	ours, _ := os.ReadFile(apath)
	theirs, _ := os.ReadFile(rpath)
	const sig = "# Generated by CONFIG REWRITE\n"
	oHead, oTail, _ := strings.Cut(string(ours), sig)
	rHead, rTail, _ := strings.Cut(string(theirs), sig)
	if oHead != rHead {
		t.Errorf("rewritten files differ before the appended lines:\n abacus:\n%s\n redis:\n%s", oHead, rHead)
	}
	lines := func(s string, drop ...string) []string {
		var out []string
	next:
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			for _, d := range drop {
				if strings.HasPrefix(l, d) {
					continue next
				}
			}
			out = append(out, l)
		}
		sort.Strings(out)
		return out
	}
	// Redis also writes its command line's options, its ACL user and a
	// float-formatting artefact of latency-tracking-info-percentiles.
	drop := []string{"port ", "bind ", "dir ", "loglevel ", "user ", "latency-tracking-info-percentiles "}
	if o, r := lines(oTail, drop...), lines(rTail, drop...); strings.Join(o, "|") != strings.Join(r, "|") {
		t.Errorf("appended lines differ:\n abacus %q\n  redis %q", o, r)
	}
	if !strings.Contains(oTail, `dir "`) {
		t.Errorf("abacus did not write dir:\n%s", ours)
	}
}
