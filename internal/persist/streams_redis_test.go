package persist_test

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// Streams move between redis-server 7.0 and Abacus through dump.rdb both
// ways, with consumer groups, consumers and PELs (deleted entries
// pending, tombstones, trimmed nodes, an empty stream with a group): the
// loaded side's XINFO STREAM FULL is byte for byte the writer's.

// fillStreams runs the same commands on either server; times are
// explicit so the PELs are identical.
func fillStreams(t *testing.T, c *servertest.Conn) {
	t.Helper()
	do := func(args ...string) {
		if r := c.Do(args...); strings.HasPrefix(r, "-") {
			t.Fatalf("%v: %s", args, r)
		}
	}
	do("CONFIG", "SET", "stream-node-max-entries", "7")
	for i := 1; i <= 60; i++ {
		args := []string{"XADD", "s", strconv.Itoa(i) + "-" + strconv.Itoa(i%3), "f1", strconv.Itoa(i * 1000), "f2", "v"}
		if i%9 == 0 {
			args = append(args, "other", strings.Repeat("x", i))
		}
		do(args...)
	}
	do("XDEL", "s", "5-2", "13-1", "14-2", "100-0")
	do("XTRIM", "s", "MAXLEN", "~", "50")
	do("XGROUP", "CREATE", "s", "g1", "0")
	do("XGROUP", "CREATE", "s", "g2", "$", "ENTRIESREAD", "60")
	do("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "10", "STREAMS", "s", ">")
	do("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "5", "STREAMS", "s", ">")
	do("XGROUP", "CREATECONSUMER", "s", "g1", "carol")
	do("XCLAIM", "s", "g1", "bob", "0", "22-1", "34-1", "TIME", "1700000000000", "RETRYCOUNT", "3")
	do("XCLAIM", "s", "g1", "alice", "0", "38-2", "FORCE", "JUSTID", "TIME", "1700000000001", "RETRYCOUNT", "1")
	// Every remaining delivery gets a fixed time too.
	r := c.Do("XPENDING", "s", "g1", "-", "+", "100")
	for _, line := range strings.Split(r, "\r\n") {
		if strings.Contains(line, "-") && !strings.HasPrefix(line, "$") && !strings.HasPrefix(line, "*") {
			do("XCLAIM", "s", "g1", "alice", "0", line, "TIME", "1700000000002", "JUSTID")
		}
	}
	do("XDEL", "s", "22-1")
	do("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM")
	do("XADD", "t", "5-5", "a", "1")
	do("XSETID", "t", "9-0", "ENTRIESADDED", "7", "MAXDELETEDID", "6-0")
}

func streamState(t *testing.T, c *servertest.Conn) string {
	t.Helper()
	var out []string
	for _, k := range []string{"s", "e", "t"} {
		out = append(out, c.Do("XINFO", "STREAM", k, "FULL", "COUNT", "0"), c.Do("XINFO", "GROUPS", k), c.Do("XRANGE", k, "-", "+"))
	}
	return absTimeMask(strings.Join(out, "\n"))
}

// absTimeMask hides the consumers' seen times (the clock's), keeping the
// delivery times the test fixed.
func absTimeMask(s string) string {
	lines := strings.Split(s, "\r\n")
	for i := 1; i < len(lines); i++ {
		if lines[i-1] == "seen-time" {
			lines[i] = ":SEEN"
		}
	}
	return strings.Join(lines, "\r\n")
}

func TestStreamsRDBFromRedis(t *testing.T) {
	testenv.NeedRedis(t)
	dir := t.TempDir()
	r, err := servertest.StartRedis("--dir", dir, "--dbfilename", "dump.rdb")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	rc := servertest.Dial(t, r.Addr)
	fillStreams(t, rc)
	want := streamState(t, rc)
	if got := rc.Do("SAVE"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	inst := start(t, dir)
	inst.Srv.Lock()
	err = inst.Dur.LoadRDB()
	inst.Srv.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	got := streamState(t, inst.Raw(t))
	if got != want {
		t.Fatalf("after loading redis-server's file\n abacus: %q\n  redis: %q", got, want)
	}
}

func TestStreamsRDBToRedis(t *testing.T) {
	testenv.NeedRedis(t)
	dir := t.TempDir()
	inst := start(t, dir)
	ac := inst.Raw(t)
	fillStreams(t, ac)
	want := streamState(t, ac)
	if got := ac.Do("SAVE"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	path := filepath.Join(dir, "dump.rdb")
	if chk := testenv.Have(t, "redis-check-rdb"); chk != "" {
		out, err := exec.Command(chk, path).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "RDB looks OK!") {
			t.Fatalf("redis-check-rdb: %v\n%s", err, out)
		}
	}
	r, err := servertest.StartRedis("--dir", dir, "--dbfilename", "dump.rdb", "--sanitize-dump-payload", "yes")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	got := streamState(t, servertest.Dial(t, r.Addr))
	if got != want {
		t.Fatalf("redis-server loading Abacus's file\n  redis: %q\n abacus: %q", got, want)
	}
}
