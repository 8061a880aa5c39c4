package commands_test

import (
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// MIGRATE AUTH2 logs in to the target as an ACL user, whose key
// permissions the target applies: Abacus and redis-server, as sources,
// get the same replies from a redis-server target.
func TestMigrateAuth2ACLUserDiff(t *testing.T) {
	target := servertest.PrivateRedis(t)
	tc := servertest.Dial(t, target.Addr)
	tc.Do("ACL", "SETUSER", "mover", "on", ">pw", "+@all", "~mv:*")
	host, port := hostPort(t, target.Addr)
	d, _ := servertest.StartDiff(t)
	d.Do("SET", "mv:1", "a")
	d.Do("SET", "other:1", "b")
	d.Do("MIGRATE", host, port, "mv:1", "0", "5000", "COPY", "REPLACE", "AUTH2", "mover", "pw")
	d.Do("MIGRATE", host, port, "mv:1", "0", "5000", "COPY", "REPLACE", "AUTH2", "mover", "wrong")
	d.Do("MIGRATE", host, port, "other:1", "0", "5000", "COPY", "REPLACE", "AUTH2", "mover", "pw")
	d.Do("MIGRATE", host, port, "", "0", "5000", "COPY", "REPLACE", "AUTH2", "mover", "pw", "KEYS", "mv:1", "other:1")
	if got := tc.Do("EXISTS", "mv:1", "other:1"); got != ":1\r\n" {
		t.Fatalf("on the target: %q", got)
	}
}
