package servertest

import (
	"strings"
	"testing"
)

// Diff sends the same commands to an Abacus instance and to redis-server
// and requires byte-identical replies.
type Diff struct {
	t testing.TB
	A *Conn // Abacus
	R *Conn // redis-server
}

// NewDiff connects to both servers; without redis-server it skips, or fails
// under ABACUS_REQUIRE_REDIS=1.
func NewDiff(t testing.TB, inst *Instance) *Diff {
	t.Helper()
	r := Redis(t)
	return &Diff{t: t, A: inst.Raw(t), R: Dial(t, r.Addr)}
}

// Do sends one command to both and compares the replies. It returns
// Abacus's reply.
func (d *Diff) Do(args ...string) string {
	d.t.Helper()
	req := Encode(args...)
	d.A.Write(req)
	d.R.Write(req)
	a, r := d.A.Read(), d.R.Read()
	if a != r {
		d.t.Errorf("%s\n abacus: %q\n  redis: %q", quoteArgs(args), a, r)
	}
	return a
}

// DoAll runs each command through Do.
func (d *Diff) DoAll(cmds [][]string) {
	d.t.Helper()
	for _, c := range cmds {
		d.Do(c...)
	}
}

// Lines is DoAll over commands written one per line, split on spaces
// (for readable tables of fixed cases; use Do for binary arguments).
func (d *Diff) Lines(text string) {
	d.t.Helper()
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		d.Do(strings.Fields(line)...)
	}
}

func quoteArgs(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if len(a) > 80 {
			a = a[:80] + "..."
		}
		b.WriteString(strings.ReplaceAll(a, "\n", `\n`))
	}
	return b.String()
}
