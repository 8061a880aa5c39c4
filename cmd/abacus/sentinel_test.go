package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// Debian's redis-sentinel, three of them, monitor an Abacus primary with
// two Abacus replicas. The primary is killed (SIGKILL): a replica is
// promoted, the other follows it (continuing its history, no full sync),
// and the old primary, restarted, rejoins as a replica; writes made
// before the kill are on the new primary.
func TestSentinelFailover(t *testing.T) {
	sentinel := testenv.Need(t, "redis-sentinel")
	primary := start(t)
	_, pport, _ := strings.Cut(primary.addr, ":")
	replicas := []*proc{
		start(t, "--replicaof", "127.0.0.1", pport),
		start(t, "--replicaof", "127.0.0.1", pport),
	}
	pc := servertest.Dial(t, primary.addr)
	for i := 0; i < 100; i++ {
		pc.Do("SET", "before:"+strconv.Itoa(i), strconv.Itoa(i))
	}
	dir := t.TempDir()
	var sentinels []string
	for i := 0; i < 3; i++ {
		port := freePort(t)
		conf := filepath.Join(dir, fmt.Sprintf("s%d.conf", i))
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor m 127.0.0.1 %s 2\nsentinel down-after-milliseconds m 1000\nsentinel failover-timeout m 10000\n", port, dir, pport)
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(sentinel, conf)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		sentinels = append(sentinels, fmt.Sprintf("127.0.0.1:%d", port))
	}
	// Sentinels find the replicas through INFO and each other through
	// the primary's __sentinel__:hello channel.
	s0 := waitDial(t, sentinels[0])
	eventuallyTrue(t, 30*time.Second, "the sentinels see two replicas and each other", func() bool {
		m := kv(servertest.MustStrings(t, s0.Do("SENTINEL", "MASTER", "m")))
		return m["num-slaves"] == "2" && m["num-other-sentinels"] == "2"
	})
	eventuallyTrue(t, 30*time.Second, "the replicas are in sync", func() bool {
		off := field(t, pc, "master_repl_offset")
		for _, r := range replicas {
			if field(t, servertest.Dial(t, r.addr), "slave_repl_offset") != off {
				return false
			}
		}
		return true
	})

	// Clients write through Sentinel across the kill: every write a
	// replica acknowledged (WAIT 1 1000) before it must be on the new
	// primary, and the clients go on writing there after it.
	writers := []*ackWriter{goFailoverWriter(t, sentinels), pyFailoverWriter(t, sentinels)}
	eventuallyTrue(t, 30*time.Second, "the clients' writes are acknowledged", func() bool {
		for _, w := range writers {
			if len(w.snapshot()) < 20 {
				return false
			}
		}
		return true
	})
	var ackedBefore [][]string
	for _, w := range writers {
		ackedBefore = append(ackedBefore, w.snapshot())
	}
	primary.cmd.Process.Kill()
	var promoted, other *proc
	eventuallyTrue(t, 60*time.Second, "a replica is promoted", func() bool {
		addr := servertest.MustStrings(t, s0.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "m"))
		for i, r := range replicas {
			if len(addr) == 2 && r.addr == addr[0]+":"+addr[1] {
				promoted, other = r, replicas[1-i]
				return true
			}
		}
		return false
	})
	// Clients reconnect as they would: the sentinels kill the normal
	// clients of the servers they reconfigure.
	nc := servertest.NewClient(t, promoted.addr)
	ctx := servertest.Ctx
	eventuallyTrue(t, 60*time.Second, "the promoted replica accepts writes", func() bool {
		return nc.Set(ctx, "after", "1", 0).Err() == nil
	})
	for i := 0; i < 100; i++ {
		if got, err := nc.Get(ctx, "before:"+strconv.Itoa(i)).Result(); err != nil || got != strconv.Itoa(i) {
			t.Fatalf("before:%d on the new primary: %q %v", i, got, err)
		}
	}
	eventuallyTrue(t, 60*time.Second, "the clients write through the new primary", func() bool {
		for i, w := range writers {
			if len(w.snapshot()) < len(ackedBefore[i])+10 {
				return false
			}
		}
		return true
	})
	for i, w := range writers {
		w.stop()
		missing := 0
		for _, k := range ackedBefore[i] {
			if got, err := nc.Get(ctx, k).Result(); err != nil || got != ackedValue(k) {
				missing++
			}
		}
		t.Logf("%s: %d writes acknowledged before the kill, %d after; %d missing on the new primary",
			w.name, len(ackedBefore[i]), len(w.snapshot())-len(ackedBefore[i]), missing)
		if missing > 0 {
			t.Errorf("%s: %d of %d acknowledged writes missing on the new primary", w.name, missing, len(ackedBefore[i]))
		}
	}
	oc := servertest.NewClient(t, other.addr)
	eventuallyTrue(t, 60*time.Second, "the other replica follows the new primary", func() bool {
		v, _ := oc.Get(ctx, "after").Result()
		return v == "1"
	})
	if !strings.Contains(other.logs(), "Master accepted a Partial Resynchronization") {
		t.Errorf("the other replica did not continue partially:\n%s", other.logs())
	}
	// The old primary comes back and is turned into a replica.
	n, _ := strconv.Atoi(pport)
	back := startOn(t, n)
	bc := servertest.NewClient(t, back.addr)
	eventuallyTrue(t, 60*time.Second, "the old primary rejoins as a replica", func() bool {
		v, _ := bc.Get(ctx, "after").Result()
		return v == "1"
	})
	if role, err := bc.Do(ctx, "ROLE").Slice(); err != nil || role[0] != "slave" {
		t.Errorf("old primary's ROLE: %v %v", role, err)
	}
}

func waitDial(t *testing.T, addr string) *servertest.Conn {
	t.Helper()
	eventuallyTrue(t, 10*time.Second, "sentinel listening on "+addr, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return servertest.Dial(t, addr)
}

func kv(s []string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(s); i += 2 {
		m[s[i]] = s[i+1]
	}
	return m
}

// field is an INFO replication field.
func field(t *testing.T, c *servertest.Conn, name string) string {
	t.Helper()
	for _, line := range strings.Split(servertest.BulkBody(t, c.Do("INFO", "replication")), "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}

// eventuallyTrue polls cond (a wait for processes to act, not a timing
// assertion: the bound is generous).
func eventuallyTrue(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
