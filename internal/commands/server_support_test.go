package commands_test

// Helpers for the tests of CONFIG, INFO, COMMAND, DEBUG, MEMORY, SLOWLOG,
// LATENCY, TIME and SHUTDOWN. Their names start with "sv" so that they
// cannot collide with other families' test helpers in this package.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// svPrivateRedis starts a redis-server of the test's own (CONFIG SET on
// the shared one would leak into other tests), stopped at the end.
func svPrivateRedis(t *testing.T, extra ...string) *servertest.RedisServer {
	t.Helper()
	testenv.NeedRedis(t)
	r, err := servertest.StartRedis(extra...)
	if err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(r.Stop)
	return r
}

// svPair sends the same commands to Abacus and to a redis-server and
// requires byte-identical replies.
type svPair struct {
	t    *testing.T
	A, R *servertest.Conn
}

func svNewPair(t *testing.T, inst *servertest.Instance, redisAddr string) *svPair {
	return &svPair{t: t, A: inst.Raw(t), R: servertest.Dial(t, redisAddr)}
}

// svDiffPrivate starts Abacus (with opts) and a private redis-server (with
// extra arguments) and pairs them.
func svDiffPrivate(t *testing.T, extra []string, opts ...servertest.Option) (*svPair, *servertest.Instance) {
	t.Helper()
	r := svPrivateRedis(t, extra...)
	inst := servertest.Start(t, opts...)
	return svNewPair(t, inst, r.Addr), inst
}

// Do sends one command to both and compares the replies; it returns
// Abacus's.
func (p *svPair) Do(args ...string) string {
	p.t.Helper()
	req := servertest.Encode(args...)
	p.A.Write(req)
	p.R.Write(req)
	a, r := p.A.Read(), p.R.Read()
	if a != r {
		p.t.Errorf("%q\n abacus: %q\n  redis: %q", args, a, r)
	}
	return a
}

// Lines runs one command per line, split on spaces; '#' lines are comments.
func (p *svPair) Lines(text string) int {
	p.t.Helper()
	n := 0
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p.Do(strings.Fields(line)...)
		n++
	}
	return n
}

// svInfoFields parses INFO text into section -> field -> value, checking
// the layout as it goes.
func svInfoFields(t testing.TB, text string) (order []string, fields map[string]map[string]string) {
	t.Helper()
	fields = map[string]map[string]string{}
	if !strings.HasSuffix(text, "\r\n") && text != "" {
		t.Fatalf("INFO does not end with CRLF: %q", text[max(0, len(text)-40):])
	}
	var cur string
	for _, line := range strings.Split(strings.TrimSuffix(text, "\r\n"), "\r\n") {
		switch {
		case line == "":
			cur = ""
		case strings.HasPrefix(line, "# "):
			cur = strings.ToLower(line[2:])
			order = append(order, cur)
			fields[cur] = map[string]string{}
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok || cur == "" {
				t.Fatalf("bad INFO line %q (section %q)", line, cur)
			}
			fields[cur][k] = v
		}
	}
	return order, fields
}

func svMustInt(t testing.TB, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%q is not an integer", s)
	}
	return n
}

func svCmd(args ...string) string { return fmt.Sprintf("%q", args) }
