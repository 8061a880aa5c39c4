package engine_test

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// A blocking command's statistics as Redis 7.0 keeps them: the call and
// its first run's time counted when it blocks; its histogram, slow log
// entry and the time again when it is served; nothing more when it times
// out or CLIENT UNBLOCK ends it. Compared against a private redis-server
// (the test resets its statistics and slow log).

var usecFields = regexp.MustCompile(`(usec|usec_per_call)=[0-9.]+`)

// blockedStats is what the test compares after each step: blpop's
// commandstats line (times masked), its LATENCY HISTOGRAM calls, whether
// INFO latencystats has it, and the slow log's BLPOP entries.
func blockedStats(t *testing.T, c *servertest.Conn) string {
	t.Helper()
	var b strings.Builder
	var lines []string
	for _, l := range strings.Split(servertest.BulkBody(t, c.Do("INFO", "commandstats")), "\r\n") {
		if strings.HasPrefix(l, "cmdstat_blpop:") || strings.HasPrefix(l, "cmdstat_client|unblock:") {
			lines = append(lines, usecFields.ReplaceAllString(l, "$1=X")+"\n")
		}
	}
	sort.Strings(lines)
	b.WriteString(strings.Join(lines, ""))
	h := servertest.MustParse(t, c.Do("LATENCY", "HISTOGRAM", "blpop"))
	if len(h.Items) == 2 {
		b.WriteString("histogram calls=" + h.Items[1].Items[1].Str + "\n")
	} else {
		b.WriteString("no histogram\n")
	}
	b.WriteString("latencystats blpop: ")
	if strings.Contains(servertest.BulkBody(t, c.Do("INFO", "latencystats")), "latency_percentiles_usec_blpop:") {
		b.WriteString("yes\n")
	} else {
		b.WriteString("no\n")
	}
	// The slow log's BLPOP entries and those without arguments (CLIENT
	// UNBLOCK's, logged once the blocked command's arguments are gone).
	blpop, none := 0, 0
	for _, e := range servertest.MustParse(t, c.Do("SLOWLOG", "GET", "100")).Items {
		switch args := e.Items[3].Strings(); {
		case len(args) == 0:
			none++
		case strings.EqualFold(args[0], "blpop"):
			blpop++
		}
	}
	fmt.Fprintf(&b, "slow log: %d BLPOP, %d without arguments\n", blpop, none)
	return b.String()
}

func TestLatencyBlockedDiff(t *testing.T) {
	inst := servertest.Start(t)
	r := servertest.PrivateRedis(t)
	d := &bkDiff{t: t, inst: inst, adminR: servertest.Dial(t, r.Addr)}
	for i := 0; i < 3; i++ {
		d.a = append(d.a, inst.Raw(t))
		d.r = append(d.r, servertest.Dial(t, r.Addr))
	}
	same := func(step string) {
		t.Helper()
		if a, r := blockedStats(t, d.a[2]), blockedStats(t, d.r[2]); a != r {
			t.Errorf("%s:\nabacus:\n%sredis:\n%s", step, a, r)
		}
	}
	ida, idr := d.ids(0)
	d.do(2, "CONFIG", "SET", "slowlog-log-slower-than", "0")
	d.do(2, "CONFIG", "RESETSTAT")
	d.do(2, "SLOWLOG", "RESET")

	// Timed out: counted, no histogram, no slow log entry.
	d.do(0, "BLPOP", "x", "0.05")
	same("BLPOP timed out")

	// Served: the histogram and the slow log have it.
	d.send(0, "BLPOP", "x", "5")
	d.blocked(1)
	d.do(1, "RPUSH", "x", "a")
	d.recv(0, "BLPOP served")
	same("BLPOP served")

	// CLIENT UNBLOCK, both ways: counted once, when it blocked; with
	// ERROR the blocked command and CLIENT UNBLOCK itself fail.
	for _, how := range []string{"TIMEOUT", "ERROR"} {
		d.send(0, "BLPOP", "x", "5")
		d.blocked(1)
		ra, rr := d.a[1].Do("CLIENT", "UNBLOCK", ida, how), d.r[1].Do("CLIENT", "UNBLOCK", idr, how)
		if ra != rr {
			t.Errorf("CLIENT UNBLOCK %s: abacus %q, redis %q", how, ra, rr)
		}
		d.recv(0, "BLPOP unblocked "+how)
		same("CLIENT UNBLOCK " + how)
	}
}
