// Flush-to-sql counts simulated page views per day in Redis with the
// recipes' Buffer, flushes them into SQLite in batches while they arrive,
// and prints the table. Run it against Abacus (go run ./cmd/abacus) or
// redis-server:
//
//	go run ./examples/flush-to-sql -addr 127.0.0.1:6379
//
// -db names the SQLite file (default: a temporary one); -pg takes a
// PostgreSQL URL instead (postgres://user@host:5432/db).
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"math/rand"
	"os"
	"path/filepath"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"
	_ "modernc.org/sqlite"

	"github.com/abacusdb/abacus/recipes"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server address")
	file := flag.String("db", "", "SQLite file (default: a temporary file)")
	pg := flag.String("pg", "", "PostgreSQL URL, instead of SQLite")
	n := flag.Int("n", 20000, "increments")
	flag.Parse()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var db *sql.DB
	var err error
	dialect := recipes.SQLite
	if *pg != "" {
		db, err = sql.Open("pgx", *pg)
		dialect = recipes.Postgres
	} else {
		if *file == "" {
			dir, err := os.MkdirTemp("", "flush-to-sql-")
			check(err)
			defer os.RemoveAll(dir)
			*file = filepath.Join(dir, "views.db")
		}
		db, err = sql.Open("sqlite", *file)
		db.SetMaxOpenConns(1)
	}
	check(err)
	defer db.Close()
	_, _ = db.ExecContext(ctx, "DROP TABLE IF EXISTS pageviews")
	_, _ = db.ExecContext(ctx, "DROP TABLE IF EXISTS pageviews_batches")

	rdb := redis.NewClient(&redis.Options{Addr: *addr})
	defer rdb.Close()
	check(rdb.FlushDB(ctx).Err())
	buf, err := recipes.NewBuffer(ctx, []redis.UniversalClient{rdb}, "views", db, dialect,
		recipes.BufferOptions{Table: "pageviews", Batch: 100})
	check(err)

	// The flusher runs while increments arrive.
	done := make(chan error, 1)
	fctx, stop := context.WithCancel(ctx)
	go func() { done <- buf.Run(fctx, 50*time.Millisecond) }()

	pages := []string{"/", "/pricing", "/docs", "/blog", "/signup"}
	rng := rand.New(rand.NewSource(1))
	t0 := time.Now()
	for i := 0; i < *n; i++ {
		day := time.Date(2024, 5, 1+rng.Intn(3), 0, 0, 0, 0, time.UTC).Format("2006-01-02")
		check(buf.Incr(ctx, pages[rng.Intn(len(pages))], day, 1))
	}
	fmt.Printf("%d increments absorbed in %v\n", *n, time.Since(t0).Round(time.Millisecond))
	stop()
	<-done
	for { // what the flusher had not reached yet
		k, err := buf.Flush(ctx)
		check(err)
		if k == 0 {
			break
		}
	}

	rows, err := db.QueryContext(ctx, "SELECT item, field, total FROM pageviews ORDER BY item, field")
	check(err)
	defer rows.Close()
	fmt.Printf("\n%-10s %-12s %s\n", "page", "day", "views")
	var sum int64
	for rows.Next() {
		var item, field string
		var total int64
		check(rows.Scan(&item, &field, &total))
		sum += total
		fmt.Printf("%-10s %-12s %d\n", item, field, total)
	}
	check(rows.Err())
	fmt.Printf("\ntotal %d (increments %d)\n", sum, *n)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
