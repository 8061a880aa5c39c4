package durability_test

import (
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/enginetest"
)

// Streams replay from the AOF through their effects: generated ids,
// approximate trims with LIMIT (written as exact ones), deliveries as
// XCLAIM, NOACK reads as XGROUP SETID, claims and deleted pending
// entries. The reloaded stream is the same but for the consumers' seen
// times, which the replay's clock sets.
func TestStreamsReplayFromAOF(t *testing.T) {
	cfg := config.New()
	for _, kv := range [][2]string{{"dir", t.TempDir()}, {"appendonly", "yes"}, {"stream-node-max-entries", "4"}} {
		p, _ := config.Lookup(kv[0])
		if err := cfg.Set(p, kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	e1, s1, d1 := loadEnv(cfg)
	if err := d1.StartAOF(); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		if r := enginetest.Run(e1, s1, args...); strings.HasPrefix(r, "-") {
			t.Fatalf("%v: %s", args, r)
		}
	}
	run("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	for i := 0; i < 30; i++ {
		run("XADD", "s", "*", "f", "v")
	}
	run("XADD", "s", "MAXLEN", "~", "10", "LIMIT", "8", "*", "f", "v")
	run("XREADGROUP", "GROUP", "g", "a", "COUNT", "5", "STREAMS", "s", ">")
	run("XREADGROUP", "GROUP", "g", "b", "NOACK", "COUNT", "3", "STREAMS", "s", ">")
	first := enginetest.Run(e1, s1, "XRANGE", "s", "-", "+", "COUNT", "1")
	id := strings.Split(first, "\r\n")[3]
	run("XDEL", "s", id)
	run("XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "2")
	run("XGROUP", "CREATE", "s", "h", "0")
	run("XTRIM", "s", "MINID", "~", "0")
	run("XSETID", "s", "99999999999999-0")
	want := maskSeen(enginetest.Run(e1, s1, "XINFO", "STREAM", "s", "FULL"))
	d1.Flush(true)
	d1.CloseAOF()

	e2, s2, d2 := loadEnv(cfg)
	if err := d2.LoadAtStartup(); err != nil {
		t.Fatal(err)
	}
	if got := maskSeen(enginetest.Run(e2, s2, "XINFO", "STREAM", "s", "FULL")); got != want {
		t.Fatalf("after replay\n got %q\nwant %q", got, want)
	}
}

func maskSeen(s string) string {
	lines := strings.Split(s, "\r\n")
	for i := 1; i < len(lines); i++ {
		if lines[i-1] == "seen-time" {
			lines[i] = ":SEEN"
		}
	}
	return strings.Join(lines, "\r\n")
}
