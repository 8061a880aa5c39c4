package persist_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

// readAll reads every key of db 0 and 3 of c in a form both servers give
// alike: type, value (collections sorted) and whether it has a TTL.
func readAll(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, db := range []int{0, 3} {
		c.Do(ctx, "SELECT", db)
		keys, err := c.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			typ := c.Type(ctx, k).Val()
			var v any
			switch typ {
			case "string":
				v = c.Get(ctx, k).Val()
			case "list":
				v = c.LRange(ctx, k, 0, -1).Val()
			case "set":
				m := c.SMembers(ctx, k).Val()
				sort.Strings(m)
				v = m
			case "zset":
				v = c.ZRangeWithScores(ctx, k, 0, -1).Val()
			case "hash":
				v = c.HGetAll(ctx, k).Val()
			}
			ttl := c.PTTL(ctx, k).Val() > 0
			out[fmt.Sprintf("%d/%s", db, k)] = fmt.Sprintf("%s %v ttl=%v", typ, v, ttl)
		}
	}
	c.Do(ctx, "SELECT", 0)
	return out
}

// A file Abacus writes loads into redis-server 7.0 with every key, value
// and TTL, and redis-check-rdb finds it OK.
func TestRedisLoadsAbacusFile(t *testing.T) {
	testenv.NeedRedis(t)
	for _, how := range []string{"SAVE", "BGSAVE"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			inst := servertest.Start(t, servertest.WithConfig("dir", dir))
			c := redis.NewClient(&redis.Options{Addr: inst.Addr, Protocol: 2, DisableIdentity: true, PoolSize: 1})
			defer c.Close()
			fillTTL(t, c, false)
			want := readAll(t, c)
			if err := c.Do(ctx, how).Err(); err != nil {
				t.Fatal(err)
			}
			inst.Dur.WaitBgsave()
			path := filepath.Join(dir, "dump.rdb")
			if chk := testenv.Have(t, "redis-check-rdb"); chk != "" {
				out, err := exec.Command(chk, path).CombinedOutput()
				if err != nil || !strings.Contains(string(out), "RDB looks OK!") {
					t.Fatalf("redis-check-rdb: %v\n%s", err, out)
				}
			}
			r, err := servertest.StartRedis("--dir", dir, "--dbfilename", "dump.rdb")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Stop()
			rc := redis.NewClient(&redis.Options{Addr: r.Addr, Protocol: 2, DisableIdentity: true, PoolSize: 1})
			defer rc.Close()
			got := readAll(t, rc)
			if len(got) != len(want) {
				t.Fatalf("redis-server has %d keys, Abacus had %d", len(got), len(want))
			}
			for k, v := range want {
				if got[k] != v {
					t.Fatalf("%s: redis-server %q, Abacus %q", k, got[k], v)
				}
			}
		})
	}
}
