package servertest

import (
	"regexp"
	"strings"
	"testing"
)

// Diff sends the same commands to an Abacus instance and to redis-server
// and requires byte-identical replies.
type Diff struct {
	t testing.TB
	A *Conn // Abacus
	R *Conn // redis-server
	// Mask, when set, rewrites both replies before they are compared
	// (to hide what legitimately differs, see MaskHello).
	Mask func(string) string
	N    int // commands compared so far
}

// NewDiff connects to both servers; without redis-server it skips, or fails
// under ABACUS_REQUIRE_REDIS=1.
func NewDiff(t testing.TB, inst *Instance) *Diff {
	t.Helper()
	r := Redis(t)
	return &Diff{t: t, A: inst.Raw(t), R: Dial(t, r.Addr)}
}

// DialDiff connects to an Abacus server and a redis-server already
// running at the given addresses.
func DialDiff(t testing.TB, abacusAddr, redisAddr string) *Diff {
	t.Helper()
	return &Diff{t: t, A: Dial(t, abacusAddr), R: Dial(t, redisAddr)}
}

// StartDiff starts an Abacus instance and connects a Diff to it and to the
// shared redis-server, whose configuration it first puts back to the
// defaults the differential tests depend on (the server is shared by
// every test of the process, whatever ran before).
func StartDiff(t testing.TB, opts ...Option) (*Diff, *Instance) {
	t.Helper()
	inst := Start(t, opts...)
	d := NewDiff(t, inst)
	if r := d.R.Do("CONFIG", "SET", "proto-max-bulk-len", "536870912", "maxmemory", "0", "maxmemory-policy", "noeviction"); r != "+OK\r\n" {
		t.Fatalf("resetting redis-server's config: %q", r)
	}
	return d, inst
}

// Do sends one command to both and compares the replies. It returns
// Abacus's reply.
func (d *Diff) Do(args ...string) string {
	d.t.Helper()
	d.N++
	req := Encode(args...)
	d.A.Write(req)
	d.R.Write(req)
	a, r := d.A.Read(), d.R.Read()
	if d.Mask != nil {
		a, r = d.Mask(a), d.Mask(r)
	}
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
// (for readable tables of fixed cases; use Do for binary arguments); "#"
// starts a comment line. It returns how many commands it ran.
func (d *Diff) Lines(text string) int {
	d.t.Helper()
	n := 0
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		d.Do(strings.Fields(line)...)
		n++
	}
	return n
}

var (
	helloVersion = regexp.MustCompile(`\$\d+\r\n7\.\d+\.\d+\r\n`)
	helloID      = regexp.MustCompile(`(\$2\r\nid\r\n):\d+`)
)

// MaskHello hides the server version and client id of HELLO replies:
// Abacus answers as Redis 7.4.0 and the reference server is 7.0.
func MaskHello(s string) string {
	s = helloVersion.ReplaceAllString(s, "$$V\r\nVERSION\r\n")
	return helloID.ReplaceAllString(s, "$1:ID")
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
