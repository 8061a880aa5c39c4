package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// randomWrite is one random command over a small key space, mixing the
// commands whose propagation is rewritten (relative TTLs, SPOP,
// INCRBYFLOAT, HINCRBYFLOAT, short TTLs that expire lazily) with plain
// ones, transactions and scripts.
func randomWrite(r *rand.Rand) [][]string {
	k := func() string { return fmt.Sprint("k", r.IntN(12)) }
	n := func(m int) string { return fmt.Sprint(r.IntN(m)) }
	long := func() string { return fmt.Sprint(100 + r.IntN(1000)) }
	switch r.IntN(30) {
	case 0:
		return [][]string{{"SET", k(), n(100)}}
	case 1:
		return [][]string{{"SET", k(), n(100), []string{"EX", "PX"}[r.IntN(2)], long() + "000", []string{"NX", "XX", "GET", "KEEPTTL"}[r.IntN(3)]}}
	case 2:
		return [][]string{{"SETEX", k(), long(), n(9)}}
	case 3:
		return [][]string{{"INCR", k()}}
	case 4:
		return [][]string{{"INCRBYFLOAT", k(), "0.1"}}
	case 5:
		return [][]string{{"EXPIRE", k(), long(), []string{"NX", "XX", "GT", "LT"}[r.IntN(4)]}}
	case 6:
		return [][]string{{"PEXPIRE", k(), []string{"-5", "1", long() + "000"}[r.IntN(3)]}}
	case 7:
		switch r.IntN(3) {
		case 0:
			return [][]string{{"GETEX", k(), "PERSIST"}}
		case 1:
			return [][]string{{"GETEX", k(), "EX", long()}}
		}
		return [][]string{{"GETEX", k(), "PX", long()}}
	case 8:
		return [][]string{{"DEL", k()}}
	case 9:
		return [][]string{{"RPUSH", k(), n(50), n(50)}}
	case 10:
		return [][]string{{"LPOP", k()}}
	case 11:
		return [][]string{{"SADD", k(), n(20), n(20), n(20)}}
	case 12:
		return [][]string{{"SPOP", k(), n(3)}}
	case 13:
		return [][]string{{"SPOP", k()}}
	case 14:
		return [][]string{{"ZADD", k(), n(10), "m" + n(10)}}
	case 15:
		return [][]string{{"ZINCRBY", k(), "1.5", "m" + n(10)}}
	case 16:
		return [][]string{{"ZPOPMIN", k()}}
	case 17:
		return [][]string{{"HSET", k(), "f" + n(5), n(100)}}
	case 18:
		return [][]string{{"HINCRBY", k(), "f" + n(5), n(10)}}
	case 19:
		return [][]string{{"HINCRBYFLOAT", k(), "g" + n(5), "0.3"}}
	case 20:
		return [][]string{{"MULTI"}, {"INCR", k()}, {"SET", k(), "t", "PX", long() + "000"}, {"SPOP", k()}, {"EXEC"}}
	case 21:
		return [][]string{{"EVAL", "redis.call('incr', KEYS[1]); redis.call('expire', KEYS[2], ARGV[1]); return redis.pcall('spop', KEYS[1])", "2", k(), k(), long()}}
	case 22:
		return [][]string{{"SET", k(), "short", "PX", fmt.Sprint(1 + r.IntN(30))}}
	case 23:
		return [][]string{{"GET", k()}, {"EXISTS", k()}}
	case 24:
		return [][]string{{"SELECT", "1"}, {"SET", k(), n(10)}, {"INCRBYFLOAT", k(), "2.5"}, {"SELECT", "0"}}
	case 25:
		return [][]string{{"RENAME", k(), k()}}
	case 26:
		return [][]string{{"PERSIST", k()}}
	case 27:
		return [][]string{{"LMOVE", k(), k(), "LEFT", "RIGHT"}}
	case 28:
		return [][]string{{"GETDEL", k()}}
	}
	return [][]string{{"HDEL", k(), "f" + n(5)}}
}

// dumpState describes every key of dbs 0 and 1: type, contents in an
// order-free form, absolute expiry.
func dumpState(t *testing.T, addr string) string {
	ctx := context.Background()
	var out []string
	for db := 0; db < 2; db++ {
		c := redis.NewClient(&redis.Options{Addr: addr, DB: db, Protocol: 2, DisableIdentity: true})
		keys := c.Keys(ctx, "*").Val()
		for _, k := range keys {
			var v string
			switch typ := c.Type(ctx, k).Val(); typ {
			case "string":
				v = c.Get(ctx, k).Val()
			case "list":
				v = fmt.Sprint(c.LRange(ctx, k, 0, -1).Val())
			case "set":
				v = fmt.Sprint(sorted(c.SMembers(ctx, k).Val()))
			case "zset":
				v = fmt.Sprint(c.ZRangeWithScores(ctx, k, 0, -1).Val())
			case "hash":
				m := c.HGetAll(ctx, k).Val()
				var fs []string
				for f, x := range m {
					fs = append(fs, f+"="+x)
				}
				sort.Strings(fs)
				v = fmt.Sprint(fs)
			default:
				v = typ
			}
			exp := c.Do(ctx, "PEXPIRETIME", k).Val()
			out = append(out, fmt.Sprintf("db%d %s=%s exp=%v", db, k, v, exp))
		}
		c.Close()
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// A random stream of writes through Abacus with AOF, a rewrite in the
// middle, then redis-server 7.0 loads the AOF and holds the same data,
// TTLs to the millisecond.
func TestAOFRandomStreamLoadsIntoRedis(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			dir := t.TempDir()
			p := start(t, "--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", "no")
			ctx := context.Background()
			c := redis.NewClient(&redis.Options{Addr: p.addr, Protocol: 2, DisableIdentity: true, PoolSize: 1})
			r := rand.New(rand.NewPCG(seed, 99))
			for i := 0; i < 2500; i++ {
				if i == 1200 {
					c.Do(ctx, "BGREWRITEAOF")
					waitRewrite(t, p.addr)
				}
				cmds := randomWrite(r)
				if cmds[0][0] == "MULTI" || cmds[0][0] == "SELECT" {
					pipe := c.TxPipeline()
					if cmds[0][0] == "SELECT" {
						pipe = c.Pipeline()
					}
					for _, cmd := range cmds {
						if cmd[0] == "MULTI" || cmd[0] == "EXEC" {
							continue
						}
						pipe.Do(ctx, anys(cmd)...)
					}
					pipe.Exec(ctx)
					continue
				}
				for _, cmd := range cmds {
					c.Do(ctx, anys(cmd)...)
				}
			}
			c.Close()
			time.Sleep(40 * time.Millisecond) // the short TTLs pass
			want := dumpState(t, p.addr)
			p.cmd.Process.Kill()
			p.wait()
			rdir := t.TempDir()
			copyDir(t, filepath.Join(dir, "appendonlydir"), filepath.Join(rdir, "appendonlydir"))
			raddr := redisServer(t, rdir, "--appendonly", "yes")
			if got := dumpState(t, raddr); got != want {
				t.Fatalf("redis-server loaded a different dataset\n--- redis\n%s\n--- abacus\n%s", got, want)
			}
			if strings.Count(want, "\n") < 5 {
				t.Fatalf("too little data to compare:\n%s", want)
			}
		})
	}
}

func anys(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}
