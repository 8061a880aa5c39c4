package replication_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abacusdb/abacus/internal/servertest"
)

// PUBLISH reaches the subscribers of a primary's replicas, a redis-server
// replica and an Abacus one, alone and inside MULTI, and stays out of the
// primary's AOF (Redis propagates it to replicas only).
func TestPublishReachesReplicas(t *testing.T) {
	dir := t.TempDir()
	inst := servertest.Start(t, servertest.WithConfig("dir", dir))
	pc := inst.Raw(t)
	// The AOF turned on at run time, as the in-process server loads no
	// files at start; its first base is written by a rewrite.
	pc.Do("CONFIG", "SET", "appendonly", "yes")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		info := pc.Do("INFO", "persistence")
		if servertest.InfoField(info, "aof_enabled") == "1" && servertest.InfoField(info, "aof_rewrite_in_progress") == "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the AOF did not start: %s", info)
		}
	}
	host, port, _ := strings.Cut(inst.Addr, ":")

	r := servertest.PrivateRedis(t, "--replicaof", host, port)
	rc := servertest.Dial(t, r.Addr)
	b := servertest.Start(t)
	bc := b.Raw(t)
	if got := bc.Do("REPLICAOF", host, port); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF: %q", got)
	}
	waitSynced(t, pc, rc)
	waitSynced(t, pc, bc)

	subs := map[string]*servertest.Conn{"redis": servertest.Dial(t, r.Addr), "abacus": b.Raw(t)}
	for name, s := range subs {
		if got := s.Do("SUBSCRIBE", "alerts"); !strings.Contains(got, "subscribe") {
			t.Fatalf("%s SUBSCRIBE: %q", name, got)
		}
	}
	if got := pc.Do("PUBLISH", "alerts", "one"); got != ":0\r\n" {
		t.Fatalf("PUBLISH on the primary (no subscriber there): %q", got)
	}
	pc.Do("MULTI")
	pc.Do("SET", "k", "v")
	pc.Do("PUBLISH", "alerts", "two")
	if got := pc.Do("EXEC"); got != "*2\r\n+OK\r\n:0\r\n" {
		t.Fatalf("EXEC: %q", got)
	}
	for name, s := range subs {
		for _, msg := range []string{"one", "two"} {
			want := "*3\r\n$7\r\nmessage\r\n$6\r\nalerts\r\n$3\r\n" + msg + "\r\n"
			if got := s.Read(); got != want {
				t.Fatalf("%s replica's subscriber got %q, want %q", name, got, want)
			}
		}
	}
	waitSynced(t, pc, rc)
	if got := rc.Do("GET", "k"); got != "$1\r\nv\r\n" {
		t.Fatalf("the SET beside the PUBLISH: %q", got)
	}

	// appendfsync always: the EXEC's reply came after its entries were
	// written.
	pc.Do("CONFIG", "SET", "appendfsync", "always")
	pc.Do("PUBLISH", "alerts", "three")
	pc.Do("SET", "k2", "v2")
	aof := ""
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(p, ".aof") {
			data, _ := os.ReadFile(p)
			aof += string(data)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(aof, "$2\r\nk2\r\n$2\r\nv2\r\n") {
		t.Fatalf("the AOF lacks the SET (is it written?): %q", aof)
	}
	if strings.Contains(strings.ToLower(aof), "publish") {
		t.Fatalf("PUBLISH reached the AOF: %q", aof)
	}
}
