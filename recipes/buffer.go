package recipes

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/claim.lua
var claimLua string

var claimScript = redis.NewScript(claimLua)

// Dialect is the SQL spelling of a database: placeholders differ.
type Dialect int

const (
	// SQLite, through modernc.org/sqlite (driver name "sqlite").
	SQLite Dialect = iota
	// Postgres, through github.com/jackc/pgx/v5/stdlib (driver name "pgx").
	Postgres
)

func (d Dialect) ph(i int) string {
	if d == Postgres {
		return "$" + strconv.Itoa(i)
	}
	return "?"
}

// BufferOptions tune a Buffer; the zero value is usable.
type BufferOptions struct {
	Options
	// Table is the SQL table of totals (default "counters"); its batch
	// markers go in Table_batches.
	Table string
	// Batch is the most items one flush takes from a shard (default 1000).
	Batch int
	// LockTTL bounds a flush of one shard (default 30 s): a flusher that
	// dies holding the lock holds it that long.
	LockTTL time.Duration
}

// Buffer absorbs counter increments in Redis and flushes them to a SQL
// table in batches: Incr is HINCRBY into the item's pending hash and ZADD
// of the item into a dirty set; Flush, under a lock per shard, moves the
// pending hashes of a batch of items aside (in flight, each with a batch
// id), adds them to the table in one transaction, and only then deletes
// them from Redis.
//
// Delivery is at least once and the upsert idempotent: the transaction
// that adds an item's counts also records its batch id, and skips an item
// whose batch id is already recorded. A flusher that dies anywhere leaves
// the items in flight, and the next flush repeats them: the ones that
// committed add nothing, the others are added once.
//
// Items are spread over several servers by consistent hashing. The
// commands are the same on Abacus and redis-server (a script, MULTI,
// RENAME); the script names keys it computes, which a cluster would
// refuse: give the shards as separate clients.
type Buffer struct {
	shards []redis.UniversalClient
	ring   *ring
	prefix string
	db     *sql.DB
	d      Dialect
	opts   BufferOptions
	locks  []*Lock
	incr   []combinerRef // each shard's client's combiner of Incr calls
	// step, when set (tests), is called at each step of a flush; the
	// flush then stops if its context is done, as if killed there.
	step func(name string)
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// NewBuffer returns the buffer named name over the given shards (one or
// more clients, never reordered: the ring is by position), flushing into
// db, and creates its tables if needed.
func NewBuffer(ctx context.Context, shards []redis.UniversalClient, name string, db *sql.DB, d Dialect, opts BufferOptions) (*Buffer, error) {
	if len(shards) == 0 {
		return nil, errors.New("recipes: a buffer needs at least one shard")
	}
	if opts.Table == "" {
		opts.Table = "counters"
	}
	if !identRe.MatchString(opts.Table) {
		return nil, fmt.Errorf("recipes: table name %q is not a plain identifier", opts.Table)
	}
	if opts.Batch <= 0 {
		opts.Batch = 1000
	}
	if opts.LockTTL <= 0 {
		opts.LockTTL = 30 * time.Second
	}
	name = oneSlot(name, shards...)
	b := &Buffer{shards: shards, ring: newRing(len(shards)), prefix: name + ":", db: db, d: d, opts: opts,
		incr: make([]combinerRef, len(shards))}
	for _, s := range shards {
		b.locks = append(b.locks, NewLock(s, name+":flushlock", opts.LockTTL, opts.Options))
	}
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS ` + opts.Table + ` (item TEXT NOT NULL, field TEXT NOT NULL, total BIGINT NOT NULL, PRIMARY KEY (item, field))`,
		`CREATE TABLE IF NOT EXISTS ` + opts.Table + `_batches (item TEXT NOT NULL, batch TEXT NOT NULL, PRIMARY KEY (item))`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Incr adds n to field of item, in Redis; Flush carries it to SQL.
// Increments made at the same time through one client share a MULTI (see
// combine.go), each item's HINCRBY followed by its ZADD as when alone.
func (b *Buffer) Incr(ctx context.Context, item, field string, n int64) error {
	i := b.ring.get(item)
	pending, dirty, now := b.prefix+"pending:"+item, b.prefix+"dirty", b.opts.nowMs()
	_, err := combined(ctx, b.shards[i], &b.incr[i], kindMulti, sendMulti, piped(func(ctx context.Context, p redis.Pipeliner) func() error {
		cmds := []redis.Cmder{
			p.HIncrBy(ctx, pending, field, n),
			p.ZAddNX(ctx, dirty, redis.Z{Score: float64(now), Member: item}),
		}
		return func() error { return firstErr(cmds) }
	}))
	return err
}

// Flush moves one batch from every shard into SQL and returns how many
// items it wrote. A shard whose lock another flusher holds is passed
// over.
func (b *Buffer) Flush(ctx context.Context) (int, error) {
	total := 0
	for i := range b.shards {
		n, err := b.flushShard(ctx, i)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// Run flushes every interval until ctx is done, at once again while
// batches come back full.
func (b *Buffer) Run(ctx context.Context, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := b.Flush(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		if n >= b.opts.Batch {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (b *Buffer) at(ctx context.Context, name string) error {
	if b.step != nil {
		b.step(name)
	}
	return ctx.Err()
}

func (b *Buffer) flushShard(ctx context.Context, i int) (int, error) {
	c := b.shards[i]
	lease, ok, err := b.locks[i].Acquire(ctx)
	if err != nil || !ok {
		return 0, err
	}
	// A flush stopped by its context still frees the lock it holds, as a
	// flusher shutting down would; one that dies holds it for LockTTL.
	defer lease.Release(context.WithoutCancel(ctx))
	if err := b.at(ctx, "locked"); err != nil {
		return 0, err
	}
	inflight := b.prefix + "inflight"
	claimed, err := claimScript.Run(ctx, c, []string{b.prefix + "dirty", inflight}, b.prefix, b.opts.Batch, randomID()).StringSlice()
	if err != nil {
		return 0, err
	}
	if len(claimed) == 0 {
		return 0, nil
	}
	if err := b.at(ctx, "claimed"); err != nil {
		return 0, err
	}
	items := make([]string, 0, len(claimed)/2)
	batches := make([]string, 0, len(claimed)/2)
	for j := 0; j+1 < len(claimed); j += 2 {
		items = append(items, claimed[j])
		batches = append(batches, claimed[j+1])
	}
	counts := make([]*redis.MapStringStringCmd, len(items))
	if _, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for j, it := range items {
			counts[j] = p.HGetAll(ctx, b.prefix+"inflight:"+it)
		}
		return nil
	}); err != nil {
		return 0, err
	}
	if err := b.at(ctx, "read"); err != nil {
		return 0, err
	}
	if err := b.write(ctx, items, batches, counts); err != nil {
		return 0, err
	}
	if err := b.at(ctx, "committed"); err != nil {
		return 0, err
	}
	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, it := range items {
			p.Del(ctx, b.prefix+"inflight:"+it)
		}
		p.HDel(ctx, inflight, items...)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return len(items), b.at(ctx, "cleared")
}

// rowsPerInsert bounds one multi-row upsert statement's size.
const rowsPerInsert = 200

// write adds the claimed counts in one transaction. An item whose batch
// id is already recorded committed before (its flusher died before
// clearing Redis) and is skipped; the guard is the marker's own upsert,
// which a concurrent transaction recording the same batch waits on.
func (b *Buffer) write(ctx context.Context, items, batches []string, counts []*redis.MapStringStringCmd) error {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := b.at(ctx, "begun"); err != nil {
		return err
	}
	t := b.opts.Table
	mark := `INSERT INTO ` + t + `_batches (item, batch) VALUES (` + b.d.ph(1) + `, ` + b.d.ph(2) + `)
ON CONFLICT (item) DO UPDATE SET batch = excluded.batch WHERE ` + t + `_batches.batch <> excluded.batch`
	var rows []any
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		var q strings.Builder
		q.WriteString(`INSERT INTO ` + t + ` (item, field, total) VALUES `)
		for r := 0; r < len(rows)/3; r++ {
			if r > 0 {
				q.WriteString(", ")
			}
			fmt.Fprintf(&q, "(%s, %s, %s)", b.d.ph(3*r+1), b.d.ph(3*r+2), b.d.ph(3*r+3))
		}
		q.WriteString(` ON CONFLICT (item, field) DO UPDATE SET total = ` + t + `.total + excluded.total`)
		_, err := tx.ExecContext(ctx, q.String(), rows...)
		rows = rows[:0]
		return err
	}
	for j, it := range items {
		res, err := tx.ExecContext(ctx, mark, it, batches[j])
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return err
			}
			continue // this batch committed before
		}
		for f, v := range counts[j].Val() {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("recipes: buffer item %s field %s: %w", it, f, err)
			}
			rows = append(rows, it, f, n)
			if len(rows) == 3*rowsPerInsert {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := b.at(ctx, "upserted"); err != nil {
			return err
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if err := b.at(ctx, "before commit"); err != nil {
		return err
	}
	return tx.Commit()
}

// Totals reads item's totals from SQL (what has been flushed).
func (b *Buffer) Totals(ctx context.Context, item string) (map[string]int64, error) {
	rs, err := b.db.QueryContext(ctx, `SELECT field, total FROM `+b.opts.Table+` WHERE item = `+b.d.ph(1), item)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := map[string]int64{}
	for rs.Next() {
		var f string
		var n int64
		if err := rs.Scan(&f, &n); err != nil {
			return nil, err
		}
		out[f] = n
	}
	return out, rs.Err()
}
