package commands_test

import (
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// TestRedisCliKeyScans runs redis-cli's --hotkeys, --bigkeys and --memkeys
// against Abacus: they SCAN the keyspace and ask OBJECT FREQ, TYPE, the
// types' length commands and MEMORY USAGE of each key. The hottest keys
// under an LFU policy are the ones read most; the biggest of each type
// is the one with the most elements or bytes.
func TestRedisCliKeyScans(t *testing.T) {
	cli := testenv.Need(t, "redis-cli")
	inst := servertest.Start(t, servertest.WithConfig("enable-debug-command", "yes"))
	c := servertest.Dial(t, inst.Addr)
	for _, cmd := range [][]string{
		{"DEBUG", "POPULATE", "500", "key", "50"},
		{"SET", "big", strings.Repeat("x", 5000)},
		{"RPUSH", "list", "a", "b", "c"}, {"RPUSH", "longlist", "1", "2", "3", "4", "5", "6", "7"},
		{"HSET", "hash", "f1", "v1", "f2", "v2"},
		{"SADD", "set", "1", "2", "3", "4"},
		{"ZADD", "zset", "1", "a", "2", "b"},
		{"XADD", "stream", "*", "a", "1"},
	} {
		if r := c.Do(cmd...); strings.HasPrefix(r, "-") {
			t.Fatalf("%v: %q", cmd, r)
		}
	}
	host, port, _ := net.SplitHostPort(inst.Addr)
	run := func(mode string) string {
		out, err := exec.Command(cli, "-h", host, "-p", port, mode).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %s: %v\n%s", mode, err, out)
		}
		return string(out)
	}

	// Without an LFU policy redis-cli refuses, as with redis-server.
	if out, _ := exec.Command(cli, "-h", host, "-p", port, "--hotkeys").CombinedOutput(); !strings.Contains(string(out), "LFU") {
		t.Errorf("--hotkeys under noeviction:\n%s", out)
	}
	c.Do("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
	read := func(key string, n int) {
		var req []byte
		for range n {
			req = append(req, servertest.Encode("GET", key)...)
		}
		c.Write(req)
		for range n {
			c.Read()
		}
	}
	read("key:7", 1000)
	read("key:9", 30)
	hot := run("--hotkeys")
	counters := regexp.MustCompile(`hot key found with counter: (\d+)\tkeyname: "([^"]+)"`).FindAllStringSubmatch(hot, -1)
	if len(counters) < 2 || counters[0][2] != "key:7" || counters[1][2] != "key:9" {
		t.Fatalf("--hotkeys: want key:7 then key:9 first\n%s", hot)
	}
	c7, _ := strconv.Atoi(counters[0][1])
	c9, _ := strconv.Atoi(counters[1][1])
	if !(c7 > c9 && c9 > 5) {
		t.Errorf("--hotkeys counters %d, %d: want key:7's above key:9's above the initial 5", c7, c9)
	}
	if !strings.Contains(hot, "Sampled 507 keys in the keyspace!") {
		t.Errorf("--hotkeys sampled:\n%s", hot)
	}

	big := run("--bigkeys")
	for _, want := range []string{
		"Sampled 507 keys in the keyspace!",
		`Biggest   list found '"longlist"' has 7 items`,
		`Biggest   hash found '"hash"' has 2 fields`,
		`Biggest string found '"big"' has 5000 bytes`,
		`Biggest stream found '"stream"' has 1 entries`,
		`Biggest    set found '"set"' has 4 members`,
		`Biggest   zset found '"zset"' has 2 members`,
		"501 strings with 30000 bytes (98.82% of keys, avg size 59.88)",
		"2 lists with 10 items (00.39% of keys, avg size 5.00)",
	} {
		if !strings.Contains(big, want) {
			t.Errorf("--bigkeys lacks %q:\n%s", want, big)
		}
	}

	mem := run("--memkeys")
	if !regexp.MustCompile(`Biggest string found '"big"' has \d+ bytes`).MatchString(mem) ||
		!regexp.MustCompile(`501 strings with \d+ bytes`).MatchString(mem) {
		t.Errorf("--memkeys:\n%s", mem)
	}
}
