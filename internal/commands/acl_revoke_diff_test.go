package commands_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// TestACLExecRecheckDiff: EXEC checks each queued command against the
// permissions as they are when it runs, both when another client changed
// the user's rules after the commands were queued and when an AUTH
// queued earlier in the transaction changed the user; the refusals and
// their ACL LOG entries (context multi) are Redis's.
func TestACLExecRecheckDiff(t *testing.T) {
	inst := servertest.Start(t)
	r := servertest.PrivateRedis(t)
	admin := servertest.DialDiff(t, inst.Addr, r.Addr)
	admin.Lines(`ACL SETUSER alice on >pw +@all ~* &*
ACL SETUSER bob on >pw +get ~k*`)
	c := servertest.DialDiff(t, inst.Addr, r.Addr)
	c.Lines(`AUTH alice pw
MULTI
SET foo bar
GET kx
GET zz
PUBLISH ch x
PING`)
	admin.Do("ACL", "SETUSER", "alice", "-set", "resetkeys", "~k*", "resetchannels")
	c.Do("EXEC")
	c2 := servertest.DialDiff(t, inst.Addr, r.Addr)
	c2.Lines(`MULTI
AUTH bob pw
GET k1
GET z1
SET k1 v
EXEC`)
	// Unchanged rules: the transaction runs as queued.
	c2.Lines(`MULTI
GET k1
EXEC`)
	compareACLLog(t, admin)
}

func compareACLLog(t *testing.T, admin *servertest.Diff) {
	t.Helper()
	req := servertest.Encode("ACL", "LOG", "200")
	admin.A.Write(req)
	admin.R.Write(req)
	if a, b := maskACLLog(admin.A.Read()), maskACLLog(admin.R.Read()); a != b {
		t.Fatalf("ACL LOG differs:\n abacus: %q\n  redis: %q", a, b)
	}
}

// TestACLRevokeSubscribersDiff: SETUSER that takes a channel away from a
// user disconnects its subscribers whose subscriptions it no longer
// allows, and nobody else, as redis-server does; DELUSER disconnects all
// its clients.
func TestACLRevokeSubscribersDiff(t *testing.T) {
	inst := servertest.Start(t)
	r := servertest.PrivateRedis(t)
	cases := []struct {
		name          string
		before        []string
		sub           []string
		change        []string
		killed, plain bool // the subscriber closed; the plain client closed
	}{
		{"narrowed, still allowed", []string{"&ch*"}, []string{"SUBSCRIBE", "ch1"}, []string{"resetchannels", "&ch1"}, false, false},
		{"revoked", []string{"&ch*"}, []string{"SUBSCRIBE", "ch1"}, []string{"resetchannels", "&other"}, true, false},
		{"pattern no longer literal", []string{"&ch*"}, []string{"PSUBSCRIBE", "ch*"}, []string{"resetchannels", "&ch1"}, true, false},
		{"pattern kept", []string{"&ch*"}, []string{"PSUBSCRIBE", "ch*"}, []string{"&more"}, false, false},
		{"all to some", []string{"allchannels"}, []string{"SUBSCRIBE", "ch1"}, []string{"resetchannels", "&other"}, true, false},
		{"all to none", []string{"allchannels"}, []string{"SUBSCRIBE", "ch1"}, []string{"resetchannels"}, true, false},
		{"some to all", []string{"&ch*"}, []string{"SUBSCRIBE", "ch1"}, []string{"allchannels"}, false, false},
		{"allowed by a selector", []string{"&ch*"}, []string{"SUBSCRIBE", "ch1"}, []string{"resetchannels", "(&ch1 +@all)"}, false, false},
		{"shard channel", []string{"&ch*"}, []string{"SSUBSCRIBE", "ch1"}, []string{"resetchannels", "&x"}, true, false},
		{"reset", []string{"&ch*"}, []string{"SUBSCRIBE", "ch1"}, []string{"reset"}, true, false},
		{"commands only", []string{"&ch*"}, []string{"SUBSCRIBE", "ch1"}, []string{"-get"}, false, false},
		{"off", []string{"&ch*"}, []string{"SUBSCRIBE", "ch1"}, []string{"off"}, false, false},
	}
	for _, tc := range cases {
		for _, addr := range []string{inst.Addr, r.Addr} {
			admin := servertest.Dial(t, addr)
			admin.Do("ACL", "DELUSER", "alice")
			if got := admin.Do(append([]string{"ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~*"}, tc.before...)...); got != "+OK\r\n" {
				t.Fatalf("%s: %q", tc.name, got)
			}
			sub, plain := servertest.Dial(t, addr), servertest.Dial(t, addr)
			sub.Do("AUTH", "alice", "pw")
			plain.Do("AUTH", "alice", "pw")
			sub.Do(tc.sub...)
			if got := admin.Do(append([]string{"ACL", "SETUSER", "alice"}, tc.change...)...); got != "+OK\r\n" {
				t.Fatalf("%s: %q", tc.name, got)
			}
			for _, x := range []struct {
				c    *servertest.Conn
				dead bool
				what string
			}{{sub, tc.killed, "subscriber"}, {plain, tc.plain, "plain client"}} {
				if x.dead {
					x.c.ExpectClosed()
				} else if got := x.c.Do("PING"); got == "" {
					t.Fatalf("%s on %s: %s closed", tc.name, addr, x.what)
				}
			}
		}
	}
	// DELUSER: every client of the user, subscribed or not, the caller
	// too (after its reply).
	for _, addr := range []string{inst.Addr, r.Addr} {
		admin := servertest.Dial(t, addr)
		admin.Do("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~*", "&*")
		sub, plain, self := servertest.Dial(t, addr), servertest.Dial(t, addr), servertest.Dial(t, addr)
		for _, c := range []*servertest.Conn{sub, plain, self} {
			c.Do("AUTH", "alice", "pw")
		}
		sub.Do("SUBSCRIBE", "x")
		if got := self.Do("ACL", "DELUSER", "alice"); got != ":1\r\n" {
			t.Fatalf("DELUSER on %s: %q", addr, got)
		}
		for _, c := range []*servertest.Conn{sub, plain, self} {
			c.ExpectClosed()
		}
		if got := admin.Do("PING"); got != "+PONG\r\n" {
			t.Fatalf("admin on %s: %q", addr, got)
		}
	}
}

// TestACLLoadDisconnectsDiff: ACL LOAD makes every user anew, so the
// clients logged in as a user other than default are disconnected (the
// caller after its reply), as Redis 7.0 does; default's are kept.
func TestACLLoadDisconnectsDiff(t *testing.T) {
	dir := t.TempDir()
	files := [2]string{filepath.Join(dir, "a.acl"), filepath.Join(dir, "r.acl")}
	for _, f := range files {
		if err := os.WriteFile(f, []byte("user default on nopass ~* &* +@all\nuser alice on >pw ~* &* +@all\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inst := servertest.Start(t, servertest.WithConfig("aclfile", files[0]))
	r := servertest.PrivateRedis(t, "--aclfile", files[1])
	for _, addr := range []string{inst.Addr, r.Addr} {
		def, alice, self := servertest.Dial(t, addr), servertest.Dial(t, addr), servertest.Dial(t, addr)
		def.Do("ACL", "LOAD") // the test server does not read aclfile at start
		def.Do("AUTH", "default", "x")
		for _, c := range []*servertest.Conn{alice, self} {
			if got := c.Do("AUTH", "alice", "pw"); got != "+OK\r\n" {
				t.Fatalf("AUTH alice on %s: %q", addr, got)
			}
		}
		if got := self.Do("ACL", "LOAD"); got != "+OK\r\n" {
			t.Fatalf("ACL LOAD on %s: %q", addr, got)
		}
		alice.ExpectClosed()
		self.ExpectClosed()
		if got := def.Do("ACL", "WHOAMI"); got != "$7\r\ndefault\r\n" {
			t.Fatalf("default's client on %s: %q", addr, got)
		}
	}
}

// TestACLDeniedCounters: INFO's acl_access_denied_* (Redis 7.2's fields)
// count refusals by reason, as ACL LOG's entries do.
func TestACLDeniedCounters(t *testing.T) {
	inst := servertest.Start(t)
	admin := inst.Raw(t)
	admin.Do("ACL", "SETUSER", "u", "on", ">pw", "+get", "+publish", "~k*", "&c*")
	c := inst.Raw(t)
	c.Do("AUTH", "u", "wrong")
	c.Do("AUTH", "nobody", "x")
	c.Do("AUTH", "u", "pw")
	c.Do("SET", "k", "v")
	c.Do("GET", "z")
	c.Do("GET", "z")
	c.Do("PUBLISH", "d", "x")
	c.Do("EVAL", "return redis.call('get', 'z')", "0")
	info := servertest.BulkBody(t, admin.Do("INFO", "stats"))
	want := map[string]string{"acl_access_denied_auth": "2", "acl_access_denied_cmd": "2", "acl_access_denied_key": "2", "acl_access_denied_channel": "1"}
	for _, line := range strings.Split(info, "\r\n") {
		k, v, _ := strings.Cut(line, ":")
		if w, ok := want[k]; ok {
			if v != w {
				t.Errorf("%s: %s, want %s", k, v, w)
			}
			delete(want, k)
		}
	}
	if len(want) > 0 {
		t.Errorf("INFO stats lacks %v", want)
	}
}
