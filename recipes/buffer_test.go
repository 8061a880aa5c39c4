package recipes

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"path/filepath"
	"reflect"
	"testing"

	_ "modernc.org/sqlite"
)

func openSQLite(t *testing.T) *sql.DB {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "flush.db"))
	must(t, err)
	db.SetMaxOpenConns(1) // one writer: SQLite would answer BUSY otherwise
	t.Cleanup(func() { db.Close() })
	return db
}

func TestBufferSQLite(t *testing.T) {
	both(t, func(t *testing.T, e *env) { bufferBody(t, e, openSQLite(t), SQLite) })
}

// bufferBody increments counters of items spread over three shards, and
// kills the flusher at every step of a flush in turn (its context is
// cancelled there), incrementing more between attempts; then flushes to
// the end and checks that SQL holds exactly the increments.
func bufferBody(t *testing.T, e *env, db *sql.DB, d Dialect) {
	b, err := NewBuffer(ctx, e.shards(t, 3), "views", db, d, BufferOptions{Options: e.opts, Batch: 7})
	must(t, err)
	rng := rand.New(rand.NewSource(9))
	want := map[string]map[string]int64{}
	incr := func(n int) {
		for i := 0; i < n; i++ {
			item, field := fmt.Sprint("page:", rng.Intn(15)), fmt.Sprint("day", rng.Intn(3))
			v := int64(1 + rng.Intn(9))
			must(t, b.Incr(ctx, item, field, v))
			if want[item] == nil {
				want[item] = map[string]int64{}
			}
			want[item][field] += v
		}
	}
	kills := 0
	for n := 1; ; n++ {
		incr(20)
		fctx, cancel := context.WithCancel(ctx)
		calls, killedAt := 0, ""
		b.step = func(name string) {
			if calls++; calls == n {
				killedAt = name
				cancel()
			}
		}
		_, err := b.Flush(fctx)
		cancel()
		if killedAt == "" {
			must(t, err)
			break // n passed the steps of a whole flush
		}
		if err == nil {
			t.Fatalf("flush killed at step %d (%s) returned no error", n, killedAt)
		}
		kills++
	}
	b.step = nil
	if kills < 10 {
		t.Fatalf("only %d steps to kill at", kills)
	}
	for {
		n, err := b.Flush(ctx)
		must(t, err)
		if n == 0 {
			break
		}
	}
	for item, fields := range want {
		got, err := b.Totals(ctx, item)
		must(t, err)
		if !reflect.DeepEqual(got, fields) {
			t.Fatalf("%s in SQL: %v, want %v", item, got, fields)
		}
	}
	for _, c := range b.shards {
		keys, err := c.Keys(ctx, "views:*").Result()
		must(t, err)
		for _, k := range keys {
			if k != "views:flushlock:fence" {
				t.Fatalf("left in Redis after the last flush: %s", k)
			}
		}
	}
}
