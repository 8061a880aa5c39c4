package commands_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Keyspace notifications against redis-server 7.0.15: a subscriber
// pattern-subscribed to every keyspace and keyevent channel sees, for each
// command of a matrix covering every write command family, exactly the
// frames Redis publishes, in Redis's order, under several
// notify-keyspace-events settings.

// notifyMark is the channel the test publishes on after each step: the
// subscriber reads until its message, so every event a step caused has
// been read, whatever their number.
const notifyMark = "notify:mark"

// notifyBench is the state a notification test shares across its steps.
type notifyBench struct {
	t        *testing.T
	cmd, sub *peer
	blocker  *peer
	step     int
	events   int  // notifications compared so far
	none     bool // the test expects no notification at all
}

func newNotifyBench(t *testing.T, mode string) *notifyBench {
	ps := pubsubPeers(t, 3)
	return startNotifyBench(t, mode, ps[0], ps[1], ps[2])
}

// newNotifyBenchDebug is newNotifyBench on servers of the test's own that
// take DEBUG (SET-ACTIVE-EXPIRE).
func newNotifyBenchDebug(t *testing.T, mode string) *notifyBench {
	inst := servertest.Start(t, servertest.WithConfig("enable-debug-command", "yes"))
	r := servertest.PrivateRedis(t, "--enable-debug-command", "yes")
	var ps []*peer
	for i := 0; i < 3; i++ {
		ps = append(ps, &peer{t: t, a: inst.Raw(t), r: servertest.Dial(t, r.Addr)})
	}
	return startNotifyBench(t, mode, ps[0], ps[1], ps[2])
}

func startNotifyBench(t *testing.T, mode string, cmd, sub, blocker *peer) *notifyBench {
	nb := &notifyBench{t: t, cmd: cmd, sub: sub, blocker: blocker}
	// The shared redis-server keeps its configuration for the next tests.
	t.Cleanup(func() {
		c := servertest.Dial(t, nb.cmd.r.Addr)
		c.Do("CONFIG", "SET", "notify-keyspace-events", "")
	})
	t.Cleanup(func() {
		if nb.events == 0 && !nb.none && !t.Failed() {
			t.Errorf("no notification was compared")
		}
		t.Logf("%d notifications compared", nb.events)
	})
	nb.cmd.do("CONFIG", "SET", "notify-keyspace-events", mode)
	nb.sub.do("PSUBSCRIBE", "__key*@*__:*")
	nb.sub.do("SUBSCRIBE", notifyMark)
	return nb
}

// sync publishes a mark and compares what each server pushed to the
// subscriber before it.
func (nb *notifyBench) sync(what string) {
	nb.t.Helper()
	nb.step++
	mark := strconv.Itoa(nb.step)
	nb.cmd.do("PUBLISH", notifyMark, mark)
	a := readUntilMark(nb.t, nb.sub.a, mark)
	r := readUntilMark(nb.t, nb.sub.r, mark)
	nb.events += len(r)
	if strings.Join(a, "\n") != strings.Join(r, "\n") {
		nb.t.Errorf("%s:\n abacus: %s\n  redis: %s", what, strings.Join(a, " | "), strings.Join(r, " | "))
	}
}

// readUntilMark returns the notifications read before the mark's message,
// each as "channel payload".
func readUntilMark(t *testing.T, c *servertest.Conn, mark string) []string {
	t.Helper()
	var out []string
	for {
		v := servertest.MustStrings(t, c.Read())
		if len(v) == 3 && v[0] == "message" && v[1] == notifyMark {
			if v[2] != mark {
				t.Fatalf("%s: mark %q, want %q", c.Addr, v[2], mark)
			}
			return out
		}
		if len(v) != 4 || v[0] != "pmessage" {
			t.Fatalf("%s: unexpected frame %q", c.Addr, v)
		}
		out = append(out, v[2]+" "+v[3])
	}
}

// run sends each command (compared reply by reply) and then compares the
// events they caused.
func (nb *notifyBench) run(cmds ...[]string) {
	nb.t.Helper()
	for _, c := range cmds {
		nb.cmd.do(c...)
		nb.sync(strings.Join(c, " "))
	}
}

// lines is run over commands written one per line, split on spaces; ""
// is an empty argument, and a line starting with "?" is a command whose
// reply is random (only its events are compared).
func (nb *notifyBench) lines(text string) {
	nb.t.Helper()
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		random := strings.HasPrefix(line, "?")
		args := strings.Fields(strings.TrimPrefix(line, "?"))
		for i, a := range args {
			if a == `""` {
				args[i] = ""
			}
		}
		if !random {
			nb.run(args)
			continue
		}
		req := servertest.Encode(args...)
		nb.cmd.a.Write(req)
		nb.cmd.r.Write(req)
		nb.cmd.a.Read()
		nb.cmd.r.Read()
		nb.sync(line)
	}
}

// waitInfo polls INFO on one server until field reaches at least want
// (a wait for work the server does on its own, not a timed assertion).
func waitInfo(t *testing.T, c *servertest.Conn, section, field string, want int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		body := servertest.BulkBody(t, c.Do("INFO", section))
		if n, _ := strconv.Atoi(servertest.InfoField(body, field)); n >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: INFO %s never reached %d", c.Addr, field, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// notifyMatrix is every write command family, with the reads that miss.
const notifyMatrix = `
# strings
SET n:s v
SET n:s v2 XX GET
SET n:s v NX
SET n:s2 v EX 100
SET n:s2 v PX 100000 KEEPTTL
SET n:s2 v KEEPTTL
SETNX n:s3 v
SETNX n:s3 v
SETEX n:s4 100 v
PSETEX n:s5 100000 v
GETSET n:s6 v
GETSET n:s6 w
GETDEL n:s6
GETDEL n:s6
GETEX n:s EX 100
GETEX n:s PERSIST
GETEX n:s PERSIST
GETEX n:s PXAT 1
GETEX n:none EX 10
MSET n:m1 a n:m2 b n:m1 c
MSETNX n:m3 a n:m4 b
MSETNX n:m3 a n:m5 b
APPEND n:a x
APPEND n:a yz
SETRANGE n:r 3 ab
SETRANGE n:r 0 x
SETRANGE n:r 0 ""
SETRANGE n:r2 5 ""
INCR n:i
DECR n:i
INCRBY n:i 5
DECRBY n:i 2
INCRBYFLOAT n:i 1.5
INCR n:a
GET n:none
GET n:i
MGET n:none n:i n:none2
STRLEN n:none
GETRANGE n:none 0 1
# generic
DEL n:i n:none n:a
UNLINK n:m1 n:none
EXISTS n:none n:m2
TYPE n:none
TTL n:none
PTTL n:m2
OBJECT ENCODING n:none
TOUCH n:none n:m2
RENAME n:m2 n:m2b
RENAME n:m2b n:m2b
RENAME n:none n:x
SET n:m6 v
RENAME n:m2b n:m6
RENAMENX n:m6 n:m3
RENAMENX n:m6 n:m7
MOVE n:m7 1
MOVE n:none 1
COPY n:m3 n:c1
COPY n:m3 n:c1
COPY n:m3 n:c1 REPLACE
COPY n:m3 n:c1 DB 2
COPY n:none n:c2
EXPIRE n:m3 100
PEXPIRE n:m3 100000 NX
PEXPIRE n:m3 100000 XX
EXPIREAT n:m3 4000000000
PEXPIREAT n:m3 4000000000000 GT
PERSIST n:m3
PERSIST n:m3
EXPIRE n:none 10
EXPIRE n:m3 -1
PEXPIREAT n:c1 1
SWAPDB 0 1
SWAPDB 0 1
# lists
LPUSH n:l a b c
RPUSH n:l d e
LPUSHX n:l z
RPUSHX n:none z
LPUSHX n:none z
LINSERT n:l BEFORE a x
LINSERT n:l BEFORE nothere x
LSET n:l 0 y
LREM n:l 1 nothere
LREM n:l 0 x
LTRIM n:l 0 -1
LTRIM n:l 1 4
LPOP n:l
RPOP n:l 2
LPOP n:none
LRANGE n:none 0 -1
LLEN n:none
LINDEX n:none 0
LPOS n:none a
LMOVE n:l n:l2 LEFT RIGHT
RPOPLPUSH n:l2 n:l
RPOPLPUSH n:l n:l
LMOVE n:none n:l LEFT LEFT
LMPOP 2 n:none n:l LEFT COUNT 10
LMPOP 1 n:none RIGHT
RPUSH n:l3 a b c
LTRIM n:l3 5 10
RPUSH n:l4 a
LREM n:l4 0 a
RPUSH n:l5 a b
LMOVE n:l5 n:l6 LEFT LEFT
LMOVE n:l5 n:l6 RIGHT LEFT
# hashes
HSET n:h a 1 b 2
HSET n:h a 1
HMSET n:h c 3
HSETNX n:h a 9
HSETNX n:h z 9
HINCRBY n:h a 5
HINCRBYFLOAT n:h a 0.5
HINCRBY n:h2 x 1
HDEL n:h nothere
HDEL n:h a b
HGET n:none a
HGETALL n:none
HMGET n:none a
HLEN n:none
HEXISTS n:none a
HSTRLEN n:none a
HKEYS n:none
HVALS n:none
HRANDFIELD n:none
HSCAN n:none 0
HDEL n:h2 x
HDEL n:h c z
# sets
SADD n:set a b c
SADD n:set a
SREM n:set nothere
SREM n:set a
SISMEMBER n:none a
SMEMBERS n:none
SCARD n:none
SMISMEMBER n:none a
SRANDMEMBER n:none
SADD n:set2 b x
SMOVE n:set n:set2 b
SMOVE n:set n:set3 c
SMOVE n:set n:set3 c
SMOVE n:none n:set3 c
SINTERSTORE n:st n:set2 n:set3
SINTERSTORE n:st n:set2 n:none
SINTERSTORE n:st n:set2 n:set3
SUNIONSTORE n:st n:set2 n:set3 n:none
SDIFFSTORE n:st n:set2 n:set3
SDIFFSTORE n:st n:set2 n:set2
SINTER n:none n:set2
SUNION n:none
SDIFF n:none n:set2
SINTERCARD 2 n:none n:set2
?SPOP n:set2
SPOP n:set2 0
SPOP n:set3 1
SADD n:set4 1 2 3 4 5
?SPOP n:set4 2
?SPOP n:set4 10
SPOP n:none
SPOP n:none 3
SADD n:set5 a
SPOP n:set5
SADD n:set6 a b
SREM n:set6 a b
# sorted sets
ZADD n:z 1 a 2 b 3 c 4 d 5 e
ZADD n:z 1 a
ZADD n:z NX 9 a
ZADD n:z XX 9 nothere
ZADD n:z XX CH 9 a
ZADD n:z INCR 1 a
ZADD n:z GT 1 a
ZINCRBY n:z 2 b
ZINCRBY n:z2 2 b
ZADD n:z3 XX 1 a
ZREM n:z nothere
ZREM n:z a
ZREMRANGEBYRANK n:z 10 20
ZREMRANGEBYRANK n:z 0 0
ZREMRANGEBYSCORE n:z 100 200
ZREMRANGEBYSCORE n:z 3 3
ZREMRANGEBYLEX n:z [zz [zzz
ZADD n:zl 0 a 0 b 0 c
ZREMRANGEBYLEX n:zl [a [b
ZREMRANGEBYLEX n:zl - +
ZSCORE n:none a
ZRANGE n:none 0 -1
ZCARD n:none
ZRANK n:none a
ZCOUNT n:none 0 1
ZMSCORE n:none a
ZRANGEBYSCORE n:none 0 1
ZRANDMEMBER n:none
ZADD n:z4 1 x 2 y 3 z
ZPOPMIN n:z4
ZPOPMAX n:z4 5
ZPOPMIN n:z4
ZPOPMIN n:none 2
ZADD n:z5 1 x 2 y
ZMPOP 2 n:none n:z5 MIN COUNT 1
ZMPOP 1 n:z5 MAX
ZMPOP 1 n:z5 MAX
ZADD n:za 1 a 2 b
ZADD n:zb 2 b 3 c
ZUNIONSTORE n:zs 2 n:za n:zb
ZINTERSTORE n:zs 2 n:za n:zb
ZDIFFSTORE n:zs 2 n:za n:zb
ZINTERSTORE n:zs 2 n:za n:none
ZINTERSTORE n:zs 2 n:za n:none
ZRANGESTORE n:zs n:za 0 -1
ZRANGESTORE n:zs n:za 5 10
ZRANGESTORE n:zs n:za 5 10
ZUNION 2 n:za n:none
ZINTER 2 n:za n:none
ZDIFF 2 n:za n:none
ZINTERCARD 2 n:za n:none
# bitmaps and hyperloglogs
SETBIT n:b 7 1
SETBIT n:b 7 1
SETBIT n:b 100 0
SETBIT n:b 7 0
GETBIT n:none 0
BITCOUNT n:none
BITPOS n:none 1
BITOP OR n:bd n:b n:none
BITOP AND n:bd n:none
BITOP AND n:bd n:none
BITFIELD n:bf SET u8 0 1 GET u8 0
BITFIELD n:bf SET u8 0 1
BITFIELD n:bf GET u8 0
BITFIELD n:bf INCRBY u8 0 300 OVERFLOW FAIL INCRBY u8 0 300
BITFIELD_RO n:none GET u8 0
PFADD n:hll a b c
PFADD n:hll a
PFADD n:hll2
PFADD n:hll2
PFCOUNT n:hll
PFCOUNT n:none
PFMERGE n:hll3 n:hll n:none
PFMERGE n:hll3
# sort
RPUSH n:sl 3 1 2
SORT n:sl STORE n:sorted
SORT n:none STORE n:sorted
SORT n:none STORE n:sorted
SORT n:sl BY n:w_* GET n:o_* STORE n:sorted
SORT n:sl
SORT_RO n:none
# streams (explicit ids: both servers then write the same entries)
XADD n:st 1-1 f v
XADD n:st MAXLEN 1 2-1 f v
XADD n:none2 NOMKSTREAM 3-1 f v
XDEL n:st 2-1
XDEL n:st 9-9
XADD n:st 3-1 f v
XTRIM n:st MAXLEN 0
XTRIM n:st MAXLEN 0
XSETID n:st 5-1
XGROUP CREATE n:st g 0
XGROUP CREATE n:st2 g 0 MKSTREAM
XGROUP SETID n:st g 0
XGROUP CREATECONSUMER n:st g c1
XGROUP CREATECONSUMER n:st g c1
XADD n:st 6-1 f v
XREADGROUP GROUP g c2 COUNT 1 STREAMS n:st >
XCLAIM n:st g c3 0 6-1
XAUTOCLAIM n:st g c4 0 0
XGROUP DELCONSUMER n:st g c1
XGROUP DESTROY n:st g
XGROUP DESTROY n:st g
# geo
GEOADD n:geo 13.361389 38.115556 Palermo 15.087269 37.502669 Catania
GEORADIUS n:geo 15 37 200 km STORE n:geo2
GEOSEARCHSTORE n:geo3 n:geo FROMLONLAT 15 37 BYRADIUS 200 km
GEOSEARCHSTORE n:geo3 n:geo FROMLONLAT 0 0 BYRADIUS 1 km
# other reads that may miss
LCS n:none n:none2
DUMP n:none
MEMORY USAGE n:none
EXPIRETIME n:none
SSCAN n:none 0
ZSCAN n:none 0
SUBSTR n:none 0 1
# flushes publish nothing
SELECT 1
SET n:f v
FLUSHDB
SELECT 0
FLUSHALL
`

// TestNotifyDiffMatrix runs the matrix under each notify-keyspace-events
// setting the issue names.
func TestNotifyDiffMatrix(t *testing.T) {
	for _, mode := range []string{"KEA", "K$", "Ex", "KEAnm"} {
		t.Run(mode, func(t *testing.T) {
			nb := newNotifyBench(t, mode)
			// Ex: nothing in the matrix expires (TestNotifyDiffExpiry).
			nb.none = mode == "Ex"
			nb.lines(notifyMatrix)
			nb.sub.quiet()
		})
	}
}

// TestNotifyDiffDumpRestore covers RESTORE (its TTL forms) and MIGRATE's
// deletion of the keys it moved.
func TestNotifyDiffDumpRestore(t *testing.T) {
	nb := newNotifyBench(t, "KEAnm")
	nb.run([]string{"RPUSH", "n:src", "a", "b"}, []string{"HSET", "n:hsrc", "f", "v"})
	for _, src := range []string{"n:src", "n:hsrc"} {
		// The payloads differ in their version bytes: each server restores
		// its own.
		pa := servertest.BulkBody(t, nb.cmd.a.Do("DUMP", src))
		pr := servertest.BulkBody(t, nb.cmd.r.Do("DUMP", src))
		nb.sync("DUMP " + src)
		restore := func(args ...string) {
			t.Helper()
			ra := nb.cmd.a.Do(append([]string{"RESTORE", "n:dst", args[0], pa}, args[1:]...)...)
			rr := nb.cmd.r.Do(append([]string{"RESTORE", "n:dst", args[0], pr}, args[1:]...)...)
			if ra != rr {
				t.Errorf("RESTORE %v: abacus %q redis %q", args, ra, rr)
			}
			nb.sync("RESTORE " + strings.Join(args, " "))
		}
		restore("0")
		restore("0")
		restore("0", "REPLACE")
		restore("100000", "REPLACE")
		restore("1", "REPLACE", "ABSTTL")
		restore("1", "REPLACE", "ABSTTL")
		restore("0", "REPLACE", "IDLETIME", "10")
		nb.run([]string{"DEL", "n:dst"})
	}
	// MIGRATE with no keys to move answers NOKEY; moving keys deletes
	// them (a del each), with COPY it does not. Each server migrates to a
	// redis-server of its own.
	nb.run([]string{"MIGRATE", "127.0.0.1", "1", "n:none", "0", "100"})
	ta, tr := servertest.PrivateRedis(t), servertest.PrivateRedis(t)
	migrate := func(args ...string) {
		t.Helper()
		port := func(addr string) string { return addr[strings.LastIndexByte(addr, ':')+1:] }
		ra := nb.cmd.a.Do(append([]string{"MIGRATE", "127.0.0.1", port(ta.Addr), "", "0", "5000"}, args...)...)
		rr := nb.cmd.r.Do(append([]string{"MIGRATE", "127.0.0.1", port(tr.Addr), "", "0", "5000"}, args...)...)
		if ra != rr {
			t.Errorf("MIGRATE %v: abacus %q redis %q", args, ra, rr)
		}
		nb.sync("MIGRATE " + strings.Join(args, " "))
	}
	migrate("COPY", "KEYS", "n:src", "n:hsrc")
	migrate("REPLACE", "KEYS", "n:src", "n:none", "n:hsrc")
}

// TestNotifyDiffExpiry covers keys reclaimed lazily (on a read, on a
// write, on a DEL) and by the active cycle.
func TestNotifyDiffExpiry(t *testing.T) {
	for _, mode := range []string{"KEAnm", "Ex"} {
		t.Run(mode, func(t *testing.T) {
			nb := newNotifyBenchDebug(t, mode)
			// Lazy: with the active cycle off, so that the commands find
			// the keys.
			nb.cmd.do("DEBUG", "SET-ACTIVE-EXPIRE", "0")
			nb.lines(`
SET n:e1 v
SET n:e2 v
SET n:e3 v
RPUSH n:e4 a
SET n:e5 v
HSET n:e6 f v
PEXPIRE n:e1 1
PEXPIRE n:e2 1
PEXPIRE n:e3 1
PEXPIRE n:e4 1
PEXPIRE n:e5 1
PEXPIRE n:e6 1
`)
			time.Sleep(20 * time.Millisecond)
			nb.lines(`
GET n:e1
SET n:e2 w
DEL n:e3
LPUSH n:e4 b
EXISTS n:e6
`)
			// Active: nobody touches n:e5; wait until both servers have
			// counted it, then compare the events.
			nb.cmd.do("DEBUG", "SET-ACTIVE-EXPIRE", "1")
			waitInfo(t, nb.cmd.a, "stats", "expired_keys", 6)
			waitInfo(t, nb.cmd.r, "stats", "expired_keys", 6)
			nb.sync("active expiry")
		})
	}
}

// TestNotifyDiffTransactions covers MULTI/EXEC and scripts: the events of
// every command inside, in order.
func TestNotifyDiffTransactions(t *testing.T) {
	nb := newNotifyBench(t, "KEAnm")
	nb.cmd.do("MULTI")
	nb.cmd.do("SET", "n:t1", "v")
	nb.cmd.do("LPUSH", "n:t2", "a")
	nb.cmd.do("GET", "n:none")
	nb.cmd.do("INCR", "n:t1")
	nb.cmd.do("LPOP", "n:t2")
	nb.cmd.do("EXEC")
	nb.sync("MULTI/EXEC")
	nb.run(
		[]string{"EVAL", "redis.call('set', KEYS[1], 'x'); redis.call('get', KEYS[2]); redis.call('expire', KEYS[1], 100); return redis.call('del', KEYS[1])", "2", "n:t3", "n:none"},
		[]string{"EVAL", "redis.call('hset', KEYS[1], 'f', 1); redis.call('hincrby', KEYS[1], 'f', 2); return redis.call('zadd', KEYS[2], 1, 'm')", "2", "n:t4", "n:t5"},
	)
}

// TestNotifyDiffBlocking covers blocking pops served after a write: the
// pusher's events first, then the served pop's.
func TestNotifyDiffBlocking(t *testing.T) {
	nb := newNotifyBench(t, "KEAnm")
	served := 0
	block := func(blockCmd []string, write ...[]string) {
		t.Helper()
		req := servertest.Encode(blockCmd...)
		nb.blocker.a.Write(req)
		nb.blocker.r.Write(req)
		served++
		waitInfo(t, nb.cmd.a, "clients", "blocked_clients", 1)
		waitInfo(t, nb.cmd.r, "clients", "blocked_clients", 1)
		nb.run(write...)
		nb.blocker.next(strings.Join(blockCmd, " "))
		nb.sync("served " + strings.Join(blockCmd, " "))
	}
	block([]string{"BLPOP", "n:bl", "n:bl2", "0"}, []string{"RPUSH", "n:bl2", "a", "b"})
	block([]string{"BRPOP", "n:bl3", "0"}, []string{"LPUSH", "n:bl3", "a"})
	block([]string{"BLMOVE", "n:bl4", "n:bl5", "LEFT", "RIGHT", "0"}, []string{"RPUSH", "n:bl4", "a"})
	block([]string{"BRPOPLPUSH", "n:bl6", "n:bl6b", "0"}, []string{"RPUSH", "n:bl6", "a", "b"})
	block([]string{"BLMPOP", "0", "2", "n:bl7", "n:bl8", "LEFT", "COUNT", "5"}, []string{"RPUSH", "n:bl8", "a", "b"})
	block([]string{"BZPOPMIN", "n:bz", "0"}, []string{"ZADD", "n:bz", "1", "a", "2", "b"})
	block([]string{"BZPOPMAX", "n:bz2", "0"}, []string{"ZADD", "n:bz2", "1", "a"})
	block([]string{"BZMPOP", "0", "1", "n:bz3", "MIN", "COUNT", "3"}, []string{"ZADD", "n:bz3", "1", "a"})
	// Served inside the transaction that fills the key: after EXEC.
	req := servertest.Encode("BLPOP", "n:bl9", "0")
	nb.blocker.a.Write(req)
	nb.blocker.r.Write(req)
	waitInfo(t, nb.cmd.a, "clients", "blocked_clients", 1)
	waitInfo(t, nb.cmd.r, "clients", "blocked_clients", 1)
	nb.cmd.do("MULTI")
	nb.cmd.do("RPUSH", "n:bl9", "a")
	nb.cmd.do("RPUSH", "n:bl9", "b")
	nb.cmd.do("EXEC")
	nb.blocker.next("BLPOP n:bl9")
	nb.sync("served after EXEC")
	_ = served
}
