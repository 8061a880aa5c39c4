package recipes

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/testenv"
)

// abacusBinary builds cmd/abacus once per test process.
var abacusBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "recipes-abacus-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "abacus")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/abacusdb/abacus/cmd/abacus").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// startAbacusCluster starts three Abacus processes in cluster mode, joins
// them with redis-cli --cluster create (a primary each) and returns a
// cluster client (joinCluster). Waiting is bounded: a node not listening
// in a minute fails the test.
func startAbacusCluster(t *testing.T) *redis.ClusterClient {
	cli := testenv.Need(t, "redis-cli")
	bin, err := abacusBinary()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(bin)) })
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var addrs []string
	for range 3 {
		port, bus := freeTCPPort(t), freeTCPPort(t)
		dir := t.TempDir()
		cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
			"--cluster-port", fmt.Sprint(bus), "--cluster-node-timeout", "5000", "--save", "", "--appendonly", "no")
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		t.Cleanup(func() { cmd.Process.Kill(); <-done })
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-done:
				t.Fatalf("abacus on %s exited", addr)
			case <-cctx.Done():
				t.Fatalf("abacus on %s: %v", addr, err)
			case <-time.After(20 * time.Millisecond):
			}
		}
		addrs = append(addrs, addr)
	}
	return joinCluster(t, cli, addrs)
}

// TestRecipesOnAbacusCluster runs every recipe through a cluster client
// on a three-node Abacus cluster (the native paths, multi-key commands
// kept in one slot by the recipes' hash tags) and checks the answers
// against a single Abacus's.
func TestRecipesOnAbacusCluster(t *testing.T) {
	cc := startAbacusCluster(t)
	var got [][]string
	both(t, func(t *testing.T, e *env) {
		if e.mode == Native {
			got = append(got, clusterBody(t, e, e.client(t, 0)))
		}
	})
	// The nodes run on the real clock; the recipes' clock is the
	// client's, as on the redis-server cluster.
	ce := &env{name: "abacus-cluster", mode: Native}
	ce.ms.Store(t0)
	ce.opts = Options{Now: func() time.Time { return time.UnixMilli(ce.ms.Load()) }}
	t.Run("abacus-cluster", func(t *testing.T) { got = append(got, clusterBody(t, ce, cc)) })
	if len(got) != 2 {
		t.Fatalf("%d transcripts", len(got))
	}
	for i := range got[0] {
		// The native Timebox expires members by the server's clock
		// (HPEXPIREAT), which the test drives in process but not in the
		// cluster's processes: checked below on the real clock instead.
		if strings.HasPrefix(got[0][i], "timebox ") {
			continue
		}
		if i >= len(got[1]) || got[1][i] != got[0][i] {
			t.Fatalf("answer %d: %q on one abacus, the cluster said %q", i, got[0][i], got[1])
		}
	}
	box := NewTimebox(cc, "box:live", time.Minute, Options{})
	_, err := box.Add(ctx, "carol", 3)
	must(t, err)
	members, err := box.Members(ctx)
	must(t, err)
	if fmt.Sprint(members) != "map[carol:3]" {
		t.Errorf("timebox on the cluster: %v", members)
	}
	var nodes int
	var mu sync.Mutex
	cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		if k, _ := n.DBSize(ctx).Result(); k > 0 {
			mu.Lock()
			nodes++
			mu.Unlock()
		}
		return nil
	})
	if nodes < 2 {
		t.Errorf("the recipes' keys are on %d node(s) of 3", nodes)
	}
}
