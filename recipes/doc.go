// Package recipes is the Redis recipes for counting and limiting as Go
// types on top of go-redis v9, one small type per recipe, each working
// against both Abacus and redis-server 7 with the same API and the same
// answers: on Abacus it sends Abacus's native commands (time series, rate
// limiters, conditional writes, hash-field expiry); on redis-server it
// falls back to the classic sorted-set, hash and Lua versions. Switching
// servers changes no code.
//
// # Which path
//
// Every type takes a go-redis client and an Options. With Mode Auto (the
// zero value) a type asks the server once, on first use, whether it is
// Abacus (INFO server reports abacus_version) and picks Native or
// Fallback; Mode forces one. Options.Now is the clock that timestamps
// events and picks windows (time.Now by default); keep client and server
// clocks in step (NTP), since key expiry and CL.THROTTLE run on the
// server's.
//
//	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	logins := recipes.NewEvents(rdb, "events:login", time.Hour, recipes.Options{})
//
// # Events in windows
//
// Events counts events in windows that slide with the clock. Native: a
// time series with a retention and duplicates summed, counted with one
// TS.SUM over the window (the server decodes
// only the chunks at the window's edges, however many events it holds);
// fallback: a sorted set of unique members trimmed on every write,
// counted with ZCOUNT.
//
//	logins.Record(ctx)
//	lastMinute, _ := logins.Count(ctx, time.Minute)
//
// # Counters at several precisions
//
// Counter counts hits per second, minute, hour, day ... at once, each
// precision keeping its own number of slices. Native: a series per
// precision whose retention drops old slices, one TS.MADD per hit;
// fallback: a hash per precision, HINCRBY into each, and Cleanup (run it
// every so often: the daemon of Redis in Action) to delete old slices.
//
//	hits := recipes.NewCounter(rdb, "hits", recipes.DefaultPrecisions, recipes.Options{})
//	hits.Incr(ctx, 1)
//	perMinute, _ := hits.Slices(ctx, time.Minute, 60) // the last hour, by minute
//
// # Time boxes
//
// Timebox keeps members with points for a bounded time after their last
// activity. Native: a hash whose fields expire (HPEXPIREAT) when their
// time is up; fallback: two sorted sets in a script.
//
//	box := recipes.NewTimebox(rdb, "box:players", 10*time.Minute, recipes.Options{})
//	box.Add(ctx, "alice", 5)
//	players, _ := box.Members(ctx)
//
// # Rate limits
//
// FixedWindow (INCREX with a cap, or a script), SlidingWindow (several
// limits over several keys with a weight: RATELIMIT.SLIDING, or the
// classic script over the same hash) and GCRA (a token bucket:
// CL.THROTTLE, or the same algorithm in a script).
//
//	perUser := recipes.NewSlidingWindow(rdb, []recipes.Limit{
//		{Window: time.Second, Max: 10, Precision: 100 * time.Millisecond},
//		{Window: time.Minute, Max: 100, Precision: 5 * time.Second},
//	}, recipes.Options{})
//	d, _ := perUser.Allow(ctx, 1, "user:123", "ip:10.0.0.7")
//	if !d.Allowed { ... }
//
// # Locks with fencing tokens
//
// Lock is a lease with a TTL and a fencing token that grows with every
// acquisition; send the token with every write it protects and have the
// storage refuse tokens smaller than one it has seen. Native: MULTI SET
// NX PX + INCR, SET IFEQ, DELIFEQ; fallback: scripts.
//
//	lease, ok, _ := recipes.NewLock(rdb, "lock:report", 30*time.Second, recipes.Options{}).Acquire(ctx)
//	if ok {
//		defer lease.Release(ctx)
//		writeReport(lease.Token)
//	}
//
// # Sorting and prefixes
//
// Sorter ranks a set of ids by several weighted columns (ZINTERSTORE with
// WEIGHTS), PrefixIndex completes prefixes (ZRANGE BYLEX). Abacus has no
// better commands for these: both servers run the same ones.
//
// # Counters buffered and flushed to SQL
//
// Buffer absorbs increments in Redis (HINCRBY into a pending hash, the
// item into a dirty set) and a flusher moves them in batches into a SQL
// table through database/sql, one transaction per batch, at least once
// and with an idempotent upsert: a flusher killed anywhere loses nothing
// and counts nothing twice. SQLite (modernc.org/sqlite, no cgo) and
// PostgreSQL (github.com/jackc/pgx/v5/stdlib) are supported. Items are
// spread over several servers by consistent hashing.
//
//	db, _ := sql.Open("sqlite", "counts.db")
//	buf, _ := recipes.NewBuffer(ctx, []redis.UniversalClient{rdb}, "views", db, recipes.SQLite, recipes.BufferOptions{})
//	buf.Incr(ctx, "page:/home", "2024-05-01", 1)
//	go buf.Run(ctx, time.Second)
//
// # Rollups across servers
//
// Rollups stores counts per labelled series rolled up to several
// resolutions, the series spread over several servers, and answers sums
// across series grouped by a label. Native: a labelled series per rollup,
// one TS.MADD per write, queried with TS.MRANGE ... GROUPBY ... REDUCE sum
// on every shard; fallback: Sentry's hashes keyed metric:step:bucket with
// a field per series.
//
//	req := recipes.NewRollups(shards, "requests", []recipes.Rollup{
//		{Step: time.Minute, Keep: 24 * time.Hour}, {Step: time.Hour, Keep: 30 * 24 * time.Hour},
//	}, recipes.Options{})
//	req.Add(ctx, map[string]string{"service": "api", "region": "eu"}, 3)
//	byService, _ := req.Query(ctx, time.Minute, from, to, nil, "service")
//
// # Calls made at the same time share round trips
//
// A call that is its own round trip costs both ends a read and a write
// (a few µs each side), far more than the command. Every recipe's
// frequent calls (Events.Record and Count, Counter.Incr, Timebox.Add,
// the limiters' Allow, Lock's Acquire, Extend and Release, Rollups.Add,
// Buffer.Incr) therefore combine the calls that goroutines make at the
// same time through one *redis.Client: the first goes at once; the ones
// made while it is out leave together in the next round trip. Natively,
// the samples of Events.Record, Counter.Incr and Rollups.Add, whatever
// their series, go in one TS.MADD (each call's samples still in one
// command); transactions (a native Timebox.Add or Lock.Acquire,
// Buffer.Incr, the fallback's Events.Record) share one MULTI, each
// call's commands together in it; everything else shares a pipeline, a
// command or a script per call, so each call stays as atomic as alone.
// Counts share a pipeline too (one command per key and window end).
// Nothing waits on a timer, and each call's arguments and clock reading
// are its own, so the answers are those of calls made one at a time.
// Cluster and ring clients send calls one by one.
//
// # Clusters
//
// Every type takes a redis.UniversalClient, so a *redis.ClusterClient
// works too. A recipe's own keys derive from its name by suffixes and
// must share a slot: a name with a hash tag ("{views}") keeps them
// together, and on a cluster client a name without one is tagged whole
// ("lock:report" becomes "{lock:report}"). Keys that a call names itself
// must share a tag: SlidingWindow.Allow's keys ("{u1}:user",
// "{u1}:ip"), Sorter's set and columns. A Buffer lives in its name's slot
// (spread several over a cluster, or give NewBuffer several clients);
// Rollups spreads its series over the cluster by their labels and queries
// every primary. TestRecipesOnCluster runs every type on a three-node
// redis-server cluster and compares the answers with a single server's.
//
// Examples that run against a local server are in examples/pageviews and
// examples/flush-to-sql.
package recipes
