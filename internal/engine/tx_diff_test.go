package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Differential tests of MULTI/EXEC/DISCARD/WATCH/UNWATCH: fixed sequences
// with one and two clients on each server, replies byte-compared with
// redis-server's.

// txPairs starts an Abacus instance and returns n clients, each a pair of
// connections (to Abacus and to the shared redis-server), so that client
// i of both servers sees the same sequence.
func txPairs(t *testing.T, n int, opts ...servertest.Option) (*servertest.Instance, []*servertest.Diff) {
	t.Helper()
	inst := servertest.Start(t, opts...)
	r := servertest.Redis(t)
	ps := make([]*servertest.Diff, n)
	for i := range ps {
		ps[i] = servertest.DialDiff(t, inst.Addr, r.Addr)
		ps[i].Mask = servertest.MaskHello
	}
	return inst, ps
}

// txScript runs lines of the form "<client>: COMMAND args" (client 1 when
// the prefix is omitted) through the pairs; it returns the number of
// commands compared.
func txScript(t *testing.T, ps []*servertest.Diff, text string) int {
	t.Helper()
	n := 0
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		p := ps[0]
		if len(l) > 2 && l[1] == ':' && l[0] >= '1' && l[0] <= '9' {
			p = ps[l[0]-'1']
			l = strings.TrimSpace(l[2:])
		}
		p.Do(strings.Fields(l)...)
		n++
	}
	return n
}

func TestTxDiffQueueing(t *testing.T) {
	_, ps := txPairs(t, 1)
	n := txScript(t, ps, `
FLUSHALL
MULTI
SET a 1
INCR a
GET a
EXEC
# an empty transaction
MULTI
EXEC
# nested MULTI and WATCH inside MULTI are errors that do not doom it
MULTI
SET a 2
MULTI
WATCH a
WATCH
EXEC
MULTI
SET a 3
MULTI
WATCH a
GET a
EXEC
# queue-time errors doom the transaction
MULTI
SET a 4
nosuch
nosuch arg1 arg2
EXEC
GET a
MULTI
SET a
EXEC
MULTI
CONFIG nosuch
EXEC
MULTI
CONFIG
EXEC
MULTI
OBJECT
EXEC
MULTI
GET a b
SET a 5
EXEC
GET a
# no_multi commands are refused and doom it too
MULTI
SHUTDOWN
SET a 6
EXEC
GET a
# EXEC, DISCARD outside MULTI; refused EXEC and DISCARD
EXEC
DISCARD
EXEC x
MULTI
SET a 7
EXEC x
EXEC
GET a
MULTI
DISCARD x
SET a 8
DISCARD
GET a
MULTI
EXEC x y
EXEC
MULTI
MULTI x
EXEC
MULTI
UNWATCH x
EXEC
# runtime errors do not stop the other commands
SET s hello
LPUSH l x
MULTI
INCR s
SET n 10
LPUSH s x
INCR n
GET l
INCRBY n notanumber
APPEND s !
SET n2 x EX 0
EXEC
GET s
GET n
# commands queued after a failed command still run
MULTI
INCR s
INCR s
INCR n
EXEC
# DISCARD
MULTI
SET d 1
DISCARD
GET d
DISCARD
# SELECT inside EXEC changes the client's database for good
MULTI
SELECT 1
SET indb1 x
SELECT 99
GET indb1
EXEC
GET indb1
SELECT 0
GET indb1
# QUEUED for every kind of command, including connection ones
MULTI
PING
PING hi
ECHO e
UNWATCH
DBSIZE
EXISTS a s nosuchkey
TYPE l
EXEC
# RESET inside MULTI ends it
MULTI
SET r 1
RESET
EXEC
GET r
# a big argument is copied, not aliased
MULTI
SET big `+strings.Repeat("x", 70000)+`
SET big2 `+strings.Repeat("y", 100)+`
STRLEN big
GET big2
EXEC
`)
	t.Logf("%d commands compared", n)
}

// TestTxDiffResp3 checks the RESP3 forms: EXEC's null array is _, the
// array carries RESP3 replies, and HELLO inside EXEC switches the
// protocol of the replies after it.
func TestTxDiffResp3(t *testing.T) {
	_, ps := txPairs(t, 2)
	n := txScript(t, ps, `
FLUSHALL
HELLO 3
SET k v
WATCH k
2: SET k w
MULTI
GET k
EXEC
MULTI
SET f 1.5
INCRBYFLOAT f 1
GET nosuch
EXEC
HELLO 2
MULTI
GET nosuch
HELLO 3
GET nosuch
HELLO 2
GET nosuch
EXEC
WATCH k
2: DEL k
MULTI
EXEC
`)
	t.Logf("%d commands compared", n)
}

// TestTxDiffAuth: NOAUTH while queuing dooms the transaction; a refused
// EXEC says why in its EXECABORT.
func TestTxDiffAuth(t *testing.T) {
	_, ps := txPairs(t, 1)
	ps[0].Do("CONFIG", "SET", "requirepass", "secret")
	defer ps[0].Do("CONFIG", "SET", "requirepass", "")
	// Client 2 connects after the password is set. Whether a client is
	// authenticated is decided when the server creates it: one dialled
	// before could be created on either side of the CONFIG SET, and on
	// a loaded machine the two servers disagreed.
	p2 := servertest.DialDiff(t, ps[0].A.Addr, ps[0].R.Addr)
	p2.Mask = servertest.MaskHello
	ps = append(ps, p2)
	n := txScript(t, ps, `
2: EXEC
2: MULTI
2: AUTH secret
2: MULTI
2: GET a
2: EXEC
2: EXEC x
`)
	t.Logf("%d commands compared", n)
}

// TestTxDiffWatch runs WATCH races with two clients on each server:
// client 1 watches, client 2 (or client 1 itself) writes, client 1 runs
// EXEC.
func TestTxDiffWatch(t *testing.T) {
	_, ps := txPairs(t, 3)
	n := txScript(t, ps, `
FLUSHALL
SET k 1
# another client's write
WATCH k
2: SET k 2
MULTI
INCR k
EXEC
GET k
# no write: EXEC runs
WATCH k
2: GET k
2: SET other 1
MULTI
INCR k
EXEC
# the watching client's own write before MULTI
WATCH k
SET k 10
MULTI
INCR k
EXEC
GET k
# a write after MULTI, while queuing
WATCH k
MULTI
INCR k
2: INCR k
INCR k
EXEC
GET k
# writes by the transaction itself do not count
WATCH k
MULTI
INCR k
INCR k
EXEC
# the watch ends with EXEC, successful or not
2: SET k 0
MULTI
INCR k
EXEC
# UNWATCH and DISCARD forget watched keys
WATCH k
UNWATCH
2: SET k 5
MULTI
INCR k
EXEC
WATCH k
MULTI
DISCARD
2: SET k 6
MULTI
INCR k
EXEC
# a doomed transaction that was also touched: EXECABORT wins
WATCH k
2: SET k 7
MULTI
nosuch
EXEC
# several keys; the same key twice
WATCH a b c c
2: SET c 1
MULTI
GET c
EXEC
WATCH a b c
WATCH b
2: DEL nosuch
2: SET d 1
MULTI
GET c
EXEC
# deleting an absent key, failed conditional writes: no change
WATCH absent
2: DEL absent
2: SET k x XX
2: SET k x NX
2: EXPIRE absent 100
2: PERSIST k
2: SETNX k x
MULTI
GET k
EXEC
2: SET absent x XX
WATCH k absent
2: RENAMENX nosuch k
2: MSETNX k 1 absent 2
MULTI
EXISTS absent
EXEC
# deletion, expire, persist
WATCH k
2: DEL k
MULTI
EXEC
SET k v
WATCH k
2: EXPIRE k 1000
MULTI
EXEC
WATCH k
2: PERSIST k
MULTI
EXEC
WATCH k
2: EXPIRE k -1
MULTI
EXEC
EXISTS k
# rename: both source and destination
SET src 1
SET dst 2
WATCH src
2: RENAME src dst
MULTI
EXEC
WATCH dst
2: RENAME dst src
MULTI
EXEC
WATCH newname
2: RENAME src newname
MULTI
EXEC
# MOVE touches the key in both databases
WATCH newname
2: MOVE newname 1
MULTI
EXEC
SELECT 1
WATCH newname
2: SELECT 1
2: MOVE newname 0
2: SELECT 0
MULTI
EXEC
SELECT 0
# COPY touches the destination
SET cs 1
WATCH cd
2: COPY cs cd
MULTI
EXEC
# a key in another database is a different key
SELECT 2
WATCH k
SELECT 0
2: SET k x
SELECT 2
MULTI
EXEC
SELECT 0
WATCH k
2: SELECT 2
2: SET k y
2: SELECT 0
MULTI
EXEC
# two watchers of one key both fail; a third watching another key runs
SET k 1
WATCH k
3: WATCH k
2: WATCH z
3: SET k 2
MULTI
INCR k
EXEC
2: MULTI
2: INCR z
2: EXEC
3: MULTI
3: INCR k
3: EXEC
`)
	t.Logf("%d commands compared", n)
}

// TestTxDiffWatchFlushSwap covers FLUSHDB, FLUSHALL and SWAPDB, which
// change only the watched keys that exist in the databases involved.
func TestTxDiffWatchFlushSwap(t *testing.T) {
	_, ps := txPairs(t, 2)
	n := txScript(t, ps, `
FLUSHALL
SET k 1
WATCH k
2: FLUSHDB
MULTI
EXEC
WATCH k
2: SET k 1
2: FLUSHALL
MULTI
EXEC
# flushing when the watched key does not exist is no change
WATCH absent
2: SET other 1
2: FLUSHALL
MULTI
EXEC
WATCH absent
2: SET other 1
2: FLUSHDB
MULTI
EXEC
# flushing another database
SET k 1
WATCH k
2: SELECT 1
2: SET k 1
2: FLUSHDB
2: SELECT 0
MULTI
EXEC
WATCH k
2: FLUSHDB ASYNC
MULTI
EXEC
SELECT 1
SET k 1
SELECT 0
WATCH k
2: FLUSHALL SYNC
MULTI
EXEC
# SWAPDB: a watched key existing in either database changes
SELECT 1
SET k1 v
SELECT 0
WATCH k1
2: SWAPDB 0 1
MULTI
EXEC
WATCH k1
2: SWAPDB 1 0
MULTI
EXEC
2: FLUSHALL
WATCH k2
2: SET x 1
2: SWAPDB 0 1
MULTI
EXEC
WATCH x
2: SWAPDB 0 1
MULTI
EXEC
WATCH k3
2: SWAPDB 2 3
MULTI
EXEC
SET k4 1
WATCH k4
2: SWAPDB 0 0
MULTI
EXEC
WATCH k4
2: SWAPDB 0 99
MULTI
EXEC
`)
	t.Logf("%d commands compared", n)
}

// TestTxDiffWatchExpiry compares WATCH of keys that expire. Abacus runs
// on a manual clock moved together with a real sleep for redis-server
// (the one real sleep of these tests, 120 ms). The outcomes do not depend
// on when redis-server's active expiry reclaims the keys.
func TestTxDiffWatchExpiry(t *testing.T) {
	inst, ps := txPairs(t, 7, servertest.WithManualClock(time.Now().UnixMilli()))
	// Keys that expire in 50 ms; watched now (live) by clients 1 and 2.
	// redis-server's clock is real: if the machine stalls for 50 ms
	// between the SET and the WATCH (a loaded CI machine can), the keys
	// were already gone when watched there; a PTTL after the WATCHes
	// tells, and then the setup starts again.
	for try := 1; ; try++ {
		ps[0].Do("FLUSHALL")
		for _, k := range []string{"live1", "live2", "old3", "old4", "old5", "old6", "old7"} {
			ps[0].Do("SET", k, "v", "PX", "50")
		}
		ps[0].Do("WATCH", "live1")
		ps[1].Do("WATCH", "live2")
		l1, l2 := ps[6].R.Do("PTTL", "live1"), ps[6].R.Do("PTTL", "live2")
		if !strings.HasPrefix(l1, ":-") && !strings.HasPrefix(l2, ":-") {
			break
		}
		if try == 10 {
			t.Fatalf("the keys expired on redis-server before they were watched, %d times", try)
		}
		ps[0].Do("UNWATCH")
		ps[1].Do("UNWATCH")
	}
	time.Sleep(120 * time.Millisecond)
	inst.Clock.Advance(120 * time.Millisecond)
	n := txScript(t, ps, `
# live when watched, expired by EXEC time, whether reclaimed or not
MULTI
EXEC
7: GET live2
2: MULTI
2: EXEC
# expired before WATCH: logically absent, so its reclamation is no change
3: WATCH old3
3: MULTI
3: EXEC
4: WATCH old4
7: GET old4
4: MULTI
4: EXEC
# but a new value is a change
5: WATCH old5
7: SET old5 new
5: MULTI
5: EXEC
# watching absent keys and letting a live one expire inside MULTI
6: WATCH old6 nothere
6: MULTI
6: GET old6
6: EXEC
7: FLUSHALL
`)
	t.Logf("%d commands compared", n+10)
}

// TestTxDiffWatchWrites checks that every write command of every family
// marks a watched key changed (or not) as redis-server does: client 1
// watches the key, client 2 runs the command, client 1's EXEC answers
// the null array or runs.
func TestTxDiffWatchWrites(t *testing.T) {
	_, ps := txPairs(t, 2)
	type tc struct{ setup, cmd string }
	cases := []tc{
		{"SET k 1", "SET k 2"}, {"SET k 1", "SET k 1"}, {"", "SET k 1 NX"}, {"SET k 1", "SET k 1 NX"}, {"", "SET k 1 XX"},
		{"SET k 1", "SET k 2 GET"}, {"SET k 1", "SET k 2 KEEPTTL"}, {"SET k 1", "GETSET k 2"}, {"SET k 1", "GETDEL k"},
		{"", "GETDEL k"}, {"SET k 1", "GETEX k EX 100"}, {"SET k 1", "GETEX k"}, {"SET k 1 EX 100", "GETEX k PERSIST"},
		{"SET k 1", "GETEX k PERSIST"}, {"", "SETNX k 1"}, {"SET k 1", "SETNX k 1"}, {"", "SETEX k 100 v"}, {"", "PSETEX k 100000 v"},
		{"", "MSET k 1 j 2"}, {"", "MSET j 2"}, {"", "MSETNX k 1 j 2"}, {"SET j 1", "MSETNX k 1 j 2"}, {"SET k a", "APPEND k b"},
		{"SET k a", "APPEND k ''"}, {"", "APPEND k ''"}, {"SET k abc", "SETRANGE k 1 x"}, {"SET k abc", "SETRANGE k 1 ''"},
		{"", "SETRANGE k 0 ''"}, {"SET k 1", "INCR k"}, {"SET k 1", "DECR k"}, {"SET k 1", "INCRBY k 0"}, {"SET k 1", "DECRBY k 5"},
		{"SET k 1", "INCRBYFLOAT k 0.5"}, {"SET k x", "INCR k"}, {"", "INCR k"}, {"SET k 1", "GET k"}, {"SET k 1", "STRLEN k"},
		{"SET k 1", "DEL k"}, {"SET k 1", "UNLINK k j"}, {"", "DEL k"}, {"SET k 1", "EXPIRE k 100"}, {"SET k 1", "PEXPIRE k 100000"},
		{"SET k 1", "EXPIREAT k 4102444800"}, {"SET k 1", "PEXPIREAT k 4102444800000"}, {"SET k 1", "EXPIRE k 0"},
		{"SET k 1", "EXPIRE k 100 XX"}, {"SET k 1 EX 50", "EXPIRE k 100 NX"}, {"SET k 1 EX 50", "EXPIRE k 10 GT"},
		{"SET k 1 EX 50", "PERSIST k"}, {"SET k 1", "PERSIST k"}, {"SET k 1", "TOUCH k"}, {"SET k 1", "TTL k"},
		{"SET k 1", "RENAME k j"}, {"SET j 1", "RENAME j k"}, {"SET k 1", "RENAMENX k j"}, {"SET k 1", "RENAME k k"},
		{"SET j 1", "COPY j k"}, {"SET j 1", "COPY j k DB 1"}, {"SET k 1", "MOVE k 1"}, {"SET k 1", "OBJECT ENCODING k"},
		{"", "SETBIT k 7 1"}, {"SETBIT k 7 1", "SETBIT k 7 1"}, {"SETBIT k 7 1", "SETBIT k 7 0"}, {"", "BITFIELD k SET u8 0 1"},
		{"", "BITFIELD k GET u8 0"}, {"SET j a", "BITOP NOT k j"}, {"SET k a", "BITOP NOT k nosuch"}, {"", "BITOP AND k nosuch"},
		{"", "PFADD k a"}, {"PFADD k a", "PFADD k a"}, {"PFADD k a", "PFADD k b"}, {"PFADD k a", "PFCOUNT k"},
		{"PFADD j a", "PFMERGE k j"}, {"", "PFMERGE k"},
		{"", "LPUSH k a"}, {"LPUSH k a", "RPUSH k b"}, {"", "LPUSHX k a"}, {"LPUSH k a", "LPOP k"}, {"", "LPOP k"},
		{"LPUSH k a b", "RPOP k 5"}, {"LPUSH k a", "LSET k 0 b"}, {"LPUSH k a", "LINSERT k BEFORE a x"},
		{"LPUSH k a", "LINSERT k BEFORE nosuch x"}, {"LPUSH k a", "LREM k 0 a"}, {"LPUSH k a", "LREM k 0 nosuch"},
		{"LPUSH k a b c", "LTRIM k 0 -1"}, {"LPUSH k a b c", "LTRIM k 0 0"}, {"LPUSH k a", "LMOVE k j LEFT RIGHT"},
		{"LPUSH j a", "LMOVE j k LEFT RIGHT"}, {"LPUSH k a", "RPOPLPUSH k k"}, {"LPUSH k a", "LMPOP 1 k LEFT"},
		{"LPUSH k a", "BLPOP k 0"}, {"LPUSH k a", "LRANGE k 0 -1"},
		{"", "HSET k f v"}, {"HSET k f v", "HSET k f v"}, {"HSET k f v", "HSETNX k f v"}, {"HSET k f v", "HDEL k f"},
		{"HSET k f v", "HDEL k nosuch"}, {"HSET k f 1", "HINCRBY k f 1"}, {"HSET k f 1", "HINCRBYFLOAT k f 1"},
		{"", "SADD k a"}, {"SADD k a", "SADD k a"}, {"SADD k a", "SREM k a"}, {"SADD k a", "SPOP k"}, {"SADD k a b", "SMOVE k j a"},
		{"SADD j a", "SINTERSTORE k j"}, {"", "SUNIONSTORE k nosuch"},
		{"", "ZADD k 1 a"}, {"ZADD k 1 a", "ZADD k 1 a"}, {"ZADD k 1 a", "ZADD k 2 a"}, {"ZADD k 1 a", "ZINCRBY k 1 a"},
		{"ZADD k 1 a", "ZREM k a"}, {"ZADD k 1 a", "ZREM k b"}, {"ZADD k 1 a", "ZPOPMIN k"}, {"ZADD k 1 a", "ZREMRANGEBYSCORE k 5 6"},
		{"ZADD j 1 a", "ZUNIONSTORE k 1 j"}, {"ZADD k 1 a", "ZRANGESTORE j k 0 -1"},
	}
	n := 0
	for _, c := range cases {
		cmd := strings.Fields(c.cmd)
		for i, a := range cmd {
			if a == "''" {
				cmd[i] = ""
			}
		}
		ps[0].Do("FLUSHALL")
		if c.setup != "" {
			ps[1].Do(strings.Fields(c.setup)...)
		}
		ps[0].Do("WATCH", "k")
		ps[1].Do(cmd...)
		ps[0].Do("MULTI")
		ps[0].Do("PING")
		if r := ps[0].Do("EXEC"); r != "*-1\r\n" && r != "*1\r\n+PONG\r\n" {
			t.Errorf("%s: EXEC %q", c.cmd, r)
		}
		n++
	}
	if n < 60 {
		t.Errorf("only %d write commands compared", n)
	}
	t.Logf("%d write commands compared (%d listed)", n, len(cases))
}

// TestTxDiffBlockingInMulti: blocking commands inside MULTI answer at
// once as on a timeout, and MONITOR refuses to run there.
func TestTxDiffBlockingInMulti(t *testing.T) {
	_, ps := txPairs(t, 1)
	text := `
FLUSHALL
MULTI
MONITOR
PING
EXEC
`
	for _, c := range []string{"BLPOP l 0", "BRPOP l 1", "BLMOVE l m LEFT RIGHT 0", "BRPOPLPUSH l m 0",
		"BLMPOP 0 1 l LEFT", "BZPOPMIN z 0", "BZPOPMAX z 0", "BZMPOP 0 1 z MIN"} {
		text += "MULTI\n" + c + "\nPING\nEXEC\n"
	}
	text += "RPUSH l a b\nZADD z 1 a\nMULTI\n"
	for _, c := range []string{"BLPOP l 0", "BRPOP l 0", "BZPOPMIN z 0", "BLMOVE l m LEFT RIGHT 0"} {
		text += c + "\n"
	}
	text += "EXEC\n"
	t.Logf("%d commands compared", txScript(t, ps, text))
}

// TestTxDiffCommandInfo compares the family's COMMAND INFO entries and
// WATCH's keys.
func TestTxDiffCommandInfo(t *testing.T) {
	_, ps := txPairs(t, 1)
	n := txScript(t, ps, `
COMMAND INFO multi exec discard watch unwatch
COMMAND GETKEYS watch a b c
COMMAND GETKEYSANDFLAGS watch a b
COMMAND GETKEYS multi
`)
	t.Logf("%d commands compared", n)
}
