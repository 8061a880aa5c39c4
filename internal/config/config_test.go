package config

import (
	"errors"
	"strings"
	"testing"
)

func TestDefaultsParse(t *testing.T) {
	c := New()
	for _, p := range Params() {
		if got := c.Get(p); got != DefaultValue(p) {
			t.Errorf("%s: %q, default %q", p.Name, got, DefaultValue(p))
		}
	}
	if c.Int(Hz) != 10 || c.Int(Port) != 6379 || !c.Bool(ProtectedMode) || c.Str(AppendFsync) != "everysec" {
		t.Fatalf("unexpected defaults: hz %d port %d protected %v fsync %q", c.Int(Hz), c.Int(Port), c.Bool(ProtectedMode), c.Str(AppendFsync))
	}
}

// TestParseErrors checks values and Redis's reasons, parameter by kind.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, value, want, err string
	}{
		{"hz", "15", "15", ""},
		{"hz", "1000", "500", ""}, // clamped as Redis does
		{"hz", "0", "1", ""},
		{"hz", "-5", "", "argument must be between 0 and 2147483647 inclusive"},
		{"hz", "abc", "", "argument couldn't be parsed into an integer"},
		{"hz", "+5", "", "argument couldn't be parsed into an integer"},
		{"hz", "05", "", "argument couldn't be parsed into an integer"},
		{"hz", "", "", "argument couldn't be parsed into an integer"},
		{"hz", "5.0", "", "argument couldn't be parsed into an integer"},
		{"hz", "1k", "", "argument couldn't be parsed into an integer"},
		{"maxclients", "0", "", "argument must be between 1 and 4294967295 inclusive"},
		{"list-max-listpack-size", "99999999999", "", "argument must be between -2147483648 and 2147483647 inclusive"},
		{"slowlog-log-slower-than", "-2", "", "argument must be between -1 and 9223372036854775807 inclusive"},
		{"maxmemory", "1K", "1000", ""},
		{"maxmemory", "1KB", "1024", ""},
		{"maxmemory", "1b", "1", ""},
		{"maxmemory", "3mb", "3145728", ""},
		{"maxmemory", "2G", "2000000000", ""},
		{"maxmemory", "", "0", ""},
		{"maxmemory", "k", "0", ""},
		{"maxmemory", "18446744073709551615", "18446744073709551615", ""},
		{"maxmemory", "99999999999999999999", "18446744073709551615", ""},
		{"maxmemory", "9999999999999gb", "1413189099967217664", ""}, // wraps like C
		{"maxmemory", "-1", "", "argument must be a memory value"},
		{"maxmemory", "1.5gb", "", "argument must be a memory value"},
		{"maxmemory", "1TB", "", "argument must be a memory value"},
		{"maxmemory", " 5", "", "argument must be a memory value"},
		{"proto-max-bulk-len", "100", "", "argument must be between 1048576 and 9223372036854775807 inclusive"},
		{"proto-max-bulk-len", "99999999999999999999", "", "argument must be between 1048576 and 9223372036854775807 inclusive"},
		{"proto-max-bulk-len", "1gb", "1073741824", ""},
		{"hash-max-listpack-value", "1k", "1000", ""},
		{"hash-max-listpack-value", "-1", "", "argument must be a memory value"},
		{"zset-max-listpack-entries", "1k", "", "argument couldn't be parsed into an integer"},
		{"maxmemory-clients", "10%", "10%", ""},
		{"maxmemory-clients", "0%", "0", ""},
		{"maxmemory-clients", "101%", "", "percentage argument must be less or equal to 100"},
		{"maxmemory-clients", "-1%", "", "argument must be a memory or percent value"},
		{"maxmemory-clients", "%", "", "argument must be a memory or percent value"},
		{"maxmemory-clients", "1mb", "1048576", ""},
		{"appendonly", "YES", "yes", ""},
		{"appendonly", "maybe", "", "argument must be 'yes' or 'no'"},
		{"appendfsync", "ALWAYS", "always", ""},
		{"appendfsync", "x", "", "argument(s) must be one of the following: everysec, always, no"},
		{"loglevel", "nothing", "", "argument(s) must be one of the following: debug, verbose, notice, warning"},
		{"maxmemory-policy", "bad", "", "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"},
		{"save", "10 20 30 40", "10 20 30 40", ""},
		{"save", "", "", ""},
		{"save", "10 +1", "10 1", ""},
		{"save", "abc", "", "Invalid save parameters"},
		{"save", "1 2 3", "", "Invalid save parameters"},
		{"save", "0 1", "", "Invalid save parameters"},
		{"save", " 10 1", "", "Invalid save parameters"}, // CONFIG SET splits on single spaces
		{"save", "10 -1", "", "Invalid save parameters"},
		{"save", `"10 1`, "", "Invalid save parameters"},
		{"notify-keyspace-events", "KEA", "AKE", ""},
		{"notify-keyspace-events", "Kgx", "gxK", ""},
		{"notify-keyspace-events", "A", "A", ""},
		{"notify-keyspace-events", "KEA$", "AKE", ""},
		{"notify-keyspace-events", "", "", ""},
		{"notify-keyspace-events", "q", "", "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."},
		{"client-output-buffer-limit", "normal 1 2 3", "normal 1 2 3 slave 268435456 67108864 60 pubsub 33554432 8388608 60", ""},
		{"client-output-buffer-limit", "normal 1mb 2gb 3 pubsub 0 0 0", "normal 1048576 2147483648 3 slave 268435456 67108864 60 pubsub 0 0 0", ""},
		{"client-output-buffer-limit", "replica 1 2 3", "normal 0 0 0 slave 1 2 3 pubsub 33554432 8388608 60", ""},
		{"client-output-buffer-limit", "foo 1 2 3", "", "Invalid client class specified in buffer limit configuration."},
		{"client-output-buffer-limit", "normal 1 2", "", "Wrong number of arguments in buffer limit configuration."},
		{"client-output-buffer-limit", "normal x 2 3", "", "Error in hard, soft or soft_seconds setting in buffer limit configuration."},
		{"latency-tracking-info-percentiles", "99.90 50.0 1e1", "99.9 50 10", ""},
		{"latency-tracking-info-percentiles", "x", "", "Invalid latency-tracking-info-percentiles parameters"},
		{"latency-tracking-info-percentiles", "101", "", "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"},
		{"oom-score-adj-values", "300 200 100", "300 200 100", ""},
		{"oom-score-adj-values", "1 2", "", "wrong number of arguments"},
		{"oom-score-adj-values", "1 2 3000", "", "Invalid oom-score-adj-values, elements must be between -2000 and 2000."},
		{"shutdown-on-sigint", "now save force", "save now force", ""},
		{"shutdown-on-sigint", "default save", "save", ""},
		{"shutdown-on-sigint", "bogus", "", "argument(s) must be one of the following: default, save, nosave, now, force"},
		{"dbfilename", "a/b", "", "dbfilename can't be a path, just a filename"},
		{"dir", "/nonexistent-abacus-dir", "", "No such file or directory"},
		{"unixsocketperm", "700", "700", ""},
		{"unixsocketperm", "8", "", "argument couldn't be parsed into an integer"},
		{"daemonize", "no", "no", ""},
	}
	for _, tc := range cases {
		p, ok := Lookup(tc.name)
		if !ok {
			t.Fatalf("no parameter %s", tc.name)
		}
		_, got, err := Parse(p, DefaultValue(p), tc.value)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s %q: error %v, want %q", tc.name, tc.value, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %q: got %q, %v; want %q", tc.name, tc.value, got, err, tc.want)
		}
	}
}

// TestSetManyPrecedence checks which error CONFIG SET reports when several
// pairs are wrong, and that nothing is applied then.
func TestSetManyPrecedence(t *testing.T) {
	cases := []struct {
		pairs []string
		err   string
	}{
		{[]string{"nope", "1"}, "Unknown option or number of arguments for CONFIG SET - 'nope'"},
		{[]string{"HZ", "5", "hz", "6"}, "CONFIG SET failed (possibly related to argument 'hz') - duplicate parameter"},
		{[]string{"HZ", "5", "HZ", "6"}, "CONFIG SET failed (possibly related to argument 'HZ') - duplicate parameter"},
		{[]string{"databases", "4"}, "CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config"},
		{[]string{"dir", "/tmp"}, "CONFIG SET failed (possibly related to argument 'dir') - can't set protected config"},
		{[]string{"hz", "5", "nope", "2"}, "Unknown option or number of arguments for CONFIG SET - 'nope'"},
		{[]string{"nope", "2", "databases", "5"}, "Unknown option or number of arguments for CONFIG SET - 'nope'"},
		{[]string{"databases", "5", "nope", "2"}, "CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config"},
		{[]string{"hz", "abc", "maxmemory", "x"}, "CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer"},
		{[]string{"hz", "5", "port", "x"}, "CONFIG SET failed (possibly related to argument 'port') - can't set immutable config"},
		{[]string{"HZ", "abc"}, "CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer"},
		{[]string{"Hash-Max-Ziplist-Entries", "abc"}, "CONFIG SET failed (possibly related to argument 'hash-max-ziplist-entries') - argument couldn't be parsed into an integer"},
		{[]string{"timeout", "7", "maxmemory", "-1"}, "CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"},
	}
	for _, tc := range cases {
		c := New()
		var pairs [][2]string
		for i := 0; i < len(tc.pairs); i += 2 {
			pairs = append(pairs, [2]string{tc.pairs[i], tc.pairs[i+1]})
		}
		err := c.SetMany(pairs, true)
		if err == nil || err.Error() != tc.err {
			t.Errorf("%v: %v, want %q", tc.pairs, err, tc.err)
		}
		for _, p := range Params() {
			if c.Get(p) != DefaultValue(p) {
				t.Errorf("%v: %s changed to %q although the command failed", tc.pairs, p.Name, c.Get(p))
			}
		}
	}

	c := New()
	var changed []ID
	c.OnChange = func(id ID) { changed = append(changed, id) }
	if err := c.SetMany([][2]string{{"hash-max-ziplist-entries", "5"}, {"hash-max-listpack-entries", "6"}, {"TIMEOUT", "9"}}, false); err != nil {
		t.Fatal(err) // a name and its alias are not duplicates, as in Redis 7.0
	}
	if c.Int(HashMaxListpackEntries) != 6 || c.Int(Timeout) != 9 || len(changed) != 3 {
		t.Fatalf("entries %d timeout %d changes %v", c.Int(HashMaxListpackEntries), c.Int(Timeout), changed)
	}
}

func TestProtectedConfigs(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		setting string
		local   bool
		ok      bool
	}{{"no", true, false}, {"yes", false, true}, {"local", true, true}, {"local", false, false}} {
		c := New()
		if err := c.Set(table[EnableProtectedConfigs], tc.setting); err != nil {
			t.Fatal(err)
		}
		err := c.SetMany([][2]string{{"dir", dir}, {"dbfilename", "x.rdb"}}, tc.local)
		if (err == nil) != tc.ok {
			t.Errorf("enable-protected-configs %s local=%v: %v", tc.setting, tc.local, err)
		}
		if tc.ok && (c.Str(Dir) != dir || c.Str(DBFilename) != "x.rdb") {
			t.Errorf("dir %q dbfilename %q", c.Str(Dir), c.Str(DBFilename))
		}
	}
}

func TestApplyFailureRestores(t *testing.T) {
	c := New()
	// No system lets a process open 4e9 files: the apply step fails and
	// every value of the command, stored before it, is restored.
	err := c.SetMany([][2]string{{"hz", "20"}, {"maxclients", "4000000000"}}, true)
	var se *SetError
	if !errors.As(err, &se) || se.Name != "maxclients" || !strings.HasPrefix(se.Msg, "The operating system is not able to handle the specified number of clients, try with ") {
		t.Skipf("maxclients limit not enforced here: %v", err)
	}
	if c.Int(Hz) != 10 || c.Int(MaxClients) != 10000 {
		t.Fatalf("not restored: hz %d maxclients %d", c.Int(Hz), c.Int(MaxClients))
	}
}

func TestMatching(t *testing.T) {
	c := New()
	names := func(ps []Pair) string {
		var s []string
		for _, p := range ps {
			s = append(s, p.Name+"="+p.Value)
		}
		return strings.Join(s, " ")
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"HZ"}, "HZ=10"},
		{[]string{"hz", "HZ"}, "hz=10 HZ=10"},
		{[]string{"hz", "maxmemory", "hz"}, "hz=10 maxmemory=0"},
		{[]string{"nope"}, ""},
		{[]string{"Hash-max-ziplist-entries"}, "Hash-max-ziplist-entries=512"},
		{[]string{"hash-max-*"}, "hash-max-listpack-entries=512 hash-max-ziplist-entries=512 hash-max-listpack-value=64 hash-max-ziplist-value=64"},
		{[]string{"HASH-MAX-*-VALUE"}, "hash-max-listpack-value=64 hash-max-ziplist-value=64"},
		{[]string{"h?", "hz"}, "hz=10"},
		{[]string{"[pt]ort"}, "port=6379"},
		{[]string{"lua-time-limit", "busy-*"}, "lua-time-limit=5000 busy-reply-threshold=5000"},
	}
	for _, tc := range cases {
		if got := names(c.Matching(tc.args)); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
	}
	all := c.Matching([]string{"*"})
	if len(all) < len(Params()) {
		t.Fatalf("* matched %d of %d", len(all), len(Params()))
	}
}

func TestParseMemoryAndStrtoll(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "10": 10, "1k": 1000, "1kb": 1024, "2MB": 2 << 20, "1g": 1e9, "1Gb": 1 << 30} {
		if got, ok := ParseMemory(in); !ok || got != want {
			t.Errorf("ParseMemory(%q) = %d %v", in, got, ok)
		}
	}
	for _, in := range []string{"-1", "1t", "x", "1.5k", "99999999999gb"} {
		if _, ok := ParseMemory(in); ok {
			t.Errorf("ParseMemory(%q) accepted", in)
		}
	}
	for in, want := range map[string]int64{"": 0, " 12": 12, "+3": 3, "-4": -4, "99999999999999999999": maxInt64} {
		if got, ok := strtoll(in); !ok || got != want {
			t.Errorf("strtoll(%q) = %d %v", in, got, ok)
		}
	}
	for _, in := range []string{"1 ", "x", "1x", "-"} {
		if _, ok := strtoll(in); ok {
			t.Errorf("strtoll(%q) accepted", in)
		}
	}
}

func TestRepr(t *testing.T) {
	for in, want := range map[string]string{
		"":              `""`,
		"a b":           `"a b"`,
		`q"\`:           `"q\"\\"`,
		"\n\r\t\a\b":    `"\n\r\t\a\b"`,
		"\x00\xff~\x7f": `"\x00\xff~\x7f"`,
	} {
		if got := Repr(in); got != want {
			t.Errorf("Repr(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestOutputBufferLimitAccessors(t *testing.T) {
	c := New()
	if err := c.SetMany([][2]string{{"client-output-buffer-limit", "pubsub 1mb 2 3"}}, true); err != nil {
		t.Fatal(err)
	}
	h, s, sec := OutputBufferLimit(c.Str(ClientOutputBufferLimit), "pubsub")
	if h != 1<<20 || s != 2 || sec != 3 {
		t.Fatalf("pubsub %d %d %d", h, s, sec)
	}
	if h, _, _ := OutputBufferLimit(c.Str(ClientOutputBufferLimit), "replica"); h != 268435456 {
		t.Fatalf("replica hard %d", h)
	}
	if got := SaveParams("3600 1 300 100"); len(got) != 2 || got[1] != [2]int64{300, 100} {
		t.Fatalf("SaveParams %v", got)
	}
}
