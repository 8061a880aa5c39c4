// Recipesbench measures each recipe of the recipes package side by side:
// its native path on Abacus against its fallback (sorted sets, hashes,
// Lua) on redis-server, in operations per second with -c goroutines each
// calling the recipe in a loop through go-redis, runs alternating A B A B
// for -rounds rounds, medians reported. Each goroutine has its own keys
// (a user, a page), as a service's requests would. Then the Buffer:
// increments absorbed per second, and rows flushed per second into SQLite
// and, with -pg, PostgreSQL.
//
//	go run ./bench/recipesbench [-fallback] [-rounds 3] [-d 2s] [-c 50] [-pg postgres://...] [-run Events] [-items 0]
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"
	_ "modernc.org/sqlite"

	"github.com/abacusdb/abacus/bench/harness"
	"github.com/abacusdb/abacus/recipes"
)

var ctx = context.Background()

// fallbackOnly makes both servers run the fallbacks (-fallback): the same
// commands on each, to compare the servers alone.
var fallbackOnly bool

// opts are the recipes' options: the server's own path, or the fallback.
func opts() recipes.Options {
	if fallbackOnly {
		return recipes.Options{Mode: recipes.Fallback}
	}
	return recipes.Options{}
}

// op is one call of a recipe by goroutine g, its i-th.
type op func(g, i int) error

type benchCase struct {
	name string
	make func(c redis.UniversalClient) op
}

var cases = []benchCase{
	// The floor of a call that is its own round trip: what each server
	// spends on a command that does nothing. The recipes combine the calls
	// that goroutines make at the same time (recipes/combine.go), so they
	// can pass it.
	{"PING (one round trip per call)", func(c redis.UniversalClient) op {
		return func(g, i int) error { return c.Ping(ctx).Err() }
	}},
	{"Events.Record", func(c redis.UniversalClient) op {
		ev := make([]*recipes.Events, 1000)
		for g := range ev {
			ev[g] = recipes.NewEvents(c, "ev:"+strconv.Itoa(g), time.Hour, opts())
		}
		return func(g, i int) error { return ev[g].Record(ctx) }
	}},
	{"Events.Count (1 min)", func(c redis.UniversalClient) op {
		ev := recipes.NewEvents(c, "ev:count", time.Hour, opts())
		for i := 0; i < 1000; i++ {
			if err := ev.Record(ctx); err != nil {
				harness.Fatal("%v", err)
			}
		}
		return func(g, i int) error { _, err := ev.Count(ctx, time.Minute); return err }
	}},
	{"Events.Count (1 h, 100k events)", func(c redis.UniversalClient) op {
		// The events are spread over the last hour by the recorders' clock.
		var wg sync.WaitGroup
		for g := 0; g < 50; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewSource(int64(g)))
				rec := recipes.NewEvents(c, "ev:hour", time.Hour, recipes.Options{Mode: opts().Mode, Now: func() time.Time {
					return time.Now().Add(-time.Duration(rng.Int63n(int64(time.Hour - time.Minute))))
				}})
				for i := 0; i < 2000; i++ {
					if err := rec.Record(ctx); err != nil {
						harness.Fatal("%v", err)
					}
				}
			}()
		}
		wg.Wait()
		ev := recipes.NewEvents(c, "ev:hour", time.Hour, opts())
		return func(g, i int) error { _, err := ev.Count(ctx, time.Hour); return err }
	}},
	{"Counter.Incr (7 precisions)", func(c redis.UniversalClient) op {
		k := make([]*recipes.Counter, 1000)
		for g := range k {
			k[g] = recipes.NewCounter(c, "hits:"+strconv.Itoa(g), recipes.DefaultPrecisions, opts())
		}
		return func(g, i int) error { return k[g].Incr(ctx, 1) }
	}},
	{"Timebox.Add", func(c redis.UniversalClient) op {
		b := recipes.NewTimebox(c, "box", 10*time.Minute, opts())
		return func(g, i int) error {
			_, err := b.Add(ctx, "p"+strconv.Itoa(g*100+i%100), 1)
			return err
		}
	}},
	{"FixedWindow.Allow", func(c redis.UniversalClient) op {
		l := recipes.NewFixedWindow(c, "fw", 1_000_000, time.Minute, opts())
		return func(g, i int) error { _, err := l.Allow(ctx, "u"+strconv.Itoa(g), 1); return err }
	}},
	{"SlidingWindow.Allow (3 limits, 2 keys)", func(c redis.UniversalClient) op {
		l := recipes.NewSlidingWindow(c, []recipes.Limit{
			{Window: time.Second, Max: 1_000_000, Precision: 100 * time.Millisecond},
			{Window: time.Minute, Max: 10_000_000, Precision: 5 * time.Second},
			{Window: time.Hour, Max: 100_000_000, Precision: time.Minute},
		}, opts())
		return func(g, i int) error {
			_, err := l.Allow(ctx, 1, "user:"+strconv.Itoa(g), "ip:"+strconv.Itoa(g%7))
			return err
		}
	}},
	{"GCRA.Allow", func(c redis.UniversalClient) op {
		l := recipes.NewGCRA(c, 1000, 1_000_000, time.Second, opts())
		return func(g, i int) error { _, err := l.Allow(ctx, "gcra:"+strconv.Itoa(g), 1); return err }
	}},
	{"Lock.Acquire+Release", func(c redis.UniversalClient) op {
		ls := make([]*recipes.Lock, 1000)
		for g := range ls {
			ls[g] = recipes.NewLock(c, "lock:"+strconv.Itoa(g), 30*time.Second, opts())
		}
		return func(g, i int) error {
			s, ok, err := ls[g].Acquire(ctx)
			if err != nil || !ok {
				return fmt.Errorf("acquire: %v %v", ok, err)
			}
			_, err = s.Release(ctx)
			return err
		}
	}},
	{"Rollups.Add (2 rollups)", func(c redis.UniversalClient) op {
		r := recipes.NewRollups([]redis.UniversalClient{c}, "req", []recipes.Rollup{
			{Step: time.Minute, Keep: 24 * time.Hour}, {Step: time.Hour, Keep: 30 * 24 * time.Hour},
		}, opts())
		svc := []string{"api", "web", "worker", "auth", "search"}
		reg := []string{"eu", "us", "ap"}
		return func(g, i int) error {
			return r.Add(ctx, map[string]string{"service": svc[g%5], "region": reg[(g/5)%3]}, 1)
		}
	}},
	{"Buffer.Incr (same commands)", func(c redis.UniversalClient) op {
		db, cleanup := sqlite()
		_ = cleanup // the process ends with the run
		b, err := recipes.NewBuffer(ctx, []redis.UniversalClient{c}, "buf", db, recipes.SQLite, recipes.BufferOptions{Options: opts()})
		if err != nil {
			harness.Fatal("%v", err)
		}
		return func(g, i int) error { return b.Incr(ctx, "page:"+strconv.Itoa(g*10+i%10), "day", 1) }
	}},
}

func sqlite() (*sql.DB, func()) {
	dir, err := os.MkdirTemp("", "recipesbench-")
	if err != nil {
		harness.Fatal("%v", err)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "b.db"))
	if err != nil {
		harness.Fatal("%v", err)
	}
	db.SetMaxOpenConns(1)
	return db, func() { db.Close(); os.RemoveAll(dir) }
}

// run calls o from n goroutines for d and returns operations per second,
// the server's CPU time per operation in µs, this process's (the
// client's: go-redis and the recipe) in µs, and the round trips and
// commands per operation that w counted on the client. Both share the machine's cores,
// so a recipe can be bound by either side's CPU.
func run(o op, srv *harness.Server, w *wire, n int, d time.Duration) (rate, cpu, client, trips, cmds float64) {
	trips0, cmds0 := w.trips.Load(), w.cmds.Load()
	ticks := srv.CPUTicks()
	self := selfCPU()
	var ops atomic.Int64
	var failed atomic.Value
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(stop); i++ {
				if err := o(g, i); err != nil {
					failed.Store(err)
					return
				}
				ops.Add(1)
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		harness.Fatal("%v", err)
	}
	n64 := float64(ops.Load())
	cpu = float64(srv.CPUTicks()-ticks) * 1e4 / n64 // ticks are 10 ms
	client = float64(selfCPU()-self) / 1e3 / n64
	trips = float64(w.trips.Load()-trips0) / n64
	cmds = float64(w.cmds.Load()-cmds0) / n64
	return n64 / time.Since(start).Seconds(), cpu, client, trips, cmds
}

// wire counts what a client sends: round trips (a command alone, or one
// pipeline or MULTI) and the commands in them (MULTI and EXEC included).
type wire struct{ trips, cmds atomic.Int64 }

func (w *wire) DialHook(next redis.DialHook) redis.DialHook { return next }

func (w *wire) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		w.trips.Add(1)
		w.cmds.Add(1)
		return next(ctx, cmd)
	}
}

func (w *wire) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		w.trips.Add(1)
		w.cmds.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// selfCPU is this process's user+system CPU time in ns.
func selfCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// flushRate fills a buffer with items (one field each) and returns rows
// flushed per second into db.
func flushRate(c redis.UniversalClient, db *sql.DB, d recipes.Dialect, items int) float64 {
	for _, q := range []string{"DROP TABLE IF EXISTS counters", "DROP TABLE IF EXISTS counters_batches"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			harness.Fatal("%v", err)
		}
	}
	b, err := recipes.NewBuffer(ctx, []redis.UniversalClient{c}, "flush", db, d, recipes.BufferOptions{Batch: 1000})
	if err != nil {
		harness.Fatal("%v", err)
	}
	for i := 0; i < items; i++ {
		if err := b.Incr(ctx, "item:"+strconv.Itoa(i), "n", 1); err != nil {
			harness.Fatal("%v", err)
		}
	}
	start := time.Now()
	rows := 0
	for {
		n, err := b.Flush(ctx)
		if err != nil {
			harness.Fatal("flush: %v", err)
		}
		if n == 0 {
			break
		}
		rows += n
	}
	if rows != items {
		harness.Fatal("flushed %d rows of %d", rows, items)
	}
	return float64(rows) / time.Since(start).Seconds()
}

func main() {
	rounds := flag.Int("rounds", 3, "rounds (A B A B ...)")
	dur := flag.Duration("d", 2*time.Second, "duration of one run")
	n := flag.Int("c", 50, "goroutines")
	pg := flag.String("pg", "", "PostgreSQL URL for the flush rate (none: SQLite only)")
	items := flag.Int("items", 20000, "items for the flush rate (0: no flush rates)")
	abacusBin := flag.String("abacus", "", "abacus binary (default: build ./cmd/abacus)")
	only := flag.String("run", "", "only the recipes whose names match this regular expression")
	profile := flag.String("cpuprofile", "", "write this process's CPU profile (the client: go-redis and the recipes) to this file")
	flag.BoolVar(&fallbackOnly, "fallback", false, "run the fallbacks on Abacus too (the same commands on both servers)")
	flag.Parse()
	cases = harness.Select(cases, func(bc benchCase) string { return bc.name }, *only, "-run")
	if *n > 1000 {
		harness.Fatal("-c at most 1000")
	}
	bin, cleanup := harness.BuildAbacus(*abacusBin)
	defer cleanup()
	servers := harness.StartBoth(bin)
	defer harness.StopAll(servers)
	clients := make([]redis.UniversalClient, len(servers))
	wires := make([]*wire, len(servers))
	for i, s := range servers {
		c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", s.Port), PoolSize: *n})
		wires[i] = &wire{}
		c.AddHook(wires[i])
		clients[i] = c
	}
	for i, c := range clients {
		native, err := recipes.Detect(ctx, c)
		if err != nil || native != (i == 0) {
			harness.Fatal("%s: detected native=%v, %v", servers[i].Name, native, err)
		}
	}

	ops := make([]op, 0, 2*len(cases))
	for _, bc := range cases {
		for _, c := range clients {
			ops = append(ops, bc.make(c))
		}
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			harness.Fatal("%v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			harness.Fatal("%v", err)
		}
		defer pprof.StopCPUProfile()
	}
	rate := make([][]float64, len(ops))
	cpu := make([][]float64, len(ops))
	ccpu := make([][]float64, len(ops))
	trips := make([][]float64, len(ops))
	cmds := make([][]float64, len(ops))
	for r := 0; r < *rounds; r++ {
		for i := range cases {
			for s := range clients {
				rps, us, cus, t, k := run(ops[2*i+s], servers[s], wires[s], *n, *dur)
				rate[2*i+s] = append(rate[2*i+s], rps)
				cpu[2*i+s] = append(cpu[2*i+s], us)
				ccpu[2*i+s] = append(ccpu[2*i+s], cus)
				trips[2*i+s] = append(trips[2*i+s], t)
				cmds[2*i+s] = append(cmds[2*i+s], k)
			}
		}
		fmt.Fprintf(os.Stderr, "round %d done\n", r+1)
	}
	harness.Header(fmt.Sprintf("Each recipe's native path on Abacus against its fallback on redis-server 7: %d goroutines through go-redis, %v per run, %d rounds (A B A B), medians.", *n, *dur, *rounds))
	// Client and server share the machine's cores: when they are busy, ops/s
	// is at most cores / (client + server CPU per op), so the ratio of two
	// rows cannot pass the ratio of their total CPU per op ("CPU bound").
	fmt.Println("| recipe | Abacus, native (ops/s) | redis-server, fallback (ops/s) | ratio | Abacus CPU µs/op | redis CPU µs/op | CPU ratio | client CPU µs/op, native / fallback | CPU bound | round trips/op, native / fallback | commands/op, native / fallback |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for i, bc := range cases {
		a, b := harness.Median(rate[2*i]), harness.Median(rate[2*i+1])
		ca, cb := harness.Median(cpu[2*i]), harness.Median(cpu[2*i+1])
		ka, kb := harness.Median(ccpu[2*i]), harness.Median(ccpu[2*i+1])
		ta, tb := harness.Median(trips[2*i]), harness.Median(trips[2*i+1])
		ma, mb := harness.Median(cmds[2*i]), harness.Median(cmds[2*i+1])
		fmt.Printf("| %s | %.0f | %.0f | %.2fx | %.1f | %.1f | %.2fx | %.1f / %.1f | %.2fx | %.3f / %.3f | %.3f / %.3f |\n",
			bc.name, a, b, a/b, ca, cb, cb/ca, ka, kb, (cb+kb)/(ca+ka), ta, tb, ma, mb)
	}

	if *items <= 0 {
		return
	}
	fmt.Printf("\nBuffer flush, %d items of one field, batches of 1000, medians of %d:\n\n", *items, *rounds)
	fmt.Println("| into | from Abacus (rows/s) | from redis-server (rows/s) |")
	fmt.Println("| --- | ---: | ---: |")
	type target struct {
		name string
		db   *sql.DB
		d    recipes.Dialect
	}
	db, done := sqlite()
	defer done()
	targets := []target{{"SQLite", db, recipes.SQLite}}
	if *pg != "" {
		p, err := sql.Open("pgx", *pg)
		if err != nil {
			harness.Fatal("%v", err)
		}
		targets = append(targets, target{"PostgreSQL", p, recipes.Postgres})
	}
	for _, t := range targets {
		var fr [2][]float64
		for r := 0; r < *rounds; r++ {
			for s, c := range clients {
				fr[s] = append(fr[s], flushRate(c, t.db, t.d, *items))
			}
		}
		fmt.Printf("| %s | %.0f | %.0f |\n", t.name, harness.Median(fr[0]), harness.Median(fr[1]))
	}
}
