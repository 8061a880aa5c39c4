package commands_test

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
)

// infoField is one INFO field's value.
func infoField(c *redis.Client, section, field string) string {
	s, _ := c.Info(servertest.Ctx, section).Result()
	for _, line := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}

// MIGRATE keeps one connection per target as redis-server does: calls to
// the same target reuse it (SELECT only when the DB changes), INFO counts
// it, and one the target closed is replaced within the same call. The
// same script runs from an Abacus source and a redis-server source, each
// to a fresh Abacus target, and must read the same.
func TestMigrateCachedSocketsDiff(t *testing.T) {
	run := func(src *redis.Client) []string {
		dst := servertest.Start(t)
		dc := dst.Client(t)
		host, port := hostPort(t, dst.Addr)
		ctx := servertest.Ctx
		for _, k := range []string{"a", "b", "c", "d", "e"} {
			src.Set(ctx, k, k, 0)
		}
		var out []string
		conns := func() int {
			n, _ := strconv.Atoi(infoField(dc, "stats", "total_connections_received"))
			return n
		}
		before := conns()
		out = append(out, doReply(src, "migrate", host, port, "a", 0, 1000))
		out = append(out, doReply(src, "migrate", host, port, "b", 0, 1000))
		out = append(out, doReply(src, "migrate", host, port, "", 1, 1000, "keys", "c", "d"))
		out = append(out, "cached "+infoField(src, "stats", "migrate_cached_sockets"))
		after := conns()
		out = append(out, "target connections "+strconv.Itoa(after-before))
		// The target drops every client but ours: the next MIGRATE finds
		// its cached connection closed and dials again.
		out = append(out, doReply(dc, "client", "kill", "type", "normal", "skipme", "yes"))
		out = append(out, doReply(src, "migrate", host, port, "e", 1, 1000))
		out = append(out, "cached "+infoField(src, "stats", "migrate_cached_sockets"))
		dc.Do(ctx, "select", 1)
		out = append(out, doReply(dc, "dbsize"))
		t.Log(out)
		return out
	}
	abacus := run(servertest.Start(t).Client(t))
	redisSide := run(servertest.NewClient(t, servertest.PrivateRedis(t).Addr))
	if !reflect.DeepEqual(abacus, redisSide) {
		t.Errorf("Abacus source: %q\nredis-server source: %q", abacus, redisSide)
	}
}
