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
)

// svDiffPrivate starts Abacus (with opts) and a private redis-server (with
// extra arguments) and pairs them.
func svDiffPrivate(t *testing.T, extra []string, opts ...servertest.Option) (*servertest.Diff, *servertest.Instance) {
	t.Helper()
	r := servertest.PrivateRedis(t, extra...)
	inst := servertest.Start(t, opts...)
	return servertest.DialDiff(t, inst.Addr, r.Addr), inst
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
