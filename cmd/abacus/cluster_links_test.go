package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

func (n *clusterNode) signal(sig syscall.Signal) {
	if n.redis {
		n.cmd.Process.Signal(sig)
	} else {
		n.p.cmd.Process.Signal(sig)
	}
}

// linkFigures is CLUSTER LINKS' largest send-buffer-used and the events of
// the link holding it.
func linkFigures(c *redis.Client) (int64, string) {
	links, _ := c.Do(context.Background(), "CLUSTER", "LINKS").Slice()
	var most int64
	events := ""
	for _, l := range links {
		f := map[string]any{}
		switch x := l.(type) {
		case []any:
			for i := 0; i+1 < len(x); i += 2 {
				f[x[i].(string)] = x[i+1]
			}
		case map[any]any:
			for k, v := range x {
				f[k.(string)] = v
			}
		}
		if used, _ := f["send-buffer-used"].(int64); used >= most {
			most, events = used, f["events"].(string)
		}
	}
	return most, events
}

// A peer that stops reading (SIGSTOP) while PUBLISH broadcasts large
// messages over the bus: CLUSTER LINKS shows the backlog, and with
// cluster-link-sendbuf-limit the node frees the link, logs it and counts
// it in total_cluster_links_buffer_limit_exceeded, as redis-server 7.0
// does (run side by side); the peer, resumed, is linked again.
func TestClusterLinkSendbufLimit(t *testing.T) {
	testenv.NeedRedis(t)
	for _, redisServer := range []bool{false, true} {
		name := map[bool]string{false: "abacus", true: "redis-server"}[redisServer]
		t.Run(name, func(t *testing.T) {
			a, b := twoNodeCluster(t, redisServer)
			ctx := context.Background()
			ca := a.client()
			defer ca.Close()
			b.signal(syscall.SIGSTOP)
			stopped := true
			defer func() {
				if stopped {
					b.signal(syscall.SIGCONT)
				}
			}()
			msg := strings.Repeat("x", 1<<20)
			// No limit yet: the backlog builds up and shows.
			var used int64
			var events string
			eventuallyTrue(t, 20*time.Second, "a send backlog in CLUSTER LINKS", func() bool {
				if err := ca.Publish(ctx, "ch", msg).Err(); err != nil {
					t.Fatal(err)
				}
				used, events = linkFigures(ca)
				return used > 0 && events == "rw"
			})
			if err := ca.ConfigSet(ctx, "cluster-link-sendbuf-limit", "1mb").Err(); err != nil {
				t.Fatal(err)
			}
			eventuallyTrue(t, 20*time.Second, "the link freed for its send buffer", func() bool {
				ca.Publish(ctx, "ch", msg)
				n := a.info("total_cluster_links_buffer_limit_exceeded")
				return n != "" && n != "0"
			})
			if !redisServer && !strings.Contains(a.p.logs(), "due to exceeding send buffer memory limit.") {
				t.Errorf("freeing the link not logged:\n%s", a.p.logs())
			}
			b.signal(syscall.SIGCONT)
			stopped = false
			if err := ca.ConfigSet(ctx, "cluster-link-sendbuf-limit", "0").Err(); err != nil {
				t.Fatal(err)
			}
			waitClusterOK(t, a, b)
			eventuallyTrue(t, 20*time.Second, "links again both ways", func() bool {
				links, _ := ca.Do(ctx, "CLUSTER", "LINKS").Slice()
				return len(links) == 2
			})
			t.Logf("backlog seen: %d bytes (events %s)", used, events)
		})
	}
}

// linkShapes renders CLUSTER LINKS with each value replaced by its RESP
// type, except direction, node and events, which are kept.
func linkShapes(t *testing.T, r servertest.Reply) []string {
	t.Helper()
	var out []string
	for _, l := range r.Items {
		var b strings.Builder
		b.WriteByte(l.Kind)
		for i := 0; i+1 < len(l.Items); i += 2 {
			k, v := l.Items[i], l.Items[i+1]
			fmt.Fprintf(&b, " %c%s=%c", k.Kind, k.Str, v.Kind)
			if k.Str == "direction" || k.Str == "node" || k.Str == "events" {
				b.WriteString(v.Str)
			}
		}
		out = append(out, b.String())
	}
	sort.Strings(out)
	return out
}

// An Abacus node and a redis-server node in one cluster: each one's
// CLUSTER LINKS has the same shape (one link each way, the same fields in
// the same order with the same types, RESP2 and RESP3) and INFO's
// mem_cluster_links counts the links' buffers on both.
func TestClusterLinksShapeAndMemory(t *testing.T) {
	testenv.NeedRedis(t)
	a, r := startClusterNode(t, false), startClusterNode(t, true)
	relaxNodeTimeout(t, a, r)
	ctx := context.Background()
	ca, cr := a.client(), r.client()
	defer ca.Close()
	defer cr.Close()
	if err := ca.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 8191).Err(); err != nil {
		t.Fatal(err)
	}
	if err := cr.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 8192, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	if err := ca.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", r.port, r.cport).Err(); err != nil {
		t.Fatal(err)
	}
	waitClusterOK(t, a, r)
	ids := map[*clusterNode]string{a: a.myself()[0], r: r.myself()[0]}
	other := map[*clusterNode]*clusterNode{a: r, r: a}
	eventuallyTrue(t, 10*time.Second, "two links on each node", func() bool {
		for _, n := range []*clusterNode{a, r} {
			if l, _ := n.client().Do(ctx, "CLUSTER", "LINKS").Slice(); len(l) != 2 {
				return false
			}
		}
		return true
	})
	for _, proto := range []string{"2", "3"} {
		shapes := map[*clusterNode][]string{}
		for _, n := range []*clusterNode{a, r} {
			c := servertest.Dial(t, n.addr())
			c.Do("HELLO", proto)
			// Between gossip rounds nothing waits to be written (events r).
			var s []string
			eventuallyTrue(t, 10*time.Second, "quiet links", func() bool {
				s = linkShapes(t, servertest.MustParse(t, c.Do("CLUSTER", "LINKS")))
				return !strings.Contains(strings.Join(s, " "), "events=$rw")
			})
			// The peer's id differs by node: name it the same on both.
			for i := range s {
				s[i] = strings.ReplaceAll(s[i], ids[other[n]], "PEER")
			}
			shapes[n] = s
		}
		if fmt.Sprint(shapes[a]) != fmt.Sprint(shapes[r]) {
			t.Errorf("RESP%s CLUSTER LINKS shapes differ:\nabacus:       %q\nredis-server: %q", proto, shapes[a], shapes[r])
		}
	}
	for _, n := range []*clusterNode{a, r} {
		s, _ := n.client().Info(ctx, "memory").Result()
		var mem int64
		for _, line := range strings.Split(s, "\r\n") {
			if v, ok := strings.CutPrefix(line, "mem_cluster_links:"); ok {
				mem, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		t.Logf("redis-server %v: mem_cluster_links %d", n.redis, mem)
		if mem <= 0 {
			t.Errorf("redis-server %v: mem_cluster_links %d", n.redis, mem)
		}
	}
}
