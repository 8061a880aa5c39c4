package commands_test

import (
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Passwords and ACL rules never reach the slow log (nor MONITOR, which
// reads the same redacted arguments): ACL SETUSER's user and rules, a
// sensitive CONFIG SET value, MIGRATE's AUTH and AUTH2 credentials,
// whether or not the command succeeds. The logged argument lists are
// compared with redis-server's, newest first.
func TestSlowlogRedactionDiff(t *testing.T) {
	d, _ := servertest.StartDiff(t)
	d.Do("CONFIG", "SET", "slowlog-log-slower-than", "0")
	d.Do("SLOWLOG", "RESET")
	d.Do("ACL", "SETUSER", "bad user", "+get", ">pw")
	d.Do("ACL", "SETUSER", "slowuser", "+get", ">pw")
	d.Do("CONFIG", "SET", "masterauth", "secret")
	d.Do("CONFIG", "SET", "maxmemory", "0", "masteruser", "u", "requirepass", "")
	d.Do("CONFIG", "SET", "requirepass", "pw", "no-such-parameter", "1")
	d.Do("MIGRATE", "127.0.0.1", "1", "k", "0", "10")
	d.Do("MIGRATE", "127.0.0.1", "1", "k", "0", "10", "AUTH", "pw")
	d.Do("MIGRATE", "127.0.0.1", "1", "k", "0", "10", "AUTH2", "user", "pw")
	d.Do("MIGRATE", "127.0.0.1", "1", "k", "0", "10", "AUTH")
	d.Do("CONFIG", "SET", "slowlog-log-slower-than", "-1")
	logged := func(c *servertest.Conn) []string {
		var out []string
		for _, e := range servertest.MustParse(t, c.Do("SLOWLOG", "GET", "-1")).Items {
			out = append(out, strings.Join(e.Items[3].Strings(), " "))
		}
		return out
	}
	a, r := logged(d.A), logged(d.R)
	if strings.Join(a, "\n") != strings.Join(r, "\n") {
		t.Fatalf("slow log\nabacus:\n%s\nredis:\n%s", strings.Join(a, "\n"), strings.Join(r, "\n"))
	}
	if len(a) < 10 || strings.Contains(strings.Join(a, " "), "pw") || strings.Contains(strings.Join(a, " "), "secret") {
		t.Fatalf("a password was logged, or entries are missing: %q", a)
	}
}
