package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/testenv"
)

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestParseArgs checks the command line is read as redis-server 7 reads
// it: the options become config lines, values quoted.
func TestParseArgs(t *testing.T) {
	cases := []struct {
		argv  []string
		file  bool
		stdin bool
		opts  string
	}{
		{nil, false, false, ""},
		{[]string{"--port", "5"}, false, false, `port "5" `},
		{[]string{"--port", "5", "--foo", "bar", "baz"}, false, false, "port \"5\" \nfoo \"bar\" \"baz\" "},
		{[]string{"--hz"}, false, false, "hz "},
		{[]string{"--save", "--port", "x"}, false, false, "save \"\"\nport \"x\" "},
		{[]string{"--port", "1", "--save"}, false, false, "port \"1\" \nsave \"\""},
		{[]string{"--save", "60 10"}, false, false, `save "60 10" `},
		{[]string{"--hz", "--port", "5"}, false, false, `hz "--port" "5" `},
		{[]string{"--port 6380"}, false, false, "port 6380 "},
		{[]string{"--requirepass", "a\"b c"}, false, false, `requirepass "a\"b c" `},
		{[]string{"abacus.conf", "--hz", "5"}, true, false, `hz "5" `},
		{[]string{"abacus.conf", "--hz", "5", "-"}, true, true, `hz "5" `},
		{[]string{"-", "--hz", "5"}, false, true, `hz "5" `},
		{[]string{"--slowlog-log-slower-than", "-1"}, false, false, `slowlog-log-slower-than "-1" `},
	}
	for _, tc := range cases {
		a, err := ParseArgs(tc.argv)
		if err != nil {
			t.Fatal(err)
		}
		if (a.File != "") != tc.file || a.Stdin != tc.stdin || a.Options != tc.opts {
			t.Errorf("%q: file %q stdin %v options %q; want file %v stdin %v options %q", tc.argv, a.File, a.Stdin, a.Options, tc.file, tc.stdin, tc.opts)
		}
		if tc.file && !filepath.IsAbs(a.File) {
			t.Errorf("%q: file %q not absolute", tc.argv, a.File)
		}
	}
}

// TestLoadErrors checks the fatal error texts and line numbers against
// what redis-server 7.0.15 prints for the same input.
func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	nine := "# my comment\nport 18931\nbind 127.0.0.1\nsave \"\"\ndaemonize no\n\n# another\n\nunknownthing-not\n"
	cases := []struct {
		file, stdin string
		argv        []string
		line        int
		text, msg   string
	}{
		{nine, "", nil, 9, "unknownthing-not", "Bad directive or wrong number of arguments"},
		{"", "", []string{"--port", "5", "--foo", "bar", "baz"}, 3, `foo "bar" "baz"`, "Bad directive or wrong number of arguments"},
		{"", "", []string{"--port", "abc"}, 2, `port "abc"`, "argument couldn't be parsed into an integer"},
		{"", "", []string{"--hz"}, 2, "hz", "wrong number of arguments"},
		{"", "", []string{"--save", "--port", "x"}, 3, `port "x"`, "argument couldn't be parsed into an integer"},
		{"", "", []string{"--port", "7", "foo"}, 2, `port "7" "foo"`, "wrong number of arguments"},
		{"port\n", "", nil, 1, "port", "wrong number of arguments"},
		{"port 1 2\n", "", nil, 1, "port 1 2", "wrong number of arguments"},
		{"appendonly maybe\n", "", nil, 1, "appendonly maybe", "argument must be 'yes' or 'no'"},
		{"port \"abc\n", "", nil, 1, `port "abc`, "Unbalanced quotes in configuration line"},
		{"   hz   abc  \r\n", "", nil, 1, "hz   abc", "argument couldn't be parsed into an integer"},
		{"include\n", "", nil, 1, "include", "Bad directive or wrong number of arguments"},
		{"", "port abc\n", []string{"-"}, 1, "port abc", "argument couldn't be parsed into an integer"},
		{"hz 5\n", "maxmemory x\n", []string{"--hz", "7", "-"}, 2, "maxmemory x", "argument must be a memory value"},
	}
	for i, tc := range cases {
		argv := tc.argv
		if tc.file != "" {
			argv = append([]string{writeFile(t, dir, "c.conf", tc.file)}, argv...)
		}
		a, err := ParseArgs(argv)
		if err != nil {
			t.Fatal(err)
		}
		err = New().Load(a, strings.NewReader(tc.stdin))
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Errorf("case %d: %v, want a FileError", i, err)
			continue
		}
		if fe.Line != tc.line || fe.Text != tc.text || fe.Msg != tc.msg {
			t.Errorf("case %d: line %d %q %q; want %d %q %q", i, fe.Line, fe.Text, fe.Msg, tc.line, tc.text, tc.msg)
		}
	}
	want := "Reading the configuration file, at line 3\n>>> 'foo \"bar\"'\nBad directive or wrong number of arguments"
	if got := (&FileError{3, `foo "bar"`, "Bad directive or wrong number of arguments"}).Error(); got != want {
		t.Errorf("FileError text %q", got)
	}
	if FatalBanner != "*** FATAL CONFIG FILE ERROR (Redis "+RedisVersion+") ***" {
		t.Errorf("banner %q", FatalBanner)
	}
}

func TestLoadMissingFile(t *testing.T) {
	a := Args{File: "/nonexistent/abacus.conf"}
	err := New().Load(a, nil)
	var oe *OpenError
	if !errors.As(err, &oe) || err.Error() != "Fatal error, can't open config file '/nonexistent/abacus.conf': No such file or directory" {
		t.Fatalf("%v", err)
	}
}

func TestLoadFileFeatures(t *testing.T) {
	dir := t.TempDir()
	inc := writeFile(t, dir, "inc.conf", "timeout 30\n# included comment\nmaxmemory 2mb\n")
	writeFile(t, dir, "part-b.conf", "hz 22\n")
	writeFile(t, dir, "part-a.conf", "hz 21\ntcp-keepalive 7\n")
	main := writeFile(t, dir, "main.conf", strings.Join([]string{
		"# comment line",
		"   ",
		"include " + inc,
		"include " + filepath.Join(dir, "part-*.conf"),
		"include " + filepath.Join(dir, "none-*.conf"), // no match: ignored
		`requirepass "pa ss\"word"`,
		`notify-keyspace-events 'KEA'`,
		"hash-max-ziplist-entries 100",
		"HZ 15",
		"save 900 1",
		"save 300 10",
		`client-output-buffer-limit pubsub 64mb 16mb 90`,
		`client-output-buffer-limit "normal 1mb 2mb 3"`,
		"lua-replicate-commands yes", // deprecated: ignored
		"bind 127.0.0.1 ::1",
		"appendonly YES",
		"",
	}, "\n"))
	a, err := ParseArgs([]string{main, "--maxmemory-policy", "allkeys-lru", "--save", "60", "5"})
	if err != nil {
		t.Fatal(err)
	}
	c := New()
	if err := c.Load(a, nil); err != nil {
		t.Fatal(err)
	}
	want := map[ID]string{
		Timeout:                 "30",
		MaxMemory:               "2097152",
		TCPKeepalive:            "7",
		Hz:                      "15",
		RequirePass:             `pa ss"word`,
		NotifyKeyspaceEvents:    "AKE",
		HashMaxListpackEntries:  "100",
		Save:                    "900 1 300 10 60 5",
		ClientOutputBufferLimit: "normal 1048576 2097152 3 slave 268435456 67108864 60 pubsub 67108864 16777216 90",
		Bind:                    "127.0.0.1 ::1",
		AppendOnly:              "yes",
		MaxMemoryPolicy:         "allkeys-lru",
	}
	for id, v := range want {
		if got := c.Str(id); got != v {
			t.Errorf("%s = %q, want %q", table[id].Name, got, v)
		}
	}
	if c.File != main {
		t.Errorf("File %q", c.File)
	}

	// save "" clears every save point, wherever it comes.
	c = New()
	if err := c.LoadString("save 900 1\nsave \"\"\n"); err != nil || c.Str(Save) != "" {
		t.Fatalf("save after clear: %q %v", c.Str(Save), err)
	}
	c = New()
	if err := c.LoadString("save \"\"\nsave 10 1\n"); err != nil || c.Str(Save) != "10 1" {
		t.Fatalf("save then point: %q %v", c.Str(Save), err)
	}

	// Errors inside an included file give the included file's line.
	bad := writeFile(t, dir, "bad.conf", "\n\nbogus 1\n")
	err = New().LoadString("hz 5\ninclude " + bad + "\n")
	var fe *FileError
	if !errors.As(err, &fe) || fe.Line != 3 || fe.Text != "bogus 1" {
		t.Fatalf("included error: %v", err)
	}
	err = New().LoadString("include /nonexistent/x.conf\n")
	var oe *OpenError
	if !errors.As(err, &oe) {
		t.Fatalf("missing include: %v", err)
	}
	loop := filepath.Join(dir, "loop.conf")
	writeFile(t, dir, "loop.conf", "include "+loop+"\n")
	if err := New().LoadString("include " + loop + "\n"); err == nil || !strings.Contains(err.Error(), "too deep") {
		t.Fatalf("include loop: %v", err)
	}
}

// TestLoadAgainstRedisServer checks that a config file redis-server 7.0
// accepts loads here with the same values (for the parameters both have).
func TestLoadAgainstRedisServer(t *testing.T) {
	text := `
# a typical redis.conf excerpt
bind 127.0.0.1 -::1
protected-mode yes
port 6380
tcp-backlog 511
timeout 0
tcp-keepalive 300
daemonize no
pidfile ""
loglevel notice
logfile ""
databases 16
always-show-logo no
set-proc-title yes
save 3600 1 300 100 60 10000
stop-writes-on-bgsave-error yes
rdbcompression yes
rdbchecksum yes
dbfilename dump.rdb
rdb-del-sync-files no
replica-serve-stale-data yes
replica-read-only yes
repl-diskless-sync yes
repl-diskless-sync-delay 5
repl-diskless-load disabled
maxmemory 512mb
maxmemory-policy allkeys-lru
maxmemory-samples 5
lazyfree-lazy-eviction no
appendonly no
appendfilename "appendonly.aof"
appenddirname "appendonlydir"
appendfsync everysec
no-appendfsync-on-rewrite no
auto-aof-rewrite-percentage 100
auto-aof-rewrite-min-size 64mb
aof-load-truncated yes
aof-use-rdb-preamble yes
lua-time-limit 5000
slowlog-log-slower-than 10000
slowlog-max-len 128
latency-monitor-threshold 0
notify-keyspace-events ""
hash-max-ziplist-entries 512
hash-max-ziplist-value 64
list-max-ziplist-size -2
list-compress-depth 0
set-max-intset-entries 512
zset-max-ziplist-entries 128
zset-max-ziplist-value 64
hll-sparse-max-bytes 3000
stream-node-max-bytes 4kb
stream-node-max-entries 100
activerehashing yes
client-output-buffer-limit normal 0 0 0
client-output-buffer-limit replica 256mb 64mb 60
client-output-buffer-limit pubsub 32mb 8mb 60
hz 10
dynamic-hz yes
aof-rewrite-incremental-fsync yes
rdb-save-incremental-fsync yes
jemalloc-bg-thread yes
`
	c := New()
	if err := c.LoadString(text); err != nil {
		t.Fatal(err)
	}
	if c.Int(Port) != 6380 || c.Int(MaxMemory) != 512<<20 || c.Str(StreamNodeMaxBytes) != "4096" || c.Str(PidFile) != "" {
		t.Fatalf("port %d maxmemory %d stream bytes %s", c.Int(Port), c.Int(MaxMemory), c.Str(StreamNodeMaxBytes))
	}
	if c.Str(ClientOutputBufferLimit) != DefaultValue(table[ClientOutputBufferLimit]) {
		t.Fatalf("obl %q", c.Str(ClientOutputBufferLimit))
	}
}

// TestLoadShippedRedisConf loads the redis.conf that Debian ships with
// redis-server (when it is installed): every directive it sets must be
// known here. Its dir is pointed at a temporary directory.
func TestLoadShippedRedisConf(t *testing.T) {
	data, err := os.ReadFile("/etc/redis/redis.conf")
	if err != nil {
		testenv.Skip(t, "no /etc/redis/redis.conf (Debian's redis-server package installs it)")
	}
	dir := t.TempDir()
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "dir ") {
			l = "dir " + dir
		}
		lines = append(lines, l)
	}
	c := New()
	if err := c.LoadString(strings.Join(lines, "\n")); err != nil {
		t.Fatal(err)
	}
	if c.Str(Dir) != dir {
		t.Fatalf("dir %q", c.Str(Dir))
	}
}
