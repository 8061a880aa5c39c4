package recipes

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// startRedisCluster starts three redis-servers in cluster mode, joins
// them with redis-cli --cluster create (a primary each, no replicas) and
// returns a cluster client (joinCluster).
func startRedisCluster(t *testing.T) *redis.ClusterClient {
	testenv.NeedRedis(t)
	cli := testenv.Need(t, "redis-cli")
	var addrs []string
	for i := 0; i < 3; i++ {
		bus := freeTCPPort(t)
		r, err := servertest.StartRedis("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-port", fmt.Sprint(bus), "--cluster-node-timeout", "5000")
		if err != nil {
			t.Fatalf("starting redis-server: %v", err)
		}
		t.Cleanup(r.Stop)
		addrs = append(addrs, r.Addr)
	}
	return joinCluster(t, cli, addrs)
}

// joinCluster joins the nodes at addrs with redis-cli --cluster create (a
// primary each, no replicas) and returns a cluster client once every node
// reports cluster_state:ok. Waiting is bounded: a cluster that is not up
// in a minute fails the test.
func joinCluster(t *testing.T, cli string, addrs []string) *redis.ClusterClient {
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(cctx, cli, append(append([]string{"--cluster", "create"}, addrs...), "--cluster-yes")...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		for {
			info, err := c.ClusterInfo(cctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if cctx.Err() != nil {
				t.Fatalf("node %s: cluster not up: %v %q", a, err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
		c.Close()
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { cc.Close() })
	// Every node must know every node before the client's slot map is
	// trusted: a ping through each primary proves the routes.
	if err := cc.ForEachMaster(cctx, func(ctx context.Context, n *redis.Client) error { return n.Ping(ctx).Err() }); err != nil {
		t.Fatal(err)
	}
	return cc
}

func freeTCPPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestRecipesOnCluster runs every recipe through a cluster client on a
// three-node redis-server cluster (the fallback paths) and checks that
// the answers are the same as on a single Abacus (the native paths) and
// a single redis-server. Names without a hash tag are tagged by the
// recipes; the sliding window's and the sorter's keys, given by the
// caller, share one.
func TestRecipesOnCluster(t *testing.T) {
	cc := startRedisCluster(t)
	var got [][]string
	both(t, func(t *testing.T, e *env) { got = append(got, clusterBody(t, e, e.client(t, 0))) })
	ce := &env{name: "redis-cluster", mode: Fallback}
	ce.ms.Store(t0)
	ce.opts = Options{Now: func() time.Time { return time.UnixMilli(ce.ms.Load()) }}
	t.Run("redis-cluster", func(t *testing.T) { got = append(got, clusterBody(t, ce, cc)) })
	if len(got) != 3 {
		t.Fatalf("%d transcripts", len(got))
	}
	for i := range got[0] {
		for s := 1; s < 3; s++ {
			if i >= len(got[s]) || got[s][i] != got[0][i] {
				t.Fatalf("answer %d: %q on abacus, run %d said %q", i, got[0][i], s, got[s])
			}
		}
	}
	// The keys were spread over the nodes, not all in one slot.
	var nodes atomic.Int64 // ForEachMaster calls in parallel
	cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		if k, _ := n.DBSize(ctx).Result(); k > 0 {
			nodes.Add(1)
		}
		return nil
	})
	if nodes := nodes.Load(); nodes < 2 {
		t.Errorf("the recipes' keys are on %d node(s) of 3", nodes)
	}
}

func clusterBody(t *testing.T, e *env, c redis.UniversalClient) []string {
	var out []string
	say := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	ev := NewEvents(c, "events:login", time.Hour, e.opts)
	m, err := ev.Mode(ctx)
	e.checkMode(t, m, err)
	for i := 0; i < 5; i++ {
		must(t, ev.Record(ctx))
	}
	e.advance(30 * time.Second)
	for i := 0; i < 3; i++ {
		must(t, ev.Record(ctx))
		e.advance(time.Second)
	}
	n1, err := ev.Count(ctx, time.Minute)
	must(t, err)
	n2, err := ev.Count(ctx, 10*time.Second)
	must(t, err)
	say("events %d %d", n1, n2)

	hits := NewCounter(c, "hits", DefaultPrecisions, e.opts)
	for i := 0; i < 4; i++ {
		must(t, hits.Incr(ctx, int64(i+1)))
		e.advance(700 * time.Millisecond)
	}
	sl, err := hits.Slices(ctx, time.Second, 10)
	must(t, err)
	say("counter %v", sl)

	box := NewTimebox(c, "box:players", 10*time.Minute, e.opts)
	_, err = box.Add(ctx, "alice", 5)
	must(t, err)
	e.advance(6 * time.Minute)
	_, err = box.Add(ctx, "bob", 2)
	must(t, err)
	e.advance(5 * time.Minute)
	members, err := box.Members(ctx)
	must(t, err)
	say("timebox %v", members)

	fw := NewFixedWindow(c, "fw", 3, time.Minute, e.opts)
	sw := NewSlidingWindow(c, []Limit{{Window: time.Second, Max: 2, Precision: 100 * time.Millisecond}}, e.opts)
	gc := NewGCRA(c, 1, 1, time.Second, e.opts)
	for i := 0; i < 4; i++ {
		a, err := fw.Allow(ctx, "user:1", 1)
		must(t, err)
		b, err := sw.Allow(ctx, 1, "{u1}:user", "{u1}:ip")
		must(t, err)
		g, err := gc.Allow(ctx, "gcra:{u1}", 1)
		must(t, err)
		say("limits %v %v %v", a.Allowed, b.Allowed, g.Allowed)
	}

	lock := NewLock(c, "lock:report", 30*time.Second, e.opts)
	lease, ok, err := lock.Acquire(ctx)
	must(t, err)
	_, again, err := lock.Acquire(ctx)
	must(t, err)
	ext, err := lease.Extend(ctx, time.Minute)
	must(t, err)
	rel, err := lease.Release(ctx)
	must(t, err)
	say("lock %v %v %v %v", ok, again, ext, rel)

	must(t, c.SAdd(ctx, "{shop}:ids", "a", "b", "c").Err())
	must(t, c.ZAdd(ctx, "{shop}:price", redis.Z{Score: 3, Member: "a"}, redis.Z{Score: 1, Member: "b"}, redis.Z{Score: 2, Member: "c"}).Err())
	must(t, c.ZAdd(ctx, "{shop}:rating", redis.Z{Score: 5, Member: "a"}, redis.Z{Score: 9, Member: "b"}, redis.Z{Score: 9, Member: "c"}).Err())
	ids, err := NewSorter(c, "sort").Sort(ctx, "{shop}:ids", []Column{{"{shop}:rating", 100}, {"{shop}:price", -1}}, 0, -1, true)
	must(t, err)
	say("sorter %v", ids)

	px := NewPrefixIndex(c, "words")
	must(t, px.Add(ctx, "abacus", "abba", "abc", "bar"))
	words, err := px.Complete(ctx, "ab", 10)
	must(t, err)
	say("prefix %v", words)

	buf, err := NewBuffer(ctx, []redis.UniversalClient{c}, "views", openSQLite(t), SQLite, BufferOptions{Options: e.opts, Batch: 2})
	must(t, err)
	for i := 0; i < 10; i++ {
		must(t, buf.Incr(ctx, fmt.Sprint("page:", i%3), "day", int64(i)))
	}
	for {
		n, err := buf.Flush(ctx)
		must(t, err)
		if n == 0 {
			break
		}
	}
	var totals []string
	for i := 0; i < 3; i++ {
		tot, err := buf.Totals(ctx, fmt.Sprint("page:", i))
		must(t, err)
		totals = append(totals, fmt.Sprint(tot))
	}
	say("buffer %v", totals)

	ru := NewRollups([]redis.UniversalClient{c}, "req", []Rollup{{Step: time.Minute, Keep: time.Hour}}, e.opts)
	from := e.opts.Now()
	for i, svc := range []string{"api", "web", "api", "auth", "web", "api"} {
		must(t, ru.Add(ctx, map[string]string{"service": svc, "region": []string{"eu", "us"}[i%2]}, int64(i+1)))
		e.advance(20 * time.Second)
	}
	q, err := ru.Query(ctx, time.Minute, from.Add(-time.Minute), e.opts.Now(), nil, "service")
	must(t, err)
	groups := make([]string, 0, len(q))
	for g, pts := range q {
		groups = append(groups, fmt.Sprint(g, pts))
	}
	sort.Strings(groups)
	say("rollups %v", groups)
	return out
}
