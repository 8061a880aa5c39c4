package conn_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

var monitorStamp = regexp.MustCompile(`(?m)^\+\d+\.\d{6} \[(\d+) [^\]]+\] `)

// maskMonitor hides what differs between servers in MONITOR lines: the
// time and the client's port.
func maskMonitor(s string) string { return monitorStamp.ReplaceAllString(s, "+TIME [$1 ADDR] ") }

// monitorSession runs cmds from one client while another monitors, and
// returns the monitor's stream (up to the line of a final marker), and
// the stream of a second monitor that turns its replies off and on.
func monitorSession(t *testing.T, addr string, cmds [][]string) (string, string) {
	t.Helper()
	mon := servertest.Dial(t, addr)
	if r := mon.Do("MONITOR"); r != "+OK\r\n" {
		t.Fatalf("MONITOR: %q", r)
	}
	quiet := servertest.Dial(t, addr)
	quiet.Do("MONITOR")
	quiet.Write(servertest.Encode("CLIENT", "REPLY", "OFF"))
	var out strings.Builder
	// The first monitor sees the second one's CLIENT REPLY OFF once it has
	// run; only then may the session start.
	for !strings.Contains(out.String(), `"CLIENT" "REPLY" "OFF"`) {
		out.WriteString(mon.Read())
	}
	c := servertest.Dial(t, addr)
	for _, cmd := range cmds {
		c.Do(cmd...)
	}
	// The monitor's own commands are fed to it too, after its reply.
	mon.Write(servertest.Encode("PING", "from-monitor"))
	readUntil := func(c *servertest.Conn, out *strings.Builder, marker string) {
		for {
			r := c.Read()
			out.WriteString(r)
			if strings.Contains(r, marker) {
				return
			}
		}
	}
	readUntil(mon, &out, `"PING" "from-monitor"`)
	quiet.Write(servertest.Encode("CLIENT", "REPLY", "ON"))
	if r := quiet.Read(); r != "+OK\r\n" {
		t.Fatalf("REPLY ON: %q", r)
	}
	c.Do("ECHO", "__end__")
	readUntil(mon, &out, `"__end__"`)
	var q strings.Builder
	readUntil(quiet, &q, `"__end__"`)
	return maskMonitor(out.String()), maskMonitor(q.String())
}

// TestMonitorDiff compares MONITOR streams with Redis: quoting, the
// database shown after SELECT, AUTH and HELLO arguments redacted, and
// commands Redis does not show (refused, admin, QUIT) left out.
func TestMonitorDiff(t *testing.T) {
	inst := servertest.Start(t)
	r := servertest.Redis(t)
	cmds := [][]string{
		{"SET", "a", "1"},
		{"set", "b c", "x\x01\xff\"y\\\n\r\t\a\b"},
		{"SELECT", "5"},
		{"get", "a"},
		{"NOSUCH", "x"},
		{"GET"},
		{"AUTH", "foo"},
		{"AUTH", "a", "b"},
		{"AUTH", "a", "b", "c"},
		{"HELLO", "2", "AUTH", "default", "x"},
		{"HELLO", "2", "FOO", "AUTH", "default", "x"},
		{"HELLO", "4", "AUTH", "a", "b"},
		{"HELLO", "2", "SETNAME", "n", "AUTH", "default", "x"},
		{"CLIENT", "SETNAME", "nm"},
		{"CLIENT", "LIST"},
		{"CLIENT", "KILL", "ID", "999999"},
		{"CLIENT", "ID"},
		{"PING"},
		{"ECHO", ""},
		{"SET", "k", "123"},
		{"SELECT", "0"},
		{"CLIENT", "REPLY", "ON"},
		{"MONITOR"},
	}
	aMon, aQuiet := monitorSession(t, inst.Addr, cmds)
	rMon, rQuiet := monitorSession(t, r.Addr, cmds)
	if aMon != rMon {
		t.Errorf("monitor streams differ:\nabacus:\n%s\nredis:\n%s", aMon, rMon)
	}
	if aQuiet != rQuiet {
		t.Errorf("monitor with replies off for a while:\nabacus:\n%s\nredis:\n%s", aQuiet, rQuiet)
	}
	t.Logf("%d monitor lines compared", strings.Count(aMon, "\n")+strings.Count(aQuiet, "\n"))
	if testing.Verbose() {
		t.Log(aMon)
	}
	if !strings.Contains(aMon, `"AUTH" "(redacted)" "(redacted)"`) || !strings.Contains(aMon, `"PING" "from-monitor"`) {
		t.Errorf("stream lacks expected lines:\n%s", aMon)
	}
}

// TestMonitorLine checks the exact line, time included, on the server's
// clock.
func TestMonitorLine(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(1_700_000_000_123))
	mon := inst.Raw(t)
	mon.Do("MONITOR")
	c := inst.Raw(t)
	inst.Clock.Advance(5 * time.Microsecond)
	c.Do("SELECT", "3")
	c.Do("SET", "key", "va\"l")
	addr := c.C.LocalAddr().String()
	want := []string{
		"+1700000000.123005 [3 " + addr + "] \"SELECT\" \"3\"\r\n",
		"+1700000000.123005 [3 " + addr + "] \"SET\" \"key\" \"va\\\"l\"\r\n",
	}
	for _, w := range want {
		if r := mon.Read(); r != w {
			t.Fatalf("got %q, want %q", r, w)
		}
	}
	// Every monitor gets every line; RESET ends monitoring.
	mon2 := inst.Raw(t)
	mon2.Do("MONITOR")
	c.Do("PING")
	for _, m := range []*servertest.Conn{mon, mon2} {
		if r := m.Read(); !strings.HasSuffix(r, "] \"PING\"\r\n") {
			t.Fatalf("monitor: %q", r)
		}
	}
	if r := mon2.Do("RESET"); r != "+RESET\r\n" {
		t.Fatalf("RESET: %q", r)
	}
	if r := mon.Read(); !strings.HasSuffix(r, "] \"RESET\"\r\n") {
		t.Fatalf("RESET line: %q", r)
	}
	c.Do("ECHO", "after")
	if r := mon.Read(); !strings.HasSuffix(r, "] \"ECHO\" \"after\"\r\n") {
		t.Fatalf("monitor: %q", r)
	}
	if r := mon2.Do("PING"); r != "+PONG\r\n" {
		t.Fatalf("after RESET the client is not a monitor: %q", r)
	}
}

// TestMonitorHeavy: a monitor receiving a stream of lines from several
// writers sees each writer's commands complete and in order.
func TestMonitorHeavy(t *testing.T) {
	inst := servertest.Start(t)
	mon := inst.Raw(t)
	mon.Do("MONITOR")
	const writers, each = 4, 500
	done := make(chan struct{})
	for w := 0; w < writers; w++ {
		go func(w int) {
			defer func() { done <- struct{}{} }()
			c := inst.Client(t)
			pipe := c.Pipeline()
			for i := 0; i < each; i++ {
				pipe.Set(servertest.Ctx, "w"+string(rune('0'+w)), i, 0)
			}
			if _, err := pipe.Exec(servertest.Ctx); err != nil {
				t.Error(err)
			}
		}(w)
	}
	for w := 0; w < writers; w++ {
		<-done
	}
	next := make([]int, writers)
	for n := 0; n < writers*each; n++ {
		line := mon.Read()
		i := strings.Index(line, `"set" "w`)
		if i < 0 {
			n-- // connection setup (HELLO...)
			continue
		}
		w := int(line[i+8] - '0')
		want := `"set" "w` + string(rune('0'+w)) + `" "` + itoa(next[w]) + `"`
		if !strings.Contains(line, want) {
			t.Fatalf("writer %d: got %q, want %s", w, line, want)
		}
		next[w]++
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
