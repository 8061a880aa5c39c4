package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/servertest"
)

// fakeCluster is a ClusterView for tests: this node owns slots 0..8191,
// other owns the rest, and over overrides single slots.
type fakeCluster struct {
	down  bool
	other string
	// replica: this node is a replica of other (its slots are readable
	// with READONLY).
	replica bool
	over    map[int]engine.SlotRoute
}

func (f *fakeCluster) Route(slot int) engine.SlotRoute {
	if r, ok := f.over[slot]; ok {
		return r
	}
	if slot < 8192 {
		return engine.SlotRoute{Served: true, Self: true}
	}
	return engine.SlotRoute{Served: true, Addr: f.other, OfMyPrimary: f.replica}
}

func (f *fakeCluster) OK() bool { return !f.down }

// startCluster starts an in-process server in cluster mode with view f.
func startCluster(t *testing.T, f *fakeCluster, opts ...servertest.Option) *servertest.Instance {
	t.Helper()
	inst := servertest.Start(t, opts...)
	inst.Srv.Lock()
	inst.Srv.Env.SetCluster(f)
	inst.Srv.Unlock()
	return inst
}

// change alters the view under the server lock, as the cluster layer does.
func change(inst *servertest.Instance, fn func()) {
	inst.Srv.Lock()
	defer inst.Srv.Unlock()
	fn()
}

// expectLines sends each "COMMAND args -> reply" line (reply in
// redis-cli's spirit: the raw RESP with \r\n written as ";") and compares.
// In arguments "_" stands for a space and \n for a newline; a reply ending
// in "..." is a prefix.
func expectLines(t *testing.T, c *servertest.Conn, text string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		cmd, want, ok := strings.Cut(line, " -> ")
		if !ok {
			t.Fatalf("bad line %q", line)
		}
		args := strings.Fields(cmd)
		for i, a := range args {
			args[i] = strings.ReplaceAll(strings.ReplaceAll(a, "_", " "), `\n`, "\n")
		}
		got := c.Do(args...)
		got = strings.ReplaceAll(got, "\r\n", ";")
		if strings.HasSuffix(want, "...") {
			if !strings.HasPrefix(got, strings.TrimSuffix(want, "...")) {
				t.Errorf("%s: got %q, want %q", cmd, got, want)
			}
		} else if got != want {
			t.Errorf("%s: got %q, want %q", cmd, got, want)
		}
	}
}

// Slots of the keys below: bar 5061 and hello 866 (this node's), foo 12182
// (the other node's); {bar}x is in bar's slot, {foo}y in foo's.

func TestClusterRouting(t *testing.T) {
	f := &fakeCluster{other: "127.0.0.1:7777"}
	inst := startCluster(t, f)
	c := inst.Raw(t)
	expectLines(t, c, `
		GET bar -> $-1;
		GET foo -> -MOVED 12182 127.0.0.1:7777;
		SET foo 1 -> -MOVED 12182 127.0.0.1:7777;
		MGET bar hello -> -CROSSSLOT Keys in request don't hash to the same slot;
		MGET bar foo -> -CROSSSLOT Keys in request don't hash to the same slot;
		MGET foo bar -> -CROSSSLOT Keys in request don't hash to the same slot;
		MSET bar 1 {bar}x 2 -> +OK;
		MGET bar {bar}x bar -> *3;$1;1;$1;2;$1;1;
		PING -> +PONG;
		DBSIZE -> :2;
		ZUNIONSTORE {bar}d 2 bar hello -> -CROSSSLOT Keys in request don't hash to the same slot;
		COMMAND GETKEYS GET foo -> *1;$3;foo;
		EVAL return_1 2 bar hello -> -CROSSSLOT Keys in request don't hash to the same slot;
		EVAL return_1 1 foo -> -MOVED 12182 127.0.0.1:7777;
		EVAL return_1 0 -> :1;
		SPUBLISH foo m -> -MOVED 12182 127.0.0.1:7777;
		SPUBLISH bar m -> :0;
		SSUBSCRIBE bar hello -> -CROSSSLOT Keys in request don't hash to the same slot;
		EVAL #!lua_flags=no-cluster\nreturn_1 0 -> -ERR Can not run script on cluster, 'no-cluster' flag is set.;
	`)
	// Scripts: an undeclared key elsewhere, and (with flags) in another
	// local slot than the first one touched.
	for _, tc := range []struct{ script, want string }{
		{"return redis.call('get','foo')", "-ERR Script attempted to access a non local key in a cluster node script: "},
		{"redis.call('get','bar') return redis.call('get','hello')", "$-1\r\n"},
		{"#!lua\nredis.call('get','bar') return redis.call('get','hello')", "-ERR Script attempted to access keys that do not hash to the same slot script: "},
		{"#!lua flags=allow-cross-slot-keys\nredis.call('get','bar') return redis.call('get','hello')", "$-1\r\n"},
	} {
		if got := c.Do("EVAL", tc.script, "0"); !strings.HasPrefix(got, tc.want) {
			t.Errorf("EVAL %q: got %q, want %q...", tc.script, got, tc.want)
		}
	}
	if got := c.Do("EVAL", "#!lua\nreturn redis.call('get','hello')", "1", "bar"); !strings.HasPrefix(got, "-ERR Script attempted to access keys that do not hash to the same slot") {
		t.Errorf("undeclared key in another slot than the declared ones: %q", got)
	}
}

func TestClusterRoutingMulti(t *testing.T) {
	f := &fakeCluster{other: "127.0.0.1:7777"}
	inst := startCluster(t, f)
	c := inst.Raw(t)
	expectLines(t, c, `
		# Queued commands each served here, but in two slots: EXEC refuses
		# and the transaction is gone.
		MULTI -> +OK;
		SET bar 1 -> +QUEUED;
		SET hello 2 -> +QUEUED;
		EXEC -> -CROSSSLOT Keys in request don't hash to the same slot;
		EXEC -> -ERR EXEC without MULTI;
		GET bar -> $-1;
		# A queued command redirected dooms the transaction.
		MULTI -> +OK;
		SET bar 1 -> +QUEUED;
		GET foo -> -MOVED 12182 127.0.0.1:7777;
		EXEC -> -EXECABORT Transaction discarded because of previous errors.;
		MULTI -> +OK;
		SET {bar}x 1 -> +QUEUED;
		GET bar -> +QUEUED;
		PING -> +QUEUED;
		EXEC -> *3;+OK;$-1;+PONG;
		MULTI -> +OK;
		PING -> +QUEUED;
		EXEC -> *1;+PONG;
	`)
	// The slot moves away between queuing and EXEC.
	expectLines(t, c, `
		MULTI -> +OK;
		GET bar -> +QUEUED;
	`)
	change(inst, func() { f.over = map[int]engine.SlotRoute{5061: {Served: true, Addr: "127.0.0.1:7777"}} })
	expectLines(t, c, `
		EXEC -> -MOVED 5061 127.0.0.1:7777;
		EXEC -> -ERR EXEC without MULTI;
	`)
}

func TestClusterRoutingMigration(t *testing.T) {
	f := &fakeCluster{other: "127.0.0.1:7777"}
	inst := startCluster(t, f)
	c := inst.Raw(t)
	expectLines(t, c, `
		SET {bar}x 1 -> +OK;
	`)
	change(inst, func() {
		f.over = map[int]engine.SlotRoute{
			5061:  {Served: true, Self: true, MigratingTo: "127.0.0.1:7778"},
			12182: {Served: true, Addr: "127.0.0.1:7777", Importing: true},
		}
	})
	expectLines(t, c, `
		# Migrating away: keys still here are served, missing ones ASK.
		GET {bar}x -> $1;1;
		GET bar -> -ASK 5061 127.0.0.1:7778;
		SET bar 1 -> -ASK 5061 127.0.0.1:7778;
		MGET {bar}x bar -> -TRYAGAIN Multiple keys request during rehashing of slot;
		SPUBLISH bar m -> :0;
		MIGRATE 127.0.0.1 1 bar 0 10 -> +NOKEY;
		# Importing: only after ASKING, for one command.
		GET foo -> -MOVED 12182 127.0.0.1:7777;
		ASKING -> +OK;
		GET foo -> $-1;
		GET foo -> -MOVED 12182 127.0.0.1:7777;
		ASKING -> +OK;
		MGET foo {foo}y -> -TRYAGAIN Multiple keys request during rehashing of slot;
		ASKING -> +OK;
		SET foo 1 -> +OK;
		ASKING -> +OK;
		MGET foo foo -> *2;$1;1;$1;1;
		# ASKING holds for the transaction it precedes.
		ASKING -> +OK;
		MULTI -> +OK;
		GET foo -> +QUEUED;
		GET foo -> +QUEUED;
		EXEC -> *2;$1;1;$1;1;
		GET foo -> -MOVED 12182 127.0.0.1:7777;
		# RESTORE-ASKING needs no ASKING.
		RESTORE-ASKING {foo}z 0 x -> -ERR DUMP payload version or checksum are wrong;
		RESTORE {foo}z 0 x -> -MOVED 12182 127.0.0.1:7777;
	`)
}

func TestClusterRoutingDown(t *testing.T) {
	f := &fakeCluster{other: "127.0.0.1:7777", down: true}
	inst := startCluster(t, f)
	c := inst.Raw(t)
	change(inst, func() { f.over = map[int]engine.SlotRoute{866: {}} })
	expectLines(t, c, `
		GET bar -> -CLUSTERDOWN The cluster is down;
		SET bar 1 -> -CLUSTERDOWN The cluster is down;
		GET hello -> -CLUSTERDOWN Hash slot not served;
		SPUBLISH bar m -> :0;
		PING -> +PONG;
	`)
	if _, ok := config.Lookup("cluster-allow-reads-when-down"); !ok {
		t.Log("cluster-allow-reads-when-down is not a parameter in this build: its cases not run")
		return
	}
	expectLines(t, c, `
		CONFIG SET cluster-allow-reads-when-down yes -> +OK;
		GET bar -> $-1;
		SET bar 1 -> -CLUSTERDOWN The cluster is down and only accepts read commands;
		GET foo -> -MOVED 12182 127.0.0.1:7777;
	`)
}

func TestClusterRoutingReplica(t *testing.T) {
	f := &fakeCluster{other: "127.0.0.1:7777", replica: true}
	inst := startCluster(t, f)
	c := inst.Raw(t)
	expectLines(t, c, `
		GET foo -> -MOVED 12182 127.0.0.1:7777;
		READONLY -> +OK;
		GET foo -> $-1;
		SET foo 1 -> -MOVED 12182 127.0.0.1:7777;
		MULTI -> +OK;
		GET foo -> +QUEUED;
		EXEC -> *1;$-1;
		MULTI -> +OK;
		GET foo -> +QUEUED;
		SET foo 1 -> -MOVED 12182 127.0.0.1:7777;
		DISCARD -> +OK;
		# A script is a write unless it has no shebang or says no-writes.
		EVAL #!lua\nreturn_1 1 foo -> -MOVED 12182 127.0.0.1:7777;
		EVAL #!lua_flags=no-writes\nreturn_1 1 foo -> :1;
		EVAL return_1 1 foo -> :1;
		READWRITE -> +OK;
		GET foo -> -MOVED 12182 127.0.0.1:7777;
		READONLY -> +OK;
		RESET -> +RESET;
		GET foo -> -MOVED 12182 127.0.0.1:7777;
		SSUBSCRIBE foo -> *3;$10;ssubscribe;$3;foo;:1;
	`)
	c = inst.Raw(t)
	c.Do("READONLY")
	if info := c.Do("CLIENT", "INFO"); !strings.Contains(info, " flags=r ") {
		t.Errorf("CLIENT INFO after READONLY: %q", info)
	}
}

// TestClusterCommandsOff compares ASKING, READONLY and READWRITE with
// redis-server's when cluster mode is off.
func TestClusterCommandsOff(t *testing.T) {
	d, _ := servertest.StartDiff(t)
	d.Lines(`
		ASKING
		READONLY
		READWRITE
		ASKING x
		COMMAND INFO asking readonly readwrite restore-asking
	`)
}

// TestClusterRedirectBlocked: a client blocked on a key whose slot moves
// away is answered -MOVED; with the cluster down every key wait ends with
// -CLUSTERDOWN; shard subscribers of a slot that leaves are unsubscribed.
func TestClusterRedirectBlocked(t *testing.T) {
	f := &fakeCluster{other: "127.0.0.1:7777"}
	inst := startCluster(t, f)
	env := inst.Srv.Env
	b1, b2, sub := inst.Raw(t), inst.Raw(t), inst.Raw(t)
	b1.Write(servertest.Encode("BLPOP", "bar", "0"))
	b2.Write(servertest.Encode("BLPOP", "hello", "0"))
	servertest.ExpectReply(t, sub.Do("SSUBSCRIBE", "bar", "{bar}x"), "*3\r\n$10\r\nssubscribe\r\n$3\r\nbar\r\n:1\r\n")
	sub.Read()
	servertest.ExpectReply(t, sub.Do("SSUBSCRIBE", "hello"), "*3\r\n$10\r\nssubscribe\r\n$5\r\nhello\r\n:3\r\n")
	for {
		inst.Srv.Lock()
		n := env.BlockedClients()
		inst.Srv.Unlock()
		if n == 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	var moved, dropped int
	change(inst, func() {
		f.over = map[int]engine.SlotRoute{5061: {Served: true, Addr: "127.0.0.1:7777"}}
		moved = env.RedirectBlocked()
		dropped = env.DropShardChannels(5061)
	})
	if moved != 1 || dropped != 2 {
		t.Fatalf("RedirectBlocked = %d, DropShardChannels = %d, want 1 and 2", moved, dropped)
	}
	servertest.ExpectReply(t, b1.Read(), "-MOVED 5061 127.0.0.1:7777\r\n")
	servertest.ExpectReply(t, sub.Read(), "*3\r\n$12\r\nsunsubscribe\r\n$3\r\nbar\r\n:2\r\n")
	servertest.ExpectReply(t, sub.Read(), "*3\r\n$12\r\nsunsubscribe\r\n$6\r\n{bar}x\r\n:1\r\n")
	change(inst, func() {
		f.down = true
		moved = env.RedirectBlocked()
	})
	servertest.ExpectReply(t, b2.Read(), "-CLUSTERDOWN The cluster is down\r\n")
	if moved != 1 {
		t.Fatalf("RedirectBlocked with the cluster down = %d, want 1", moved)
	}
}
