package replication_test

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// waitDigest waits until the replica is in sync and compares DEBUG
// DIGEST, which both servers compute alike over the whole dataset.
func waitDigest(t *testing.T, primary, replica *servertest.Conn) {
	t.Helper()
	waitSynced(t, primary, replica)
	if a, b := primary.Do("DEBUG", "DIGEST"), replica.Do("DEBUG", "DIGEST"); a != b || !strings.HasPrefix(a, "+") || a == "+"+strings.Repeat("0", 40)+"\r\n" {
		t.Fatalf("DEBUG DIGEST: primary %q, replica %q", a, b)
	}
}

// A full sync is taken from the keyspace's sliced snapshot while clients
// keep writing: what they write during the transfer reaches the replica
// after the snapshot, diskless (the EOF-marked form) or from a file, and
// a redis-server replica ends with the same dataset.
func TestFullSyncUnderWrites(t *testing.T) {
	for _, diskless := range []string{"yes", "no"} {
		t.Run("diskless="+diskless, func(t *testing.T) {
			inst := servertest.Start(t, servertest.WithConfig("repl-diskless-sync", diskless,
				"repl-diskless-sync-delay", "0", "dir", t.TempDir(), "enable-debug-command", "yes"))
			pc := inst.Raw(t)
			pc.Do("DEBUG", "POPULATE", "30000", "key", "32")
			loadTypes(t, pc)
			var stop atomic.Bool
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := inst.Raw(t)
				for i := 0; !stop.Load(); i++ {
					c.Do("SET", "key:"+strconv.Itoa(i%30000), "w"+strconv.Itoa(i))
					c.Do("INCR", "writes")
				}
			}()
			_, port, _ := strings.Cut(inst.Addr, ":")
			r := servertest.PrivateRedis(t, "--replicaof", "127.0.0.1", port, "--enable-debug-command", "yes")
			rc := servertest.Dial(t, r.Addr)
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(field(t, pc, "replication", "slave0"), "state=online") && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			stop.Store(true)
			wg.Wait()
			waitDigest(t, pc, rc)
			target := "replicas sockets"
			if diskless == "no" {
				target = "disk"
			}
			if !strings.Contains(inst.Logs.String(), "Starting BGSAVE for SYNC with target: "+target) {
				t.Errorf("no sync with target %s:\n%s", target, inst.Logs.String())
			}
		})
	}
}

// repl-diskless-sync-delay lets replicas that come within it share one
// snapshot.
func TestDisklessSyncDelayShares(t *testing.T) {
	inst := servertest.Start(t, servertest.WithConfig("repl-diskless-sync-delay", "1", "enable-debug-command", "yes"))
	pc := inst.Raw(t)
	loadTypes(t, pc)
	host, port, _ := strings.Cut(inst.Addr, ":")
	a := servertest.Start(t, servertest.WithConfig("enable-debug-command", "yes"))
	b := servertest.Start(t, servertest.WithConfig("enable-debug-command", "yes"))
	ac, bc := a.Raw(t), b.Raw(t)
	ac.Do("REPLICAOF", host, port)
	bc.Do("REPLICAOF", host, port)
	waitDigest(t, pc, ac)
	waitDigest(t, pc, bc)
	logs := inst.Logs.String()
	if n := strings.Count(logs, "Starting BGSAVE for SYNC"); n != 1 || !strings.Contains(logs, "(2 replicas)") {
		t.Errorf("%d snapshots for two replicas arriving together:\n%s", n, logs)
	}
}
