// Quickstart: a counter with a per-minute rollup, a rate limit and a lock
// on Abacus with go-redis (the README's quick start).
package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server address")
	flag.Parse()
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: *addr})
	defer rdb.Close()

	// A counter with a per-minute rollup kept for two hours.
	rdb.Do(ctx, "TS.CREATE", "hits", "RETENTION", 86400000, "DUPLICATE_POLICY", "SUM")
	rdb.Do(ctx, "TS.CREATE", "hits:1m", "RETENTION", 7200000)
	rdb.Do(ctx, "TS.CREATERULE", "hits", "hits:1m", "AGGREGATION", "sum", 60000)
	rdb.Do(ctx, "TS.ADD", "hits", "*", 1)
	rdb.Do(ctx, "TS.ADD", "hits", "*", 1)
	fmt.Println(rdb.Do(ctx, "TS.RANGE", "hits:1m", "-", "+", "LATEST").Val())

	// A rate limit: bursts of 15, then 30 requests a minute.
	fmt.Println(rdb.Do(ctx, "CL.THROTTLE", "user:123", 15, 30, 60, 1).Val())

	// A lock: one holder at a time, released only by its holder.
	fmt.Println(rdb.SetNX(ctx, "lock:report", "worker-1", 30*time.Second).Val())
	fmt.Println(rdb.SetNX(ctx, "lock:report", "worker-2", 30*time.Second).Val())
	fmt.Println(rdb.Do(ctx, "DELIFEQ", "lock:report", "worker-1").Val())
}
