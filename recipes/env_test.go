package recipes

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

func TestMain(m *testing.M) {
	code := testenv.Run(m)
	if pgStop != nil {
		pgStop()
	}
	os.Exit(code)
}

// t0 is 2023-11-14 22:13:20 UTC in ms: every test starts its clock here.
const t0 = 1_700_000_000_000

// env is one server under test: Abacus in-process on a manual clock
// (the recipes' Native path), or the shared redis-server (Fallback) with
// a client clock the test moves by hand. Both see the same time through
// opts.Now.
type env struct {
	name   string
	mode   Mode
	addr   string
	opts   Options
	ms     atomic.Int64 // the redis-server env's clock
	manual interface{ Advance(time.Duration) }
}

var ctx = context.Background()

// both runs body against Abacus and against redis-server, each in its
// own subtest.
func both(t *testing.T, body func(t *testing.T, e *env)) {
	t.Run("abacus", func(t *testing.T) {
		inst := servertest.Start(t, servertest.WithManualClock(t0))
		e := &env{name: "abacus", mode: Native, addr: inst.Addr, manual: inst.Clock}
		e.opts = Options{Now: func() time.Time { return time.UnixMilli(inst.Clock.NowMs()) }}
		body(t, e)
	})
	t.Run("redis", func(t *testing.T) {
		r := servertest.Redis(t)
		e := &env{name: "redis", mode: Fallback, addr: r.Addr}
		e.ms.Store(t0)
		e.opts = Options{Now: func() time.Time { return time.UnixMilli(e.ms.Load()) }}
		body(t, e)
	})
}

// client returns a client of database db (several databases stand for
// several shards), closed at the end of the test.
func (e *env) client(t *testing.T, db int) redis.UniversalClient {
	c := redis.NewClient(&redis.Options{Addr: e.addr, DB: db, MaxRetries: -1, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	return c
}

func (e *env) shards(t *testing.T, n int) []redis.UniversalClient {
	out := make([]redis.UniversalClient, n)
	for i := range out {
		out[i] = e.client(t, i)
	}
	return out
}

// advance moves the clock of the recipes (and Abacus's) by d.
func (e *env) advance(d time.Duration) {
	if e.manual != nil {
		e.manual.Advance(d)
		return
	}
	e.ms.Add(d.Milliseconds())
}

// expire moves time past d for the server's key expiry too: on
// redis-server, whose expiry runs on the real clock, it waits d. Only the
// lock test needs it, with a short TTL.
func (e *env) expire(d time.Duration) {
	if e.manual == nil {
		time.Sleep(d)
	}
	e.advance(d)
}

func (e *env) checkMode(t *testing.T, got Mode, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if got != e.mode {
		t.Fatalf("detected %v on %s, want %v", got, e.name, e.mode)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// transcripts holds, per test, the answers of the first server that ran
// it, for the second to be compared with: the two paths must answer
// alike.
var transcripts = map[string][]string{}

// same records the answers of this run and, when the other server ran
// the test first, checks they are the same, answer by answer.
func same(t *testing.T, e *env, got []string) {
	t.Helper()
	key := t.Name()[:len(t.Name())-len(e.name)]
	prev, ok := transcripts[key]
	if !ok {
		transcripts[key] = got
		return
	}
	if len(prev) != len(got) {
		t.Fatalf("%d answers, the other server gave %d", len(got), len(prev))
	}
	for i := range got {
		if got[i] != prev[i] {
			t.Fatalf("answer %d: %s, the other server said %s", i, got[i], prev[i])
		}
	}
}
