package commands_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// TestClientDiff compares the CLIENT subcommands whose replies do not
// depend on connection details with Redis 7.0.
func TestClientDiff(t *testing.T) {
	inst := servertest.Start(t)
	p := servertest.DialDiff(t, inst.Addr, servertest.Redis(t).Addr)
	p.Mask = servertest.MaskHello
	p.Lines(`
		CLIENT
		CLIENT foo
		CLIENT ID x
		CLIENT INFO x
		CLIENT SETNAME
		CLIENT SETNAME a b
		CLIENT GETNAME
		CLIENT SETNAME name1
		CLIENT GETNAME
		CLIENT SETNAME ~!@#$%^&*()_+
		CLIENT GETNAME
		CLIENT GETNAME x
		CLIENT KILL
		CLIENT KILL 1.2.3.4:5
		CLIENT KILL ID
		CLIENT KILL ADDR
		CLIENT KILL ID x
		CLIENT KILL ID 0
		CLIENT KILL ID -1
		CLIENT KILL ID 999999
		CLIENT KILL ADDR 1.2.3.4:5
		CLIENT KILL LADDR 1.2.3.4:5
		CLIENT KILL FOO bar
		CLIENT KILL TYPE foo
		CLIENT KILL TYPE pubsub
		CLIENT KILL TYPE master
		CLIENT KILL TYPE slave
		CLIENT KILL TYPE replica SKIPME no
		CLIENT KILL SKIPME maybe
		CLIENT KILL SKIPME yes ID
		CLIENT KILL USER nobody
		CLIENT KILL USER nobody ID x
		CLIENT KILL ID 999998 ID x
		CLIENT KILL a b c
		CLIENT LIST TYPE foo
		CLIENT LIST ID
		CLIENT LIST ID x
		CLIENT LIST ID 999998 x
		CLIENT LIST ID 0
		CLIENT LIST ID 99999
		CLIENT LIST ID 999998 -5
		CLIENT LIST x
		CLIENT LIST type
		CLIENT LIST TYPE normal x
		CLIENT LIST TYPE master
		CLIENT LIST TYPE replica
		CLIENT LIST TYPE slave
		CLIENT LIST TYPE pubsub
		CLIENT REPLY
		CLIENT REPLY foo
		CLIENT REPLY on
		CLIENT REPLY OFF x
		CLIENT NO-EVICT
		CLIENT NO-EVICT maybe
		CLIENT NO-EVICT on
		CLIENT NO-EVICT OFF
		CLIENT PAUSE
		CLIENT PAUSE x
		CLIENT PAUSE 1.5
		CLIENT PAUSE -1
		CLIENT PAUSE 99999999999999999999
		CLIENT PAUSE x FOO
		CLIENT PAUSE -5 FOO
		CLIENT PAUSE 10 FOO
		CLIENT PAUSE 10 all x
		CLIENT PAUSE 0
		CLIENT PAUSE 0 WRITE
		CLIENT UNPAUSE x
		CLIENT UNPAUSE
		CLIENT HELP x
	`)
	p.Do("CLIENT", "SETNAME", "a\nb")
	p.Do("CLIENT", "SETNAME", "é")
	p.Do("CLIENT", "SETNAME", "")
	p.Do("CLIENT", "GETNAME")
	p.Do("HELLO", "3")
	p.Do("CLIENT", "GETNAME")
	p.Do("CLIENT", "LIST", "ID", "0")
	p.Do("CLIENT", "KILL", "ID", "99999")
	t.Logf("%d commands compared", p.N)
}

const clientListFields = "id addr laddr fd name age idle flags db sub psub ssub multi qbuf qbuf-free argv-mem multi-mem obl oll omem tot-mem events cmd user redir resp lib-name lib-ver"

// TestClientList checks CLIENT LIST and CLIENT INFO: Redis 7's fields in
// order, the values Abacus knows, and the TYPE and ID filters.
func TestClientList(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(1_700_000_000_000))
	a, b := inst.Raw(t), inst.Raw(t)
	idA := strings.TrimSpace(strings.TrimPrefix(a.Do("CLIENT", "ID"), ":"))
	idB := strings.TrimSpace(strings.TrimPrefix(b.Do("CLIENT", "ID"), ":"))
	if na, _ := strconv.Atoi(idA); strconv.Itoa(na+1) != idB {
		t.Fatalf("ids %s then %s", idA, idB)
	}
	b.Do("CLIENT", "SETNAME", "bee")
	b.Do("SELECT", "2")
	b.Do("CLIENT", "SETINFO", "lib-name", "go-redis(x,y)")
	b.Do("CLIENT", "SETINFO", "LIB-VER", "9.0.0")
	b.Do("CLIENT", "NO-EVICT", "on")
	b.Do("CLIENT", "NO-TOUCH", "on")
	inst.Clock.Advance(3 * time.Second)
	a.Do("PING")

	body := servertest.BulkBody(t, a.Do("CLIENT", "LIST"))
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if len(lines) != 2 || !strings.HasSuffix(body, "\n") {
		t.Fatalf("CLIENT LIST: %q", body)
	}
	keys, va := servertest.ClientFields(t, lines[0])
	if strings.Join(keys, " ") != clientListFields {
		t.Fatalf("fields:\n got %s\nwant %s", strings.Join(keys, " "), clientListFields)
	}
	_, vb := servertest.ClientFields(t, lines[1])
	if va["id"] != idA || vb["id"] != idB {
		t.Fatalf("ids %s %s, want %s %s (oldest first)", va["id"], vb["id"], idA, idB)
	}
	for k, want := range map[string]string{"name": "", "flags": "N", "db": "0", "cmd": "client|list", "user": "default",
		"resp": "2", "age": "3", "idle": "0", "multi": "-1", "redir": "-1", "laddr": inst.Addr} {
		if va[k] != want {
			t.Errorf("caller %s=%q, want %q", k, va[k], want)
		}
	}
	if va["argv-mem"] != "10" { // "client" + "list"
		t.Errorf("argv-mem=%s", va["argv-mem"])
	}
	for k, want := range map[string]string{"name": "bee", "flags": "eT", "db": "2", "cmd": "client|no-touch",
		"lib-name": "go-redis(x,y)", "lib-ver": "9.0.0", "age": "3", "idle": "3"} {
		if vb[k] != want {
			t.Errorf("other %s=%q, want %q", k, vb[k], want)
		}
	}
	if _, err := strconv.Atoi(va["fd"]); err != nil || va["fd"] == vb["fd"] {
		t.Errorf("fd %q %q", va["fd"], vb["fd"])
	}
	if addr := a.C.LocalAddr().String(); va["addr"] != addr {
		t.Errorf("addr=%s, want %s", va["addr"], addr)
	}

	// CLIENT INFO is the caller's line.
	info := servertest.BulkBody(t, b.Do("CLIENT", "INFO"))
	_, vi := servertest.ClientFields(t, info)
	if vi["id"] != idB || vi["cmd"] != "client|info" || strings.Count(info, "\n") != 1 {
		t.Errorf("CLIENT INFO: %q", info)
	}
	// Filters.
	if body := servertest.BulkBody(t, a.Do("CLIENT", "LIST", "ID", idB, "12345", idA)); strings.Count(body, "\n") != 2 ||
		!strings.HasPrefix(body, "id="+idB+" ") || !strings.Contains(body, "\nid="+idA+" ") {
		t.Errorf("CLIENT LIST ID: %q", body)
	}
	if body := servertest.BulkBody(t, a.Do("CLIENT", "LIST", "TYPE", "NORMAL")); strings.Count(body, "\n") != 2 {
		t.Errorf("CLIENT LIST TYPE normal: %q", body)
	}
	for _, typ := range []string{"master", "replica", "slave", "pubsub"} {
		if r := a.Do("CLIENT", "LIST", "TYPE", typ); r != "$0\r\n\r\n" {
			t.Errorf("CLIENT LIST TYPE %s: %q", typ, r)
		}
	}
	// RESP3: a verbatim string.
	a.Do("HELLO", "3")
	r := a.Do("CLIENT", "INFO")
	if !strings.HasPrefix(r, "=") || !strings.Contains(servertest.BulkBody(t, r), " resp=3 ") {
		t.Errorf("CLIENT INFO over RESP3: %q", r)
	}
	// A monitor shows flag O and is a normal client.
	m := inst.Raw(t)
	m.Do("MONITOR")
	body = servertest.BulkBody(t, a.Do("CLIENT", "LIST", "TYPE", "normal"))
	if !strings.Contains(body, " flags=O ") {
		t.Errorf("monitor not listed with flag O: %q", body)
	}
}

// TestClientSetInfo covers CLIENT SETINFO's validation (Redis 7.2's texts)
// and NO-TOUCH.
func TestClientSetInfo(t *testing.T) {
	inst := servertest.Start(t)
	c := inst.Raw(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"CLIENT", "SETINFO", "lib-name"}, "-ERR wrong number of arguments for 'client|setinfo' command\r\n"},
		{[]string{"CLIENT", "SETINFO", "lib-name", "a", "b"}, "-ERR wrong number of arguments for 'client|setinfo' command\r\n"},
		{[]string{"CLIENT", "SETINFO", "lib-foo", "x"}, "-ERR Unrecognized option 'lib-foo'\r\n"},
		{[]string{"CLIENT", "SETINFO", "LIB-NAME", "a b"}, "-ERR LIB-NAME cannot contain spaces, newlines or special characters.\r\n"},
		{[]string{"CLIENT", "SETINFO", "lib-ver", "1\n2"}, "-ERR lib-ver cannot contain spaces, newlines or special characters.\r\n"},
		{[]string{"CLIENT", "SETINFO", "lib-name", "redis-py"}, "+OK\r\n"},
		{[]string{"CLIENT", "SETINFO", "lib-ver", "5.0.1"}, "+OK\r\n"},
		{[]string{"CLIENT", "SETINFO", "lib-ver", ""}, "+OK\r\n"},
		{[]string{"CLIENT", "NO-TOUCH"}, "-ERR wrong number of arguments for 'client|no-touch' command\r\n"},
		{[]string{"CLIENT", "NO-TOUCH", "maybe"}, "-ERR syntax error\r\n"},
		{[]string{"CLIENT", "NO-TOUCH", "ON"}, "+OK\r\n"},
		{[]string{"CLIENT", "NO-TOUCH", "off"}, "+OK\r\n"},
	} {
		if r := c.Do(tc.args...); r != tc.want {
			t.Errorf("%q: got %q, want %q", tc.args, r, tc.want)
		}
	}
	_, v := servertest.ClientFields(t, servertest.BulkBody(t, c.Do("CLIENT", "INFO")))
	if v["lib-name"] != "redis-py" || v["lib-ver"] != "" || v["flags"] != "N" {
		t.Errorf("CLIENT INFO: %v", v)
	}
}

// TestClientKill covers both forms of CLIENT KILL and every filter.
func TestClientKill(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(1_700_000_000_000))
	admin := inst.Raw(t)
	newVictim := func() (*servertest.Conn, map[string]string) {
		c := inst.Raw(t)
		_, v := servertest.ClientFields(t, servertest.BulkBody(t, c.Do("CLIENT", "INFO")))
		return c, v
	}

	// Old form: by address, +OK, and the victim's connection closes.
	v, info := newVictim()
	if r := admin.Do("CLIENT", "KILL", info["addr"]); r != "+OK\r\n" {
		t.Fatalf("old form: %q", r)
	}
	v.ExpectClosed()
	if r := admin.Do("CLIENT", "KILL", info["addr"]); r != "-ERR No such client\r\n" {
		t.Fatalf("old form again: %q", r)
	}
	// Old form may kill the caller itself, after the reply.
	self, sinfo := newVictim()
	if r := self.Do("CLIENT", "KILL", sinfo["addr"]); r != "+OK\r\n" {
		t.Fatalf("old form self: %q", r)
	}
	self.ExpectClosed()

	// New form: ID, ADDR, LADDR, USER.
	for _, filter := range []string{"ID", "ADDR", "LADDR+ID", "USER+ID"} {
		v, info := newVictim()
		var args []string
		switch filter {
		case "ID":
			args = []string{"ID", info["id"]}
		case "ADDR":
			args = []string{"ADDR", info["addr"]}
		case "LADDR+ID":
			args = []string{"LADDR", info["laddr"], "ID", info["id"]}
		case "USER+ID":
			args = []string{"USER", "default", "ID", info["id"]}
		}
		if r := admin.Do(append([]string{"CLIENT", "KILL"}, args...)...); r != ":1\r\n" {
			t.Fatalf("KILL %s: %q", filter, r)
		}
		v.ExpectClosed()
	}
	// Filters are ANDed.
	v, info = newVictim()
	if r := admin.Do("CLIENT", "KILL", "ID", info["id"], "ADDR", "1.2.3.4:5"); r != ":0\r\n" {
		t.Fatalf("KILL ID and wrong ADDR: %q", r)
	}
	if r := v.Do("PING"); r != "+PONG\r\n" {
		t.Fatalf("victim after a non-matching KILL: %q", r)
	}

	// SKIPME: yes by default in the new form; no kills the caller too,
	// after its reply.
	if r := admin.Do("CLIENT", "KILL", "USER", "default", "ID", info["id"]); r != ":1\r\n" {
		t.Fatalf("KILL USER: %q", r)
	}
	v.ExpectClosed()
	self, sinfo = newVictim()
	if r := self.Do("CLIENT", "KILL", "ID", sinfo["id"]); r != ":0\r\n" {
		t.Fatalf("KILL own ID with SKIPME default: %q", r)
	}
	if r := self.Do("CLIENT", "KILL", "ID", sinfo["id"], "SKIPME", "no"); r != ":1\r\n" {
		t.Fatalf("KILL own ID with SKIPME no: %q", r)
	}
	self.ExpectClosed()

	// MAXAGE kills clients older than the given seconds.
	old, oinfo := newVictim()
	inst.Clock.Advance(10 * time.Second)
	young, yinfo := newVictim()
	for _, tc := range []struct{ args []string }{{[]string{"MAXAGE", "x"}}, {[]string{"MAXAGE", "0"}}, {[]string{"MAXAGE", "-3"}}} {
		r := admin.Do(append([]string{"CLIENT", "KILL"}, tc.args...)...)
		if !strings.HasPrefix(r, "-ERR maxage ") {
			t.Fatalf("KILL %q: %q", tc.args, r)
		}
	}
	if r := admin.Do("CLIENT", "KILL", "MAXAGE", "10", "ID", oinfo["id"]); r != ":0\r\n" {
		t.Fatalf("MAXAGE 10 on a 10 s old client: %q", r)
	}
	if r := admin.Do("CLIENT", "KILL", "MAXAGE", "5", "SKIPME", "yes"); r == ":0\r\n" {
		t.Fatalf("MAXAGE 5: %q", r)
	}
	old.ExpectClosed()
	if r := young.Do("CLIENT", "ID"); r != ":"+yinfo["id"]+"\r\n" {
		t.Fatalf("young client: %q", r)
	}
	// TYPE normal with SKIPME yes kills every other client.
	young2, _ := newVictim()
	r := admin.Do("CLIENT", "KILL", "TYPE", "normal")
	if n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(r, ":"))); n < 2 {
		t.Fatalf("KILL TYPE normal: %q", r)
	}
	young.ExpectClosed()
	young2.ExpectClosed()
	if r := admin.Do("PING"); r != "+PONG\r\n" {
		t.Fatalf("caller after KILL TYPE normal: %q", r)
	}
}

// TestClientKillPipeline: a killed client's pending commands do not run.
func TestClientKillPipeline(t *testing.T) {
	inst := servertest.Start(t)
	self := inst.Raw(t)
	self.Write(servertest.Cat([]string{"SET", "kp", "1"}, []string{"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "no"}, []string{"SET", "kp", "2"}))
	if r := self.Read(); r != "+OK\r\n" {
		t.Fatalf("SET: %q", r)
	}
	if r := self.Read(); r != ":1\r\n" {
		t.Fatalf("KILL: %q", r)
	}
	self.ExpectClosed()
	if v := inst.Client(t).Get(servertest.Ctx, "kp").Val(); v != "1" {
		t.Fatalf("kp = %q: a command after the kill ran", v)
	}
}

// TestClientReplyDiff compares CLIENT REPLY sequences with Redis.
func TestClientReplyDiff(t *testing.T) {
	inst := servertest.Start(t)
	r := servertest.Redis(t)
	c := func(args ...string) []string { return args }
	for i, seq := range [][][]string{
		{c("CLIENT", "REPLY", "OFF"), c("PING"), c("CLIENT", "REPLY", "SKIP"), c("PING"), c("CLIENT", "REPLY", "ON"), c("PING"),
			c("CLIENT", "REPLY", "SKIP"), c("PING"), c("PING"), c("CLIENT", "REPLY", "SKIP"), c("CLIENT", "REPLY", "ON"), c("PING"),
			c("CLIENT", "REPLY", "OFF"), c("RESET"), c("PING")},
		{c("CLIENT", "REPLY", "SKIP"), c("CLIENT", "REPLY", "SKIP"), c("PING", "a"), c("PING", "b"), c("CLIENT", "REPLY", "OFF"), c("NOSUCH"), c("QUIT")},
		{c("CLIENT", "REPLY", "SKIP"), c("NOSUCH"), c("PING", "shown")},
		{c("CLIENT", "REPLY", "SKIP"), c("GET"), c("PING", "shown")},
		{c("CLIENT", "REPLY", "OFF"), c("SET", "r", "1"), c("CLIENT", "REPLY", "ON"), c("GET", "r")},
		{c("CLIENT", "REPLY", "OFF"), c("CLIENT", "REPLY", "bogus"), c("CLIENT", "REPLY", "ON")},
	} {
		data := servertest.Cat(seq...)
		data = append(data, "*1\r\n$4\r\nPING\r\n"...)
		if a, rr := rawAll(t, inst.Addr, data), rawAll(t, r.Addr, data); a != rr {
			t.Errorf("sequence %d:\n abacus %q\n  redis %q", i, a, rr)
		}
	}
	// A protocol error is not answered while replies are off; the
	// connection still closes.
	data := append(servertest.Cat(c("CLIENT", "REPLY", "OFF")), "*x\r\n"...)
	if a, rr := rawAll(t, inst.Addr, data), rawAll(t, r.Addr, data); a != rr || a != "" {
		t.Errorf("protocol error with replies off: abacus %q, redis %q", a, rr)
	}
}

// TestClientPause: PAUSE WRITE holds writes (the client shows flag b) but
// not reads, ALL holds everything, the pause ends at its deadline or with
// UNPAUSE, and a pause never shortens or weakens one in force.
func TestClientPause(t *testing.T) {
	inst := servertest.Start(t, servertest.WithManualClock(1_700_000_000_000))
	admin, w := inst.Raw(t), inst.Raw(t)
	wid := strings.TrimSpace(strings.TrimPrefix(w.Do("CLIENT", "ID"), ":"))
	waitBlocked := func() {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, v := servertest.ClientFields(t, servertest.BulkBody(t, admin.Do("CLIENT", "LIST", "ID", wid)))
			if strings.Contains(v["flags"], "b") {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("client never held by the pause: flags=%s", v["flags"])
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	if r := admin.Do("CLIENT", "PAUSE", "1000", "WRITE"); r != "+OK\r\n" {
		t.Fatalf("PAUSE: %q", r)
	}
	w.Write(servertest.Cat([]string{"GET", "pk"}, []string{"SET", "pk", "1"}, []string{"GET", "pk"}))
	if r := w.Read(); r != "$-1\r\n" {
		t.Fatalf("GET during PAUSE WRITE: %q", r)
	}
	waitBlocked()
	if r := admin.Do("GET", "pk"); r != "$-1\r\n" {
		t.Fatalf("SET ran during the pause: %q", r)
	}
	// A shorter ALL pause upgrades the type but keeps the later end.
	if r := admin.Do("CLIENT", "PAUSE", "10", "ALL"); r != "+OK\r\n" {
		t.Fatalf("PAUSE ALL: %q", r)
	}
	inst.Clock.Advance(500 * time.Millisecond)
	admin.Write(servertest.Encode("ECHO", "held"))
	// Both clients are held now; the end of the pause releases them.
	inst.Clock.Advance(501 * time.Millisecond)
	if r := w.Read(); r != "+OK\r\n" {
		t.Fatalf("SET after the pause: %q", r)
	}
	if r := w.Read(); r != "$1\r\n1\r\n" {
		t.Fatalf("GET after the pause: %q", r)
	}
	if r := admin.Read(); r != "$4\r\nheld\r\n" {
		t.Fatalf("admin ECHO after the pause: %q", r)
	}
	// UNPAUSE releases a WRITE pause at once.
	admin.Do("CLIENT", "PAUSE", "100000", "WRITE")
	w.Write(servertest.Encode("SET", "pk", "2"))
	waitBlocked()
	if r := admin.Do("CLIENT", "UNPAUSE"); r != "+OK\r\n" {
		t.Fatalf("UNPAUSE: %q", r)
	}
	if r := w.Read(); r != "+OK\r\n" {
		t.Fatalf("SET after UNPAUSE: %q", r)
	}
	// The pausing client is paused too, for the rest of its pipeline; its
	// earlier replies are sent first. Commands refused anyway are not held.
	admin.Write(servertest.Cat([]string{"CLIENT", "PAUSE", "2000"}, []string{"NOSUCH"}, []string{"ECHO", "later"}))
	if r := admin.Read(); r != "+OK\r\n" {
		t.Fatalf("PAUSE: %q", r)
	}
	if r := admin.Read(); !strings.HasPrefix(r, "-ERR unknown command") {
		t.Fatalf("unknown command during pause: %q", r)
	}
	inst.Clock.Advance(2001 * time.Millisecond)
	if r := admin.Read(); r != "$5\r\nlater\r\n" {
		t.Fatalf("ECHO after the pause: %q", r)
	}
}

// TestClientPauseMayReplicate: PAUSE WRITE also holds the commands that
// may replicate without writing (PFCOUNT, PUBLISH, a script that declares
// no flags), but not EVAL_RO or a script that declares no-writes (Redis
// 7.0's getCommandFlags).
func TestClientPauseMayReplicate(t *testing.T) {
	inst := servertest.Start(t)
	admin := inst.Raw(t)
	for _, held := range [][]string{
		{"PFCOUNT", "hll"},
		{"PUBLISH", "ch", "m"},
		{"EVAL", "return 1", "0"},
		{"EVAL", "#!lua\nreturn 1", "0"},
	} {
		w := inst.Raw(t)
		id := strings.TrimSpace(strings.TrimPrefix(w.Do("CLIENT", "ID"), ":"))
		servertest.ExpectReply(t, admin.Do("CLIENT", "PAUSE", "100000", "WRITE"), "+OK\r\n")
		w.Write(servertest.Cat([]string{"EVAL_RO", "return 2", "0"}, []string{"EVAL", "#!lua flags=no-writes\nreturn 3", "0"}, held))
		servertest.ExpectReply(t, w.Read(), ":2\r\n")
		servertest.ExpectReply(t, w.Read(), ":3\r\n")
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
			_, v := servertest.ClientFields(t, servertest.BulkBody(t, admin.Do("CLIENT", "LIST", "ID", id)))
			if strings.Contains(v["flags"], "b") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%q was not held by the pause: flags=%s", held, v["flags"])
			}
		}
		servertest.ExpectReply(t, admin.Do("CLIENT", "UNPAUSE"), "+OK\r\n")
		if r := w.Read(); strings.HasPrefix(r, "-") {
			t.Fatalf("%q after the pause: %q", held, r)
		}
	}
	// EXEC of scripts that declare no-writes is not held either.
	servertest.ExpectReply(t, admin.Do("CLIENT", "PAUSE", "100000", "WRITE"), "+OK\r\n")
	w := inst.Raw(t)
	servertest.ExpectReply(t, w.Do("MULTI"), "+OK\r\n")
	servertest.ExpectReply(t, w.Do("EVAL", "#!lua flags=no-writes\nreturn 12", "0"), "+QUEUED\r\n")
	servertest.ExpectReply(t, w.Do("EXEC"), "*1\r\n:12\r\n")
	servertest.ExpectReply(t, admin.Do("CLIENT", "UNPAUSE"), "+OK\r\n")
}

// TestClientHelp: CLIENT HELP is redis-server 7.0's, line for line and in
// its order, with only the lines of the later subcommands and KILL
// filters Abacus has added.
func TestClientHelp(t *testing.T) {
	inst := servertest.Start(t)
	r := servertest.PrivateRedis(t)
	help := func(addr string) []string {
		lines, err := servertest.NewClient(t, addr).Do(servertest.Ctx, "CLIENT", "HELP").StringSlice()
		if err != nil {
			t.Fatal(err)
		}
		return lines
	}
	got, want := help(inst.Addr), help(r.Addr)
	extra := map[string]bool{}
	for _, l := range []string{
		"SETINFO <option> <value>", "    Set client meta attr. Options are:",
		"    * LIB-NAME: the client lib name.", "    * LIB-VER: the client lib version.",
		"NO-TOUCH (ON|OFF)", "    Will not touch LRU/LFU stats when this mode is on.",
		"    * ID <client-id>", "      Kill connections by client id.",
		"    * MAXAGE <maxage>", "      Kill connections older than the specified age.",
	} {
		extra[l] = true
	}
	i := 0
	for _, l := range got {
		switch {
		case i < len(want) && l == want[i]:
			i++
		case !extra[l]:
			t.Errorf("line %q is not redis-server's (next of its lines: %q)", l, want[min(i, len(want)-1)])
		}
	}
	if i < len(want) {
		t.Errorf("redis-server's lines from %q on are missing", want[i])
	}
}

// TestClientGoRedis drives the CLIENT family through go-redis.
func TestClientGoRedis(t *testing.T) {
	inst := servertest.Start(t)
	rdb := inst.Client(t)
	ctx := servertest.Ctx
	conn := rdb.Conn()
	defer conn.Close()
	if err := conn.ClientSetName(ctx, "gr").Err(); err != nil {
		t.Fatal(err)
	}
	if n := conn.ClientGetName(ctx).Val(); n != "gr" {
		t.Fatalf("GETNAME %q", n)
	}
	id := conn.ClientID(ctx).Val()
	info, err := conn.ClientInfo(ctx).Result()
	if err != nil || info.ID != id || info.Name != "gr" || info.DB != 0 {
		t.Fatalf("ClientInfo %+v %v", info, err)
	}
	list := rdb.ClientList(ctx).Val()
	if !strings.Contains(list, fmt.Sprintf("id=%d ", id)) || !strings.Contains(list, " name=gr ") {
		t.Fatalf("ClientList %q", list)
	}
	if err := rdb.ClientPause(ctx, time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ClientUnpause(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.ClientKillByFilter(ctx, "ID", strconv.FormatInt(id, 10)).Result(); err != nil || n != 1 {
		t.Fatalf("kill: %d %v", n, err)
	}
}
