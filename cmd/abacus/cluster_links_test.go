package main

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
