package replication_test

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

// field returns an INFO field's value from a raw INFO reply.
func field(t *testing.T, c *servertest.Conn, section, name string) string {
	t.Helper()
	body := servertest.BulkBody(t, c.Do("INFO", section))
	for _, line := range strings.Split(body, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}

// waitSynced waits until the replica's link is up and it has applied
// everything the primary produced.
func waitSynced(t *testing.T, primary, replica *servertest.Conn) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		up := field(t, replica, "replication", "master_link_status") == "up" &&
			field(t, replica, "replication", "master_sync_in_progress") == "0"
		if up && field(t, replica, "replication", "slave_repl_offset") == field(t, primary, "replication", "master_repl_offset") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica not in sync: primary\n%s\nreplica\n%s", primary.Do("INFO", "replication"), replica.Do("INFO", "replication"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dataset renders every key of every database in a form both servers
// answer alike: type, TTL presence and contents (sets and hashes sorted).
func dataset(t *testing.T, c *servertest.Conn) string {
	t.Helper()
	var out []string
	for db := 0; db < 16; db++ {
		c.Do("SELECT", strconv.Itoa(db))
		keys := servertest.MustStrings(t, c.Do("KEYS", "*"))
		sort.Strings(keys)
		for _, k := range keys {
			typ := strings.TrimSpace(strings.TrimPrefix(c.Do("TYPE", k), "+"))
			if typ == "none" {
				continue // expired between KEYS and TYPE
			}
			var v string
			switch typ {
			case "string":
				v = c.Do("GET", k)
			case "list":
				v = c.Do("LRANGE", k, "0", "-1")
			case "set":
				m := servertest.MustStrings(t, c.Do("SMEMBERS", k))
				sort.Strings(m)
				v = strings.Join(m, ",")
			case "zset":
				v = c.Do("ZRANGE", k, "0", "-1", "WITHSCORES")
			case "hash":
				m := servertest.MustStrings(t, c.Do("HGETALL", k))
				var pairs []string
				for i := 0; i+1 < len(m); i += 2 {
					pairs = append(pairs, m[i]+"="+m[i+1])
				}
				sort.Strings(pairs)
				v = strings.Join(pairs, ",")
			}
			ttl := c.Do("PTTL", k) != ":-1\r\n"
			out = append(out, fmt.Sprintf("%d %s %s ttl=%v %q", db, k, typ, ttl, v))
		}
	}
	c.Do("SELECT", "0")
	return strings.Join(out, "\n")
}

func sameData(t *testing.T, primary, replica *servertest.Conn) {
	t.Helper()
	waitSynced(t, primary, replica)
	a, r := dataset(t, primary), dataset(t, replica)
	if a != r {
		t.Fatalf("datasets differ\nprimary:\n%s\nreplica:\n%s", a, r)
	}
	if a == "" {
		t.Fatal("empty dataset: nothing was compared")
	}
}

// every data type Redis 7.0 has, in its small and large encodings.
func loadTypes(t *testing.T, c *servertest.Conn) {
	t.Helper()
	c.Do("SET", "s", "hello")
	c.Do("SET", "n", "12345")
	c.Do("SET", "ttl", "x", "EX", "1000")
	c.Do("RPUSH", "l", "a", "b", "c")
	c.Do("SADD", "si", "1", "2", "3")
	c.Do("SADD", "ss", "a", "b")
	c.Do("ZADD", "z", "1", "a", "2.5", "b")
	c.Do("HSET", "h", "f", "v", "g", "w")
	args := []string{"RPUSH", "bigl"}
	zargs := []string{"ZADD", "bigz"}
	hargs := []string{"HSET", "bigh"}
	sargs := []string{"SADD", "bigs"}
	for i := 0; i < 300; i++ {
		v := strconv.Itoa(i) + strings.Repeat("x", i%70)
		args = append(args, v)
		zargs = append(zargs, strconv.Itoa(i), v)
		hargs = append(hargs, v, v)
		sargs = append(sargs, v)
	}
	for _, a := range [][]string{args, zargs, hargs, sargs} {
		c.Do(a...)
	}
	c.Do("SELECT", "5")
	c.Do("SET", "in5", "five")
	c.Do("SELECT", "0")
}

// randomWrites runs a mixed write stream: every family, several
// databases, MULTI/EXEC, scripts, expiries, non-deterministic commands
// that must replicate as their effect.
func randomWrites(t *testing.T, c *servertest.Conn, rng *rand.Rand, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		k := "k" + strconv.Itoa(rng.Intn(20))
		switch rng.Intn(14) {
		case 0:
			c.Do("SET", k, strconv.Itoa(i), "PX", strconv.Itoa(100000+rng.Intn(1000)))
		case 1:
			c.Do("INCRBYFLOAT", "f"+k, "1.5")
		case 2:
			c.Do("LPUSH", "l"+k, strconv.Itoa(i))
		case 3:
			c.Do("SADD", "s"+k, strconv.Itoa(rng.Intn(50)))
		case 4:
			c.Do("SPOP", "s"+k)
		case 5:
			c.Do("ZINCRBY", "z"+k, "2", strconv.Itoa(rng.Intn(10)))
		case 6:
			c.Do("HINCRBY", "h"+k, "f"+strconv.Itoa(rng.Intn(5)), "3")
		case 7:
			c.Do("DEL", k)
		case 8:
			c.Do("MULTI")
			c.Do("INCR", "ctr")
			c.Do("SELECT", "2")
			c.Do("INCR", "ctr2")
			c.Do("EXEC")
			c.Do("SELECT", "0")
		case 9:
			c.Do("EVAL", "redis.call('incr', KEYS[1]); return redis.call('lpush', KEYS[2], ARGV[1])", "2", "sc", "sl", strconv.Itoa(i))
		case 10:
			c.Do("EXPIRE", "l"+k, "5000")
		case 11:
			c.Do("SRANDMEMBER", "s"+k) // read: nothing to replicate
			c.Do("LPOP", "l"+k)
		case 12:
			c.Do("SELECT", "3")
			c.Do("HSET", "h3", k, strconv.Itoa(i))
			c.Do("SELECT", "0")
		case 13:
			c.Do("SET", "tmp", "x", "PX", "1") // expires: replicated as DEL when reclaimed
		}
	}
}

// An Abacus primary with a redis-server 7.0 replica: full sync of every
// type, a mixed stream, then a dropped link and a partial resync.
func TestRedisReplicaOfAbacus(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("repl-diskless-sync-delay", "0"))
	pc := inst.Raw(t)
	loadTypes(t, pc)
	_, port, _ := strings.Cut(inst.Addr, ":")
	logfile := filepath.Join(t.TempDir(), "redis.log")
	r := servertest.PrivateRedis(t, "--replicaof", "127.0.0.1", port, "--loglevel", "notice", "--logfile", logfile)
	rc := servertest.Dial(t, r.Addr)
	sameData(t, pc, rc)
	if got := field(t, pc, "replication", "connected_slaves"); got != "1" {
		t.Fatalf("connected_slaves = %q", got)
	}
	role := servertest.MustParse(t, pc.Do("ROLE"))
	if len(role.Items) != 3 || role.Items[0].Str != "master" || len(role.Items[2].Items) != 1 {
		t.Fatalf("ROLE: %+v", role)
	}

	// WAIT: the replica acknowledges; a second one never comes.
	pc.Do("SET", "waited", "1")
	if got := pc.Do("WAIT", "1", "10000"); got != ":1\r\n" {
		t.Fatalf("WAIT 1: %q", got)
	}
	if got := pc.Do("WAIT", "2", "100"); got != ":1\r\n" {
		t.Fatalf("WAIT 2 with one replica: %q", got)
	}
	rng := rand.New(rand.NewSource(1))
	randomWrites(t, pc, rng, 400)
	sameData(t, pc, rc)

	// The link drops; writes go on; the replica comes back for the part
	// it missed only.
	if got := pc.Do("CLIENT", "KILL", "TYPE", "replica"); got != ":1\r\n" {
		t.Fatalf("CLIENT KILL TYPE replica: %q", got)
	}
	randomWrites(t, pc, rng, 200)
	sameData(t, pc, rc)
	logs, _ := os.ReadFile(logfile)
	if !strings.Contains(string(logs), "Successful partial resynchronization with master") {
		t.Errorf("the replica did not resync partially:\n%s", logs)
	}
	if !strings.Contains(inst.Logs.String(), "Partial resynchronization request from") {
		t.Errorf("no partial resynchronization on the primary:\n%s", inst.Logs.String())
	}
}

// redis-cli --rdb and --replica against Abacus.
func TestRedisCliRDBAndReplica(t *testing.T) {
	cli := testenv.Need(t, "redis-cli")
	check := testenv.Need(t, "redis-check-rdb")
	inst := servertest.Start(t)
	pc := inst.Raw(t)
	loadTypes(t, pc)
	host, port, _ := strings.Cut(inst.Addr, ":")
	file := filepath.Join(t.TempDir(), "dump.rdb")
	if out, err := exec.Command(cli, "-h", host, "-p", port, "--rdb", file).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --rdb: %v\n%s", err, out)
	}
	out, err := exec.Command(check, file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "13 keys read") {
		t.Fatalf("redis-check-rdb: %v\n%s", err, out)
	}
	cmd := exec.Command(cli, "-h", host, "-p", port, "--replica")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(field(t, pc, "replication", "slave0"), "state=online") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	pc.Do("SET", "seen-by-cli", "1")
	buf := make([]byte, 64<<10)
	var got strings.Builder
	for !strings.Contains(got.String(), "seen-by-cli") && time.Now().Before(deadline) {
		n, err := stdout.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if !strings.Contains(got.String(), `"SET","seen-by-cli","1"`) {
		t.Fatalf("redis-cli --replica did not show the write:\n%s", got.String())
	}
}

// An Abacus replica of a redis-server 7.0 primary: full sync of every
// type, the stream, a dropped link and a partial resync; writes refused.
func TestAbacusReplicaOfRedis(t *testing.T) {
	r := servertest.PrivateRedis(t)
	rc := servertest.Dial(t, r.Addr)
	loadTypes(t, rc)
	host, port, _ := strings.Cut(r.Addr, ":")
	inst := servertest.Start(t, servertest.WithConfig("replica-read-only", "yes"))
	ac := inst.Raw(t)
	if got := ac.Do("REPLICAOF", host, port); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF: %q", got)
	}
	sameData(t, rc, ac)
	if got := ac.Do("SET", "x", "1"); got != "-READONLY You can't write against a read only replica.\r\n" {
		t.Fatalf("write on a replica: %q", got)
	}
	rng := rand.New(rand.NewSource(2))
	randomWrites(t, rc, rng, 400)
	sameData(t, rc, ac)
	rc.Do("CLIENT", "KILL", "TYPE", "replica")
	randomWrites(t, rc, rng, 200)
	sameData(t, rc, ac)
	if !strings.Contains(inst.Logs.String(), "Master accepted a Partial Resynchronization") {
		t.Errorf("no partial resync:\n%s", inst.Logs.String())
	}
	role := servertest.MustParse(t, ac.Do("ROLE"))
	if role.Items[0].Str != "slave" || role.Items[3].Str != "connected" {
		t.Errorf("ROLE: %+v", role)
	}
}

// Abacus to Abacus, then a failover: the replica is promoted, the old
// primary follows it and continues its history without a full sync.
func TestAbacusFailoverContinues(t *testing.T) {
	a := servertest.Start(t, servertest.WithConfig("repl-diskless-sync-delay", "0"))
	b := servertest.Start(t, servertest.WithConfig("repl-diskless-sync-delay", "0"))
	ac, bc := a.Raw(t), b.Raw(t)
	loadTypes(t, ac)
	host, port, _ := strings.Cut(a.Addr, ":")
	bc.Do("REPLICAOF", host, port)
	sameData(t, ac, bc)
	rng := rand.New(rand.NewSource(3))
	randomWrites(t, ac, rng, 200)
	// No key may expire on the old primary after the promotion: its DEL
	// would be history the new primary lacks, and the rejoin a full sync
	// (as in Redis).
	ac.Do("DEL", "tmp")
	sameData(t, ac, bc)

	if got := bc.Do("REPLICAOF", "NO", "ONE"); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF NO ONE: %q", got)
	}
	bc.Do("SET", "after-failover", "1")
	bhost, bport, _ := strings.Cut(b.Addr, ":")
	ac.Do("REPLICAOF", bhost, bport)
	randomWrites(t, bc, rng, 100)
	sameData(t, bc, ac)
	if !strings.Contains(b.Logs.String(), "Partial resynchronization request from") {
		t.Errorf("the old primary did a full sync after the failover:\n%s", b.Logs.String())
	}
	if got := field(t, bc, "replication", "second_repl_offset"); got == "-1" {
		t.Errorf("second_repl_offset not set after promotion")
	}
}
