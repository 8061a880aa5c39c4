package engine_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// What transactions leave in INFO, MONITOR and CLIENT LIST, compared with
// redis-server.

// txInfo returns the "name:value" lines of an INFO section.
func txInfo(t *testing.T, c *servertest.Conn, section string) map[string]string {
	t.Helper()
	body := servertest.BulkBody(t, c.Do("INFO", section))
	out := map[string]string{}
	for _, l := range strings.Split(body, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && !strings.HasPrefix(l, "#") {
			out[k] = v
		}
	}
	return out
}

var txUsec = regexp.MustCompile(`usec=\d+,usec_per_call=[\d.]+,`)

// TestTxDiffStats checks commandstats (EXEC and each queued command are
// counted when they run; refused ones as rejected), errorstats, the
// command and error totals, keyspace hits and misses, and the dirty count.
func TestTxDiffStats(t *testing.T) {
	_, ps := txPairs(t, 2)
	p := ps[0]
	p.Do("FLUSHALL")
	p.Do("CONFIG", "RESETSTAT")
	dirty := func(c *servertest.Conn) string {
		return txInfo(t, c, "persistence")["rdb_changes_since_last_save"]
	}
	a0, r0 := dirty(p.A), dirty(p.R)
	txScript(t, ps, `
MULTI
SET a 1
GET a
GET nosuch
INCR a
LPUSH a x
EXEC
MULTI
SET a
nosuch
CONFIG nosuch
EXEC
EXEC
DISCARD
MULTI
MULTI
WATCH a
DISCARD x
DISCARD
EXEC x
WATCH a
2: SET a 5
MULTI
GET a
EXEC
WATCH a
UNWATCH
MULTI
UNWATCH
SELECT 1
SET b 1
SELECT 0
EXEC
MULTI
EXEC
`)
	a1, r1 := dirty(p.A), dirty(p.R)
	if aa, ra := txAtoi(t, a1)-txAtoi(t, a0), txAtoi(t, r1)-txAtoi(t, r0); aa != ra {
		t.Errorf("dirty delta: abacus %d, redis %d", aa, ra)
	}
	cmdstats := func(c *servertest.Conn) map[string]string {
		m := txInfo(t, c, "commandstats")
		for k, v := range m {
			m[k] = txUsec.ReplaceAllString(v, "")
		}
		return m
	}
	as, rs := cmdstats(p.A), cmdstats(p.R)
	for k, v := range rs {
		if as[k] != v {
			t.Errorf("%s: abacus %q, redis %q", k, as[k], v)
		}
	}
	for k, v := range as {
		if _, ok := rs[k]; !ok {
			t.Errorf("%s: abacus %q, redis none", k, v)
		}
	}
	ae, re := txInfo(t, p.A, "errorstats"), txInfo(t, p.R, "errorstats")
	if len(ae) != len(re) {
		t.Errorf("errorstats: abacus %v, redis %v", ae, re)
	}
	for k, v := range re {
		if ae[k] != v {
			t.Errorf("%s: abacus %q, redis %q", k, ae[k], v)
		}
	}
	ast, rst := txInfo(t, p.A, "stats"), txInfo(t, p.R, "stats")
	for _, k := range []string{"total_commands_processed", "total_error_replies", "keyspace_hits", "keyspace_misses"} {
		if ast[k] != rst[k] {
			t.Errorf("%s: abacus %s, redis %s", k, ast[k], rst[k])
		}
	}
}

func txAtoi(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("not an integer: %q", s)
	}
	return v
}

var txMonitorHead = regexp.MustCompile(`^\+\d+\.\d{6} \[(\d+) [^\]]+\] `)

// TestTxDiffMonitor compares what MONITOR shows of transactions: MULTI
// when it runs, the queued commands when EXEC runs them (with the
// database they run in), then EXEC; a refused EXEC; nothing for commands
// refused while queuing.
func TestTxDiffMonitor(t *testing.T) {
	_, ps := txPairs(t, 3)
	mon := ps[2]
	mon.Do("MONITOR")
	txScript(t, ps, `
FLUSHALL
MULTI
SET a 1
GET a
SELECT 3
SET b 1
EXEC
SELECT 0
MULTI
SET a
SET a 2
EXEC
MULTI
SET c 1
DISCARD
EXEC x
MULTI
GET a
EXEC x
WATCH a
2: SET a 3
MULTI
GET a
EXEC
MULTI
WATCH a
MULTI
EXEC
2: PING end-of-test
`)
	read := func(c *servertest.Conn) []string {
		var lines []string
		for len(lines) < 100 {
			l := txMonitorHead.ReplaceAllString(c.Read(), "[$1] ")
			lines = append(lines, l)
			if strings.Contains(l, "end-of-test") {
				break
			}
		}
		return lines
	}
	al, rl := read(mon.A), read(mon.R)
	if strings.Join(al, "") != strings.Join(rl, "") {
		t.Errorf("MONITOR:\n abacus %q\n  redis %q", al, rl)
	}
	t.Logf("%d MONITOR lines compared", len(rl))
}

// TestTxDiffClientList compares CLIENT LIST's view of a client in a
// transaction: flags x and d, multi= (the number of queued commands),
// multi-mem= and cmd=, from another client and from inside EXEC.
func TestTxDiffClientList(t *testing.T) {
	_, ps := txPairs(t, 2)
	ids := [2]string{}
	for i, c := range []*servertest.Conn{ps[0].A, ps[0].R} {
		ids[i] = strings.TrimSuffix(strings.TrimPrefix(c.Do("CLIENT", "ID"), ":"), "\r\n")
	}
	fields := []string{"flags", "db", "multi", "multi-mem", "cmd"}
	// view returns client 1's fields as client 2 (or, self, client 1)
	// sees them on each server.
	compare := func(what string, self bool) {
		t.Helper()
		got := [2]string{}
		for i, c := range []*servertest.Conn{ps[1].A, ps[1].R} {
			var body string
			if self {
				c = []*servertest.Conn{ps[0].A, ps[0].R}[i]
				v, err := servertest.Parse(c.Do("EXEC"))
				if err != nil || len(v.Items) == 0 {
					t.Fatalf("EXEC: %v %v", v, err)
				}
				body = v.Items[len(v.Items)-1].Str
			} else {
				body = servertest.BulkBody(t, c.Do("CLIENT", "LIST", "ID", ids[i]))
			}
			_, vals := servertest.ClientFields(t, body)
			var sb strings.Builder
			for _, f := range fields {
				sb.WriteString(f + "=" + vals[f] + " ")
			}
			got[i] = sb.String()
		}
		if got[0] != got[1] {
			t.Errorf("%s:\n abacus %s\n  redis %s", what, got[0], got[1])
		}
	}
	p := ps[0]
	compare("idle", false)
	p.Do("MULTI")
	compare("after MULTI", false)
	p.Do("SET", "a", "1")
	p.Do("SET", "bb", strings.Repeat("v", 100))
	compare("two queued", false)
	p.Do("CLIENT", "INFO")
	compare("inside EXEC", true)
	compare("after EXEC", false)
	p.Do("WATCH", "a")
	ps[1].Do("SET", "a", "2")
	compare("dirty outside MULTI", false)
	p.Do("MULTI")
	p.Do("SET", "a", "3")
	compare("dirty in MULTI: nothing queued", false)
	p.Do("EXEC")
	p.Do("MULTI")
	p.Do("nosuch")
	p.Do("SET", "a", "3")
	compare("doomed: nothing queued", false)
	p.Do("DISCARD")
	p.Do("SELECT", "2")
	p.Do("MULTI")
	p.Do("SELECT", "0")
	p.Do("CLIENT", "INFO")
	compare("SELECT inside EXEC", true)
	compare("after SELECT inside EXEC", false)
}
