// Pageviews records simulated page views with the recipes package and
// prints a dashboard: views in the last minute and hour, views per minute
// over the last ten minutes, and the busiest pages of the last hour by
// region. Run it against Abacus (go run ./cmd/abacus) or redis-server:
//
//	go run ./examples/pageviews -addr 127.0.0.1:6379
//
// The same code runs on both; it prints which path the server got.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand"
	"sort"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/recipes"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server address")
	n := flag.Int("n", 5000, "page views to simulate, spread over the last hour")
	flag.Parse()
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: *addr})
	defer rdb.Close()
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		log.Fatal(err)
	}

	// A simulated clock replays an hour of traffic in a moment.
	start := time.Now().Add(-time.Hour)
	now := start
	opts := recipes.Options{Now: func() time.Time { return now }}
	views := recipes.NewEvents(rdb, "views", time.Hour, opts)
	perMinute := recipes.NewCounter(rdb, "views:count", []recipes.Precision{
		{Step: time.Minute, Keep: 60}, {Step: time.Hour, Keep: 48},
	}, opts)
	pages := recipes.NewRollups([]redis.UniversalClient{rdb}, "pageviews",
		[]recipes.Rollup{{Step: time.Minute, Keep: 24 * time.Hour}}, opts)

	mode, err := views.Mode(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("server at %s: %s path\n", *addr, mode)

	paths := []string{"/", "/pricing", "/docs", "/blog", "/signup"}
	regions := []string{"eu", "us", "ap"}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < *n; i++ {
		now = now.Add(time.Duration(rng.ExpFloat64() * float64(time.Hour) / float64(*n)))
		page, region := paths[rng.Intn(len(paths))], regions[rng.Intn(len(regions))]
		check(views.Record(ctx))
		check(perMinute.Incr(ctx, 1))
		check(pages.Add(ctx, map[string]string{"page": page, "region": region}, 1))
	}

	lastMin, err := views.Count(ctx, time.Minute)
	check(err)
	lastHour, err := views.Count(ctx, time.Hour)
	check(err)
	fmt.Printf("views in the last minute: %d, in the last hour: %d\n", lastMin, lastHour)

	fmt.Println("\nviews per minute, last ten minutes:")
	slices, err := perMinute.Slices(ctx, time.Minute, 10)
	check(err)
	for _, p := range slices {
		fmt.Printf("  %s  %4.0f\n", p.T.Format("15:04"), p.V)
	}

	for _, region := range regions {
		byPage, err := pages.Query(ctx, time.Minute, now.Add(-time.Hour), now, map[string]string{"region": region}, "page")
		check(err)
		type row struct {
			page  string
			total float64
		}
		var rows []row
		for g, pts := range byPage {
			var s float64
			for _, p := range pts {
				s += p.V
			}
			rows = append(rows, row{g, s})
		}
		sort.Slice(rows, func(i, j int) bool {
			return rows[i].total > rows[j].total || rows[i].total == rows[j].total && rows[i].page < rows[j].page
		})
		fmt.Printf("\nregion %s, last hour:\n", region)
		for _, r := range rows {
			fmt.Printf("  %-16s %5.0f\n", r.page, r.total)
		}
	}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
