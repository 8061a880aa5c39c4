package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/keyspace"
	"github.com/abacusdb/abacus/internal/testenv"
)

// keysInSlots returns n keys of prefix whose slots are below limit.
func keysInSlots(prefix string, n, limit int) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		k := prefix + strconv.Itoa(i)
		if keyspace.HashSlotString(k) < limit {
			out = append(out, k)
		}
	}
	return out
}

// reshardLoad writes through a cluster client until stopped: SETs of new
// keys in the slots being moved (each value its key) and INCRs of
// counters there. It keeps what was acknowledged: every acknowledged SET
// must be readable afterwards, and a counter must hold at least its
// acknowledged INCRs and at most its attempts (an INCR that failed on the
// client's side may still have been applied).
type reshardLoad struct {
	stop          chan struct{}
	wg            sync.WaitGroup
	mu            sync.Mutex
	acked         []string
	incrAcked     map[string]int
	incrTried     map[string]int
	errs, redirOK int
}

const loadSlots = 200

func startReshardLoad(cc *redis.ClusterClient, workers int) *reshardLoad {
	w := &reshardLoad{stop: make(chan struct{}), incrAcked: map[string]int{}, incrTried: map[string]int{}}
	counters := keysInSlots("ctr:", workers, loadSlots)
	ctx := context.Background()
	for g := 0; g < workers; g++ {
		w.wg.Add(1)
		go func(g int) {
			defer w.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-w.stop:
					return
				default:
				}
				k := fmt.Sprintf("w%d:%d", g, i)
				if keyspace.HashSlotString(k) >= loadSlots {
					continue
				}
				err := cc.Set(ctx, k, k, 0).Err()
				w.mu.Lock()
				if err == nil {
					w.acked = append(w.acked, k)
				} else {
					w.errs++
				}
				w.incrTried[counters[g]]++
				w.mu.Unlock()
				err = cc.Incr(ctx, counters[g]).Err()
				w.mu.Lock()
				if err == nil {
					w.incrAcked[counters[g]]++
				} else {
					w.errs++
				}
				w.mu.Unlock()
				// A steady trickle, not a flood: the keys written are
				// all read back at the end.
				time.Sleep(time.Millisecond)
			}
		}(g)
	}
	return w
}

func (w *reshardLoad) finish() {
	close(w.stop)
	w.wg.Wait()
}

// verify reads every acknowledged write back through cc.
func (w *reshardLoad) verify(t *testing.T, cc *redis.ClusterClient) {
	t.Helper()
	ctx := context.Background()
	cc.ReloadState(ctx)
	for len(w.acked) > 0 {
		batch := w.acked[:min(1000, len(w.acked))]
		w.acked = w.acked[len(batch):]
		pipe := cc.Pipeline()
		gets := make([]*redis.StringCmd, len(batch))
		for i, k := range batch {
			gets[i] = pipe.Get(ctx, k)
		}
		pipe.Exec(ctx)
		for i, k := range batch {
			if v, err := gets[i].Result(); err != nil || v != k {
				t.Fatalf("acknowledged SET %s reads %q %v", k, v, err)
			}
		}
	}
	for k, n := range w.incrAcked {
		got, err := cc.Get(ctx, k).Int()
		if err != nil || got < n || got > w.incrTried[k] {
			t.Fatalf("counter %s = %d %v: %d INCRs acknowledged, %d tried", k, got, err, n, w.incrTried[k])
		}
	}
}

// reshard moves loadSlots slots (redis-cli takes the source's lowest, so
// always slots 0..loadSlots-1, the load's) from one node to another.
func reshard(t *testing.T, from, to *clusterNode) {
	t.Helper()
	out := redisCli(t, "--cluster", "reshard", from.addr(), "--cluster-from", from.myself()[0],
		"--cluster-to", to.myself()[0], "--cluster-slots", strconv.Itoa(loadSlots), "--cluster-yes",
		"--cluster-pipeline", "10")
	if strings.Contains(out, "[ERR]") {
		t.Fatalf("reshard %s -> %s:\n%s", from.addr(), to.addr(), out)
	}
}

// redis-cli --cluster reshard while a go-redis ClusterClient writes to
// the slots being moved: Abacus to Abacus, Abacus to redis-server and
// redis-server to Abacus. No acknowledged write is lost.
func TestClusterReshardUnderLoad(t *testing.T) {
	testenv.Need(t, "redis-cli")
	testenv.NeedRedis(t)
	a1, a2, r1 := startClusterNode(t, false), startClusterNode(t, false), startClusterNode(t, true)
	nodes := []*clusterNode{a1, a2, r1}
	// No failover here: a long node timeout keeps a machine loaded by
	// other tests from having a node taken for failed mid-reshard.
	relaxNodeTimeout(t, nodes...)
	// a1, first, gets slots 0-5460: the load's slots start there.
	createCluster(t, nodes, 0)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs(nodes), MaxRedirects: 16})
	defer cc.Close()
	ctx := context.Background()
	// Keys already there, for MIGRATE to carry while the load runs.
	pre := keysInSlots("pre:", 3000, loadSlots)
	pipe := cc.Pipeline()
	for _, k := range pre {
		pipe.Set(ctx, k, k, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}

	w := startReshardLoad(cc, 3)
	start := time.Now()
	reshard(t, a1, a2) // Abacus to Abacus
	t.Logf("a1 -> a2 after %v", time.Since(start))
	reshard(t, a2, r1) // Abacus to redis-server
	t.Logf("a2 -> r1 after %v", time.Since(start))
	reshard(t, r1, a1) // redis-server to Abacus
	t.Logf("r1 -> a1 after %v", time.Since(start))
	// Let the load run on the settled slots a moment before stopping.
	time.Sleep(200 * time.Millisecond)
	w.finish()
	checkClean(t, a1)
	sets := len(w.acked)
	if sets == 0 {
		t.Fatal("the load wrote nothing")
	}
	w.acked = append(w.acked, pre...)
	w.verify(t, cc)
	t.Logf("%d SETs and %d INCRs acknowledged across three reshards, all read back (%d errors)", sets, sum(w.incrAcked), w.errs)
	// Every slot of the load is back on a1, and its keys with it.
	c := a1.client()
	defer c.Close()
	if n, _ := c.Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", keyspace.HashSlotString(pre[0])).Int(); n == 0 {
		t.Errorf("slot %d is empty on a1 after the reshards", keyspace.HashSlotString(pre[0]))
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
