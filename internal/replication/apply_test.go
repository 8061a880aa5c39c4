package replication_test

import (
	"bufio"
	"math/rand"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// pipelinedWorkload returns n random write commands for a primary's
// clients to pipeline, so that its stream reaches a replica many commands
// per read: every family, SELECT between databases, MULTI/EXEC (with
// SELECT inside), EXPIRE and PX, scripts, values past resp.BigArg (kept
// out of the reader's buffer when they arrive in pieces), WAIT (the
// primary's REPLCONF GETACK in the middle of the stream) and keys that
// expire at once (the primary's DEL). Short-lived keys are named tmp*.
func pipelinedWorkload(rng *rand.Rand, n int) [][]string {
	var out [][]string
	for len(out) < n {
		k := "k" + strconv.Itoa(rng.Intn(50))
		v := strconv.Itoa(rng.Int())
		switch rng.Intn(18) {
		case 0:
			out = append(out, []string{"SET", k, v})
		case 1:
			out = append(out, []string{"SET", k, v, "PX", strconv.Itoa(1_000_000 + rng.Intn(1000))})
		case 2:
			out = append(out, []string{"INCR", "n" + k})
		case 3:
			out = append(out, []string{"RPUSH", "l" + k, v, v + "x"})
		case 4:
			out = append(out, []string{"LPOP", "l" + k})
		case 5:
			out = append(out, []string{"SADD", "s" + k, strconv.Itoa(rng.Intn(100))})
		case 6:
			out = append(out, []string{"ZADD", "z" + k, strconv.Itoa(rng.Intn(100)), v})
		case 7:
			out = append(out, []string{"HSET", "h" + k, "f" + strconv.Itoa(rng.Intn(8)), v})
		case 8:
			out = append(out, []string{"EXPIRE", "l" + k, strconv.Itoa(1000 + rng.Intn(1000))})
		case 9:
			out = append(out, []string{"DEL", k})
		case 10:
			out = append(out, []string{"SELECT", strconv.Itoa(rng.Intn(4))})
		case 11:
			out = append(out, []string{"MULTI"}, []string{"INCR", "ctr"}, []string{"SELECT", strconv.Itoa(1 + rng.Intn(3))},
				[]string{"APPEND", "a" + k, v}, []string{"EXEC"})
		case 12:
			out = append(out, []string{"SET", "big" + strconv.Itoa(rng.Intn(4)), strings.Repeat(v[:1], 33_000+rng.Intn(100_000))})
		case 13:
			out = append(out, []string{"SET", "tmp" + strconv.Itoa(rng.Intn(5)), v, "PX", "1"})
		case 14:
			out = append(out, []string{"WAIT", "1", "20"})
		case 15:
			out = append(out, []string{"EVAL", "redis.call('incr', KEYS[1]); return redis.call('rpush', KEYS[2], ARGV[1])", "2", "sc", "sl", v})
		case 16:
			out = append(out, []string{"INCRBYFLOAT", "f" + k, "1.25"})
		case 17:
			out = append(out, []string{"MSET", k, v, "m" + k, v})
		}
	}
	return out
}

// pipeline sends the commands as one pipeline and reads every reply.
func pipeline(t *testing.T, c *servertest.Conn, cmds [][]string) {
	t.Helper()
	b := servertest.Cat(cmds...)
	errc := make(chan error, 1)
	go func() {
		_, err := c.C.Write(b)
		errc <- err
	}()
	for range cmds {
		c.Read()
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// dropShortLived deletes the keys that may have expired on the primary
// without its DEL yet, so that both datasets hold the same keys when
// their digests are taken.
func dropShortLived(c *servertest.Conn) {
	for db := 0; db < 4; db++ {
		c.Do("SELECT", strconv.Itoa(db))
		c.Do("DEL", "tmp0", "tmp1", "tmp2", "tmp3", "tmp4")
	}
	c.Do("SELECT", "0")
}

func sameDigest(t *testing.T, a, b *servertest.Conn) {
	t.Helper()
	waitSynced(t, a, b)
	if x, y := a.Do("DEBUG", "DIGEST"), b.Do("DEBUG", "DIGEST"); x != y || !strings.HasPrefix(x, "+") || x == "+"+strings.Repeat("0", 40)+"\r\n" {
		t.Fatalf("DEBUG DIGEST: %s %q, %s %q", a.Addr, x, b.Addr, y)
	}
}

// A redis-server primary streams a pipelined random workload to an
// Abacus replica, which applies it in batches and passes it on to an
// Abacus replica of its own: all three agree on the dataset (DEBUG
// DIGEST and a dump of every key) and the offsets agree along the chain,
// after the full sync and after a partial resync.
func TestBatchedApplyFromRedisPrimary(t *testing.T) {
	r := servertest.PrivateRedis(t, "--repl-diskless-sync-delay", "0", "--enable-debug-command", "yes")
	rc := servertest.Dial(t, r.Addr)
	loadTypes(t, rc)
	host, port, _ := strings.Cut(r.Addr, ":")
	// repl-ping-replica-period 1: a replica must not ping its own
	// replicas (its stream is its primary's), which would show within
	// the test's seconds.
	a := servertest.Start(t, servertest.WithConfig("enable-debug-command", "yes", "repl-diskless-sync-delay", "0", "repl-ping-replica-period", "1"))
	ac := a.Raw(t)
	if got := ac.Do("REPLICAOF", host, port); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF: %q", got)
	}
	sub := servertest.Start(t, servertest.WithConfig("enable-debug-command", "yes"))
	sc := sub.Raw(t)
	ahost, aport, _ := strings.Cut(a.Addr, ":")
	sc.Do("REPLICAOF", ahost, aport)
	sameDigest(t, rc, ac)

	rng := rand.New(rand.NewSource(14))
	check := func() {
		t.Helper()
		dropShortLived(rc)
		sameDigest(t, rc, ac)
		sameDigest(t, ac, sc)
		sameData(t, rc, ac)
	}
	for round := 0; round < 4; round++ {
		pipeline(t, rc, pipelinedWorkload(rng, 3000))
	}
	check()
	if got := rc.Do("WAIT", "1", "10000"); got != ":1\r\n" {
		t.Fatalf("WAIT after the stream: %q", got)
	}
	// The replica's ACKs (a second apart) reach the primary's offset.
	eventually(t, "the replica's ACK at the primary's offset", func() bool {
		return strings.Split(field(t, rc, "replication", "slave0"), ",")[3] == "offset="+field(t, rc, "replication", "master_repl_offset")
	})

	// The link drops while the writes go on: the replica continues from
	// its offset, and its own replica continues with it.
	rc.Do("CLIENT", "KILL", "TYPE", "replica")
	for round := 0; round < 2; round++ {
		pipeline(t, rc, pipelinedWorkload(rng, 2000))
	}
	time.Sleep(2500 * time.Millisecond) // the replica's cron runs twice
	check()
	if !strings.Contains(a.Logs.String(), "Master accepted a Partial Resynchronization") {
		t.Errorf("no partial resync:\n%s", a.Logs.String())
	}
	for _, i := range []*servertest.Instance{a, sub} {
		if got := strings.Count(i.Logs.String(), "MASTER <-> REPLICA sync: Finished with success"); got != 1 {
			t.Errorf("%d full syncs:\n%s", got, i.Logs.String())
		}
	}
}

// emptyRDB is a snapshot without keys (a zero checksum is not checked).
const emptyRDB = "REDIS0010\xff\x00\x00\x00\x00\x00\x00\x00\x00"

// A primary's stream arriving in one read, with REPLCONF GETACK in the
// middle of it and a large value split across reads: each GETACK is
// answered with the offset of the bytes before it, exactly, and the
// offset after the batch counts every byte, PINGs and empty requests
// included.
func TestGetackOffsetsInsideABatch(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	inst := servertest.Start(t)
	ac := inst.Raw(t)
	host, port, _ := strings.Cut(l.Addr().String(), ":")
	ac.Do("REPLICAOF", host, port)
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	r := bufio.NewReader(c)
	const base = 1000
	for {
		v, err := servertest.ReadValue(r)
		if err != nil {
			t.Fatal(err)
		}
		if strings.EqualFold(v.Items[0].Str, "psync") {
			c.Write([]byte("+FULLRESYNC 0123456789012345678901234567890123456789 " + strconv.Itoa(base) + "\r\n" +
				"$" + strconv.Itoa(len(emptyRDB)) + "\r\n" + emptyRDB))
			break
		}
		c.Write([]byte("+OK\r\n"))
	}
	// acks returns the next ACK offset the replica sends.
	acks := func() int {
		t.Helper()
		v, err := servertest.ReadValue(r)
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Items) != 3 || !strings.EqualFold(v.Items[1].Str, "ack") {
			t.Fatalf("from the replica: %+v", v)
		}
		n, _ := strconv.Atoi(v.Items[2].Str)
		return n
	}
	if got := acks(); got != base {
		t.Fatalf("first ACK %d, want %d", got, base)
	}
	big := strings.Repeat("v", 200_000)
	first := servertest.Cat([]string{"SELECT", "0"}, []string{"SET", "a", "1"}, []string{"PING"})
	first = append(first, "\r\n"...) // an empty request: counted, not run
	getack := servertest.Encode("REPLCONF", "GETACK", "*")
	second := servertest.Cat([]string{"SET", "big", big}, []string{"INCR", "a"})
	stream := append(append(append(append([]byte{}, first...), getack...), second...), getack...)
	// The big value is cut in the middle: its header and the start of
	// its body come with the commands before it.
	cut := len(first) + len(getack) + 100_000
	c.Write(stream[:cut])
	c.Write(stream[cut:])
	want := []int{base + len(first), base + len(first) + len(getack) + len(second)}
	// The replica's ACKs every second may come between, with the
	// offsets at the ends of its reads: the GETACK answers are the two
	// offsets, in order.
	for _, w := range want {
		for acks() != w {
		}
	}
	total := strconv.Itoa(base + len(stream))
	deadline := time.Now().Add(30 * time.Second)
	for field(t, ac, "replication", "slave_repl_offset") != total && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := field(t, ac, "replication", "slave_repl_offset"); got != total {
		t.Fatalf("slave_repl_offset %s, want %s", got, total)
	}
	if got := ac.Do("GET", "a"); got != "$1\r\n2\r\n" {
		t.Fatalf("GET a: %q", got)
	}
	if got := ac.Do("STRLEN", "big"); got != ":200000\r\n" {
		t.Fatalf("STRLEN big: %q", got)
	}
}

// The primary's stream selects a database once and goes on in it: a
// replica that reconnects (partial resync) goes on in that database, and
// a replica of the replica that takes its full sync meanwhile starts in
// it (the snapshot's repl-stream-db), as neither gets a new SELECT.
func TestStreamDatabaseAcrossResyncs(t *testing.T) {
	r := servertest.PrivateRedis(t, "--repl-diskless-sync-delay", "0")
	rc := servertest.Dial(t, r.Addr)
	host, port, _ := strings.Cut(r.Addr, ":")
	a := servertest.Start(t, servertest.WithConfig("repl-diskless-sync-delay", "0"))
	ac := a.Raw(t)
	ac.Do("REPLICAOF", host, port)
	rc.Do("SELECT", "2")
	rc.Do("SET", "x", "1")
	waitSynced(t, rc, ac)

	// A partial resync: the stream goes on in database 2.
	rc.Do("CLIENT", "KILL", "TYPE", "replica")
	rc.Do("SET", "y", "2")
	waitSynced(t, rc, ac)
	if !strings.Contains(a.Logs.String(), "Master accepted a Partial Resynchronization") {
		t.Fatalf("no partial resync:\n%s", a.Logs.String())
	}
	ac.Do("SELECT", "2")
	if got := ac.Do("GET", "y"); got != "$1\r\n2\r\n" {
		t.Fatalf("GET y in db 2 after a partial resync: %q", got)
	}

	// A replica of the replica syncs in full from it, then the stream
	// goes on in database 2.
	sub := servertest.Start(t)
	sc := sub.Raw(t)
	ahost, aport, _ := strings.Cut(a.Addr, ":")
	sc.Do("REPLICAOF", ahost, aport)
	waitSynced(t, ac, sc)
	rc.Do("SET", "z", "3")
	waitSynced(t, rc, ac)
	waitSynced(t, ac, sc)
	sc.Do("SELECT", "2")
	for k, want := range map[string]string{"x": "1", "y": "2", "z": "3"} {
		if got := sc.Do("GET", k); got != "$1\r\n"+want+"\r\n" {
			t.Errorf("chained replica: GET %s in db 2: %q", k, got)
		}
	}
	if got := sc.Do("DBSIZE"); got != ":3\r\n" {
		t.Errorf("chained replica: DBSIZE in db 2: %q", got)
	}
}
