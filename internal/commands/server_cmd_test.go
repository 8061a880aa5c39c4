package commands_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

func TestTimeAndLastSave(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(1_700_000_000_123))
	c := inst.Raw(t)
	if r := c.Do("TIME"); r != "*2\r\n$10\r\n1700000000\r\n$6\r\n123000\r\n" {
		t.Fatalf("TIME %q", r)
	}
	inst.Clock.Advance(1500 * time.Millisecond)
	g := inst.Client(t)
	tm, err := g.Time(servertest.Ctx).Result()
	if err != nil || tm.UnixMicro() != 1_700_000_001_623_000 {
		t.Fatalf("go-redis TIME %v %v", tm, err)
	}
	if r := c.Do("TIME", "x"); r != "-ERR wrong number of arguments for 'time' command\r\n" {
		t.Fatalf("TIME x %q", r)
	}
	last, err := g.LastSave(servertest.Ctx).Result()
	if now := time.Now().Unix(); err != nil || last > now || last < now-600 {
		t.Fatalf("LASTSAVE %d %v", last, err)
	}
}

func TestShutdown(t *testing.T) {
	// Errors first, compared with redis-server (none of these stops it).
	d := servertest.NewDiff(t, servertest.Start(t))
	d.Lines(`
SHUTDOWN foo
SHUTDOWN SAVE NOSAVE
SHUTDOWN ABORT NOW
SHUTDOWN NOSAVE ABORT
SHUTDOWN ABORT
SHUTDOWN abort
`)
	inst := servertest.Start(t)
	c := inst.Raw(t)
	c.Write(servertest.Encode("SHUTDOWN", "NOSAVE", "NOW"))
	c.ExpectClosed() // no reply: the server goes away
	select {
	case <-inst.Srv.ShutdownRequested:
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown not requested")
	}
	if !strings.Contains(inst.Logs.String(), "User requested shutdown...") {
		t.Errorf("log: %s", inst.Logs.String())
	}
}

func TestSlowlog(t *testing.T) {
	p, _ := svDiffPrivate(t, nil)
	// Logging is off while the log is compared empty: at the default
	// 10 ms a command slowed down on one server by a loaded machine
	// would be logged there only.
	p.Do("CONFIG", "SET", "slowlog-log-slower-than", "-1")
	p.Do("SLOWLOG", "RESET")
	p.Lines(`
SLOWLOG GET -2
SLOWLOG GET x
SLOWLOG GET 1 2
SLOWLOG LEN x
SLOWLOG RESET x
SLOWLOG foo
SLOWLOG
SLOWLOG LEN
SLOWLOG GET
`)
	// Every command is logged from now on; the same commands give the
	// same ids and arguments (times differ).
	p.Do("CONFIG", "SET", "slowlog-log-slower-than", "0")
	p.Do("SET", "k", "v")
	long := strings.Repeat("x", 200)
	p.Do("SET", "big", long)
	many := []string{"DEL"}
	for i := 0; i < 40; i++ {
		many = append(many, "key"+strconv.Itoa(i))
	}
	p.Do(many...)
	p.Do("SLOWLOG", "LEN")
	entries := func(c *servertest.Conn) []string {
		v := servertest.MustParse(t, c.Do("SLOWLOG", "GET", "-1"))
		var out []string
		for _, e := range v.Items {
			if len(e.Items) != 6 {
				t.Fatalf("entry with %d fields", len(e.Items))
			}
			if _, err := strconv.Atoi(e.Items[1].Str); err != nil {
				t.Fatalf("timestamp %q", e.Items[1].Str)
			}
			out = append(out, e.Items[0].Str+" "+strings.Join(e.Items[3].Strings(), ",")+" "+e.Items[5].Str)
		}
		return out
	}
	a, r := entries(p.A), entries(p.R)
	if strings.Join(a, "\n") != strings.Join(r, "\n") {
		t.Errorf("slowlog:\n abacus %q\n  redis %q", a, r)
	}
	if len(a) < 5 || !strings.Contains(a[1], "... (10 more arguments)") || !strings.Contains(a[2], "xxx... (72 more bytes)") {
		t.Errorf("truncation not shown: %q", a)
	}
	p.Do("CONFIG", "SET", "slowlog-log-slower-than", "-1")
	p.Do("SLOWLOG", "RESET")
	p.Do("SLOWLOG", "LEN")
	p.Do("CONFIG", "SET", "slowlog-max-len", "0")
	p.Do("SLOWLOG", "GET")
	help := servertest.MustParse(t, p.A.Do("SLOWLOG", "HELP"))
	if len(help.Items) < 8 || help.Items[len(help.Items)-2].Str != "HELP" {
		t.Fatalf("help %v", help.Strings())
	}
}

func TestLatency(t *testing.T) {
	p, inst := svDiffPrivate(t, []string{"--enable-debug-command", "yes"}, servertest.WithConfig("enable-debug-command", "yes"))
	p.Lines(`
LATENCY LATEST
LATENCY HISTORY command
LATENCY HISTORY
LATENCY RESET
LATENCY RESET a b
LATENCY GRAPH command
LATENCY foo
LATENCY
`)
	// A 20 ms DEBUG SLEEP passes a 10 ms threshold whatever the machine.
	// Monitoring is off again right after it: on a loaded machine any
	// later command (LATENCY LATEST, RESET...) may pass the threshold as
	// well, adding a sample in another second on one server only.
	p.Do("CONFIG", "SET", "latency-monitor-threshold", "10")
	p.Do("DEBUG", "SLEEP", "0.02")
	p.Do("CONFIG", "SET", "latency-monitor-threshold", "0")
	latest := func(c *servertest.Conn) servertest.Reply { return servertest.MustParse(t, c.Do("LATENCY", "LATEST")) }
	for name, c := range map[string]*servertest.Conn{"abacus": p.A, "redis": p.R} {
		v := latest(c)
		if len(v.Items) != 1 || len(v.Items[0].Items) != 4 || v.Items[0].Items[0].Str != "command" {
			t.Fatalf("%s LATEST %v", name, v)
		}
		if ms, _ := strconv.Atoi(v.Items[0].Items[2].Str); ms < 20 {
			t.Errorf("%s latest %d ms", name, ms)
		}
		h := servertest.MustParse(t, c.Do("LATENCY", "HISTORY", "command"))
		if len(h.Items) != 1 || len(h.Items[0].Items) != 2 {
			t.Errorf("%s HISTORY %v", name, h)
		}
	}
	for _, c := range []*servertest.Conn{p.A} {
		doc := servertest.MustParse(t, c.Do("LATENCY", "DOCTOR"))
		if !strings.Contains(doc.Str, "command") {
			t.Errorf("doctor %q", doc.Str)
		}
		// Redis's sparkline: one sample is one low bar ("_"), as on
		// redis-server (the figures and the label may differ).
		graph := servertest.MustParse(t, c.Do("LATENCY", "GRAPH", "command"))
		want := servertest.MustParse(t, p.R.Do("LATENCY", "GRAPH", "command"))
		digits := regexp.MustCompile(`\d+`)
		if !strings.Contains(graph.Str, "command") || digits.ReplaceAllString(graph.Str, "N") != digits.ReplaceAllString(want.Str, "N") {
			t.Errorf("graph %q, redis-server's %q", graph.Str, want.Str)
		}
	}
	p.Do("LATENCY", "RESET", "command", "x")
	p.Do("LATENCY", "LATEST")
	_ = inst
}

// TestMemoryUsageDiff compares MEMORY USAGE of string keys of many sizes
// and encodings with redis-server's: the estimate models Redis's
// allocations, so the numbers are the same.
func TestMemoryUsageDiff(t *testing.T) {
	d := servertest.NewDiff(t, servertest.Start(t))
	n := 0
	for _, size := range []int{0, 1, 5, 10, 20, 30, 40, 44, 45, 60, 100, 200, 255, 256, 300, 1000, 5000, 65535, 70000} {
		key := "k" + strconv.Itoa(size)
		d.Do("SET", key, strings.Repeat("v", size))
		d.Do("MEMORY", "USAGE", key)
		n++
	}
	for _, key := range []string{"a", "abcdefghij", strings.Repeat("k", 31), strings.Repeat("k", 32), strings.Repeat("k", 300)} {
		d.Do("SET", key, "1")
		d.Do("MEMORY", "USAGE", key)
		n++
	}
	for _, v := range []string{"0", "9999", "10000", "-5", "12345678901", "9223372036854775807", "123456789012345678901", "1.5"} {
		d.Do("SET", "i", v)
		d.Do("MEMORY", "USAGE", "i")
		n++
	}
	d.Lines(`
MEMORY USAGE nokey
MEMORY USAGE i SAMPLES x
MEMORY USAGE i SAMPLES -1
MEMORY USAGE i SAMPLES 0
MEMORY USAGE i SAMPLES 5 SAMPLES 3
MEMORY USAGE i foo 1
MEMORY USAGE i SAMPLES
MEMORY USAGE
MEMORY foo
MEMORY PURGE
`)
	t.Logf("%d MEMORY USAGE sizes compared", n)
}

func TestMemoryStatsAndDoctor(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	c.Do("SET", "a", "1")
	for _, proto := range []string{"2", "3"} {
		c.Do("HELLO", proto)
		v := servertest.MustParse(t, c.Do("MEMORY", "STATS"))
		if (proto == "3") != (v.Kind == '%') {
			t.Fatalf("RESP%s kind %q", proto, v.Kind)
		}
		keys := map[string]servertest.Reply{}
		for i := 0; i+1 < len(v.Items); i += 2 {
			keys[v.Items[i].Str] = v.Items[i+1]
		}
		for _, k := range []string{"peak.allocated", "total.allocated", "startup.allocated", "keys.count", "dataset.bytes", "overhead.total", "fragmentation"} {
			if _, ok := keys[k]; !ok {
				t.Errorf("RESP%s: no %s in %v", proto, k, v.Strings())
			}
		}
		if keys["keys.count"].Str != "1" || len(keys["db.0"].Items) != 4 {
			t.Errorf("RESP%s keys.count %v db.0 %v", proto, keys["keys.count"], keys["db.0"])
		}
		if proto == "3" && keys["fragmentation"].Kind != ',' {
			t.Errorf("fragmentation is not a double: %q", keys["fragmentation"].Kind)
		}
	}
	for _, sub := range []string{"DOCTOR", "MALLOC-STATS"} {
		v := servertest.MustParse(t, c.Do("MEMORY", sub))
		if v.Kind != '=' || len(v.Str) < 10 {
			t.Errorf("MEMORY %s: %q %q", sub, v.Kind, v.Str)
		}
	}
	g := inst.Client(t)
	if n, err := g.MemoryUsage(servertest.Ctx, "a").Result(); err != nil || n != 48 {
		t.Fatalf("go-redis MEMORY USAGE %d %v", n, err)
	}
}

// TestDebugDisabled compares DEBUG's refusal with redis-server's (the
// shared one runs with enable-debug-command no, the default).
func TestDebugDisabled(t *testing.T) {
	d := servertest.NewDiff(t, servertest.Start(t))
	d.Lines(`
DEBUG SLEEP 0
DEBUG HELP
DEBUG OBJECT k
DEBUG
`)
}

func TestDebugDiff(t *testing.T) {
	p, inst := svDiffPrivate(t, []string{"--enable-debug-command", "yes"}, servertest.WithConfig("enable-debug-command", "yes"))
	p.Lines(`
DEBUG SLEEP 0
DEBUG SLEEP x
DEBUG SLEEP
DEBUG SET-ACTIVE-EXPIRE 1
DEBUG SET-ACTIVE-EXPIRE
DEBUG ERROR boo
DEBUG ERROR WRONGTYPE
DEBUG foo
DEBUG OBJECT
DEBUG OBJECT nokey
DEBUG LOG hello
DEBUG PROTOCOL nope
`)
	n := 12
	for _, proto := range []string{"2", "3"} {
		p.A.Do("HELLO", proto) // HELLO itself differs: server version, client id
		p.R.Do("HELLO", proto)
		for _, typ := range []string{"string", "integer", "double", "bignum", "null", "array", "set", "map", "attrib", "push", "verbatim", "true", "false"} {
			p.Do("DEBUG", "PROTOCOL", typ)
			n++
			if typ == "push" && proto == "3" {
				// The push is followed by the command's real reply.
				if a, r := p.A.Read(), p.R.Read(); a != r {
					t.Errorf("reply after push: abacus %q redis %q", a, r)
				}
			}
		}
	}
	p.A.Do("HELLO", "2")
	p.R.Do("HELLO", "2")
	mask := regexp.MustCompile(`Value at:0x[0-9a-f]+ | lru:\d+ lru_seconds_idle:\d+`)
	for _, v := range []string{"hello", "123", "10000", "-5", "300000", "3000000000", strings.Repeat("ab", 10), "12345678901"} {
		p.Do("SET", "k", v)
		a, r := p.A.Do("DEBUG", "OBJECT", "k"), p.R.Do("DEBUG", "OBJECT", "k")
		if mask.ReplaceAllString(a, "") != mask.ReplaceAllString(r, "") {
			t.Errorf("DEBUG OBJECT of %q:\n abacus %q\n  redis %q", v, a, r)
		}
		n++
	}
	t.Logf("%d DEBUG cases compared", n)

	c := inst.Raw(t)
	if r := c.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0"); r != "+OK\r\n" || inst.Srv.Env.ActiveExpireEnabled() {
		t.Fatalf("active expire still on: %q", r)
	}
	c.Do("DEBUG", "SET-ACTIVE-EXPIRE", "1")
	if !inst.Srv.Env.ActiveExpireEnabled() {
		t.Fatal("active expire still off")
	}
	if !strings.Contains(inst.Logs.String(), "DEBUG LOG: hello") {
		t.Errorf("DEBUG LOG not logged")
	}
	help := servertest.MustParse(t, c.Do("DEBUG", "HELP"))
	if len(help.Items) < 10 || !strings.HasPrefix(help.Items[0].Str, "DEBUG <subcommand>") {
		t.Errorf("help %v", help.Strings())
	}

	local := servertest.Start(t, servertest.WithConfig("enable-debug-command", "local"))
	if r := local.Raw(t).Do("DEBUG", "SLEEP", "0"); r != "+OK\r\n" {
		t.Fatalf("local DEBUG from loopback: %q", r)
	}
}
