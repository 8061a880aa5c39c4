package commands_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Helpers of the scripting tests.

// scriptDiff starts an Abacus instance and connects to redis-server with
// empty script caches and function libraries on both, and a known
// math.random state. r3 is a second pair of connections in RESP3.
type scriptDiff struct {
	*servertest.Diff
	inst     *servertest.Instance
	a3, r3   *servertest.Conn
	t        testing.TB
	compared int
	// list makes do compare FUNCTION LIST replies with each library's
	// functions in name order.
	list bool
}

func newScriptDiff(t testing.TB, opts ...servertest.Option) *scriptDiff {
	t.Helper()
	inst := servertest.Start(t, opts...)
	d := servertest.NewDiff(t, inst)
	sd := &scriptDiff{Diff: d, inst: inst, t: t}
	for _, c := range []*servertest.Conn{d.A, d.R} {
		for _, cmd := range [][]string{{"SCRIPT", "FLUSH"}, {"FUNCTION", "FLUSH"}, {"FLUSHALL"},
			{"CONFIG", "SET", "busy-reply-threshold", "5000"}} {
			if r := c.Do(cmd...); r != "+OK\r\n" {
				t.Fatalf("%v on %s: %q", cmd, c.Addr, r)
			}
		}
	}
	sd.a3, sd.r3 = inst.Raw(t), servertest.Dial(t, d.R.Addr)
	sd.a3.Do("HELLO", "3")
	sd.r3.Do("HELLO", "3")
	sd.seed(1)
	return sd
}

// seed puts both servers' math.random generators in the same state.
func (sd *scriptDiff) seed(n int) {
	sd.Do("EVAL", "math.randomseed("+strconv.Itoa(n)+")", "0")
}

// do compares one command on the RESP2 connections.
func (sd *scriptDiff) do(args ...string) string {
	sd.t.Helper()
	sd.compared++
	if sd.list && len(args) >= 2 && strings.EqualFold(args[0], "FUNCTION") && strings.EqualFold(args[1], "LIST") {
		req := servertest.Encode(args...)
		sd.A.Write(req)
		sd.R.Write(req)
		a, r := sortFunctionEntries(sd.A.Read()), sortFunctionEntries(sd.R.Read())
		if a != r {
			sd.t.Errorf("%s\n abacus: %q\n  redis: %q", shortArgs(args), a, r)
		}
		return a
	}
	return sd.Do(args...)
}

// do3 compares one command on the RESP3 connections.
func (sd *scriptDiff) do3(args ...string) string {
	sd.t.Helper()
	sd.compared++
	req := servertest.Encode(args...)
	sd.a3.Write(req)
	sd.r3.Write(req)
	a, r := sd.a3.Read(), sd.r3.Read()
	if a != r {
		sd.t.Errorf("RESP3 %s\n abacus: %q\n  redis: %q", shortArgs(args), a, r)
	}
	return a
}

// eval compares EVAL of body with keys and args in RESP2 and RESP3.
func (sd *scriptDiff) eval(body string, keys []string, args ...string) {
	sd.t.Helper()
	cmd := append([]string{"EVAL", body, strconv.Itoa(len(keys))}, keys...)
	cmd = append(cmd, args...)
	sd.do(cmd...)
	sd.do3(cmd...)
}

func shortArgs(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if len(a) > 120 {
			a = a[:120] + "..."
		}
		b.WriteString(strings.ReplaceAll(a, "\n", `\n`))
	}
	return b.String()
}

// luaCase is one script of a corpus: its body, keys and arguments.
type luaCase struct {
	body string
	keys []string
	args []string
}

// runCorpus compares every case, each on fresh data set up by setup.
func (sd *scriptDiff) runCorpus(cases []luaCase, setup ...[]string) {
	sd.t.Helper()
	for _, c := range cases {
		sd.Do("FLUSHALL")
		for _, s := range setup {
			sd.Do(s...)
		}
		sd.eval(c.body, c.keys, c.args...)
	}
}
